//! Reading a command's stdout or stderr up to a cap, draining the rest.

use std::io::Read;

/// The captured bytes and whether the stream went past the cap.
pub struct Captured {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

/// Reads `stream` to its end, keeping the first `cap` bytes.
pub fn capture(mut stream: impl Read, cap: u64) -> Captured {
    let mut bytes = Vec::new();
    let mut truncated = false;
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = (cap as usize).saturating_sub(bytes.len());
                bytes.extend_from_slice(&chunk[..n.min(room)]);
                truncated |= n > room;
            }
        }
    }
    if truncated {
        bytes.extend_from_slice(format!("\n[warden: output truncated after {cap} bytes]\n").as_bytes());
    }
    Captured { bytes, truncated }
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_head_and_marks_the_cut() {
        let out = super::capture(&b"abcdefgh"[..], 3);
        assert!(out.truncated);
        assert_eq!(out.bytes, b"abc\n[warden: output truncated after 3 bytes]\n");
        let out = super::capture(&b"abc"[..], 3);
        assert!(!out.truncated);
        assert_eq!(out.bytes, b"abc");
    }
}
