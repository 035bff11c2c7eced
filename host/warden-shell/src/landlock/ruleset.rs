//! A layout made a Landlock ruleset, in the parent, before the fork: every
//! path opened here (`O_PATH`, no symlink followed), under the crate's
//! `HardRequirement`, so that a right this kernel cannot enforce is an
//! error, never dropped. The child then only calls [`enter`].

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

use super::layout::{Access as Granted, Layout};
use super::Abi;

/// Truncate (ABI 3), TCP (4), and the scoping of signals and abstract
/// sockets (6): below it a command without a PID namespace could signal
/// what is not its own.
pub const LEAST_ABI: Abi = 6;

/// A ruleset ready to be entered by a child.
pub struct Prepared {
    fd: OwnedFd,
}

impl Prepared {
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// How a command may use TCP: not at all, or connect to these ports only.
pub struct Tcp<'a> {
    pub connect_ports: &'a [u16],
}

pub fn prepare(layout: &Layout, abi: Abi, tcp: Option<Tcp<'_>>) -> Result<Prepared, String> {
    if abi < LEAST_ABI {
        return Err(format!("this kernel's Landlock is ABI {abi}; Warden needs ABI {LEAST_ABI} (Linux 6.12) at least"));
    }
    let version = ABI::from(abi as i32);
    let failed = |e: landlock::RulesetError| format!("Landlock: {e}");
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement).handle_access(AccessFs::from_all(version)).map_err(failed)?;
    if tcp.is_some() {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(failed)?;
    }
    ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal).map_err(failed)?;
    let mut created = ruleset.create().map_err(failed)?;
    for grant in &layout.grants {
        // No symlink anywhere on the way, and the same kind as when it was
        // listed: a path swapped while the layout was made fails closed.
        let changed = |why: String| format!("{} changed while the sandbox was made ({why})", grant.path.display());
        let opened = rustix::fs::openat2(
            rustix::fs::CWD,
            &grant.path,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
            rustix::fs::ResolveFlags::NO_SYMLINKS | rustix::fs::ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| changed(e.to_string()))?;
        let is_dir = rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&opened).map_err(|e| changed(e.to_string()))?.st_mode).is_dir();
        if is_dir != grant.dir {
            return Err(changed(if is_dir { "now a folder".into() } else { "no longer a folder".into() }));
        }
        let all = AccessFs::from_all(version);
        let rights = match (grant.access, grant.dir) {
            (Granted::ListOnly, _) => AccessFs::ReadDir.into(),
            (Granted::Read, true) => AccessFs::from_read(version),
            (Granted::Read, false) => AccessFs::from_read(version) & AccessFs::from_file(version),
            (Granted::Write, true) => all,
            (Granted::Write, false) => AccessFs::from_file(version),
        };
        created = created.add_rule(PathBeneath::new(opened, rights)).map_err(failed)?;
    }
    if let Some(tcp) = tcp {
        for port in tcp.connect_ports {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp)).map_err(failed)?;
        }
    }
    let fd: Option<OwnedFd> = created.into();
    Ok(Prepared { fd: fd.ok_or("Landlock made no ruleset")? })
}

