use proptest::prelude::*;
use seccompiler::sock_filter;

use super::bpf;

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

/// The rules compiled the plain way, as every filter was before the search:
/// each refused call and each of `clone`'s flags a seccompiler rule, the
/// x32 and `clone3` checks each a layer of its own around the program.
fn plain(rules: super::Rules) -> Vec<sock_filter> {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};
    let mut map = rules.conditional;
    for nr in rules.refused {
        map.insert(nr, Vec::new());
    }
    for flag in (0..32).map(|bit| 1u64 << bit).filter(|f| u64::from(rules.clone_flags) & f != 0) {
        let has = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag).unwrap();
        map.entry(libc::SYS_clone).or_default().push(SeccompRule::new(vec![has]).unwrap());
    }
    let program = bpf::behind(&bpf::x32_refused(), bpf::by_arguments(map).unwrap());
    if rules.without_clone3 { bpf::behind(&bpf::clone3_and_newer_unknown(), program) } else { program }
}

const CONFIGURATIONS: [(bool, super::Internet, bool); 12] = {
    use super::Internet::{Any, None, StreamOnly};
    [
        (false, Any, false), (true, Any, false), (false, None, false), (true, None, false), (false, StreamOnly, false), (true, StreamOnly, false),
        (false, Any, true), (true, Any, true), (false, None, true), (true, None, true), (false, StreamOnly, true), (true, StreamOnly, true),
    ]
};

/// Each configuration's program and the plain one of the same rules.
fn pairs() -> &'static [(Vec<sock_filter>, Vec<sock_filter>)] {
    static PAIRS: std::sync::OnceLock<Vec<(Vec<sock_filter>, Vec<sock_filter>)>> = std::sync::OnceLock::new();
    PAIRS.get_or_init(|| {
        CONFIGURATIONS
            .iter()
            .map(|&(unix, internet, keep_group)| {
                (super::filter_with(unix, internet, keep_group).unwrap(), plain(super::rules(unix, internet, keep_group).unwrap()))
            })
            .collect()
    })
}

/// Arguments that some rule compares against, and their neighbours.
fn telling_arguments() -> Vec<[u64; 6]> {
    let namespaces = (libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_PARENT | libc::CLONE_NEWCGROUP) as u64;
    let mut out = vec![[0; 6], [u64::MAX; 6], [1, 1, 1, 1, 1, 1], [namespaces, 0, 0, 0, 0, 0], [libc::SIGCHLD as u64 | libc::CLONE_VM as u64, 0, 0, 0, 0, 0]];
    for family in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6, libc::AF_PACKET] {
        for kind in [libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, libc::SOCK_RAW] {
            for protocol in [0, libc::IPPROTO_TCP as u64, 262] {
                out.push([family as u64, kind as u64, protocol, 0, 0, 0]);
            }
        }
    }
    for request in [libc::TIOCSTI, libc::TIOCLINUX, libc::TIOCSTI | 1 << 32, libc::TIOCGWINSZ] {
        out.push([1, request, 0, 0, 0, 0]);
    }
    // Each flag alone, in each argument (clone's flags, MSG_FASTOPEN).
    for bit in 0..64 {
        out.push([1 << bit; 6]);
    }
    let fast_open = libc::MSG_FASTOPEN as u64;
    out.extend([[3, 0, fast_open, fast_open, 0, 0], [3, 0, 1, libc::MSG_NOSIGNAL as u64, 0, 0], [0, 4242, 0, 0, 0, 0], [4242, 0, 0, 0, 0, 0]]);
    out
}

#[test]
fn the_short_program_decides_every_call_number_as_the_plain_one() {
    let arguments = telling_arguments();
    for (i, (short, plain)) in pairs().iter().enumerate() {
        for nr in (0..1024).chain((0..1024).map(|nr| nr | 0x4000_0000)).chain([u32::MAX, 0x7fff_ffff]) {
            for arch in [bpf::AUDIT_ARCH, AUDIT_ARCH_I386] {
                for args in &arguments {
                    assert_eq!(judge(short, arch, nr, *args), judge(plain, arch, nr, *args), "configuration {:?}, call {nr}, {args:?}", CONFIGURATIONS[i]);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    #[test]
    fn the_short_program_decides_any_arguments_as_the_plain_one(
        nr in prop_oneof![0u32..480, any::<u32>()],
        args in proptest::array::uniform6(prop_oneof![0u64..64, (0u32..64).prop_map(|bit| 1u64 << bit), any::<u64>(), any::<u64>().prop_map(|v| v & 0xffff_ffff)]),
    ) {
        for (short, plain) in pairs() {
            prop_assert_eq!(judge(short, bpf::AUDIT_ARCH, nr, args), judge(plain, bpf::AUDIT_ARCH, nr, args));
        }
    }
}

#[test]
fn the_landlock_program_is_under_half_the_plain_one() {
    let (unix, internet, keep_group) = (false, super::Internet::None, true);
    let short = super::filter_with(unix, internet, keep_group).unwrap();
    let plain = plain(super::rules(unix, internet, keep_group).unwrap());
    assert!(short.len() * 2 < plain.len(), "{} instructions against {}", short.len(), plain.len());
}
