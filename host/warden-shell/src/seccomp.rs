//! The inner seccomp stage: system calls a sandboxed command never needs and
//! that reach past the mount namespace.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

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
    let eq32 = |arg, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value);
    let ne32 = |arg, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, value);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    if keep_group {
        // Without namespaces (Landlock) nothing else keeps a command to
        // itself: it may not leave its process group, make namespaces of its
        // own, share SysV memory or keys with the host's other processes, or
        // change another process's limits or scheduling (none of which
        // Landlock covers).
        for call in [
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
        ] {
            rules.insert(call, Vec::new());
        }
        // The older calls, which newer architectures (aarch64) do not have.
        #[cfg(target_arch = "x86_64")]
        for call in [libc::SYS_chmod, libc::SYS_chown, libc::SYS_lchown] {
            rules.insert(call, Vec::new());
        }
        let namespaces = (libc::CLONE_NEWNS | libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS | libc::CLONE_NEWCGROUP | libc::CLONE_PARENT) as u64;
        for flag in (0..64).map(|bit| 1u64 << bit).filter(|f| namespaces & f != 0) {
            let has = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)?;
            rules.entry(libc::SYS_clone).or_default().push(SeccompRule::new(vec![has])?);
        }
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
        // Every `socket`: an empty rule list matches every call.
        (false, Internet::None) => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        (_, Internet::StreamOnly) => {
            // Refused: a family other than Unix and the internet's, a Unix one unless
            // allowed, and an internet socket of any type but a stream (the low four
            // bits of the type; the rest are flags).
            let family = |op, value: i32| SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, value as u64);
            let mut refused = vec![SeccompRule::new(vec![
                family(SeccompCmpOp::Ne, libc::AF_UNIX)?,
                family(SeccompCmpOp::Ne, libc::AF_INET)?,
                family(SeccompCmpOp::Ne, libc::AF_INET6)?,
            ])?];
            if !allow_unix_sockets {
                refused.push(SeccompRule::new(vec![eq32(0, libc::AF_UNIX as u64)?])?);
            }
            for inet in [libc::AF_INET, libc::AF_INET6] {
                for kind in (0..16).filter(|k| *k != libc::SOCK_STREAM as u64) {
                    let type_is = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(0xf), kind)?;
                    refused.push(SeccompRule::new(vec![eq32(0, inet as u64)?, type_is])?);
                }
                // Landlock's TCP rules see plain TCP only: MPTCP (262), SCTP and SMC
                // streams would connect anywhere. Protocol 0 or 6 (TCP) alone.
                refused.push(SeccompRule::new(vec![eq32(0, inet as u64)?, ne32(2, 0)?, ne32(2, libc::IPPROTO_TCP as u64)?])?);
            }
            rules.insert(libc::SYS_socket, refused);
            rules.insert(libc::SYS_listen, Vec::new());
            // TCP Fast Open connects from sendto/sendmsg, where Landlock does not look.
            let fast_open = |arg| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(libc::MSG_FASTOPEN as u64), libc::MSG_FASTOPEN as u64);
            rules.insert(libc::SYS_sendto, vec![SeccompRule::new(vec![fast_open(3)?])?]);
            rules.insert(libc::SYS_sendmsg, vec![SeccompRule::new(vec![fast_open(2)?])?]);
            rules.insert(libc::SYS_sendmmsg, vec![SeccompRule::new(vec![fast_open(3)?])?]);
        }
    }
    let arch = std::env::consts::ARCH.try_into()?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(1), arch)?;
    let program = refusing_x32(filter.try_into()?);
    Ok(if keep_group { without_clone3(program) } else { program })
}

/// `program` behind a check that refuses (`EPERM`) every x32-ABI call: on
/// x86-64 they carry the architecture of 64-bit calls with bit 30 set in
/// their number, so `socket` or `ptrace` by that route would match none of
/// the rules above, which name the plain numbers. (Kernels built without x32
/// answer them ENOSYS anyway; many distributions build it in.)
fn refusing_x32(program: BpfProgram) -> BpfProgram {
    if !cfg!(target_arch = "x86_64") {
        return program;
    }
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let checks = [ins(JUMP_IF_SET, 0, 1, X32_SYSCALL_BIT), ins(RETURN, 0, 0, libc::SECCOMP_RET_ERRNO | 1)];
    behind(&checks, program)
}

/// The audit architecture of the calls this build's programs judge (the
/// numbers in the rules are this architecture's).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// The newest system call whose effects the rules above were written
/// knowing: a later kernel's new calls (another way to change a file's mode,
/// say, which Landlock would not see) are answered as an older kernel would.
const NEWEST_REVIEWED: u32 = FILE_SETATTR as u32;

