//! The files Warden makes where a protected path is missing, so that a
//! bind can hold the name: nothing can be made there while a command runs.
//! A missing `.git/commondir` gets one that names the git folder itself
//! (`.`), so that git takes config and hooks from that same folder, bound
//! read-only onto itself: one left behind (Warden killed) changes little
//! (git then ignores `core.worktree` and `core.bare` there); any other is an
//! empty file with `/dev/null` bound over it (git skips a device, so a
//! command's `git add -A` stages no placeholder).
//!
//! Several sandboxes may cover one path at once: two commands in one mount,
//! a command and a container, two Wardens. Removing a file on the host lifts
//! the binds over it in every other sandbox, so each sandbox holds a shared
//! lock on every file it binds read-only for as long as it lives (a
//! container's runner holds them for its container), and a placeholder is
//! removed only by the user that can take the exclusive lock: the last one.
//! Placeholders carry a mark (an extended attribute), so that the last user
//! removes one another sandbox made; where the file system keeps no mark,
//! only a sandbox that made one removes it.

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::{flock, FlockOperation, XattrFlags};

use crate::error::ShellError;
use crate::shield::Shield;

const MARK: &str = "user.warden.placeholder";
/// How long a file another process holds exclusively (a placeholder being
/// removed) is waited for before the command is refused.
const PATIENCE: Duration = Duration::from_secs(2);
const RETRY: Duration = Duration::from_millis(20);
/// Open errors of files that cannot be Warden's placeholders: ELOOP (a
/// symlink), EACCES and EPERM (not readable by Warden), ENXIO and ENODEV
/// (a socket, a device).
const NEEDS_NO_LOCK: [i32; 5] = [40, 13, 1, 6, 19];

/// The files a sandbox binds read-only, each locked shared while this lives.
/// Dropped, it removes the placeholders among them nobody else holds.
pub struct Held {
    files: Vec<HeldFile>,
    /// Handed to a container's runner, which holds them from now on.
    handed_over: bool,
}

struct HeldFile {
    path: PathBuf,
    file: File,
    /// Made by this sandbox, or marked as a placeholder by another.
    placeholder: bool,
}

impl Held {
    /// Makes the shield's placeholders, and locks them and every file it
    /// binds read-only. A file that another sandbox removes meanwhile is made
    /// again, as a placeholder.
    pub fn take(shield: &Shield) -> Result<Held, ShellError> {
        let mut held = Held::none();
        // The shield found these missing: made first, looked for only if something is there by now.
        for path in &shield.placeholders {
            match make_locked(path) {
                Ok(Some(file)) => held.files.push(HeldFile { path: path.clone(), file, placeholder: true }),
                _ => held.files.extend(hold(path, true)?),
            }
        }
        for path in &shield.read_only {
            held.files.extend(hold(path, true)?);
        }
        Ok(held)
    }

    /// Nothing held: for a sandbox that binds nothing read-only.
    pub fn none() -> Held {
        Held { files: Vec::new(), handed_over: false }
    }

    /// Locks those of `paths` that are there, making none.
    pub fn take_existing(paths: &[PathBuf]) -> Result<Held, ShellError> {
        let mut held = Held::none();
        for path in paths {
            held.files.extend(hold(path, false)?);
        }
        Ok(held)
    }

    /// The placeholders held (to remove when a container goes).
    pub fn placeholders(&self) -> Vec<PathBuf> {
        self.files.iter().filter(|f| f.placeholder).map(|f| f.path.clone()).collect()
    }

    /// The open files, whose copies carry the locks (a runner keeps them).
    pub fn files(&self) -> Vec<BorrowedFd<'_>> {
        self.files.iter().map(|f| f.file.as_fd()).collect()
    }

    /// Their holder is a container's runner now: nothing is removed here.
    pub fn handed_over(mut self) {
        self.handed_over = true;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.handed_over {
            return;
        }
        // Marked since it was held: made by a sandbox that had not marked it yet.
        for held in self.files.iter().filter(|f| f.placeholder || marked(&f.file)) {
            remove_if_unused(&held.path, &held.file);
        }
    }
}

/// Removes each of `placeholders` (those a container held, its runner gone
/// now) that is still a placeholder nobody else holds: marked, or the very
/// file `covers` recorded there (a file someone made there since is theirs).
pub fn remove_unused(placeholders: &[PathBuf], covers: &[crate::container::Cover]) {
    for path in placeholders {
        let Ok(file) = open_no_follow(path) else { continue };
        let Ok(meta) = file.metadata() else { continue };
        let now = crate::container::Cover::of(path);
        let recorded = covers.iter().any(|c| c.path == *path && (c.dev, c.ino, c.ctime) == (now.dev, now.ino, now.ctime) && now.ino == meta.ino());
        if recorded || marked(&file) {
            remove_if_unused(path, &file);
        }
    }
}

