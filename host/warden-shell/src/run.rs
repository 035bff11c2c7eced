//! Running one command: spawn (under bwrap or, when allowed, bare), cap its
//! output, stop it at the timeout with its whole process group, and clean up.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use warden_policy::{NetRefusal, Network};

use crate::bwrap;
use crate::egress::{Egress, ProxyChannel};
use crate::output::Captured;
use crate::error::ShellError;
use crate::landlock::{Confinement, Step};
use crate::watch::{watch, Group, Watched};
use crate::pids::ProcessCap;
use crate::placeholders::Held;
use crate::plan::ExecPlan;
use crate::sandbox_init::SandboxInit;
use crate::shield::Shield;

pub const TIMED_OUT: i32 = 124;
/// The exit code of a cancelled command, as for one stopped by SIGINT.
pub const CANCELLED: i32 = 130;

/// What a command did. `ok()` is a zero exit within the time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub timed_out: bool,
    /// Some output was cut at the cap.
    pub truncated: bool,
    /// Whether an OS sandbox confined the command.
    pub sandboxed: bool,
    /// Which: `bwrap`, `landlock`, `seatbelt`, `container`, or `none`.
    pub sandbox: &'static str,
}

impl Backend {
    /// The name a result gives the backend that confined a command.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Bwrap(_) => "bwrap",
            Backend::Seatbelt(_) => "seatbelt",
            Backend::Landlock { .. } => "landlock",
            Backend::Unsandboxed { .. } => "none",
            Backend::Container { .. } => "container",
        }
    }
}

impl ExecutionResult {
    pub fn ok(&self) -> bool {
        self.exit_code == 0 && !self.timed_out
    }
}

/// How commands are confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    Bwrap(PathBuf),
    /// macOS: `sandbox-exec` with a generated profile.
    Seatbelt(PathBuf),
    /// Landlock (no namespaces): where bubblewrap cannot start, e.g. in a container.
    Landlock { abi: u32 },
    /// No OS sandbox; the reason is in every result's stderr.
    Unsandboxed { reason: String },
    /// A long-lived container, reached through the engine's API (not by [`run`]).
    Container { engine: &'static str, name: String },
}

pub struct Job<'a> {
    pub plan: &'a ExecPlan,
    pub backend: &'a Backend,
    /// The seccomp program bwrap loads, compiled once per sandbox.
    pub seccomp: &'a [u8],
    /// The sandbox's process cap, which also spawns the command.
    pub cap: &'a ProcessCap,
    pub command: &'a [OsString],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
    /// Set from another thread to stop the command and its group.
    pub cancel: Option<&'a AtomicBool>,
}

/// A run ends in a result, or in the news that the OS sandbox could not be set up
/// (the command did not start).
pub enum Outcome {
    Ran(ExecutionResult),
    SandboxFailed { reason: String },
}

