//! Secrets Warden writes into its private folder for a process's lifetime
//! (the MCP server's token, the console's login URL), named after that
//! process. Each is written whole and locked before it has its name, and
//! stays locked while its process lives; a file of its kind found unlocked
//! was left by a process that died (killed, say) and is removed when the
//! next one of that kind is written.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};

use crate::system_dirs::private_folder;

/// A file of [`private_folder`] this process wrote, locked for as long as
/// this lives. Dropping it unlocks the file and leaves it where it is;
/// [`PrivateFile::remove`] removes it.
#[derive(Debug)]
pub struct PrivateFile {
    pub path: PathBuf,
    file: File,
}

impl PrivateFile {
    /// Removes the file, if its name still names it (never a file someone
    /// made under that name since).
    pub fn remove(self) {
        if self.file.metadata().is_ok_and(|meta| names(&self.path, &meta)) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
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
    // One a dead process of this id left; waiting out a process that is
    // removing it just now. One a living process holds stays, and this one
    // is refused below.
    remove_unheld(&path, false, OWN_NAME_PATIENCE);
    let file = write_locked_then_name(folder, &path, contents.as_bytes()).map_err(|e| format!("cannot make {}: {e}", path.display()))?;
    Ok(PrivateFile { path, file })
}

/// How long a process waits for another that removes a file under its name.
const OWN_NAME_PATIENCE: Duration = Duration::from_secs(1);
/// How long an empty file nobody holds may be one being made.
const EMPTY_GRACE: Duration = Duration::from_secs(10);

/// A new file at `path` that holds `contents` and is locked from the moment
/// it has that name, so that nobody ever finds it there unlocked, or half
/// written, while this process lives. Made unnamed (`O_TMPFILE`) where the
/// kernel and file system can; else under a staged name beside it.
fn write_locked_then_name(folder: &Path, path: &Path, contents: &[u8]) -> std::io::Result<File> {
    #[cfg(target_os = "linux")]
    if let Some(file) = unnamed::write_locked_then_name(folder, path, contents)? {
        return Ok(file);
    }
    staged::write_locked_then_name(folder, path, contents)
}

/// Locked before anything is written: nobody else can reach the file yet,
/// so this never waits.
fn lock_and_fill(mut file: File, contents: &[u8]) -> std::io::Result<File> {
    flock(&file, FlockOperation::NonBlockingLockShared)?;
    file.write_all(contents)?;
    file.sync_all()?;
    Ok(file)
}

#[cfg(target_os = "linux")]
mod unnamed {
    use super::*;
    use rustix::fs::{AtFlags, Mode, OFlags, CWD};
    use rustix::io::Errno;

    /// `None` where no unnamed file can be made or named (no `O_TMPFILE`,
    /// no `/proc`).
    pub(super) fn write_locked_then_name(folder: &Path, path: &Path, contents: &[u8]) -> std::io::Result<Option<File>> {
        let fd = match rustix::fs::open(folder, OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, Mode::from_raw_mode(0o600)) {
            Ok(fd) => fd,
            // Kernels before 3.11 read O_TMPFILE as a folder opened for writing (EISDIR).
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let file = lock_and_fill(File::from(fd), contents)?;
        // Read before it has a name: nothing can fail between the link and its check.
        let written = file.metadata()?;
        let unnamed = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        // A link never replaces: a file already there is another's. Any other
        // failure (no `/proc`, a file system that links no unnamed file) leaves
        // the staged way.
        match rustix::fs::linkat(CWD, &unnamed, CWD, path, AtFlags::SYMLINK_FOLLOW) {
            Ok(()) => {}
            Err(Errno::EXIST) => return Err(Errno::EXIST.into()),
            Err(_) => return Ok(None),
        }
        // What `/proc` linked there must be this very file.
        if !names(path, &written) {
            return Err(std::io::Error::other("the file linked there is not the one written"));
        }
        Ok(Some(file))
    }
}

/// Where no unnamed file can be made: written and locked under a staged name
/// (`.{name}.{unique}`), then linked at its name and unlinked there.
mod staged {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    pub(super) fn write_locked_then_name(folder: &Path, path: &Path, contents: &[u8]) -> std::io::Result<File> {
        let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| std::io::Error::other("a private file needs a name"))?;
        let (staged, made) = make_unique(folder, name)?;
        let linked = lock_and_fill(made, contents).and_then(|file| std::fs::hard_link(&staged, path).map(|()| file));
        let _ = std::fs::remove_file(&staged);
        linked
    }