/// `path`, locked shared: `None` for what needs no lock (a folder, a device,
/// a file Warden may not read: none of them is a placeholder to remove).
fn hold(path: &Path, make_missing: bool) -> Result<Option<HeldFile>, ShellError> {
    let refused = |why: String| ShellError::SandboxSetup { reason: format!("cannot cover {}: {why}", path.display()) };
    let started = std::time::Instant::now();
    let mut made = false;
    loop {
        if started.elapsed() > PATIENCE {
            return Err(refused("it keeps changing, or another process keeps it locked".into()));
        }
        let file = match open_no_follow(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !make_missing => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match make_locked(path) {
                    Ok(Some(file)) => return Ok(Some(HeldFile { path: path.to_owned(), file, placeholder: true })),
                    // Something is there now: held as it is, above.
                    Ok(None) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {}
                    Err(e) => return Err(refused(format!("cannot make a placeholder there ({e})"))),
                }
                match make(path) {
                    Ok(()) => made = true,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(refused(format!("cannot make a placeholder there ({e})"))),
                }
                continue;
            }
            // What cannot be a placeholder (a symlink, a socket, a file Warden
            // may not read) needs no lock; any other failure (no descriptors
            // left, say) must not leave one bound without its lock.
            Err(e) if matches!(e.raw_os_error(), Some(code) if NEEDS_NO_LOCK.contains(&code)) => return Ok(None),
            Err(e) => return Err(refused(format!("cannot open it to lock it ({e})"))),
        };
        let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
        if !meta.is_file() {
            return Ok(None);
        }
        match flock(&file, FlockOperation::NonBlockingLockShared) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                std::thread::sleep(RETRY);
                continue;
            }
            Err(e) => return Err(refused(format!("cannot lock it ({e})"))),
        }
        // Removed (and perhaps made again) between the open and the lock.
        if !names(path, &meta) {
            continue;
        }
        let placeholder = made || marked(&file);
        return Ok(Some(HeldFile { path: path.to_owned(), file, placeholder }));
    }
}

/// Whether the placeholder at `path` is bound onto itself (it holds what
/// git must read there) rather than covered by `/dev/null`.
pub fn bound_onto_itself(path: &Path) -> bool {
    !content(path).is_empty()
}

/// A new placeholder at `path`, locked before anyone else can lock it
/// exclusively to remove it: `None` if something is there already. Where
/// the file system or the kernel cannot make it so, `Unsupported`: [`make`]
/// makes one.
fn make_locked(path: &Path) -> std::io::Result<Option<File>> {
    match content(path) {
        b"" => make_empty_locked(path),
        whole => make_unnamed_locked(path, whole),
    }
}