/// Restricts the calling thread, and what it runs, to `ruleset`. For a
/// child between fork and exec: system calls only, nothing allocated.
///
/// # Safety
/// `ruleset` must be an open Landlock ruleset descriptor.
pub unsafe fn enter(ruleset: RawFd) -> std::io::Result<()> {
    // SAFETY: plain system calls on integers; no memory is passed.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Everything a command gives up before it starts, in the order each step
/// needs: every capability (bounding set first, which takes `CAP_SETPCAP`;
/// with an empty bounding set, root gains none at exec either), then no new
/// privileges, the Landlock domain, and the seccomp program last. System
/// calls only, for a child between fork and exec.
///
/// # Safety
/// `ruleset` must be an open Landlock ruleset descriptor, and `filter` point
/// at `filter_len` instructions that stay mapped until exec.
pub unsafe fn confine(ruleset: RawFd, filter: *const seccompiler::sock_filter, filter_len: u16) -> std::io::Result<()> {
    #[repr(C)]
    struct CapHeader {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct CapData {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let last_error = std::io::Error::last_os_error;
    // SAFETY: system calls on integers and on structs that live on this stack.
    unsafe {
        // Fails without CAP_SETPCAP (not root): there is nothing to drop then.
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        let header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
        let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) != 0 {
            return Err(last_error());
        }
        enter(ruleset)?;
        let program = libc::sock_fprog { len: filter_len, filter: filter as *mut libc::sock_filter };
        if libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &program as *const libc::sock_fprog) != 0 {
            return Err(last_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;
    use std::process::Command;

    use super::super::layout::{list_folder, Grant, MountRules};
    use super::*;


    /// `sh -c SCRIPT` under the layout; its exit status.
    fn run(layout: &Layout, tcp: Option<Tcp<'_>>, script: &str) -> i32 {
        let prepared = prepare(layout, super::super::abi(), tcp).unwrap();
        let fd = prepared.raw_fd();
        let mut command = Command::new("/bin/sh");
        command.args(["-c", script]);
        // SAFETY: `enter` makes system calls only.
        unsafe { command.pre_exec(move || enter(fd)) };
        command.status().unwrap().code().unwrap_or(-1)
    }

    fn system(layout: &mut Layout) {
        for dir in ["/usr", "/bin", "/lib", "/lib64", "/etc"] {
            let path = PathBuf::from(dir);
            if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                layout.grants.push(Grant { path, access: Granted::Read, dir: true });
            }
        }
        layout.grants.push(Grant { path: "/dev/null".into(), access: Granted::Write, dir: false });
    }

    #[test]
    fn writes_outside_the_writable_mount_and_reads_of_a_denied_file_are_refused() {
        if super::super::abi() < LEAST_ABI {
            panic!("this test needs Landlock ABI {LEAST_ABI}; the kernel offers {}", super::super::abi());
        }
        let dir = tempfile::tempdir().unwrap();
        let (mount, outside) = (dir.path().join("w"), dir.path().join("outside"));
        std::fs::create_dir_all(mount.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(mount.join(".env"), "SECRET").unwrap();
        std::fs::write(mount.join("notes.md"), "notes").unwrap();
        let mut layout = Layout::default();
        system(&mut layout);
        let (protected, denied) = ([mount.join(".git/hooks")], [mount.join(".env")]);
        layout.add_mount(&MountRules { root: &mount, writable: true, protected: &protected, denied: &denied }, &list_folder).unwrap();
        let m = mount.display();
        assert_eq!(run(&layout, None, &format!("echo more >> {m}/notes.md && cat {m}/notes.md >/dev/null")), 0);
        assert_ne!(run(&layout, None, &format!("echo x > {}/escaped", outside.display())), 0);
        assert_ne!(run(&layout, None, &format!("cat {m}/.env")), 0);
        assert_ne!(run(&layout, None, &format!("echo x > {m}/.git/hooks/pre-commit")), 0);
        assert_ne!(run(&layout, None, &format!("echo x > {m}/new-at-the-top")), 0, "the mount's top is a chain: no new entry");
        assert!(!outside.join("escaped").exists() && !mount.join(".git/hooks/pre-commit").exists());
        assert_eq!(std::fs::read_to_string(mount.join("notes.md")).unwrap(), "notesmore\n");
    }

    #[test]
    fn a_tcp_connect_is_refused_but_to_the_ports_allowed() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut layout = Layout::default();
        system(&mut layout);
        let connect = format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5)'");
        assert_eq!(run(&layout, None, &connect), 0, "without a TCP rule, TCP is not handled");
        assert_ne!(run(&layout, Some(Tcp { connect_ports: &[] }), &connect), 0);
        assert_eq!(run(&layout, Some(Tcp { connect_ports: &[port] }), &connect), 0);
    }

    #[test]
    fn a_path_swapped_for_a_link_or_another_kind_after_listing_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let through_link = Layout { grants: vec![Grant { path: dir.path().join("link/x"), access: Granted::Write, dir: true }], chains: Vec::new() };
        std::fs::create_dir(real.join("x")).unwrap();
        let error = prepare(&through_link, super::super::abi(), None).err().unwrap();
        assert!(error.contains("link/x changed while the sandbox was made ("), "{error}");
        let was_a_folder = Layout { grants: vec![Grant { path: dir.path().join("file"), access: Granted::Write, dir: true }], chains: Vec::new() };
        let error = prepare(&was_a_folder, super::super::abi(), None).err().unwrap();
        assert!(error.ends_with("changed while the sandbox was made (no longer a folder)"), "{error}");
    }

    #[test]
    fn a_kernel_below_the_least_abi_is_refused_not_used_weaker() {
        let error = prepare(&Layout::default(), 2, None).err().unwrap();
        assert_eq!(error, "this kernel's Landlock is ABI 2; Warden needs ABI 6 (Linux 6.12) at least");
    }
}
