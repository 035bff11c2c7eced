//! A Landlock command's own temporary folder (its `TMPDIR`): `cmd-*` in
//! Warden's private folder, locked for as long as its Warden holds it. One
//! left by a Warden that was killed is unlocked: the next command's Warden
//! removes it, with whatever its command left there (on a tmpfs `/run`,
//! memory that nothing would give back otherwise).
//!
//! Making a folder and locking it happen under `cmd.lock`, which a sweep
//! holds too: an unlocked folder a sweep finds is never one being made, so
//! no clock or grace period decides (a command can set its folder's times).
//! Under that lock the sweep only renames what it finds (`gone-*`, kept
//! locked); it removes them after giving the lock back.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};

use super::remove_tree::remove_tree;

const PREFIX: &str = "cmd-";
const SWEEP_LOCK: &str = "cmd.lock";
/// Put before the name of a folder set aside to be removed.
const GONE: &str = "gone-";
const PATIENCE: Duration = Duration::from_secs(2);
const RETRY: Duration = Duration::from_millis(10);

pub struct Scratch {
    path: PathBuf,
    /// Dropped after `drop` has removed the folder, so that no sweep takes it first.
    _lock: File,
}

impl Scratch {
    /// A new folder in `private`, locked, after the unlocked ones there are removed.
    pub fn new(private: &Path) -> std::io::Result<Scratch> {
        let sweeping = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(private.join(SWEEP_LOCK))?;
        let left = if wait_for(&sweeping) { set_aside_holding_the_lock(private) } else { Vec::new() };
        let path = tempfile::Builder::new().prefix(PREFIX).tempdir_in(private)?.keep();
        let made = lock_made(&path);
        drop(sweeping);
        // Removed with the sweep lock given back: a large tree holds up this command alone.
        for (_held, gone) in left {
            let _ = remove(&gone);
        }
        match made {
            Ok(lock) => Ok(Scratch { path, _lock: lock }),
            Err(e) => {
                let _ = remove(&path);
                Err(e)
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Removed while still locked; what cannot be removed now, a later sweep tries again.
        let _ = remove(&self.path);
    }
}

/// Takes the sweep lock, unless another process keeps it for [`PATIENCE`]
/// (stopped in the middle, or removing a large tree): a command is not held
/// up for long by another's, and makes its folder without a sweep then.
fn wait_for(sweeping: &File) -> bool {
    let started = Instant::now();
    loop {
        match flock(sweeping, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return true,
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) if started.elapsed() < PATIENCE => std::thread::sleep(RETRY),
            Err(_) => return false,
        }
    }
}

/// The folder just made at `path`, locked, if it is still there: made
/// without the sweep lock, a sweep may have removed it before the lock.
fn lock_made(path: &Path) -> std::io::Result<File> {
    let folder = open_folder(path)?;
    flock(&folder, FlockOperation::NonBlockingLockShared)?;
    if !crate::placeholders::names(path, &folder.metadata()?) {
        return Err(std::io::Error::other("the command's temporary folder was replaced before it was locked"));
    }
    Ok(folder)
}

/// Every `cmd-*` folder in `private` that nobody holds, renamed `gone-*`,
/// and every `gone-*` folder nobody holds (its sweeper killed): each locked,
/// to be removed once the sweep lock is given back.
fn set_aside_holding_the_lock(private: &Path) -> Vec<(File, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(private) else { return Vec::new() };
    let mut left = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let (made, gone) = (name.as_bytes().starts_with(PREFIX.as_bytes()), name.as_bytes().starts_with(GONE.as_bytes()));
        if !made && !gone {
            continue;
        }
        let path = entry.path();
        let Ok(folder) = open_folder(&path) else { continue };
        if flock(&folder, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        if gone {
            left.push((folder, path));
            continue;
        }
        let mut renamed = std::ffi::OsString::from(GONE);
        renamed.push(&name);
        let renamed = path.with_file_name(renamed);
        if std::fs::rename(&path, &renamed).is_ok() {
            left.push((folder, renamed));
        }
    }
    left
}

fn remove(path: &Path) -> std::io::Result<()> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => remove_tree(parent, name),
        _ => Err(std::io::ErrorKind::InvalidInput.into()),
    }
}