/// An empty placeholder is whole from the moment it is made, so it is made
/// at its name (an unnamed file costs ext4 its orphan list, twice, for each
/// of a run's twenty placeholders), locked, then marked. Another sandbox
/// that opens it before the mark holds it as someone's own file; it looks
/// for the mark again when it ends (`Held`'s drop), so the last holder
/// still removes it.
fn make_empty_locked(path: &Path) -> std::io::Result<Option<File>> {
    use rustix::fs::{Mode, OFlags, CWD};
    let flags = OFlags::CREATE | OFlags::EXCL | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = match rustix::fs::openat(CWD, path, flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => File::from(fd),
        Err(rustix::io::Errno::EXIST) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    claim_made(file).map(Some)
}

/// Locks and marks a placeholder this process has just made at its name.
/// Only a process other than Warden can lock a file nobody has marked yet;
/// then the file is marked all the same (else it would pass for the user's
/// own for good), and whichever sandbox holds it next removes it.
fn claim_made(file: File) -> std::io::Result<File> {
    let locked = flock(&file, FlockOperation::NonBlockingLockShared);
    mark_read_only(&file)?;
    locked?;
    Ok(file)
}

/// A placeholder with content (`commondir`), made whole, marked and locked
/// before it has a name (an `O_TMPFILE`), then linked there unless something
/// is there by then: `None` if something is. Without unnamed files or
/// without `/proc`, `Unsupported`.
fn make_unnamed_locked(path: &Path, whole: &[u8]) -> std::io::Result<Option<File>> {
    use rustix::fs::{AtFlags, Mode, OFlags, CWD};
    use rustix::io::Errno;
    let unsupported = || std::io::Error::from(std::io::ErrorKind::Unsupported);
    let folder = path.parent().ok_or_else(|| std::io::Error::other("a placeholder needs a folder"))?;
    let fd = match rustix::fs::open(folder, OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, Mode::from_raw_mode(0o600)) {
        Ok(fd) => fd,
        // Kernels before 3.11 read O_TMPFILE as a folder opened for writing (EISDIR).
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => return Err(unsupported()),
        Err(e) => return Err(e.into()),
    };
    let mut made = File::from(fd);
    std::io::Write::write_all(&mut made, whole)?;
    mark_read_only(&made)?;
    let unnamed = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&made));
    // Held read-only, as a placeholder found there is (a container's runner keeps a copy).
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc_flags::NONBLOCK | libc_flags::CLOEXEC).open(&unnamed) {
        Ok(file) => file,
        // No /proc to name it by.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(unsupported()),
        Err(e) => return Err(e),
    };
    // Nobody else can reach it yet: this cannot wait.
    flock(&file, FlockOperation::NonBlockingLockShared)?;
    match rustix::fs::linkat(CWD, &unnamed, CWD, path, AtFlags::SYMLINK_FOLLOW) {
        Ok(()) => Ok(Some(file)),
        Err(Errno::EXIST) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Marks a placeholder this process made (where the file system keeps
/// marks), then makes it read-only for everyone. In that order: a user's
/// mark needs write permission, which only root has on a read-only file.
fn mark_read_only(file: &File) -> std::io::Result<()> {
    let _ = rustix::fs::fsetxattr(file, MARK, b"1", XattrFlags::empty());
    rustix::fs::fchmod(file, rustix::fs::Mode::from_raw_mode(0o444))?;
    Ok(())
}

/// A new placeholder at `path`, whole or not at all: made under another
/// name beside it, written, marked (where the file system keeps marks) and
/// made read-only for everyone, then renamed there unless something is there
/// by then. A half-made one (an empty `commondir` makes git fail) is never seen.
fn make(path: &Path) -> std::io::Result<()> {
    let folder = path.parent().ok_or_else(|| std::io::Error::other("a placeholder needs a folder"))?;
    let name = path.file_name().ok_or_else(|| std::io::Error::other("a placeholder needs a name"))?;
    // One getrandom(2) per name: unique across forks too, unlike a seed
    // drawn once per thread.
    let mut unique = [0u8; 8];
    // SAFETY: fills the 8 bytes of `unique`, which lives on this stack.
    if unsafe { libc::getrandom(unique.as_mut_ptr().cast(), unique.len(), 0) } != unique.len() as isize {
        return Err(std::io::Error::last_os_error());
    }
    let staged = folder.join(format!(".warden-placeholder-{:016x}", u64::from_ne_bytes(unique)));
    let mut created = false;
    let made = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc_flags::NOFOLLOW | libc_flags::CLOEXEC)
            .open(&staged)?;
        created = true;
        std::io::Write::write_all(&mut file, content(path))?;
        mark_read_only(&file)?;
        let target = folder.join(name);
        match rustix::fs::renameat_with(rustix::fs::CWD, &staged, rustix::fs::CWD, &target, rustix::fs::RenameFlags::NOREPLACE) {
            // A file system without the flag (NFS): a hard link is made no-replace too.
            Err(rustix::io::Errno::INVAL) => std::fs::hard_link(&staged, &target),
            done => done.map_err(std::io::Error::from),
        }
    })();
    // Only a staged file this call made: a name taken already is another's.
    if created {
        let _ = std::fs::remove_file(&staged);
    }
    made
}

fn open_no_follow(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().read(true).custom_flags(libc_flags::NOFOLLOW | libc_flags::NONBLOCK | libc_flags::CLOEXEC).open(path)
}

/// What a placeholder at `path` holds.
fn content(path: &Path) -> &'static [u8] {
    if path.file_name().is_some_and(|n| n == "commondir") { b".\n" } else { b"" }
}

fn marked(file: &File) -> bool {
    rustix::fs::fgetxattr_query(file, MARK).is_ok()
}

/// Whether `path` still names the file `meta` was read from.
pub(crate) fn names(path: &Path, meta: &std::fs::Metadata) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|now| now.dev() == meta.dev() && now.ino() == meta.ino())
}

