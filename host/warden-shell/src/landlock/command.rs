//! One command under Landlock: the layout of the plan and its shield, the
//! ruleset, a private temporary folder, the seccomp program with the
//! network part Landlock lacks, and the step the child takes before exec.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use warden_policy::Network;

use super::layout::{list_folder, Access, Grant, Layout, MountRules};
use super::netns::{private_network, Maps};
use super::reaper::{announce, Reaper};
use super::ruleset::{confine, prepare, Prepared, Tcp};
use super::scratch::Scratch;
use super::Abi;
use crate::error::ShellError;
use crate::plan::{ExecPlan, SYSTEM_READ};
use crate::seccomp::Internet;
use crate::shield::Shield;

/// Devices a command may write (and read), and those it may read.
const DEVICES_WRITE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
const DEVICES_READ: &[&str] = &["/dev/urandom", "/dev/random"];

/// What must live until the command has been spawned (the ruleset and the
/// program the child loads) or has ended (its temporary folder, its reaper).
pub struct Confinement {
    _ruleset: Prepared,
    _filter: seccompiler::BpfProgram,
    _maps: Box<Maps>,
    /// Where the child tells how far its confinement went (one byte, a
    /// [`Step`]), so that a failure is not taken for the program's own.
    failure: (OwnedFd, OwnedFd),
    pub tmp: Scratch,
    /// What kills the command's group if Warden ends first: started before
    /// the command, which tells it its group; the caller keeps it with the group.
    pub reaper: Option<Reaper>,
    /// Folders of the mounts that can gain no entry, for the note on a failure.
    pub closed: Vec<PathBuf>,
}

/// How far the child's confinement went before exec, as told on its pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Step {
    /// Failed: the user and network namespace of a network allowlist (`netns.rs`).
    Network = 1,
    /// Failed: capabilities, no_new_privs, the Landlock domain, the seccomp program.
    Confine = 2,
    /// Confined: what failed after was the program's own start.
    Confined = 3,
}

impl Confinement {
    /// After a failed spawn: how far the child's confinement went; `None`
    /// when it failed before (the working folder, say).
    pub fn told(&self) -> Option<Step> {
        let mut byte = [0u8];
        match rustix::io::read(&self.failure.0, &mut byte) {
            Ok(1) if byte[0] == Step::Network as u8 => Some(Step::Network),
            Ok(1) if byte[0] == Step::Confined as u8 => Some(Step::Confined),
            Ok(1) => Some(Step::Confine),
            _ => None,
        }
    }

    /// What a failed command is told about the folders that gain no entry.
    pub fn note(&self) -> Option<String> {
        if self.closed.is_empty() {
            return None;
        }
        let folders: Vec<String> = self.closed.iter().map(|p| p.display().to_string()).collect();
        Some(format!(
            "under Landlock nothing new can be made directly in {} (each holds a protected or denied path, and Landlock grants by folder); \
             write into a folder below, or into $TMPDIR",
            folders.join(", ")
        ))
    }
}

