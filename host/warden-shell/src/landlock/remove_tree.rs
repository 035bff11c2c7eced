//! Removes a folder a command has filled, and all below it. What a hostile
//! command may have made there is expected: links (never followed), folders
//! it made unreadable or unwritable with `mkdir`'s mode (opened up again:
//! the same user owns them), a tree deeper than the descriptors or stack a
//! recursive removal takes (one folder open at a time, however deep). Going
//! back up, each folder must be the one come down from; the removal stops
//! rather than go anywhere else.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// Removes `name` in the folder `parent`, with everything below it.
pub fn remove_tree(parent: &Path, name: &OsStr) -> std::io::Result<()> {
    let top = CString::new(name.as_bytes()).map_err(|_| Errno::INVAL)?;
    let parent = rustix::fs::open(parent, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let mut current = open_folder(&parent, &top)?;
    // The folders above `current`, nearest last: each one's identity, the
    // name of the one below it there, and where to read on in it after.
    let mut above: Vec<(Identity, CString, i64)> = Vec::new();
    let mut parent_id = identity(&parent)?;
    let mut name = top;
    // Where to read on in `current`: what comes before is removed already,
    // and read again it would cost a large folder's emptied blocks each time.
    let mut from = 0;
    loop {
        match first_folder_after_emptying(&current, from)? {
            Some((child, after)) => {
                let opened = open_folder(&current, &child)?;
                above.push((parent_id, name, after));
                parent_id = identity(&current)?;
                (current, name, from) = (opened, child, 0);
            }
            None => {
                let here = identity(&current)?;
                let Some((grand_id, parent_name, after)) = above.pop() else {
                    drop(current);
                    return remove_if_same(&parent, &name, here);
                };
                let up = rustix::fs::openat(&current, c"..", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
                if identity(&up)? != parent_id {
                    return Err(std::io::Error::other("a folder was moved while it was being removed"));
                }
                remove_if_same(&up, &name, here)?;
                (current, parent_id, name, from) = (up, grand_id, parent_name, after);
            }
        }
    }
}

type Identity = (u64, u64);

fn identity(fd: impl AsFd) -> std::io::Result<Identity> {
    let stat = rustix::fs::fstat(fd)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// Removes every entry of `folder` from position `from` on but the folders
/// that are not empty, and names the first of those, with the position after it.
fn first_folder_after_emptying(folder: &OwnedFd, from: i64) -> std::io::Result<Option<(CString, i64)>> {
    let mut entries = rustix::fs::Dir::read_from(folder)?;
    if from != 0 {
        entries.seek(from)?;
    }
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        match rustix::fs::unlinkat(folder, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => continue,
            Err(Errno::ISDIR) => {}
            Err(e) => return Err(e.into()),
        }
        match rustix::fs::unlinkat(folder, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(Errno::NOTEMPTY | Errno::EXIST | Errno::ACCESS | Errno::PERM) => return Ok(Some((name.to_owned(), entry.offset()))),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// The folder `name` in `parent`, opened to be read and its entries
/// removed: made readable, writable and searchable by its owner first
/// (this user, whose command may have made it otherwise).
fn open_folder(parent: impl AsFd, name: &CStr) -> std::io::Result<OwnedFd> {
    let held = rustix::fs::openat(parent, name, OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
    let by_descriptor = format!("/proc/self/fd/{}", held.as_raw_fd());
    rustix::fs::chmodat(CWD, by_descriptor.as_str(), Mode::RWXU, AtFlags::empty())?;
    Ok(rustix::fs::open(by_descriptor.as_str(), OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?)
}

/// Removes the empty folder `name` in `parent` if it is still the one `id` names.
fn remove_if_same(parent: impl AsFd, name: &CStr, id: Identity) -> std::io::Result<()> {
    let stat = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if (stat.st_dev, stat.st_ino) != id {
        return Err(std::io::Error::other("a folder was replaced while it was being removed"));
    }
    Ok(rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    const CHILD: &str = "WARDEN_TEST_REMOVE_TREE";

    /// Only in the child [`remove_in_a_child`] starts: removes the tree it is
    /// given with at most 64 descriptors open.
    #[test]
    fn child_removes_the_tree_it_is_given() {
        let Some(tree) = std::env::var_os(CHILD) else { return };
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let hard = getrlimit(Resource::Nofile).maximum;
        setrlimit(Resource::Nofile, Rlimit { current: Some(64), maximum: hard }).unwrap();
        let tree = Path::new(&tree);
        remove_tree(tree.parent().unwrap(), tree.file_name().unwrap()).unwrap();
    }

    /// Removes `tree` (in `holder`) in a child process of its own, its
    /// folders `modes` given those modes first: as nobody when this is root,
    /// whose removals no folder's mode stops.
    fn remove_in_a_child(holder: &Path, tree: &Path, modes: &[(&str, u32)]) -> std::process::Output {
        use std::os::unix::fs::PermissionsExt;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args(["--exact", "landlock::remove_tree::tests::child_removes_the_tree_it_is_given", "--nocapture"]).env(CHILD, tree);
        if rustix::process::geteuid().is_root() {
            let chown = std::process::Command::new("chown").args(["-R", "65534:65534"]).arg(holder).status().unwrap();
            assert!(chown.success());
            child.uid(65534).gid(65534);
        }
        for (folder, mode) in modes {
            std::fs::set_permissions(tree.join(folder), std::fs::Permissions::from_mode(*mode)).unwrap();
        }
        child.output().unwrap()
    }

    #[test]
    fn folders_the_command_made_unreadable_or_unwritable_go_too() {
        let holder = tempfile::tempdir().unwrap();
        let tree = holder.path().join("cmd-modes");
        for folder in ["write-and-enter-only/below", "read-and-enter-only", "nothing"] {
            std::fs::create_dir_all(tree.join(folder)).unwrap();
        }
        std::fs::write(tree.join("write-and-enter-only/below/big"), vec![1u8; 1 << 16]).unwrap();
        std::fs::write(tree.join("read-and-enter-only/file"), b"x").unwrap();
        std::fs::write(tree.join("nothing/file"), b"x").unwrap();
        let modes = [("write-and-enter-only", 0o300), ("read-and-enter-only", 0o500), ("nothing", 0o000)];
        let out = remove_in_a_child(holder.path(), &tree, &modes);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(!tree.exists());
    }

    #[test]
    fn a_tree_deeper_than_the_descriptors_a_process_may_open_goes() {
        let holder = tempfile::tempdir().unwrap();
        let tree = holder.path().join("cmd-deep");
        std::fs::create_dir(&tree).unwrap();
        let mut folder = rustix::fs::open(&tree, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap();
        for _ in 0..3000 {
            rustix::fs::mkdirat(&folder, c"d", Mode::RWXU).unwrap();
            drop(rustix::fs::openat(&folder, c"f", OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::RUSR).unwrap());
            folder = rustix::fs::openat(&folder, c"d", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap();
        }
        drop(folder);
        let out = remove_in_a_child(holder.path(), &tree, &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(!tree.exists());
    }
}
