//! Clocks and randomness for `--deterministic`: the same inputs give the same
//! bytes, run after run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

/// 2000-01-01T00:00:00Z, a wall clock that never moves.
const FIXED_WALL_CLOCK: Duration = Duration::from_secs(946_684_800);
/// Each reading of the monotonic clock advances it by this many nanoseconds.
const MONOTONIC_STEP_NS: u64 = 1_000_000;

struct FixedWallClock;

impl HostWallClock for FixedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        FIXED_WALL_CLOCK
    }
}

#[derive(Default)]
struct SteppingClock {
    readings: AtomicU64,
}

impl HostMonotonicClock for SteppingClock {
    fn resolution(&self) -> u64 {
        MONOTONIC_STEP_NS
    }

    fn now(&self) -> u64 {
        (self.readings.fetch_add(1, Ordering::Relaxed) + 1) * MONOTONIC_STEP_NS
    }
}

/// Replaces every source of nondeterminism a WASI context has.
pub fn make_deterministic(builder: &mut WasiCtxBuilder, seed: u64) {
    builder
        .wall_clock(FixedWallClock)
        .monotonic_clock(SteppingClock::default())
        .secure_random(StdRng::seed_from_u64(seed))
        .insecure_random(StdRng::seed_from_u64(seed ^ 0x5eed))
        .insecure_random_seed(u128::from(seed));
}
