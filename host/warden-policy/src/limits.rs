//! Resource limits for a run, and the text forms they are written in
//! (`256MiB`, `10s`), shared by policy files and command-line flags.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

/// Limits as written in a policy; every one is optional.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Largest linear memory of a component, e.g. `256MiB`.
    #[serde(default)]
    pub memory: Option<String>,
    /// Wall-clock time for one run or call, e.g. `10s`, `500ms`.
    #[serde(default)]
    pub timeout: Option<String>,
    /// WebAssembly fuel (roughly, instructions) for one run or call.
    #[serde(default)]
    pub fuel: Option<u64>,
    /// Captured output per stream (stdout, stderr, logs), e.g. `1MiB`.
    #[serde(default)]
    pub output: Option<String>,
}

/// Validated limits. `None` leaves the runtime's default in place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    pub memory_bytes: Option<u64>,
    pub timeout: Option<Duration>,
    pub fuel: Option<u64>,
    pub output_bytes: Option<u64>,
}

impl Limits {
    /// `self`, with every limit that `overrides` sets taken from it.
    pub fn overridden_by(self, overrides: Limits) -> Limits {
        Limits {
            memory_bytes: overrides.memory_bytes.or(self.memory_bytes),
            timeout: overrides.timeout.or(self.timeout),
            fuel: overrides.fuel.or(self.fuel),
            output_bytes: overrides.output_bytes.or(self.output_bytes),
        }
    }
}

/// Parses a byte size such as `4096`, `64KiB`, `256MiB`, `1GB` (KB, MB, GB are powers of 1000).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let size: bytesize::ByteSize =
        text.trim().parse().map_err(|_| format!("'{text}' is not a size; write e.g. 4096, 64KiB or 256MiB"))?;
    if size.as_u64() == 0 {
        return Err(format!("'{text}' is zero; a limit must be positive"));
    }
    Ok(size.as_u64())
}

/// Parses a duration such as `500ms`, `10s`, `2m`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text.trim())
        .map_err(|_| format!("'{text}' is not a duration; write e.g. 500ms, 10s or 2m"))?;
    if duration.is_zero() {
        return Err(format!("'{text}' is zero; a limit must be positive"));
    }
    Ok(duration)
}

impl LimitsSpec {
    /// Checks every limit, naming the first bad field (`memory`, `timeout`, `fuel`, `output`).
    pub fn validate(&self) -> Result<Limits, (&'static str, String)> {
        let size = |field, v: &Option<String>| v.as_deref().map(parse_size).transpose().map_err(|m| (field, m));
        let fuel = match self.fuel {
            Some(0) => return Err(("fuel", "0 is not allowed; fuel must be positive".to_owned())),
            other => other,
        };
        Ok(Limits {
            memory_bytes: size("memory", &self.memory)?,
            timeout: self.timeout.as_deref().map(parse_duration).transpose().map_err(|m| ("timeout", m))?,
            fuel,
            output_bytes: size("output", &self.output)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_binary_and_decimal_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64KiB"), Ok(64 * 1024));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
    }

    #[test]
    fn bad_or_zero_sizes_are_refused() {
        assert_eq!(parse_size("lots"), Err("'lots' is not a size; write e.g. 4096, 64KiB or 256MiB".into()));
        assert_eq!(parse_size("0MiB"), Err("'0MiB' is zero; a limit must be positive".into()));
    }

    #[test]
    fn durations_take_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("10"), Err("'10' is not a duration; write e.g. 500ms, 10s or 2m".into()));
    }

    #[test]
    fn overrides_win_field_by_field() {
        let policy = Limits { memory_bytes: Some(1), fuel: Some(2), ..Limits::default() };
        let cli = Limits { fuel: Some(3), timeout: Some(Duration::from_secs(1)), ..Limits::default() };
        assert_eq!(
            policy.overridden_by(cli),
            Limits { memory_bytes: Some(1), fuel: Some(3), timeout: Some(Duration::from_secs(1)), output_bytes: None }
        );
    }
}
