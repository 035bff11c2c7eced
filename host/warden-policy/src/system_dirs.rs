//! Host folders that may never be mounted: the OS itself and other users' homes.

use std::path::{Path, PathBuf};

const SYSTEM_DIRS: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/boot", "/dev", "/proc", "/sys", "/root", "/var",
    "/lib", "/lib32", "/lib64", "/libx32",
    // macOS spells /etc and /var through /private.
    "/private/etc", "/private/var",
];

/// Scratch areas under /var that are fine to mount.
const EXCEPTIONS: &[&str] = &["/var/tmp", "/var/folders", "/private/var/tmp", "/private/var/folders"];

/// The system folder `path` is or lies in, if any. `/` itself counts.
pub fn system_dir_of(path: &Path) -> Option<PathBuf> {
    if path == Path::new("/") {
        return Some(PathBuf::from("/"));
    }
    if EXCEPTIONS.iter().any(|e| path.starts_with(e)) {
        return None;
    }
    SYSTEM_DIRS
        .iter()
        .find(|dir| path.starts_with(dir))
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_system_dirs_are_refused() {
        for p in ["/", "/etc", "/etc/ssh", "/usr/lib", "/var", "/var/lib/x", "/proc/self", "/root"] {
            assert!(system_dir_of(Path::new(p)).is_some(), "{p}");
        }
    }

    #[test]
    fn scratch_and_user_dirs_are_allowed() {
        for p in ["/var/tmp", "/var/tmp/x", "/var/folders/ab", "/tmp/x", "/home/u/p", "/etcetera", "/variable"] {
            assert_eq!(system_dir_of(Path::new(p)), None, "{p}");
        }
    }
}
