//! The inner seccomp stage: system calls a sandboxed command never needs and
//! that reach past the mount namespace.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

/// The filter, compiled for this machine: `EPERM` for `ptrace`,
/// `process_vm_{readv,writev}`, `io_uring_*`, `ioctl(TIOCSTI|TIOCLINUX)` (the
/// command compared on its low 32 bits, as the kernel reads it) and, unless
/// allowed, `socket(AF_UNIX, ..)`.
pub fn filter(allow_unix_sockets: bool) -> Result<BpfProgram, seccompiler::Error> {
    let eq32 = |arg, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value);
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
    rules.insert(
        libc::SYS_ioctl,
        vec![SeccompRule::new(vec![eq32(1, libc::TIOCSTI)?])?, SeccompRule::new(vec![eq32(1, libc::TIOCLINUX)?])?],
    );
    if !allow_unix_sockets {
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![eq32(0, libc::AF_UNIX as u64)?])?]);
    }
    let arch = std::env::consts::ARCH.try_into()?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(1), arch)?;
    Ok(filter.try_into()?)
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
    #[test]
    fn the_filter_compiles_both_ways() {
        let strict = super::filter(false).unwrap();
        let lenient = super::filter(true).unwrap();
        assert!(strict.len() > lenient.len());
        assert_eq!(super::to_bytes(&strict).len(), strict.len() * 8);
    }
}