/// `program` behind a check that answers ENOSYS to `clone3`, which passes
/// its flags (new namespaces among them) in memory seccomp cannot read
/// (libc falls back to `clone`, whose flags the rules see, on ENOSYS alone),
/// and to every call newer than [`NEWEST_REVIEWED`].
fn without_clone3(program: BpfProgram) -> BpfProgram {
    let checks = [
        ins(JUMP_IF_EQUAL, 1, 0, libc::SYS_clone3 as u32),
        ins(JUMP_IF_GREATER, 0, 1, NEWEST_REVIEWED),
        ins(RETURN, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
    ];
    behind(&checks, program)
}

const LOAD_WORD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_IF_EQUAL: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_IF_GREATER: u16 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const JUMP_IF_SET: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> seccompiler::sock_filter {
    seccompiler::sock_filter { code, jt, jf, k }
}

/// `program` behind `checks`, which judge a call of this build's
/// architecture by its number (loaded into the accumulator) and fall
/// through to the program; a call of another architecture goes straight on
/// to the program, which judges it.
fn behind(checks: &[seccompiler::sock_filter], program: BpfProgram) -> BpfProgram {
    // seccomp_data: the call's number at offset 0, its architecture at 4.
    let past_checks = u8::try_from(checks.len() + 1).expect("a few checks");
    let mut guarded = vec![ins(LOAD_WORD, 0, 0, 4), ins(JUMP_IF_EQUAL, 0, past_checks, AUDIT_ARCH), ins(LOAD_WORD, 0, 0, 0)];
    guarded.extend_from_slice(checks);
    guarded.extend(program);
    guarded
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

#[cfg(test)]
mod tests {
    use seccompiler::sock_filter;

    const ERRNO_EPERM: u32 = libc::SECCOMP_RET_ERRNO | 1;
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const AUDIT_ARCH_I386: u32 = 0x4000_0003;

    /// Runs a classic BPF seccomp program on one call, as the kernel would:
    /// what it returns for system call `nr` of `arch` with `args`. An
    /// instruction this interpreter does not know fails the test.
    fn judge(program: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |offset: u32| -> u32 {
            match offset {
                0 => nr,
                4 => arch,
                16..=63 => {
                    let arg = args[(offset as usize - 16) / 8];
                    if offset.is_multiple_of(8) { arg as u32 } else { (arg >> 32) as u32 }
                }
                other => panic!("load from offset {other}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            pc += 1;
            let jump = |taken: bool| if taken { i.jt as usize } else { i.jf as usize };
            match i.code {
                0x20 => acc = word(i.k),
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x15 => pc += jump(acc == i.k),
                0x25 => pc += jump(acc > i.k),
                0x35 => pc += jump(acc >= i.k),
                0x45 => pc += jump(acc & i.k != 0),
                0x06 => return i.k,
                other => panic!("instruction {other:#x} at {}", pc - 1),
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn x32_calls_are_refused_whatever_their_number() {
        let program = super::filter(false).unwrap();
        let x32 = |nr: i64| nr as u32 | 0x4000_0000;
        let unix = [libc::AF_UNIX as u64, libc::SOCK_STREAM as u64, 0, 0, 0, 0];
        let inet = [libc::AF_INET as u64, libc::SOCK_STREAM as u64, 0, 0, 0, 0];
        // The plain calls, as the rules name them.
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_socket as u32, unix), ERRNO_EPERM);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_socket as u32, inet), libc::SECCOMP_RET_ALLOW);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_ptrace as u32, [0; 6]), ERRNO_EPERM);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_read as u32, [0; 6]), libc::SECCOMP_RET_ALLOW);
        // The same calls by the x32 ABI, and any other x32 call.
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, x32(libc::SYS_socket), unix), ERRNO_EPERM);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, x32(libc::SYS_ptrace), [0; 6]), ERRNO_EPERM);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, x32(libc::SYS_read), [0; 6]), ERRNO_EPERM);
        // TIOCSTI with high bits set is the kernel's TIOCSTI.
        let tiocsti = [0, 0x1_0000_0000 | libc::TIOCSTI, 0, 0, 0, 0];
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_ioctl as u32, tiocsti), ERRNO_EPERM);
        // Another architecture's calls are not let through by the x32 check.
        assert_ne!(judge(&program, AUDIT_ARCH_I386, 102, unix), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn without_internet_only_unix_sockets_are_made_and_only_if_allowed() {
        let socket = |family: i32| [family as u64, libc::SOCK_DGRAM as u64, 0, 0, 0, 0];
        let nr = libc::SYS_socket as u32;
        let unix_only = super::filter_with(true, super::Internet::None, false).unwrap();
        assert_eq!(judge(&unix_only, AUDIT_ARCH_X86_64, nr, socket(libc::AF_UNIX)), libc::SECCOMP_RET_ALLOW);
        for family in [libc::AF_INET, libc::AF_INET6, libc::AF_PACKET, libc::AF_NETLINK] {
            assert_eq!(judge(&unix_only, AUDIT_ARCH_X86_64, nr, socket(family)), ERRNO_EPERM, "family {family}");
        }
        let none = super::filter_with(false, super::Internet::None, true).unwrap();
        assert_eq!(judge(&none, AUDIT_ARCH_X86_64, libc::SYS_setsid as u32, [0; 6]), ERRNO_EPERM);
        assert_eq!(judge(&unix_only, AUDIT_ARCH_X86_64, libc::SYS_setsid as u32, [0; 6]), libc::SECCOMP_RET_ALLOW);
        for family in [libc::AF_UNIX, libc::AF_INET] {
            assert_eq!(judge(&none, AUDIT_ARCH_X86_64, nr, socket(family)), ERRNO_EPERM, "family {family}");
        }
        assert_eq!(judge(&none, AUDIT_ARCH_X86_64, libc::SYS_socketpair as u32, socket(libc::AF_UNIX)), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn with_the_proxy_only_tcp_sockets_are_made_and_none_listens() {
        let program = super::filter_with(false, super::Internet::StreamOnly, true).unwrap();
        let nr = libc::SYS_socket as u32;
        let socket = |family: i32, kind: i32| [family as u64, kind as u64, 0, 0, 0, 0];
        let stream_cloexec = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, nr, socket(libc::AF_INET, stream_cloexec)), libc::SECCOMP_RET_ALLOW);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, nr, socket(libc::AF_INET6, libc::SOCK_STREAM)), libc::SECCOMP_RET_ALLOW);
        for (family, kind) in [(libc::AF_INET, libc::SOCK_DGRAM), (libc::AF_INET6, libc::SOCK_RAW | libc::SOCK_CLOEXEC), (libc::AF_PACKET, libc::SOCK_STREAM), (libc::AF_UNIX, libc::SOCK_STREAM), (libc::AF_NETLINK, libc::SOCK_DGRAM)] {
            assert_eq!(judge(&program, AUDIT_ARCH_X86_64, nr, socket(family, kind)), ERRNO_EPERM, "{family} {kind}");
        }
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_listen as u32, [3, 1, 0, 0, 0, 0]), ERRNO_EPERM);
        // Streams Landlock's TCP rules do not see: MPTCP, SCTP.
        for protocol in [262u64, libc::IPPROTO_SCTP as u64] {
            assert_eq!(judge(&program, AUDIT_ARCH_X86_64, nr, [libc::AF_INET as u64, libc::SOCK_STREAM as u64, protocol, 0, 0, 0]), ERRNO_EPERM);
        }
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, nr, [libc::AF_INET6 as u64, libc::SOCK_STREAM as u64, libc::IPPROTO_TCP as u64, 0, 0, 0]), libc::SECCOMP_RET_ALLOW);
        let fast_open = libc::MSG_FASTOPEN as u64 | libc::MSG_NOSIGNAL as u64;
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_sendto as u32, [3, 0, 1, fast_open, 0, 0]), ERRNO_EPERM);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_sendmsg as u32, [3, 0, fast_open, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(judge(&program, AUDIT_ARCH_X86_64, libc::SYS_sendto as u32, [3, 0, 1, libc::MSG_NOSIGNAL as u64, 0, 0]), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn without_namespaces_a_command_keeps_to_itself() {
        let program = super::filter_with(false, super::Internet::None, true).unwrap();
        let judge_call = |nr: i64, args: [u64; 6]| judge(&program, AUDIT_ARCH_X86_64, nr as u32, args);
        for call in [libc::SYS_unshare, libc::SYS_shmget, libc::SYS_keyctl, libc::SYS_setsid, libc::SYS_fchmodat, super::FCHMODAT2, libc::SYS_fchown, libc::SYS_setxattr, super::SETXATTRAT, super::REMOVEXATTRAT, super::FILE_SETATTR] {
            assert_eq!(judge_call(call, [0; 6]), ERRNO_EPERM, "{call}");
        }
        assert_eq!(judge_call(libc::SYS_clone3, [0; 6]), libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32, "clone3 is ENOSYS, so libc uses clone");
        assert_eq!(judge_call(super::FILE_SETATTR + 1, [0; 6]), libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32, "a call newer than the rules");
        assert_eq!(judge_call(super::FILE_SETATTR - 1, [0; 6]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(judge_call(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(judge_call(libc::SYS_clone, [(libc::CLONE_NEWUSER | libc::SIGCHLD) as u64, 0, 0, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(judge_call(libc::SYS_clone, [(libc::CLONE_PARENT | libc::CLONE_VM) as u64, 0, 0, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(judge_call(libc::SYS_prlimit64, [0, 7, 0, 0, 0, 0]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(judge_call(libc::SYS_prlimit64, [4242, 7, 0, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(judge_call(libc::SYS_setpriority, [0, 4242, 10, 0, 0, 0]), ERRNO_EPERM);
        assert_eq!(judge_call(libc::SYS_sched_setaffinity, [0, 8, 0, 0, 0, 0]), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn the_filter_compiles_both_ways() {
        let strict = super::filter(false).unwrap();
        let lenient = super::filter(true).unwrap();
        assert!(strict.len() > lenient.len());
        assert_eq!(super::to_bytes(&strict).len(), strict.len() * 8);
    }
}