/// The command `argv` in `cwd`, confined as `plan` and `shield` say; its
/// environment is the caller's to set, `TMPDIR` aside.
/// `bridge`: under a network allowlist, the command's end of the socket
/// Warden's proxy receives its listener on (see `netns.rs`).
pub fn command(plan: &ExecPlan, shield: &Shield, abi: Abi, argv: &[OsString], cwd: &Path, bridge: Option<RawFd>) -> Result<(Command, Confinement), ShellError> {
    let refuse = |why: String| ShellError::Policy(format!("{why}; the command was not run"));
    let proxy_ports = [warden_net::bridge::PORT];
    let (tcp, internet) = match (&plan.network, bridge) {
        (Network::Off, _) => (Some(Tcp { connect_ports: &[] }), Internet::None),
        (Network::Full, _) => (None, Internet::Any),
        (Network::Allow(_), Some(_)) => (Some(Tcp { connect_ports: &proxy_ports }), Internet::StreamOnly),
        (Network::Allow(_), None) => return Err(refuse("a network allowlist needs Warden's proxy, which did not start".into())),
    };
    // Below ABI 9 Landlock does not cover connecting to a Unix socket by its path: any socket of the host would do.
    if plan.allow_unix_sockets && abi < 9 {
        return Err(refuse(format!(
            "allow_unix_sockets under Landlock ABI {abi} would reach every Unix socket of this host (ABI 9 covers them)"
        )));
    }
    let tmp = Scratch::new(&warden_policy::private_folder().map_err(ShellError::Policy)?).map_err(ShellError::Spawn)?;
    let layout = layout(plan, shield, tmp.path()).map_err(ShellError::Spawn)?;
    let ruleset = prepare(&layout, abi, tcp).map_err(refuse)?;
    let filter = crate::seccomp::filter_with(plan.allow_unix_sockets, internet, true).map_err(|e| ShellError::Policy(format!("seccomp filter: {e}")))?;
    let mut cmd = Command::new(&argv[0]);
    // A group of its own, which its reaper is told of and kills if Warden dies.
    cmd.args(&argv[1..]).current_dir(cwd).process_group(0);
    let len = u16::try_from(filter.len()).map_err(|_| ShellError::Policy("seccomp filter: too long".into()))?;
    let (fd, program) = (ruleset.raw_fd(), filter.as_ptr() as usize);
    let failure = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK).map_err(|e| ShellError::Spawn(e.into()))?;
    let tell = failure.1.as_raw_fd();
    let maps = Box::new(Maps::of_this_process());
    let maps_at = &*maps as *const Maps as usize;
    let reaper = Reaper::start().map_err(ShellError::Spawn)?;
    let reaper_fd = reaper.announce_to();
    // SAFETY: these steps make system calls only; the descriptors, the maps and
    // the program stay alive in `Confinement` until the spawn has returned.
    unsafe {
        cmd.pre_exec(move || {
            let say = |step: Step| {
                let _ = rustix::io::write(BorrowedFd::borrow_raw(tell), &[step as u8]);
            };
            announce(reaper_fd)?;
            if let Some(control) = bridge {
                private_network(control, &*(maps_at as *const Maps)).inspect_err(|_| say(Step::Network))?;
            }
            confine(fd, program as *const seccompiler::sock_filter, len).inspect_err(|_| say(Step::Confine))?;
            say(Step::Confined);
            Ok(())
        })
    };
    let closed = layout.chains.iter().filter(|c| plan.binds.iter().any(|b| b.writable && c.starts_with(&b.host))).cloned().collect();
    Ok((cmd, Confinement { _ruleset: ruleset, _filter: filter, _maps: maps, failure, tmp, reaper: Some(reaper), closed }))
}

/// The grants: the system folders (or the whole host under `read: all`)
/// and a few devices to read, `/proc`, the command's own temporary folder,
/// and each mount with its protected and denied paths.
pub fn layout(plan: &ExecPlan, shield: &Shield, tmp: &Path) -> std::io::Result<Layout> {
    let mut layout = Layout::default();
    let denied: Vec<PathBuf> = shield.hidden_files.iter().chain(&shield.hidden_dirs).cloned().collect();
    let protected: Vec<PathBuf> = shield.read_only.iter().chain(&shield.placeholders).cloned().collect();
    let grant = |layout: &mut Layout, path: &Path, access: Access| {
        if let Ok(meta) = std::fs::symlink_metadata(path)
            && !meta.file_type().is_symlink()
        {
            layout.grants.push(Grant { path: path.to_path_buf(), access, dir: meta.is_dir() });
        }
    };
    if plan.read_all {
        // The whole host, but not its devices and kernel interfaces: bubblewrap
        // gives a fresh /dev; here only the devices below are granted.
        let mut hidden = denied.clone();
        hidden.extend([PathBuf::from("/dev"), PathBuf::from("/sys")]);
        layout.add_mount(&MountRules { root: Path::new("/"), writable: false, protected: &[], denied: &hidden }, &list_folder)?;
    } else {
        for dir in SYSTEM_READ {
            grant(&mut layout, Path::new(dir), Access::Read);
        }
    }
    for device in DEVICES_WRITE {
        grant(&mut layout, Path::new(device), Access::Write);
    }
    for device in DEVICES_READ {
        grant(&mut layout, Path::new(device), Access::Read);
    }
    grant(&mut layout, Path::new("/proc"), Access::Read);
    grant(&mut layout, tmp, Access::Write);
    for bind in &plan.binds {
        let within = |list: &[PathBuf]| list.iter().filter(|p| p.starts_with(&bind.host)).cloned().collect::<Vec<_>>();
        let mut kept = within(&protected);
        if bind.writable {
            // A read-only mount inside a writable one: Landlock cannot take
            // the outer write back, so the inner one is kept like a protected path.
            kept.extend(plan.binds.iter().filter(|b| !b.writable && b.host != bind.host && b.host.starts_with(&bind.host)).map(|b| b.host.clone()));
        }
        let rules = MountRules { root: &bind.host, writable: bind.writable, protected: &kept, denied: &within(&denied) };
        layout.add_mount(&rules, &list_folder)?;
    }
    Ok(layout)
}
