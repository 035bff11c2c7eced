//! The rules as a classic BPF program, kept short: the kernel checks,
//! converts and JIT-compiles it for every command, and runs it at every
//! system call the command makes. Calls refused whatever their arguments
//! are found by a balanced search ending in one shared return, `clone`'s
//! flags by one test; the calls whose arguments decide go to seccompiler.

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, sock_filter};
use std::collections::BTreeMap;

use super::{NEWEST_REVIEWED, Rules};

/// The audit architecture of the calls this build's programs judge (the
/// numbers in the rules are this architecture's).
#[cfg(target_arch = "x86_64")]
pub(super) const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
pub(super) const AUDIT_ARCH: u32 = 0xc000_00b7;

const LOAD_WORD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_IF_EQUAL: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_IF_GREATER: u16 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const JUMP_IF_AT_LEAST: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JUMP_IF_SET: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K

const REFUSE: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

/// seccomp_data: the call's number at offset 0, its architecture at 4, its
/// arguments from 16, eight bytes each.
const NUMBER: u32 = 0;
const ARCH: u32 = 4;
const FIRST_ARGUMENT_LOW: u32 = if cfg!(target_endian = "little") { 16 } else { 20 };

/// Calls compared one by one at the end of the search.
const LEAF: usize = 3;

pub(super) fn ins(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The program of `rules`: `EPERM` for a refused call, `ALLOW` for the rest.
pub(super) fn compile(rules: Rules) -> Result<BpfProgram, seccompiler::Error> {
    // `clone` answered in its own check, the refused calls before seccompiler's
    // part: each call belongs to one of them alone.
    let clone = libc::SYS_clone;
    debug_assert!(rules.refused.iter().all(|nr| !rules.conditional.contains_key(nr)));
    debug_assert!(rules.clone_flags == 0 || !(rules.refused.contains(&clone) || rules.conditional.contains_key(&clone)));
    let mut checks = Vec::new();
    if rules.without_clone3 {
        checks.extend(clone3_and_newer_unknown());
    }
    checks.extend(x32_refused());
    if rules.clone_flags != 0 {
        checks.extend(clone_refused_with(rules.clone_flags));
    }
    let refused: Vec<u32> = rules.refused.iter().map(|&nr| u32::try_from(nr).expect("a system call number")).collect();
    checks.extend(search(&refused));
    Ok(behind(&checks, by_arguments(rules.conditional)?))
}

/// seccompiler's program for the calls whose arguments decide (and which
/// refuses (kills) a call of another architecture).
pub(super) fn by_arguments(rules: BTreeMap<i64, Vec<SeccompRule>>) -> Result<BpfProgram, seccompiler::Error> {
    let arch = std::env::consts::ARCH.try_into()?;
    Ok(SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?.try_into()?)
}

/// Refuses (`EPERM`) every x32-ABI call: on x86-64 they carry the
/// architecture of 64-bit calls with bit 30 set in their number, so `socket`
/// or `ptrace` by that route would match none of the rules, which name the
/// plain numbers. (Kernels built without x32 answer them ENOSYS anyway; many
/// distributions build it in.)
pub(super) fn x32_refused() -> Vec<sock_filter> {
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    vec![ins(JUMP_IF_SET, 0, 1, X32_SYSCALL_BIT), ins(RETURN, 0, 0, REFUSE)]
}

/// Answers ENOSYS to `clone3`, which passes its flags (new namespaces among
/// them) in memory seccomp cannot read (libc falls back to `clone`, whose
/// flags the rules see, on ENOSYS alone), and to every call newer than
/// [`NEWEST_REVIEWED`].
pub(super) fn clone3_and_newer_unknown() -> Vec<sock_filter> {
    vec![
        ins(JUMP_IF_EQUAL, 1, 0, libc::SYS_clone3 as u32),
        ins(JUMP_IF_GREATER, 0, 1, NEWEST_REVIEWED),
        ins(RETURN, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
    ]
}

/// Refuses a `clone` whose flags hold any of `flags`, allows any other.
fn clone_refused_with(flags: u32) -> Vec<sock_filter> {
    vec![
        ins(JUMP_IF_EQUAL, 0, 4, libc::SYS_clone as u32),
        ins(LOAD_WORD, 0, 0, FIRST_ARGUMENT_LOW),
        ins(JUMP_IF_SET, 0, 1, flags),
        ins(RETURN, 0, 0, REFUSE),
        ins(RETURN, 0, 0, ALLOW),
    ]
}

/// Where a comparison of the search goes.
#[derive(Clone, Copy)]
enum To {
    Refuse,
    Out,
    At(usize),
}

/// Refuses every call of `refused` (sorted): a balanced search, compared one
/// by one in groups of [`LEAF`], with one shared return. Any other call
/// falls through.
fn search(refused: &[u32]) -> Vec<sock_filter> {
    if refused.is_empty() {
        return Vec::new();
    }
    let mut nodes = Vec::new();
    branch(refused, &mut nodes);
    let refuse = nodes.len();
    let offset = |from: usize, to: To| {
        let target = match to {
            To::Refuse => refuse,
            To::Out => refuse + 1,
            To::At(at) => at,
        };
        u8::try_from(target - from - 1).expect("a search short enough for BPF's jumps")
    };
    let mut program: Vec<sock_filter> = nodes.iter().enumerate().map(|(at, &(code, k, yes, no))| ins(code, offset(at, yes), offset(at, no), k)).collect();
    program.push(ins(RETURN, 0, 0, REFUSE));
    program
}

fn branch(refused: &[u32], nodes: &mut Vec<(u16, u32, To, To)>) {
    if refused.len() <= LEAF {
        for (i, &nr) in refused.iter().enumerate() {
            let next = if i + 1 == refused.len() { To::Out } else { To::At(nodes.len() + 1) };
            nodes.push((JUMP_IF_EQUAL, nr, To::Refuse, next));
        }
        return;
    }
    let (low, high) = refused.split_at(refused.len() / 2);
    let at = nodes.len();
    nodes.push((JUMP_IF_AT_LEAST, high[0], To::Out, To::At(at + 1)));
    branch(low, nodes);
    nodes[at].2 = To::At(nodes.len());
    branch(high, nodes);
}

/// `program` behind `checks`, which judge a call of this build's
/// architecture by its number (loaded into the accumulator) and fall
/// through to the program; a call of another architecture goes straight on
/// to the program, which judges it.
pub(super) fn behind(checks: &[sock_filter], program: BpfProgram) -> BpfProgram {
    let past_checks = u8::try_from(checks.len() + 1).expect("checks short enough for BPF's jumps");
    let mut guarded = vec![ins(LOAD_WORD, 0, 0, ARCH), ins(JUMP_IF_EQUAL, 0, past_checks, AUDIT_ARCH), ins(LOAD_WORD, 0, 0, NUMBER)];
    guarded.extend_from_slice(checks);
    guarded.extend(program);
    guarded
}