/// A folder (never a link to one), opened to be locked.
fn open_folder(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep lock, as another Warden holds it.
    fn hold_sweep_lock(private: &Path) -> File {
        let lock = File::options().read(true).write(true).create(true).truncate(false).open(private.join(SWEEP_LOCK)).unwrap();
        flock(&lock, FlockOperation::LockExclusive).unwrap();
        lock
    }

    #[test]
    fn a_killed_wardens_folder_goes_with_what_its_command_left() {
        let private = tempfile::tempdir().unwrap();
        let left = private.path().join("cmd-left");
        std::fs::create_dir_all(left.join("deep/er")).unwrap();
        std::fs::write(left.join("deep/er/big"), vec![7u8; 4096]).unwrap();
        let half_removed = private.path().join("gone-cmd-sweeper-killed");
        std::fs::create_dir_all(half_removed.join("rest")).unwrap();
        let scratch = Scratch::new(private.path()).unwrap();
        assert!(!left.exists(), "an unlocked folder is removed");
        assert!(!half_removed.exists(), "so is one a killed sweeper left");
        assert!(scratch.path().is_dir());
        let names: Vec<_> = std::fs::read_dir(private.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}: cmd.lock and the new folder");
    }

    #[test]
    fn a_living_commands_folder_stays_and_goes_with_its_warden() {
        let private = tempfile::tempdir().unwrap();
        let living = Scratch::new(private.path()).unwrap();
        std::fs::write(living.path().join("work"), b"in use").unwrap();
        let _next = Scratch::new(private.path()).unwrap();
        assert_eq!(std::fs::read(living.path().join("work")).unwrap(), b"in use");
        let path = living.path().to_owned();
        drop(living);
        assert!(!path.exists(), "its Warden removes it when done");
    }

    #[test]
    fn a_folder_being_made_is_not_swept_before_its_maker_locks_it() {
        let private = tempfile::tempdir().unwrap();
        // Another Warden between its mkdtemp and its lock holds the sweep lock.
        let maker = hold_sweep_lock(private.path());
        let made = private.path().join("cmd-being-made");
        std::fs::create_dir(&made).unwrap();
        let other = {
            let private = private.path().to_owned();
            std::thread::spawn(move || Scratch::new(&private).map(|s| s.path().to_owned()))
        };
        // Without the sweep lock the other sweeps at once; it is given half its patience to.
        let started = Instant::now();
        while !other.is_finished() && started.elapsed() < PATIENCE / 2 {
            std::thread::sleep(RETRY);
        }
        assert!(!other.is_finished(), "the other Warden waits for the sweep lock");
        let held = open_folder(&made).unwrap();
        flock(&held, FlockOperation::LockShared).unwrap();
        drop(maker);
        let others = other.join().unwrap().unwrap();
        assert!(made.is_dir(), "swept before its maker could lock it");
        assert!(!others.exists(), "the other's own folder went with its Scratch");
    }

    #[test]
    fn a_sweep_lock_kept_by_a_stopped_warden_holds_a_command_up_two_seconds_at_most() {
        let private = tempfile::tempdir().unwrap();
        let _stopped = hold_sweep_lock(private.path());
        let left = private.path().join("cmd-left");
        std::fs::create_dir(&left).unwrap();
        let started = Instant::now();
        let scratch = Scratch::new(private.path()).unwrap();
        let waited = started.elapsed();
        assert!(scratch.path().is_dir());
        assert!(left.is_dir(), "no sweep without the lock");
        assert!((PATIENCE..PATIENCE * 5).contains(&waited), "waited {waited:?}");
    }

    #[test]
    fn a_sweep_follows_no_link_and_touches_no_other_name() {
        let private = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path(), private.path().join("cmd-link")).unwrap();
        let old = private.path().join("cmd-old");
        std::fs::create_dir(&old).unwrap();
        std::os::unix::fs::symlink(outside.path(), old.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("keep"), old.join("file")).unwrap();
        let other = private.path().join("console-1-2.lock");
        std::fs::write(&other, b"").unwrap();
        let _scratch = Scratch::new(private.path()).unwrap();
        assert!(!old.exists());
        assert_eq!(std::fs::read(outside.path().join("keep")).unwrap(), b"x");
        assert!(private.path().join("cmd-link").symlink_metadata().is_ok(), "a link is not a folder of ours");
        assert!(other.exists());
    }
}
