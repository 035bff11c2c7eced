//! A Landlock command's own temporary folder (its `TMPDIR`): `cmd-*` in
//! Warden's private folder, locked for as long as its Warden holds it. One
//! left by a Warden that was killed is unlocked: the next command's Warden
//! removes it, with whatever its command left there (on a tmpfs `/run`,
//! memory that nothing would give back otherwise).

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use rustix::fs::{flock, FlockOperation};

const PREFIX: &str = "cmd-";
/// Put before the name of a folder a sweep could not remove.
const STUCK: &str = "stuck-";
/// A folder changed this recently may be one whose maker has not locked it
/// yet: it stays until a later sweep.
const GRACE: Duration = Duration::from_secs(10);

pub struct Scratch {
    // Declared first, so dropped first: removed while still locked.
    dir: tempfile::TempDir,
    _lock: File,
}

impl Scratch {
    /// A new folder in `private`, locked, after the unlocked ones there are removed.
    pub fn new(private: &Path) -> std::io::Result<Scratch> {
        sweep(private);
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(private)?;
        let lock = open_folder(dir.path())?;
        // Shared, and waited for: a sweep holds one exclusively only while it
        // looks at its age, and this one is young.
        flock(&lock, FlockOperation::LockShared)?;
        Ok(Scratch { dir, _lock: lock })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes every `cmd-*` folder in `private` that nobody holds and that has
/// not changed for [`GRACE`].
pub fn sweep(private: &Path) {
    let Ok(entries) = std::fs::read_dir(private) else { return };
    for entry in entries.flatten() {
        if !entry.file_name().as_bytes().starts_with(PREFIX.as_bytes()) {
            continue;
        }
        let path = entry.path();
        let Ok(folder) = open_folder(&path) else { continue };
        if flock(&folder, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        let young = folder.metadata().and_then(|m| m.modified()).map_or(true, |changed| changed.elapsed().map_or(true, |age| age < GRACE));
        // Never follows a link the command left there.
        if !young && std::fs::remove_dir_all(&path).is_err() {
            // What cannot be removed (a tree deeper than the descriptors its
            // removal takes, say) is tried once, not before every command.
            let mut stuck = std::ffi::OsString::from(STUCK);
            stuck.push(entry.file_name());
            let _ = std::fs::rename(&path, path.with_file_name(stuck));
        }
    }
}

/// A folder (never a link to one), opened to be locked.
fn open_folder(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, seconds: u64) {
        let then = std::time::SystemTime::now() - Duration::from_secs(seconds);
        File::open(path).unwrap().set_modified(then).unwrap();
    }

    #[test]
    fn a_killed_wardens_folder_goes_with_what_its_command_left() {
        let private = tempfile::tempdir().unwrap();
        let left = private.path().join("cmd-left");
        std::fs::create_dir_all(left.join("deep/er")).unwrap();
        std::fs::write(left.join("deep/er/big"), vec![7u8; 4096]).unwrap();
        age(&left, 60);
        let scratch = Scratch::new(private.path()).unwrap();
        assert!(!left.exists(), "an unlocked folder of a minute ago is removed");
        assert!(scratch.path().is_dir());
    }

    #[test]
    fn a_living_commands_folder_stays_however_old() {
        let private = tempfile::tempdir().unwrap();
        let living = Scratch::new(private.path()).unwrap();
        std::fs::write(living.path().join("work"), b"in use").unwrap();
        age(living.path(), 3600);
        let _next = Scratch::new(private.path()).unwrap();
        assert_eq!(std::fs::read(living.path().join("work")).unwrap(), b"in use");
        let path = living.path().to_owned();
        drop(living);
        assert!(!path.exists(), "its Warden removes it when done");
    }

    #[test]
    fn a_young_unlocked_folder_stays_for_its_maker_to_lock() {
        let private = tempfile::tempdir().unwrap();
        let young = private.path().join("cmd-being-made");
        std::fs::create_dir(&young).unwrap();
        sweep(private.path());
        assert!(young.is_dir());
        age(&young, 11);
        sweep(private.path());
        assert!(!young.exists());
    }

    #[test]
    fn a_folder_that_cannot_be_removed_is_tried_once_not_before_every_command() {
        if !rustix::process::geteuid().is_root() {
            return; // Only root can make a file immutable; CI runs as root.
        }
        let private = tempfile::tempdir().unwrap();
        let old = private.path().join("cmd-immutable");
        std::fs::create_dir(&old).unwrap();
        let pinned = old.join("pinned");
        std::fs::write(&pinned, b"").unwrap();
        let chattr = |flag: &str| assert!(std::process::Command::new("chattr").arg(flag).arg(&pinned).status().unwrap().success());
        let stuck = private.path().join("stuck-cmd-immutable");
        chattr("+i");
        age(&old, 60);
        sweep(private.path());
        let found = (old.exists(), stuck.join("pinned").exists());
        chattr_off(&stuck.join("pinned"), &pinned);
        assert_eq!(found, (false, true), "(still under its name, moved aside)");
    }

    fn chattr_off(moved: &Path, original: &Path) {
        let target = if moved.exists() { moved } else { original };
        std::process::Command::new("chattr").arg("-i").arg(target).status().unwrap();
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
        age(&old, 60);
        let other = private.path().join("console-1-2.lock");
        std::fs::write(&other, b"").unwrap();
        sweep(private.path());
        assert!(!old.exists());
        assert_eq!(std::fs::read(outside.path().join("keep")).unwrap(), b"x");
        assert!(private.path().join("cmd-link").symlink_metadata().is_ok(), "a link is not a folder of ours");
        assert!(other.exists());
    }
}