pub fn run(job: &Job<'_>) -> Result<Outcome, ShellError> {
    // Under an allowlist: the way to Warden's proxy, and under bubblewrap the command wrapped in its bridge.
    let (mut channel, wrapped) = match (job.backend, &job.plan.network) {
        (Backend::Bwrap(_), Network::Allow(_)) => {
            let egress = Egress::start(&job.plan.network, job.command)?;
            (Some(egress.channel), Some(egress.command))
        }
        (Backend::Landlock { .. }, Network::Allow(_)) => (Some(ProxyChannel::start(&job.plan.network)?), None),
        (Backend::Seatbelt(_) | Backend::Unsandboxed { .. }, Network::Allow(_)) => {
            return Err(ShellError::Policy(
                "a network allowlist is enforced for shell commands only under bubblewrap or Landlock, neither of which is in use here; \
                 the command was not run"
                    .into(),
            ));
        }
        _ => (None, None),
    };
    let command = wrapped.as_deref().unwrap_or(job.command);
    let mut pipes = match job.backend {
        Backend::Bwrap(_) => Some(BwrapPipes::new(job.seccomp)?),
        Backend::Seatbelt(_) | Backend::Landlock { .. } | Backend::Unsandboxed { .. } | Backend::Container { .. } => None,
    };
    let inherited = pipes.as_ref().map(|p| [p.seccomp.as_raw_fd(), p.status_write.as_raw_fd(), p.args_read.as_ref().expect("not sent yet").as_raw_fd()]);
    // Under bubblewrap the shield is made once bwrap has started (below).
    let landlock_shield = match job.backend {
        Backend::Landlock { .. } => Some(Shield::for_plan(job.plan)?),
        _ => None,
    };
    let mut confinement = None;
    let cmd = match job.backend {
        Backend::Bwrap(bwrap_path) => {
            let [_, _, args_fd] = inherited.expect("bwrap has its pipes");
            let mut cmd = Command::new(bwrap_path);
            cmd.arg("--args").arg(args_fd.to_string()).arg("--").args(command);
            cmd
        }
        Backend::Seatbelt(exec) => {
            let mut cmd = Command::new(exec);
            cmd.arg("-p").arg(crate::seatbelt::profile(job.plan)).arg("--").args(job.command).current_dir(job.cwd);
            cmd
        }
        Backend::Landlock { abi } => {
            let shield = landlock_shield.as_ref().expect("made for Landlock");
            let (cmd, confined) = crate::landlock::command(job.plan, shield, *abi, job.command, job.cwd, channel.as_ref().map(ProxyChannel::theirs))?;
            confinement = Some(confined);
            cmd
        }
        Backend::Container { .. } => unreachable!("container commands go through the engine's API"),
        Backend::Unsandboxed { .. } => {
            let mut cmd = Command::new(&job.command[0]);
            cmd.args(&job.command[1..]).current_dir(job.cwd);
            cmd
        }
    };
    let cmd = settle(cmd, job, confinement.as_ref());
    // bwrap passes the channel on to its bridge; under Landlock it is used before exec, and closed by it.
    let bridge_channel = channel.as_ref().filter(|_| wrapped.is_some()).map(ProxyChannel::theirs);
    let inherit: Vec<_> = inherited.into_iter().flatten().chain(bridge_channel).collect();
    let spawning = job.cap.spawn_soon(cmd, inherit).map_err(ShellError::Spawn)?;
    // Made while bwrap is spawned and starts: it waits for its options.
    let prepared = match (job.backend, pipes.as_ref()) {
        (Backend::Bwrap(_), Some(pipes)) => Some(prepare_bwrap(job, pipes, wrapped.is_some())),
        _ => None,
    };
    let sent = match (&prepared, pipes.as_ref()) {
        (Some(Ok(prepared)), Some(pipes)) => send_whole(pipes.args_write.as_ref().expect("bwrap's options are sent once"), &prepared.data),
        _ => Ok(true),
    };
    let mut child = match spawning.wait() {
        Ok(child) => child,
        Err(e) => return not_spawned(job, confinement.as_ref().and_then(Confinement::told), e),
    };
    let mut group = Group::of(&child);
    // Until the sandbox and everything in it have ended. Landlock needs no
    // placeholder: a missing protected path's folder can gain no entry.
    let (shield, held) = match (prepared, sent, job.backend, pipes.as_mut()) {
        (Some(Ok(Prepared { shield, held, .. })), Ok(true), _, _) => (shield, held),
        // Their pipe could not be made large enough to take them in one write: this
        // bwrap, still waiting, goes, and one given them on its command line comes.
        (Some(Ok(Prepared { shield, held, options, .. })), Ok(false), Backend::Bwrap(bwrap_path), Some(pipes)) => {
            group.abandon(child);
            let mut cmd = Command::new(bwrap_path);
            cmd.args(options).arg("--").args(command);
            let inherit = vec![pipes.seccomp.as_raw_fd(), pipes.status_write.as_raw_fd()].into_iter().chain(bridge_channel).collect();
            child = match job.cap.spawn(settle(cmd, job, None), inherit) {
                Ok(child) => child,
                Err(e) => return not_spawned(job, None, e),
            };
            group = Group::of(&child);
            (shield, held)
        }
        // Killed while it waits for the rest of its options: their pipe is closed
        // after, and the placeholders are removed after (a send that fell short).
        (Some(Err(e)), _, _, _) | (Some(Ok(_)), Err(e), _, _) => {
            group.abandon(child);
            return Err(e);
        }
        _ => (landlock_shield.unwrap_or_default(), Held::none()),
    };
    // bwrap holds its copies now.
    if let Some(pipes) = pipes.as_mut() {
        drop(pipes.args_read.take());
        drop(pipes.args_write.take());
    }
    if let Some(channel) = channel.as_mut() {
        channel.spawned();
    }
    // Without a PID namespace, the group must end even if Warden does first.
    if let Some(reaper) = confinement.as_mut().and_then(|c| c.reaper.take()) {
        group.watched_by(reaper);
    }
    // Only the status pipe's reading end stays: bwrap holds the rest now.
    let status_read = pipes.map(|p| p.status_read);
    let init = status_read.as_ref().map(|status| SandboxInit::find(status, job.timeout));
    let Watched { status, stdout: out, stderr: err, timed_out, cancelled } = watch(child, group, job.timeout, job.plan.max_output_bytes, job.cancel)?;
    if let Some(init) = &init {
        init.wait_gone();
    }
    drop(held);
    let confinement_note = confinement.as_ref().and_then(|c| c.note());
    drop(confinement);
    let refused = channel.map(ProxyChannel::finish).unwrap_or_default();
    // Killed by its timeout or a cancel, bwrap never reports an exit code: not a set-up failure.
    if let Some(status_read) = status_read
        && !timed_out
        && !cancelled
        && !reported_exit(init.map(|i| i.read).unwrap_or_default(), status_read)
    {
        let stderr = String::from_utf8_lossy(&err.bytes);
        let why = stderr.lines().rev().find(|l| l.starts_with("bwrap:")).unwrap_or("bwrap failed to set up the sandbox");
        // A program that does not exist is the command's failure, not the sandbox's.
        if !why.starts_with("bwrap: execvp") {
            return Ok(Outcome::SandboxFailed { reason: why.trim().to_owned() });
        }
    }
    let exit_code = if timed_out {
        TIMED_OUT
    } else if cancelled {
        CANCELLED
    } else {
        status.code().unwrap_or_else(|| 128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0))
    };
    let mut warnings: Vec<String> = shield
        .replaced_links()
        .iter()
        .map(|link| {
            format!(
                "warning: the command replaced {}, a symbolic link on the way to a protected path; what is there now is not protected",
                link.display()
            )
        })
        .collect();
    if exit_code != 0
        && let Some(note) = confinement_note
    {
        warnings.push(note);
    }
    if matches!(job.backend, Backend::Bwrap(_) | Backend::Landlock { .. }) && !job.cap.in_force() {
        warnings.push(
            "warning: no process cap: Warden runs as root and may make no cgroup here, and the kernel does not apply RLIMIT_NPROC to root; \
             only the timeout bounds this command's processes"
                .into(),
        );
    }
    if let Backend::Unsandboxed { reason } = job.backend {
        warnings.push(format!("warning: this command ran WITHOUT an OS sandbox: {reason}"));
    }
    let ended = Ended { stdout: out, stderr: err, exit_code, timed_out, cancelled };
    let walls = Walls { writable: job.plan.writable_list(), network: job.plan.network.clone(), refused };
    Ok(Outcome::Ran(ended.into_result(job.timeout, &walls, &warnings, job.backend.name())))
}

