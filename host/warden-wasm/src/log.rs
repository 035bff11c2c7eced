//! `warden:tool/host.log`: lines a tool logs during a call, kept up to a byte limit.

use crate::tool::bindings::warden::tool::host::{Host, Level};
use crate::state::ToolState;

/// One logged line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: &'static str,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct ToolLog {
    pub lines: Vec<LogLine>,
    bytes: u64,
    limit: u64,
}

impl ToolLog {
    pub fn new(limit: u64) -> ToolLog {
        ToolLog { limit, ..ToolLog::default() }
    }

    /// Lines past the byte limit are left out.
    fn push(&mut self, level: &'static str, message: String) {
        let size = message.len() as u64;
        if self.bytes + size > self.limit {
            return;
        }
        self.bytes += size;
        self.lines.push(LogLine { level, message });
    }
}

impl Host for ToolState {
    fn log(&mut self, level: Level, message: String) {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        self.log.push(level, message);
    }
}