/// Removes the placeholder `file` at `path` when no other sandbox holds it
/// and it still holds what Warden wrote. A failed try loses this holder's
/// own lock (a conversion may drop it first), which is what ending means.
fn remove_if_unused(path: &Path, file: &File) {
    if flock(file, FlockOperation::NonBlockingLockExclusive).is_err() {
        return;
    }
    let Ok(meta) = file.metadata() else { return };
    let wrote = content(path);
    let mut held = [0u8; 8];
    // An empty one is unchanged at size 0; only `commondir`'s bytes are read.
    let unchanged = meta.len() == wrote.len() as u64
        && (wrote.is_empty() || std::os::unix::fs::FileExt::read_at(file, &mut held, 0).is_ok_and(|n| held[..n] == *wrote));
    if meta.is_file() && unchanged && names(path, &meta) {
        let _ = std::fs::remove_file(path);
    }
}

/// The open(2) flags std does not name.
mod libc_flags {
    pub const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    pub const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    pub const CLOEXEC: i32 = rustix::fs::OFlags::CLOEXEC.bits() as i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shield(placeholders: &[&Path], read_only: &[&Path]) -> Shield {
        Shield {
            placeholders: placeholders.iter().map(|p| p.to_path_buf()).collect(),
            read_only: read_only.iter().map(|p| p.to_path_buf()).collect(),
            ..Shield::default()
        }
    }

