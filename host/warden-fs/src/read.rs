//! `read` (text, windowed by characters) and `read_bytes`.

use std::io::Read;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{File, OpenOptions, OpenOptionsExt};

use crate::error::{Denial, FsError, Op, Result};
use crate::error::Access;
use crate::sandbox::{io_error, Sandbox, Target};

/// A window of a text file, counted in characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// First character to return.
    pub offset: usize,
    /// Most characters to return; `None` for the rest of the file.
    pub max_chars: Option<usize>,
}

/// Text read from a file, and where it sits in the whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextRead {
    pub text: String,
    /// Character offset of `text` in the file.
    pub offset: usize,
    /// Character offset just past `text`.
    pub end: usize,
    /// Characters in the whole file.
    pub total_chars: usize,
}

impl TextRead {
    pub fn is_truncated(&self) -> bool {
        self.end < self.total_chars
    }

    /// For a truncated read: what was shown and how to read the rest.
    pub fn notice(&self) -> Option<String> {
        self.is_truncated().then(|| {
            format!(
                "[Truncated: showing characters {}-{} of {}. To read the rest, read again with offset {}.]",
                self.offset, self.end, self.total_chars, self.end
            )
        })
    }
}

impl Sandbox {
    /// Reads a UTF-8 text file, or a window of it.
    pub fn read(&self, path: &str, options: ReadOptions) -> Result<TextRead> {
        let (target, bytes) = self.read_checked(path, Op::Read)?;
        let text = String::from_utf8(bytes).map_err(|_| FsError::NotText { path: target.display() })?;
        Ok(window(text, options))
    }

    /// Reads a whole file as bytes.
    pub fn read_bytes(&self, path: &str) -> Result<Vec<u8>> {
        Ok(self.read_checked(path, Op::Read)?.1)
    }

    fn read_checked(&self, path: &str, op: Op) -> Result<(Target<'_>, Vec<u8>)> {
        let target = self.locate(path, Access::Read)?;
        let (mut file, size) = self.open_file(&target, op)?;
        // Read up to the size seen at open, which the size rule has checked:
        // memory stays bounded even if the file grows meanwhile.
        let mut bytes = vec![0u8; size as usize];
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(op, &target, e, self)),
            }
        }
        bytes.truncate(filled);
        Ok((target, bytes))
    }

    /// Opens a file for reading after the suffix and size rules, never
    /// following a symlink that was not checked. Returns the file and its size.
    pub(crate) fn open_file(&self, target: &Target<'_>, op: Op) -> Result<(File, u64)> {
        self.check_file_name(target, op)?;
        let mut options = OpenOptions::new();
        // Non-blocking, so that opening a FIFO does not wait for a writer for ever.
        options.read(true).follow(FollowSymlinks::No).custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
        let file = match target.mount.dir.open_with(&target.rel, &options) {
            Ok(file) => file,
            Err(_) => {
                let rel = self.follow_final(target, op)?;
                target.mount.dir.open_with(&rel, &options).map_err(|e| io_error(op, target, e, self))?
            }
        };
        let meta = file.metadata().map_err(|e| io_error(op, target, e, self))?;
        if meta.is_dir() {
            return Err(FsError::IsADirectory { op, path: target.display() });
        }
        if !meta.is_file() {
            return Err(FsError::Unsupported { op, path: target.display(), why: "it is not a regular file (a pipe, socket or device)" });
        }
        let size = meta.len();
        if let Some(max) = target.mount.rules.max_file_bytes.filter(|&m| size > m) {
            return Err(Denial::FileTooLarge { path: target.display(), size, max }.into());
        }
        Ok((file, size))
    }
}

fn window(text: String, options: ReadOptions) -> TextRead {
    // `is_ascii` is several times faster than counting, and ASCII is the common case.
    let total_chars = if text.is_ascii() { text.len() } else { text.chars().count() };
    let offset = options.offset.min(total_chars);
    let end = options.max_chars.map_or(total_chars, |n| offset.saturating_add(n).min(total_chars));
    if offset == 0 && end == total_chars {
        return TextRead { text, offset, end, total_chars };
    }
    let start_byte = byte_index(&text, offset);
    let end_byte = start_byte + byte_index(&text[start_byte..], end - offset);
    TextRead { text: text[start_byte..end_byte].to_owned(), offset, end, total_chars }
}

/// The byte index of the `chars`-th character, or the length when past the end.
fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counts_characters_not_bytes() {
        let r = window("héllo wörld".into(), ReadOptions { offset: 1, max_chars: Some(4) });
        assert_eq!((r.text.as_str(), r.offset, r.end, r.total_chars), ("éllo", 1, 5, 11));
        assert_eq!(
            r.notice().unwrap(),
            "[Truncated: showing characters 1-5 of 11. To read the rest, read again with offset 5.]"
        );
    }

    #[test]
    fn window_past_the_end_is_empty_and_not_truncated() {
        let r = window("abc".into(), ReadOptions { offset: 10, max_chars: Some(2) });
        assert_eq!((r.text.as_str(), r.end, r.is_truncated()), ("", 3, false));
    }

    #[test]
    fn whole_file_is_not_truncated() {
        let r = window("abc".into(), ReadOptions::default());
        assert_eq!((r.text.as_str(), r.notice()), ("abc", None));
    }
}
