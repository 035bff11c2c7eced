//! The interactive approver: a question on stderr, one key on a terminal stdin.

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;

use rustix::termios::{tcgetattr, tcsetattr, OptionalActions};
use warden_fs::approval::{Answer, Approver, Request, Scope};

/// Asks the person at the terminal: `o` once, `s` for the session, `d` deny,
/// `w` to widen the folder granted. Esc, Ctrl-C, Ctrl-D and end of input deny.
pub struct TerminalApprover;

impl TerminalApprover {
    /// Whether a person can be asked: stdin is a terminal.
    pub fn available() -> bool {
        std::io::stdin().is_terminal()
    }
}

impl Approver for TerminalApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        let mut err = std::io::stderr().lock();
        let access = request.access.as_str();
        let tool = request.tool.as_deref().unwrap_or("a tool");
        let worker = request.worker.as_deref().map(|w| format!(" (worker {w})")).unwrap_or_default();
        let _ = writeln!(err, "\nwarden: {tool}{worker} asks to {access} {}", request.path);
        let _ = writeln!(err, "  host path: {}", request.host_path.display());
        let _ = writeln!(err, "  because {}", request.reason);
        let mut choice = 0;
        loop {
            let dir = &request.choices[choice];
            let _ = writeln!(err, "  grant {access} access to {} (host {})", dir.path, dir.host.display());
            let widen = if request.choices.len() > 1 { "  [w] widen" } else { "" };
            let _ = write!(err, "  [o] allow once  [s] allow for this session  [d] deny{widen} ? ");
            let _ = err.flush();
            let answer = match read_key() {
                Some(b'o' | b'O') => Answer::Allow { scope: Scope::Once, choice },
                Some(b's' | b'S') => Answer::Allow { scope: Scope::Session, choice },
                Some(b'w' | b'W') if request.choices.len() > 1 => {
                    choice = (choice + 1) % request.choices.len();
                    let _ = writeln!(err, "w");
                    continue;
                }
                None | Some(b'd' | b'D' | b'n' | b'N' | 0x1b | 0x03 | 0x04) => Answer::Deny,
                Some(_) => {
                    let _ = writeln!(err);
                    continue;
                }
            };
            let said = match answer {
                Answer::Allow { scope: Scope::Once, .. } => "allowed once",
                Answer::Allow { scope: Scope::Session, .. } => "allowed for this session",
                _ => "denied",
            };
            let _ = writeln!(err, "{said}");
            return answer;
        }
    }
}

/// One key from stdin, without waiting for Enter; `None` at end of input.
fn read_key() -> Option<u8> {
    let stdin = std::io::stdin();
    let saved = tcgetattr(stdin.as_fd()).ok();
    if let Some(saved) = &saved {
        let mut raw = saved.clone();
        raw.make_raw();
        let _ = tcsetattr(stdin.as_fd(), OptionalActions::Now, &raw);
    }
    let mut key = [0u8; 1];
    let got = stdin.lock().read(&mut key);
    if let Some(saved) = &saved {
        let _ = tcsetattr(stdin.as_fd(), OptionalActions::Now, saved);
    }
    matches!(got, Ok(1)).then_some(key[0])
}
