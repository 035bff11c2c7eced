//! A command's stdout or stderr, kept up to a cap; the rest is read and dropped.

/// The captured bytes and whether the stream went past the cap.
pub struct Captured {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Captured {
    pub fn new() -> Captured {
        Captured { bytes: Vec::new(), truncated: false }
    }

    /// Keeps what fits of `chunk` under `cap`.
    pub fn push(&mut self, chunk: &[u8], cap: u64) {
        let room = (cap as usize).saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        self.truncated |= chunk.len() > room;
    }

    /// The bytes, with a marker where they were cut.
    pub fn finish(mut self, cap: u64) -> Captured {
        if self.truncated {
            self.bytes.extend_from_slice(format!("\n[warden: output truncated after {cap} bytes]\n").as_bytes());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::Captured;

    fn capture(chunks: &[&[u8]], cap: u64) -> Captured {
        let mut c = Captured::new();
        for chunk in chunks {
            c.push(chunk, cap);
        }
        c.finish(cap)
    }

    #[test]
    fn keeps_the_head_and_marks_the_cut() {
        let out = capture(&[b"ab", b"cdefgh"], 3);
        assert!(out.truncated);
        assert_eq!(out.bytes, b"abc\n[warden: output truncated after 3 bytes]\n");
        let out = capture(&[b"abc", b""], 3);
        assert!(!out.truncated);
        assert_eq!(out.bytes, b"abc");
    }
}
