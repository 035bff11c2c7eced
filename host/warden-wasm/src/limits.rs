//! The limits of one run, with Warden's defaults filled in, and how a store
//! enforces them.

use std::time::Duration;

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use warden_policy::Limits;

pub const DEFAULT_MEMORY_BYTES: u64 = 512 << 20;
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 20;
/// Fuel for a deterministic run that sets none: about ten billion instructions.
pub const DEFAULT_DETERMINISTIC_FUEL: u64 = 10_000_000_000;

/// Limits in force for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    pub memory_bytes: u64,
    /// Wall time; `None` in a deterministic run unless set explicitly.
    pub timeout: Option<Duration>,
    pub fuel: Option<u64>,
    pub output_bytes: u64,
}

impl RunLimits {
    /// A deterministic run counts fuel instead of wall time, which differs
    /// from one run to the next.
    pub fn resolve(limits: Limits, deterministic: bool) -> RunLimits {
        let (timeout, fuel) = if deterministic {
            (limits.timeout, Some(limits.fuel.unwrap_or(DEFAULT_DETERMINISTIC_FUEL)))
        } else {
            (Some(limits.timeout.unwrap_or(DEFAULT_TIMEOUT)), limits.fuel)
        };
        RunLimits {
            memory_bytes: limits.memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES),
            timeout,
            fuel,
            output_bytes: limits.output_bytes.unwrap_or(DEFAULT_OUTPUT_BYTES),
        }
    }
}

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits::resolve(Limits::default(), false)
    }
}

/// A memory or table grew past the limit; the guest traps with this.
#[derive(Debug, thiserror::Error)]
#[error("the tool tried to use more than the memory limit of {limit} bytes")]
pub struct MemoryLimitExceeded {
    pub limit: u64,
}

/// What one tool's store may hold, whether its instance comes from the
/// pooling allocator (which is sized by the same numbers) or is allocated on
/// demand, where nothing else would bound them.
pub const MAX_CORE_INSTANCES: usize = 64;
pub const MAX_MEMORIES: usize = 16;
pub const MAX_TABLES: usize = 64;
pub const MAX_TABLE_ELEMENTS: usize = 100_000;

/// `StoreLimits`, except that a refused growth traps with a message naming the limit.
pub struct MemoryLimiter {
    inner: StoreLimits,
    limit: u64,
}

impl MemoryLimiter {
    pub fn new(limit: u64) -> MemoryLimiter {
        let bytes = usize::try_from(limit).unwrap_or(usize::MAX);
        let inner = StoreLimitsBuilder::new()
            .memory_size(bytes)
            .table_elements(MAX_TABLE_ELEMENTS)
            .instances(MAX_CORE_INSTANCES)
            .memories(MAX_MEMORIES)
            .tables(MAX_TABLES)
            .build();
        MemoryLimiter { inner, limit }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if self.inner.memory_growing(current, desired, maximum)? {
            return Ok(true);
        }
        // Past a memory's own declared maximum, growth fails the normal way.
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        Err(MemoryLimitExceeded { limit: self.limit }.into())
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_instances_and_memories_are_bounded_without_the_pool_too() {
        let mut limiter = MemoryLimiter::new(64 << 20);
        assert!(limiter.table_growing(0, MAX_TABLE_ELEMENTS, None).unwrap());
        assert!(!limiter.table_growing(0, MAX_TABLE_ELEMENTS + 1, None).unwrap());
        assert!(!limiter.table_growing(0, 1 << 28, None).unwrap());
        assert_eq!((limiter.instances(), limiter.memories(), limiter.tables()), (MAX_CORE_INSTANCES, MAX_MEMORIES, MAX_TABLES));
    }

    #[test]
    fn deterministic_runs_trade_wall_time_for_fuel() {
        let limits = RunLimits::resolve(Limits::default(), true);
        assert_eq!(limits.timeout, None);
        assert_eq!(limits.fuel, Some(DEFAULT_DETERMINISTIC_FUEL));
        let limits = RunLimits::resolve(Limits::default(), false);
        assert_eq!(limits.timeout, Some(DEFAULT_TIMEOUT));
        assert_eq!(limits.fuel, None);
    }
}