    fn make_unique(folder: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        loop {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
            let unique = nanos ^ COUNT.fetch_add(1, Ordering::Relaxed).rotate_left(32);
            let staged = folder.join(format!(".{name}.{unique:016x}"));
            let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
            match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(flags.bits() as i32).open(&staged) {
                Ok(file) => return Ok((staged, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether `name` is a staged name of a file `{kind}-{digits}{suffix}`.
    pub(super) fn is_staged(name: &str, kind: &str, suffix: &str) -> bool {
        let Some((named, unique)) = name.strip_prefix('.').and_then(|n| n.rsplit_once('.')) else { return false };
        unique.len() == 16 && unique.bytes().all(|b| b.is_ascii_hexdigit()) && is_of_kind(named, kind, suffix)
    }
}

/// Whether `name` is `{kind}-{digits}{suffix}`.
fn is_of_kind(name: &str, kind: &str, suffix: &str) -> bool {
    name.strip_prefix(kind)
        .and_then(|n| n.strip_prefix('-')?.strip_suffix(suffix))
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the files `{kind}-{digits}{suffix}` of `folder`, and their staged
/// names, that nobody holds: their processes are gone. An empty one stays
/// while it is young: a staged file is locked a moment after it is made (and
/// so was a file at its name, by Wardens before this one).
fn remove_left_by_dead_processes(folder: &Path, kind: &str, suffix: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if is_of_kind(name, kind, suffix) || staged::is_staged(name, kind, suffix) {
            remove_unheld(&entry.path(), true, Duration::ZERO);
        }
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
    if names(path, &meta) {
        let _ = std::fs::remove_file(path);
    }
}

/// Whether `path` still names the file `meta` was read from.
fn names(path: &Path, meta: &std::fs::Metadata) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|now| (now.dev(), now.ino()) == (meta.dev(), meta.ino()))
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
        // Empty and young: one a Warden before this one was making (it locked it after).
        std::fs::write(at("mcp-4000003.token"), "").unwrap();
        // Empty and old: left by a process killed.
        let stale_final = File::create(at("mcp-4000007.token")).unwrap();
        stale_final.set_modified(std::time::SystemTime::now() - Duration::from_secs(60)).unwrap();
        // Another kind; not a process's.
        for name in ["console-4000004.url", "mcp-40x.token", "mcp-.token", ".mcp-40x.token.0123456789abcdef"] {
            std::fs::write(at(name), "x\n").unwrap();
        }
        // Staged: one being made (not locked yet), and one a process killed a minute ago left.
        std::fs::write(at(".mcp-4000005.token.0123456789abcdef"), "").unwrap();
        let stale = File::create(at(".mcp-4000006.token.fedcba9876543210")).unwrap();
        stale.set_modified(std::time::SystemTime::now() - Duration::from_secs(60)).unwrap();
        let written = write_in(folder.path(), "mcp", ".token", "t\n").unwrap();
        assert_eq!(written.path, at(&format!("mcp-{}.token", std::process::id())));
        let mut left: Vec<String> = std::fs::read_dir(folder.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        let mut expected = vec![".mcp-4000005.token.0123456789abcdef", ".mcp-40x.token.0123456789abcdef", "console-4000004.url", "mcp-.token", "mcp-40x.token", "mcp-4000002.token", "mcp-4000003.token"];
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

    #[test]
    fn a_secret_made_under_a_staged_name_is_whole_and_locked_at_its_name_and_leaves_no_staged_name() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("mcp-4000001.token");
        let file = staged::write_locked_then_name(folder.path(), &path, b"t\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "t\n");
        assert_eq!(flock(File::open(&path).unwrap(), FlockOperation::NonBlockingLockExclusive), Err(rustix::io::Errno::WOULDBLOCK));
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 1, "a staged name is left");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        // A name taken is never replaced.
        let taken = staged::write_locked_then_name(folder.path(), &path, b"u\n").unwrap_err();
        assert_eq!(taken.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "t\n");
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 1, "a staged name is left");
        drop(file);
    }

    /// Every opening of a file in the folder (its making included) waits for
    /// this test's answer (fanotify's permission events, root only): a file
    /// that has its name by then must be locked already.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_secret_is_never_found_at_its_name_unlocked() {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let folder = tempfile::tempdir().unwrap();
        let watched = std::ffi::CString::new(folder.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: plain system calls on a descriptor this test owns.
        let fan = unsafe {
            let fan = libc::fanotify_init(libc::FAN_CLASS_CONTENT | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK, libc::O_RDONLY as u32);
            assert!(fan >= 0, "fanotify: {}", std::io::Error::last_os_error());
            let mask = libc::FAN_OPEN_PERM | libc::FAN_EVENT_ON_CHILD;
            assert_eq!(libc::fanotify_mark(fan, libc::FAN_MARK_ADD, mask, libc::AT_FDCWD, watched.as_ptr()), 0);
            OwnedFd::from_raw_fd(fan)
        };
        let path = folder.path().to_owned();
        let final_name = folder.path().join(format!("mcp-{}.token", std::process::id()));
        let writer = std::thread::spawn(move || write_in(&path, "mcp", ".token", "t\n").map(|w| w.path.clone()));
        let (mut opened, mut unlocked_at_its_name) = (0, 0);
        while !writer.is_finished() {
            let mut event = std::mem::MaybeUninit::<libc::fanotify_event_metadata>::uninit();
            let size = std::mem::size_of::<libc::fanotify_event_metadata>();
            // SAFETY: reads at most one event into `event`.
            if unsafe { libc::read(fan.as_raw_fd(), event.as_mut_ptr().cast(), size) } != size as isize {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            // SAFETY: filled whole by the read above.
            let event = unsafe { event.assume_init() };
            // SAFETY: the event's descriptor is this test's to close.
            let file = File::from(unsafe { OwnedFd::from_raw_fd(event.fd) });
            opened += 1;
            let at_its_name = std::fs::read_link(format!("/proc/self/fd/{}", event.fd)).is_ok_and(|p| p == final_name);
            if at_its_name && flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok() {
                unlocked_at_its_name += 1;
                flock(&file, FlockOperation::Unlock).unwrap();
            }
            let allow = libc::fanotify_response { fd: event.fd, response: libc::FAN_ALLOW };
            // SAFETY: writes one answer from `allow`.
            unsafe { libc::write(fan.as_raw_fd(), (&raw const allow).cast(), std::mem::size_of_val(&allow)) };
        }
        let written = writer.join().unwrap().unwrap();
        // Its own openings would wait for its own answers.
        drop(fan);
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "t\n");
        assert!(opened >= 1, "the making of the file was not seen");
        assert_eq!(unlocked_at_its_name, 0, "found at its name unlocked");
    }

    #[test]
    fn removing_a_secret_never_removes_a_file_made_under_its_name_since() {
        let folder = tempfile::tempdir().unwrap();
        let written = write_in(folder.path(), "console", ".url", "u\n").unwrap();
        let path = written.path.clone();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "another's\n").unwrap();
        written.remove();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "another's\n");
        std::fs::remove_file(&path).unwrap();
        let written = write_in(folder.path(), "console", ".url", "u\n").unwrap();
        written.remove();
        assert!(!path.exists());
    }
}