/// What bwrap needs before it mounts anything, made while it is spawned and
/// starts (it reads its options first, to their end): the shield, its
/// placeholders held, and the options to send through `--args`.
struct Prepared {
    shield: Shield,
    held: Held,
    options: Vec<OsString>,
    /// `options` as bwrap reads them from the pipe.
    data: Vec<u8>,
}

fn prepare_bwrap(job: &Job<'_>, pipes: &BwrapPipes, bridged: bool) -> Result<Prepared, ShellError> {
    let shield = Shield::for_plan(job.plan)?;
    let bridge = bridged.then(Egress::program);
    let options = bwrap::options(job.plan, &shield, job.cwd, Some(pipes.seccomp.as_raw_fd()), Some(pipes.status_write.as_raw_fd()), bridge);
    let data = bwrap::options_data(&options)?;
    let held = Held::take(&shield)?;
    Ok(Prepared { shield, held, options, data })
}

/// Writes `data` into the empty pipe `fd` by one write(2), the pipe made
/// large enough first (it is written before bwrap reads, perhaps before it
/// runs); `false` when it cannot be (a user over its pipe quota, which a
/// command of the same user can fill). bwrap reads its options to the pipe's
/// end, and a part of them would be a sandbox with fewer mounts: one write
/// into room enough is the whole or an error (ENOMEM), after which bwrap is
/// killed before the pipe is closed. None of them is an empty root: the
/// command is not found.
fn send_whole(fd: &OwnedFd, data: &[u8]) -> Result<bool, ShellError> {
    let refused = |why: String| ShellError::SandboxSetup { reason: format!("cannot hand bwrap its options: {why}") };
    if rustix::pipe::fcntl_getpipe_size(fd).map_err(|e| refused(e.to_string()))? < data.len() && rustix::pipe::fcntl_setpipe_size(fd, data.len()).is_err() {
        return Ok(false);
    }
    loop {
        return match rustix::io::write(fd, data) {
            Ok(n) if n == data.len() => Ok(true),
            Ok(n) => Err(refused(format!("{n} of their {} bytes went", data.len()))),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => Err(refused(e.to_string())),
        };
    }
}

