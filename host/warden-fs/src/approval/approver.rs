//! Who answers a request, and the answers there are.

use super::commands::CommandRequest;
use super::request::Request;

/// How long an allowed access lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// This operation only: the grant ends when the operation does.
    Once,
    /// Until the session ends. Never written anywhere but the audit log.
    Session,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Once => "once",
            Scope::Session => "session",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A person said no.
    Deny,
    /// Grant `request.choices[choice]` for `scope`.
    Allow { scope: Scope, choice: usize },
    /// No person could be asked (e.g. no terminal).
    Unanswered,
    /// The question goes back to the caller, to put to a person and call
    /// again (an MCP client of 2026-07-28): nothing is granted, nothing logged.
    Deferred,
}

/// Decides requests: a person at a terminal, a script, or nobody.
pub trait Approver: Send {
    fn decide(&mut self, request: &Request) -> Answer;

    /// A command a rule asks about. Nobody is asked unless an approver says how.
    fn decide_command(&mut self, _request: &CommandRequest) -> Answer {
        Answer::Unanswered
    }

    /// Where the last answer came from (`client`, `console`), for the audit
    /// log's `via`; `None` where there is one way only.
    fn answered_via(&self) -> Option<&'static str> {
        None
    }
}

/// The approver when no one can be asked: every request stays unanswered.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn decide(&mut self, _: &Request) -> Answer {
        Answer::Unanswered
    }
}
