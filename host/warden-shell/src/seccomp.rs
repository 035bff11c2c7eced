//! The inner seccomp stage: system calls a sandboxed command never needs and
//! that reach past the mount namespace.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

const AF_UNIX: u64 = 1;
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// The filter, compiled for this machine: `EPERM` for `ptrace`,
/// `process_vm_{readv,writev}`, `io_uring_*`, `ioctl(TIOCSTI|TIOCLINUX)` (the
/// command compared on its low 32 bits, as the kernel reads it) and, unless
/// allowed, `socket(AF_UNIX, ..)`.
pub fn filter(allow_unix_sockets: bool) -> Result<BpfProgram, seccompiler::Error> {
    let eq32 = |arg, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc_nr::PTRACE,
        libc_nr::PROCESS_VM_READV,
        libc_nr::PROCESS_VM_WRITEV,
        libc_nr::IO_URING_SETUP,
        libc_nr::IO_URING_ENTER,
        libc_nr::IO_URING_REGISTER,
    ] {
        rules.insert(call, Vec::new());
    }
    rules.insert(
        libc_nr::IOCTL,
        vec![SeccompRule::new(vec![eq32(1, TIOCSTI)?])?, SeccompRule::new(vec![eq32(1, TIOCLINUX)?])?],
    );
    if !allow_unix_sockets {
        rules.insert(libc_nr::SOCKET, vec![SeccompRule::new(vec![eq32(0, AF_UNIX)?])?]);
    }
    let arch = std::env::consts::ARCH.try_into()?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(1), arch)?;
    Ok(filter.try_into()?)
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

/// System call numbers (x86_64 and aarch64 differ; these are the kernel's).
mod libc_nr {
    #[cfg(target_arch = "x86_64")]
    mod nr {
        pub const PTRACE: i64 = 101;
        pub const PROCESS_VM_READV: i64 = 310;
        pub const PROCESS_VM_WRITEV: i64 = 311;
        pub const IOCTL: i64 = 16;
        pub const SOCKET: i64 = 41;
    }
    #[cfg(target_arch = "aarch64")]
    mod nr {
        pub const PTRACE: i64 = 117;
        pub const PROCESS_VM_READV: i64 = 270;
        pub const PROCESS_VM_WRITEV: i64 = 271;
        pub const IOCTL: i64 = 29;
        pub const SOCKET: i64 = 198;
    }
    pub use nr::*;
    pub const IO_URING_SETUP: i64 = 425;
    pub const IO_URING_ENTER: i64 = 426;
    pub const IO_URING_REGISTER: i64 = 427;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_compiles_both_ways() {
        let strict = super::filter(false).unwrap();
        let lenient = super::filter(true).unwrap();
        assert!(strict.len() > lenient.len());
        assert_eq!(super::to_bytes(&strict).len(), strict.len() * 8);
    }
}