/// `cmd` given the command's environment, its standard streams (no input,
/// both outputs captured) and a process group of its own.
fn settle(mut cmd: Command, job: &Job<'_>, confinement: Option<&Confinement>) -> Command {
    cmd.env_clear().envs(job.env.iter().map(|(k, v)| (k, v)));
    if let Some(confined) = confinement {
        // No private /tmp without a mount namespace: a folder of its own instead.
        cmd.env("TMPDIR", confined.tmp.path());
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.process_group(0);
    cmd
}

/// A spawn that failed: in the child's confinement (`step`), or, once
/// confined, because the program could not be run, which is the command's
/// failure, told as a shell tells it (bwrap reports it so too).
fn not_spawned(job: &Job<'_>, step: Option<Step>, e: std::io::Error) -> Result<Outcome, ShellError> {
    match step {
        Some(Step::Network) => Err(ShellError::Policy(format!(
            "a network allowlist under Landlock needs a network namespace of the command's own, which this host refused ({e}); \
             the command was not run"
        ))),
        Some(Step::Confine) => Err(ShellError::SandboxSetup { reason: format!("Landlock could not confine the command: {e}") }),
        Some(Step::Confined) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
            let stderr = format!("{}: {e}\n", job.command[0].to_string_lossy());
            let ended = Ended { stdout: Captured::new(), stderr: Captured { bytes: stderr.into_bytes(), truncated: false }, exit_code: code, timed_out: false, cancelled: false };
            let walls = Walls { writable: job.plan.writable_list(), network: job.plan.network.clone(), refused: Vec::new() };
            Ok(Outcome::Ran(ended.into_result(job.timeout, &walls, &[], job.backend.name())))
        }
        Some(Step::Confined) | None => Err(e.into()),
    }
}

/// How a command ended, before Warden's notes are added.
pub struct Ended {
    pub stdout: Captured,
    pub stderr: Captured,
    pub exit_code: i32,
    pub timed_out: bool,
    pub cancelled: bool,
}

/// The sandbox's walls as a command sees them, for the notes on a failure.
pub struct Walls {
    /// e.g. `/portfolio (/home/u/p)` under bubblewrap, `/portfolio` in a container.
    pub writable: String,
    pub network: Network,
    /// Connections the network allowlist refused.
    pub refused: Vec<NetRefusal>,
}

