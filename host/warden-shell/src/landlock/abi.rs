//! The Landlock ABI this kernel offers, asked of the kernel itself: the
//! `landlock` crate shows it only after a ruleset is enforced.

/// 0: no Landlock (not built in, or not enabled at boot).
pub type Abi = u32;

const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// `WARDEN_LANDLOCK_ABI` overrides the kernel's answer, for tests of a
/// kernel without Landlock (0) or with an older one.
pub fn abi() -> Abi {
    abi_unless(std::env::var("WARDEN_LANDLOCK_ABI").ok().as_deref())
}

fn abi_unless(forced: Option<&str>) -> Abi {
    if let Some(forced) = forced.and_then(|v| v.parse().ok()) {
        return forced;
    }
    // SAFETY: with a null attribute, a zero size and the VERSION flag the call
    // reads and writes no memory; it returns the ABI or -1.
    let answer = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, CREATE_RULESET_VERSION) };
    u32::try_from(answer).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_override_wins_and_garbage_is_no_override() {
        assert_eq!(super::abi_unless(Some("0")), 0);
        assert_eq!(super::abi_unless(Some("3")), 3);
        assert_eq!(super::abi_unless(Some("x")), super::abi_unless(None));
    }
}
