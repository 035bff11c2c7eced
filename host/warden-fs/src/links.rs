//! Following symlinks in the last path component under a handle, checking a
//! mount's suffix rule on every name passed on the way. Shared by this crate's
//! operations and by runtimes that hand a mount's handle to a guest.

use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;
use warden_policy::Rules;

/// Symlink hops followed in a final path component before giving up (as Linux does).
const MAX_SYMLINK_HOPS: usize = 40;

/// Where a path's last component leads.
#[derive(Debug, PartialEq, Eq)]
pub enum Followed {
    /// The handle-relative path after every symlink hop; it is not a symlink,
    /// or it does not exist.
    Path(PathBuf),
    /// A name on the way has a suffix the rules refuse.
    Refused { name: String },
}

/// Follows `rel` under `dir` hop by hop. `..` and absolute targets are left to
/// cap-std, which refuses any that leave `dir`.
pub fn follow_final(dir: &Dir, rel: &Path, rules: &Rules) -> io::Result<Followed> {
    let mut rel = rel.to_owned();
    for _ in 0..MAX_SYMLINK_HOPS {
        match dir.symlink_metadata(&rel) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = dir.read_link(&rel)?;
                rel = rel.parent().unwrap_or(Path::new("")).join(link);
                if let Some(Component::Normal(name)) = rel.components().next_back() {
                    let name = name.to_string_lossy();
                    if !rules.allows_name(&name) {
                        return Ok(Followed::Refused { name: name.into_owned() });
                    }
                }
            }
            _ => return Ok(Followed::Path(rel)),
        }
    }
    Err(io::Error::from_raw_os_error(rustix::io::Errno::LOOP.raw_os_error()))
}