impl Ended {
    /// The result a caller reads: the output, then what Warden has to say about
    /// a timeout, a cancel, the walls the command ran into, and `warnings`.
    /// `sandbox`: the backend's name ([`Backend::name`]); `none` is no sandbox.
    pub fn into_result(self, timeout: Duration, walls: &Walls, warnings: &[String], sandbox: &'static str) -> ExecutionResult {
        let mut stderr = String::from_utf8_lossy(&self.stderr.bytes).into_owned();
        if self.timed_out {
            stderr.push_str(&format!("\n[warden: timed out after {} ms; the command and its children were killed]\n", timeout.as_millis()));
        }
        if self.cancelled {
            stderr.push_str("\n[warden: cancelled; the command and its children were killed]\n");
        }
        if self.exit_code != 0 {
            stderr.push_str(&crate::notes::for_failure(&stderr, walls));
        }
        stderr.push_str(&crate::notes::for_refusals(walls));
        for warning in warnings {
            stderr.push_str(&format!("\n[warden: {warning}]\n"));
        }
        ExecutionResult {
            stdout: String::from_utf8_lossy(&self.stdout.bytes).into_owned(),
            stderr,
            exit_code: self.exit_code,
            timed_out: self.timed_out,
            truncated: self.stdout.truncated || self.stderr.truncated,
            sandboxed: sandbox != "none",
            sandbox,
        }
    }
}

/// Whether bwrap reported the command's `exit-code` on `--json-status-fd`
/// (after its `child-pid`): `read` is what was read of it already.
fn reported_exit(mut read: Vec<u8>, fd: OwnedFd) -> bool {
    let _ = std::io::Read::read_to_end(&mut std::fs::File::from(fd), &mut read);
    String::from_utf8_lossy(&read).contains("\"exit-code\"")
}

/// The pipes bwrap gets besides stdio: its options (`--args FD`), the
/// seccomp program to read (`--seccomp FD`) and the channel for its status
/// reports (`--json-status-fd FD`).
struct BwrapPipes {
    seccomp: OwnedFd,
    status_read: OwnedFd,
    status_write: OwnedFd,
    /// bwrap's options (`--args`): it reads them to their end before it
    /// makes its namespaces or mounts anything.
    args_read: Option<OwnedFd>,
    args_write: Option<OwnedFd>,
}

impl BwrapPipes {
    fn new(program: &[u8]) -> Result<BwrapPipes, ShellError> {
        let cloexec = || rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(std::io::Error::from);
        let (seccomp, program_write) = cloexec()?;
        rustix::io::write(&program_write, program).map_err(std::io::Error::from)?;
        let (status_read, status_write) = cloexec()?;
        let (args_read, args_write) = cloexec()?;
        Ok(BwrapPipes { seccomp, status_read, status_write, args_read: Some(args_read), args_write: Some(args_write) })
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_larger_than_a_pipe_go_in_one_write_never_in_part() {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
        // Nobody reads: without a larger pipe, the write would stop at 64 KiB.
        let options = vec![b'x'; 300 * 1024];
        assert!(send_whole(&write, &options).unwrap());
        drop(write);
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(read), &mut got).unwrap();
        assert_eq!(got, options);
    }

    #[test]
    fn options_no_pipe_can_take_at_once_are_not_sent_at_all() {
        // Without CAP_SYS_RESOURCE (on this thread), no pipe grows past
        // pipe-max-size, as for a user over its pipe quota.
        let mut caps = rustix::thread::capabilities(None).unwrap();
        caps.effective.remove(rustix::thread::CapabilitySet::SYS_RESOURCE);
        rustix::thread::set_capabilities(None, caps).unwrap();
        let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap().trim().parse().unwrap();
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
        assert!(!send_whole(&write, &vec![b'x'; max + 1]).unwrap());
        assert_eq!(rustix::io::read(&read, &mut [0u8; 16]), Err(rustix::io::Errno::AGAIN), "a part was sent");
    }
}
