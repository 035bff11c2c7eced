//! Secrets Warden writes into its private folder for a process's lifetime
//! (the MCP server's token, the console's login URL), named after that
//! process. Each is locked while its process lives; a file of its kind
//! found unlocked was left by a process that died (killed, say) and is
//! removed when the next one of that kind is written.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    // One a dead process of this id left, even empty; waiting out a process
    // that is removing it just now. One a living process holds stays, and
    // this one is refused below.
    remove_unheld(&path, false, OWN_NAME_PATIENCE);
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

/// How long a process waits for another that removes a file under its name.
const OWN_NAME_PATIENCE: Duration = Duration::from_secs(1);
/// A file is locked a moment after it is made; one empty and unlocked for
/// longer was left by a process killed in between.
const EMPTY_GRACE: Duration = Duration::from_secs(10);

/// Removes the files `{kind}-{digits}{suffix}` of `folder` that nobody
/// holds: their processes are gone. An empty one stays for a while: its
/// maker may be about to lock it.
fn remove_left_by_dead_processes(folder: &Path, kind: &str, suffix: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix(kind)?.strip_prefix('-')?.strip_suffix(suffix)) else { continue };
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        remove_unheld(&entry.path(), true, Duration::ZERO);
    }
}

/// Removes the file at `path` once this process holds it exclusively (so no
/// living process holds it), waiting up to `patience` for that, and only
/// while `path` still names it. Every remover holds the file first, so two
/// never remove by one name a file made since. With `young_empty_stays`, an
/// empty file made less than [`EMPTY_GRACE`] ago stays: its maker may not
/// have locked it yet.
fn remove_unheld(path: &Path, young_empty_stays: bool, patience: Duration) {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let Ok(file) = std::fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(path) else { return };
    let Ok(meta) = file.metadata() else { return };
    let young = || meta.modified().is_ok_and(|made| made.elapsed().map_or(true, |age| age < EMPTY_GRACE));
    if !meta.is_file() || (young_empty_stays && meta.len() == 0 && young()) {
        return;
    }
    let until = Instant::now() + patience;
    while flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        if Instant::now() >= until {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Still the file locked, not one made under its name since.
    if std::fs::symlink_metadata(path).is_ok_and(|now| (now.dev(), now.ino()) == (meta.dev(), meta.ino())) {
        let _ = std::fs::remove_file(path);
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
        // Left empty a minute ago by a process killed before it locked it.
        let stale = File::create(at("mcp-4000005.token")).unwrap();
        stale.set_modified(std::time::SystemTime::now() - Duration::from_secs(60)).unwrap();
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

    #[test]
    fn a_secret_under_this_process_id_that_another_process_holds_is_not_removed() {
        // Another process of this id (in another PID namespace, or one that
        // reused the id), whose file is locked while it lives.
        let folder = tempfile::tempdir().unwrap();
        let own = folder.path().join(format!("mcp-{}.token", std::process::id()));
        std::fs::write(&own, "theirs\n").unwrap();
        let theirs = File::open(&own).unwrap();
        flock(&theirs, FlockOperation::LockShared).unwrap();
        let refused = write_in(folder.path(), "mcp", ".token", "t\n").unwrap_err();
        assert!(refused.starts_with(&format!("cannot make {}: ", own.display())), "{refused}");
        assert_eq!(std::fs::read_to_string(&own).unwrap(), "theirs\n");
        // Left by a dead one (nobody holds it), even empty: replaced.
        drop(theirs);
        std::fs::write(&own, "").unwrap();
        let written = write_in(folder.path(), "mcp", ".token", "t\n").unwrap();
        assert_eq!(std::fs::read_to_string(&written.path).unwrap(), "t\n");
    }
}
