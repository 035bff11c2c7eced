//! The inner seccomp stage: system calls a sandboxed command never needs and
//! that reach past the mount namespace.

mod bpf;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use seccompiler::{BpfProgram, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};

/// Calls newer than libc's names, numbered alike on every architecture:
/// `fchmodat2` (Linux 6.6), `setxattrat` and `removexattrat` (6.13, which
/// set an ACL as well as `setxattr` does), `file_setattr` (6.17).
const FCHMODAT2: i64 = 452;
const SETXATTRAT: i64 = 463;
const REMOVEXATTRAT: i64 = 466;
const FILE_SETATTR: i64 = 469;

/// The filter, compiled for this machine: `EPERM` for `ptrace`,
/// `process_vm_{readv,writev}`, `io_uring_*`, `ioctl(TIOCSTI|TIOCLINUX)` (the
/// command compared on its low 32 bits, as the kernel reads it), unless
/// allowed `socket(AF_UNIX, ..)`, and on x86-64 every call of the x32 ABI.
pub fn filter(allow_unix_sockets: bool) -> Result<BpfProgram, seccompiler::Error> {
    filter_with(allow_unix_sockets, Internet::Any, false)
}

/// Which internet sockets a command may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Internet {
    Any,
    /// TCP only (Landlock then decides which ports), and no `listen`.
    StreamOnly,
    None,
}

/// Like [`filter`], for a command without namespaces (Landlock):
/// - without `internet`, every `socket` but `AF_UNIX` is refused too:
///   Landlock's TCP rules cover neither UDP, raw sockets nor the port a
///   `listen` on an unbound socket picks;
/// - with `keep_group`, `setsid` and `setpgid` are refused, so that nothing
///   the command starts leaves its process group, which is killed when it
///   ends (there is no PID namespace to end with it).
pub fn filter_with(allow_unix_sockets: bool, internet: Internet, keep_group: bool) -> Result<BpfProgram, seccompiler::Error> {
    bpf::compile(rules(allow_unix_sockets, internet, keep_group)?)
}

/// What a filter refuses, before it is compiled.
struct Rules {
    /// Calls refused whatever their arguments.
    refused: BTreeSet<i64>,
    /// Calls refused when one of their rules matches.
    conditional: BTreeMap<i64, Vec<SeccompRule>>,
    /// `clone` is refused when its flags hold any of these (none: 0).
    clone_flags: u32,
    /// `clone3` and calls newer than [`NEWEST_REVIEWED`] answer ENOSYS.
    without_clone3: bool,
}

/// The newest system call whose effects the rules were written knowing: a
/// later kernel's new calls (another way to change a file's mode, say, which
/// Landlock would not see) are answered as an older kernel would.
const NEWEST_REVIEWED: u32 = FILE_SETATTR as u32;

