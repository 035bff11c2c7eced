//! Secrets Warden writes into its private folder for a process's lifetime
//! (the MCP server's token, the console's login URL), named after that
//! process. Each is locked while its process lives; a file of its kind
//! found unlocked was left by a process that died (killed, say) and is
//! removed when the next one of that kind is written.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};

use crate::system_dirs::private_folder;

/// A file of [`private_folder`] this process wrote, locked for as long as
/// this lives. Dropping it unlocks the file, and leaves it where it is.
#[derive(Debug)]
pub struct PrivateFile {
    pub path: PathBuf,
    _lock: File,
}

/// Writes `contents` into a new file `{kind}-{this process's id}{suffix}`
/// of [`private_folder`] that only this user may read (one left by a dead
/// process of this id goes first), after removing those of its kind that
/// dead processes left. For secrets: a token, the console's login URL.
pub fn write_private_file(kind: &str, suffix: &str, contents: &str) -> Result<PrivateFile, String> {
    write_in(&private_folder()?, kind, suffix, contents)
}

fn write_in(folder: &Path, kind: &str, suffix: &str, contents: &str) -> Result<PrivateFile, String> {
    remove_left_by_dead_processes(folder, kind, suffix);
    let path = folder.join(format!("{kind}-{}{suffix}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&path)
        .map_err(|e| format!("cannot make {}: {e}", path.display()))?;
    // Locked before it holds anything: an empty file may be one being written.
    flock(&out, FlockOperation::LockShared).map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    out.write_all(contents.as_bytes()).and_then(|()| out.sync_all()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(PrivateFile { path, _lock: out })
}

/// Removes the files `{kind}-{digits}{suffix}` of `folder` that nobody
/// holds and that hold something: their processes are gone.
fn remove_left_by_dead_processes(folder: &Path, kind: &str, suffix: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix(kind)?.strip_prefix('-')?.strip_suffix(suffix)) else { continue };
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let path = entry.path();
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        let Ok(file) = std::fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(&path) else { continue };
        let Ok(meta) = file.metadata() else { continue };
        if !meta.is_file() || meta.len() == 0 || flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        // Still the file locked, not one made under its name since.
        if std::fs::symlink_metadata(&path).is_ok_and(|now| (now.dev(), now.ino()) == (meta.dev(), meta.ino())) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_a_dead_process_left_goes_and_a_living_ones_stays() {
        let folder = tempfile::tempdir().unwrap();
        let at = |name: &str| folder.path().join(name);
        // Left by a process killed: unlocked, written.
        std::fs::write(at("mcp-4000001.token"), "dead\n").unwrap();
        // A living server's, locked.
        std::fs::write(at("mcp-4000002.token"), "alive\n").unwrap();
        let living = File::open(at("mcp-4000002.token")).unwrap();
        flock(&living, FlockOperation::LockShared).unwrap();
        // One being made, not written yet; another kind; not a process's.
        for name in ["mcp-4000003.token", "console-4000004.url", "mcp-40x.token", "mcp-.token"] {
            std::fs::write(at(name), if name.ends_with("3.token") { "" } else { "x\n" }).unwrap();
        }
        let written = write_in(folder.path(), "mcp", ".token", "t\n").unwrap();
        assert_eq!(written.path, at(&format!("mcp-{}.token", std::process::id())));
        let mut left: Vec<String> = std::fs::read_dir(folder.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        let mut expected = vec!["console-4000004.url", "mcp-.token", "mcp-40x.token", "mcp-4000002.token", "mcp-4000003.token"];
        let own = format!("mcp-{}.token", std::process::id());
        expected.push(&own);
        expected.sort();
        assert_eq!(left, expected);
        // This process's own is locked as long as it is held.
        let again = File::open(&written.path).unwrap();
        assert_eq!(flock(&again, FlockOperation::NonBlockingLockExclusive), Err(rustix::io::Errno::WOULDBLOCK));
        drop(written);
        flock(&again, FlockOperation::NonBlockingLockExclusive).unwrap();
    }
}
