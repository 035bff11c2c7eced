//! Exit statuses, one place: 0 ok, 1 failure, 2 usage or policy, 3 denied,
//! 126 a command the rules refused.

use std::fmt;

use warden_fs::FsError;
use warden_policy::PolicyError;

/// A failed command: what to print on stderr and which status to exit with.
pub struct Failure {
    pub status: u8,
    pub message: String,
}

impl Failure {
    pub const FAILED: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const DENIED: u8 = 3;
    /// A command the policy's rules refused (or a person declined): it never ran.
    pub const NOT_RUN: u8 = 126;
    /// Cancelled by the person (at Warden's console), as a shell says for Ctrl-C.
    pub const CANCELLED: u8 = 130;

    pub fn usage(message: impl fmt::Display) -> Failure {
        Failure { status: Self::USAGE, message: message.to_string() }
    }

    /// Passes on a child's nonzero exit code, silently. Exit statuses are 8
    /// bits on Unix; a code that would wrap to 0 must still fail.
    pub fn exit_code(code: i32) -> Failure {
        Failure { status: u8::try_from(code).unwrap_or(Self::FAILED).max(1), message: String::new() }
    }

    /// Prints the message on stderr and gives the exit status.
    pub fn report(self) -> u8 {
        if !self.message.is_empty() {
            eprintln!("{}", self.message);
        }
        self.status
    }
}

impl From<FsError> for Failure {
    fn from(e: FsError) -> Failure {
        if let FsError::Policy(e) = e {
            return e.into();
        }
        let status = if e.is_denial() {
            Self::DENIED
        } else if e.is_usage() {
            Self::USAGE
        } else {
            Self::FAILED
        };
        Failure { status, message: e.to_string() }
    }
}

impl From<PolicyError> for Failure {
    fn from(e: PolicyError) -> Failure {
        Failure::usage(format!("invalid policy: {e}"))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure { status: Self::FAILED, message: format!("warden: {e}") }
    }
}