    #[test]
    fn a_missing_commondir_gets_one_git_reads_as_none_and_the_rest_are_empty_and_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("git").args(["init", "-q"]).arg(dir.path()).status().unwrap();
        assert!(made.success());
        let commondir = dir.path().join(".git/commondir");
        let bashrc = dir.path().join(".bashrc");
        let held = Held::take(&shield(&[&commondir, &bashrc], &[])).unwrap();
        assert_eq!(std::fs::read(&commondir).unwrap(), b".\n");
        assert_eq!(std::fs::read(&bashrc).unwrap(), b"");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&bashrc).unwrap().permissions().mode() & 0o777, 0o444);
        // What a Warden killed now would leave: git goes on as before.
        let status = std::process::Command::new("git").arg("-C").arg(dir.path()).args(["rev-parse", "--git-common-dir"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&status.stdout).trim(), dir.path().join(".git").canonicalize().unwrap().to_string_lossy());
        drop(held);
        assert!(!commondir.exists() && !bashrc.exists());
    }

    #[test]
    fn where_no_unnamed_file_can_be_made_one_is_made_under_another_name_whole_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("commondir");
        make(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b".\n");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o444);
        assert!(marked(&open_no_follow(&path).unwrap()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the staged name is left");
        // A name taken is not replaced.
        assert_eq!(make(&path).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the staged name is left");
    }

    #[test]
    fn a_placeholder_made_is_locked_marked_held_read_only_and_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".envrc");
        let made = make_locked(&path).unwrap().expect("made");
        assert_eq!(flock(open_no_follow(&path).unwrap(), FlockOperation::NonBlockingLockExclusive), Err(rustix::io::Errno::WOULDBLOCK));
        assert!(marked(&made));
        let access = rustix::fs::fcntl_getfl(&made).unwrap() & rustix::fs::OFlags::RWMODE;
        assert_eq!(access, rustix::fs::OFlags::RDONLY);
        drop(made);
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "export A=1\n").unwrap();
        assert!(make_locked(&path).unwrap().is_none());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "export A=1\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_placeholder_is_marked_although_its_maker_may_not_write_a_read_only_file() {
        // As any user but root: without CAP_DAC_OVERRIDE (on this thread), a
        // mark needs write permission on the file.
        let mut caps = rustix::thread::capabilities(None).unwrap();
        caps.effective.remove(rustix::thread::CapabilitySet::DAC_OVERRIDE);
        rustix::thread::set_capabilities(None, caps).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join(".envrc");
        let whole = dir.path().join("commondir");
        let fallback = dir.path().join("sub/commondir");
        std::fs::create_dir(fallback.parent().unwrap()).unwrap();
        let made = [make_locked(&empty).unwrap().expect("made"), make_locked(&whole).unwrap().expect("made")];
        make(&fallback).unwrap();
        use std::os::unix::fs::PermissionsExt;
        for path in [&empty, &whole, &fallback] {
            assert!(marked(&open_no_follow(path).unwrap()), "{} is unmarked", path.display());
            assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o444);
        }
        drop(made);
    }

    /// A placeholder as [`make_empty_locked`] has it before it is locked.
    fn just_made(path: &Path) -> File {
        let flags = rustix::fs::OFlags::CREATE | rustix::fs::OFlags::EXCL | rustix::fs::OFlags::RDONLY;
        File::from(rustix::fs::open(path, flags, rustix::fs::Mode::from_raw_mode(0o600)).unwrap())
    }

    #[test]
    fn a_placeholder_held_before_its_maker_marked_it_goes_with_the_last_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".envrc");
        // Where its maker is when another sandbox looks: made and locked, not marked yet.
        let maker = just_made(&path);
        flock(&maker, FlockOperation::NonBlockingLockShared).unwrap();
        let other = Held::take(&shield(&[], &[&path])).unwrap();
        assert!(other.placeholders().is_empty());
        mark_read_only(&maker).unwrap();
        // The maker ends first, and may not remove what the other holds.
        remove_if_unused(&path, &maker);
        drop(maker);
        assert!(path.exists());
        drop(other);
        assert!(!path.exists(), "left behind by its last holder");
    }

    #[test]
    fn a_placeholder_another_process_locked_before_its_maker_could_is_marked_and_goes_with_its_next_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".git");
        let made = just_made(&path);
        // A process in the project locks it the moment it appears.
        let hostile = open_no_follow(&path).unwrap();
        flock(&hostile, FlockOperation::NonBlockingLockExclusive).unwrap();
        assert_eq!(claim_made(made).unwrap_err().raw_os_error(), Some(rustix::io::Errno::WOULDBLOCK.raw_os_error()));
        assert!(marked(&hostile), "left unmarked, it passes for the user's own");
        drop(hostile);
        let next = Held::take(&shield(&[], &[&path])).unwrap();
        assert_eq!(next.placeholders(), std::slice::from_ref(&path));
        drop(next);
        assert!(!path.exists(), "an empty .git left in the project");
    }

    #[test]
    fn a_file_made_where_the_shield_found_none_is_held_as_it_is_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".envrc");
        // Made by someone between the shield's look and the placeholders.
        std::fs::write(&path, "export A=1\n").unwrap();
        let held = Held::take(&shield(&[&path], &[])).unwrap();
        assert_eq!(flock(open_no_follow(&path).unwrap(), FlockOperation::NonBlockingLockExclusive), Err(rustix::io::Errno::WOULDBLOCK));
        assert!(held.placeholders().is_empty());
        drop(held);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "export A=1\n");
    }

    #[test]
    fn a_placeholder_goes_with_the_last_sandbox_that_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".envrc");
        let first = Held::take(&shield(&[&path], &[])).unwrap();
        // The second found it there: to it, a file to bind read-only.
        let second = Held::take(&shield(&[], &[&path])).unwrap();
        drop(first);
        assert!(path.exists(), "removed under the second sandbox");
        // Marked, so the second removes what the first made.
        assert_eq!(second.placeholders(), vec![path.clone()]);
        drop(second);
        assert!(!path.exists());
    }

    #[test]
    fn a_file_warden_did_not_make_or_a_placeholder_changed_on_the_host_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(".profile");
        std::fs::write(&own, "").unwrap();
        let changed = dir.path().join(".zshrc");
        let held = Held::take(&shield(&[&changed], &[&own])).unwrap();
        assert_eq!(held.placeholders(), vec![changed.clone()]);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&changed, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&changed, "export PATH\n").unwrap();
        drop(held);
        assert!(own.exists() && changed.exists());
        remove_unused(std::slice::from_ref(&changed), &[]);
        assert!(changed.exists());
    }

    #[test]
    fn a_held_placeholder_is_not_removed_by_a_container_going() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        let held = Held::take(&shield(&[&path], &[])).unwrap();
        let recorded = [crate::container::Cover::of(&path)];
        remove_unused(std::slice::from_ref(&path), &recorded);
        assert!(path.exists());
        // What a runner does with them: the copies keep the locks.
        let copies: Vec<std::os::fd::OwnedFd> = held.files().iter().map(|f| f.try_clone_to_owned().unwrap()).collect();
        held.handed_over();
        remove_unused(std::slice::from_ref(&path), &recorded);
        assert!(path.exists(), "removed under the runner that holds it");
        drop(copies);
        // A file made there since, unmarked, is someone's own.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "").unwrap();
        remove_unused(std::slice::from_ref(&path), &recorded);
        assert!(path.exists(), "a file made since was removed");
        std::fs::remove_file(&path).unwrap();
        let held = Held::take(&shield(&[&path], &[])).unwrap();
        let recorded = [crate::container::Cover::of(&path)];
        held.handed_over();
        remove_unused(std::slice::from_ref(&path), &recorded);
        assert!(!path.exists());
    }
}
