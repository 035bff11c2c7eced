//! The Landlock ABI this kernel offers, asked of the kernel itself: the
//! `landlock` crate shows it only after a ruleset is enforced.

/// 0: no Landlock (not built in, or not enabled at boot).
pub type Abi = u32;

const CREATE_RULESET_VERSION: libc::c_uint = 1;
const CREATE_RULESET_ERRATA: libc::c_uint = 2;

/// Landlock's erratum 3: a folder moved out of a bind mount while a process
/// works in it could widen that process's rights (fixed in 6.17, backported).
pub const ERRATUM_DISCONNECTED_DIRECTORIES: u32 = 1 << 2;

/// `WARDEN_LANDLOCK_ABI` lowers the kernel's answer, for tests of a kernel
/// without Landlock (0) or with an older one; it never raises it.
pub fn abi() -> Abi {
    abi_unless(std::env::var("WARDEN_LANDLOCK_ABI").ok().as_deref())
}

fn abi_unless(forced: Option<&str>) -> Abi {
    // SAFETY: with a null attribute, a zero size and the VERSION flag the call
    // reads and writes no memory; it returns the ABI or -1.
    let answer = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, CREATE_RULESET_VERSION) };
    let kernel = u32::try_from(answer).unwrap_or(0);
    forced.and_then(|v| v.parse().ok()).map_or(kernel, |forced: Abi| forced.min(kernel))
}

/// The errata whose fixes this kernel has (a bit each), or `None` when it
/// cannot say (a kernel from before the question existed).
pub fn errata_fixed() -> Option<u32> {
    // SAFETY: as in `abi_unless`, with the ERRATA flag.
    let answer = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, CREATE_RULESET_ERRATA) };
    u32::try_from(answer).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_override_lowers_never_raises_and_garbage_is_no_override() {
        let kernel = super::abi_unless(None);
        assert!(kernel >= 6, "this test needs Landlock ABI 6; the kernel offers {kernel}");
        assert_eq!(super::abi_unless(Some("0")), 0);
        assert_eq!(super::abi_unless(Some("3")), 3);
        assert_eq!(super::abi_unless(Some("99")), kernel);
        assert_eq!(super::abi_unless(Some("x")), kernel);
    }
}