fn rules(allow_unix_sockets: bool, internet: Internet, keep_group: bool) -> Result<Rules, seccompiler::Error> {
    let eq32 = |arg, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value);
    let ne32 = |arg, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, value);
    let mut refused: BTreeSet<i64> = [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ]
    .into();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut clone_flags = 0;
    if keep_group {
        // Without namespaces (Landlock) nothing else keeps a command to
        // itself: it may not leave its process group, make namespaces of its
        // own, share SysV memory or keys with the host's other processes, or
        // change another process's limits or scheduling (none of which
        // Landlock covers).
        refused.extend([
            libc::SYS_setsid,
            libc::SYS_setpgid,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_ioprio_set,
            // Landlock does not guard a file's mode, owner or extended attributes,
            // and a path reaches any file: `chmod -R go+w ~`, a setuid bit as root.
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            FCHMODAT2,
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            SETXATTRAT,
            REMOVEXATTRAT,
            FILE_SETATTR,
        ]);
        // The older calls, which newer architectures (aarch64) do not have.
        #[cfg(target_arch = "x86_64")]
        refused.extend([libc::SYS_chmod, libc::SYS_chown, libc::SYS_lchown]);
        // New namespaces, or a child handed to Warden rather than kept by the
        // command. (The kernel reads the low 32 bits of clone's flags only.)
        clone_flags = (libc::CLONE_NEWNS | libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS | libc::CLONE_NEWCGROUP | libc::CLONE_PARENT) as u32;
        // Another process's limits (pid not 0) and scheduling (pid not 0).
        rules.insert(libc::SYS_prlimit64, vec![SeccompRule::new(vec![ne32(0, 0)?])?]);
        rules.insert(libc::SYS_setpriority, vec![SeccompRule::new(vec![ne32(1, 0)?])?]);
        for call in [libc::SYS_sched_setaffinity, libc::SYS_sched_setscheduler, libc::SYS_sched_setparam, libc::SYS_sched_setattr] {
            rules.insert(call, vec![SeccompRule::new(vec![ne32(0, 0)?])?]);
        }
    }
    rules.insert(
        libc::SYS_ioctl,
        vec![SeccompRule::new(vec![eq32(1, libc::TIOCSTI)?])?, SeccompRule::new(vec![eq32(1, libc::TIOCLINUX)?])?],
    );
    match (allow_unix_sockets, internet) {
        (true, Internet::Any) => {}
        (false, Internet::Any) => {
            rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![eq32(0, libc::AF_UNIX as u64)?])?]);
        }
        (true, Internet::None) => {
            rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![ne32(0, libc::AF_UNIX as u64)?])?]);
        }
        (false, Internet::None) => {
            refused.insert(libc::SYS_socket);
        }
        (_, Internet::StreamOnly) => {
            // Refused: a family other than Unix and the internet's, a Unix one unless
            // allowed, and an internet socket of any type but a stream (the low four
            // bits of the type; the rest are flags).
            let family = |op, value: i32| SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, value as u64);
            let mut sockets = vec![SeccompRule::new(vec![
                family(SeccompCmpOp::Ne, libc::AF_UNIX)?,
                family(SeccompCmpOp::Ne, libc::AF_INET)?,
                family(SeccompCmpOp::Ne, libc::AF_INET6)?,
            ])?];
            if !allow_unix_sockets {
                sockets.push(SeccompRule::new(vec![eq32(0, libc::AF_UNIX as u64)?])?);
            }
            for inet in [libc::AF_INET, libc::AF_INET6] {
                for kind in (0..16).filter(|k| *k != libc::SOCK_STREAM as u64) {
                    let type_is = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(0xf), kind)?;
                    sockets.push(SeccompRule::new(vec![eq32(0, inet as u64)?, type_is])?);
                }
                // Landlock's TCP rules see plain TCP only: MPTCP (262), SCTP and SMC
                // streams would connect anywhere. Protocol 0 or 6 (TCP) alone.
                sockets.push(SeccompRule::new(vec![eq32(0, inet as u64)?, ne32(2, 0)?, ne32(2, libc::IPPROTO_TCP as u64)?])?);
            }
            rules.insert(libc::SYS_socket, sockets);
            refused.insert(libc::SYS_listen);
            // TCP Fast Open connects from sendto/sendmsg, where Landlock does not look.
            let fast_open = |arg| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(libc::MSG_FASTOPEN as u64), libc::MSG_FASTOPEN as u64);
            rules.insert(libc::SYS_sendto, vec![SeccompRule::new(vec![fast_open(3)?])?]);
            rules.insert(libc::SYS_sendmsg, vec![SeccompRule::new(vec![fast_open(2)?])?]);
            rules.insert(libc::SYS_sendmmsg, vec![SeccompRule::new(vec![fast_open(3)?])?]);
        }
    }
    Ok(Rules { refused, conditional: rules, clone_flags, without_clone3: keep_group })
}

/// The filter's program as bytes: what `bwrap --seccomp FD` reads, and what
/// the container runner loads before it starts a command.
pub fn program_bytes(allow_unix_sockets: bool) -> Result<Vec<u8>, crate::ShellError> {
    filter(allow_unix_sockets).map(|program| to_bytes(&program)).map_err(|e| crate::ShellError::Policy(format!("seccomp filter: {e}")))
}

/// The program as bytes, the form `bwrap --seccomp FD` reads.
pub fn to_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for ins in program {
        out.extend_from_slice(&ins.code.to_ne_bytes());
        out.push(ins.jt);
        out.push(ins.jf);
        out.extend_from_slice(&ins.k.to_ne_bytes());
    }
    out
}

