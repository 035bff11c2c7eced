//! The interactive approver: a question on stderr, one key on a terminal
//! stdin; and, while the policy's console runs, the same question there, the
//! first answer winning.

use std::cell::Cell;
use std::io::{IsTerminal, Read, StderrLock, Write};
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions, SpecialCodeIndex, Termios};
use warden_console::{Heard, LocalConsole, NewQuestion};
use warden_fs::approval::{Answer, Approver, CommandRequest, Request, Scope};
use warden_policy::shown;

/// Asks the person at the terminal: `o` once, `s` for the session, `d` deny,
/// `w` to widen the folder granted. Esc, Ctrl-C, Ctrl-D and end of input deny.
pub struct TerminalApprover {
    /// The policy's console, asked too.
    pub console: Option<LocalConsole>,
    /// Where the last answer came from, when the console was asked too.
    pub via: Option<&'static str>,
}

impl TerminalApprover {
    /// Whether a person can be asked: stdin is a terminal.
    pub fn available() -> bool {
        std::io::stdin().is_terminal()
    }
}

/// What came first: a key, or word from the console.
enum Input {
    /// `None` at end of input.
    Key(Option<u8>),
    Console(Heard),
}

impl Approver for TerminalApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        self.via = None;
        // Before the question is shown: a key pressed as soon as it appears is one key, never a line.
        let _keys = KeyMode::enter();
        let mut err = std::io::stderr().lock();
        let access = request.access.as_str();
        let tool = request.tool.as_deref().unwrap_or("a tool");
        let worker = request.worker.as_deref().map(|w| format!(" (worker {w})")).unwrap_or_default();
        let console = self.console.clone().filter(|c| c.ask(&NewQuestion::of(request, "warden CLI", true)));
        let _ = writeln!(err, "\nwarden: {tool}{worker} asks to {access} {}", request.path);
        let _ = writeln!(err, "  host path: {}", request.host_path.display());
        let _ = writeln!(err, "  because {}", request.reason);
        let choice = Cell::new(0);
        let widen = if request.choices.len() > 1 { "  [w] widen" } else { "" };
        let prompt = |err: &mut StderrLock| {
            let dir = &request.choices[choice.get()];
            let _ = writeln!(err, "  grant {access} access to {} (host {})", dir.path, dir.host.display());
            let _ = write!(err, "  [o] allow once  [s] allow for this session  [d] deny{widen} ? ");
        };
        let on_key = |key: Option<u8>, err: &mut StderrLock| match key {
            Some(b'o' | b'O') => Some(Answer::Allow { scope: Scope::Once, choice: choice.get() }),
            Some(b's' | b'S') => Some(Answer::Allow { scope: Scope::Session, choice: choice.get() }),
            Some(b'w' | b'W') if request.choices.len() > 1 => {
                choice.set((choice.get() + 1) % request.choices.len());
                let _ = writeln!(err, "w");
                None
            }
            key => denied_or_again(key, err),
        };
        self.answer(console.as_ref(), &mut err, prompt, on_key)
    }

    fn answered_via(&self) -> Option<&'static str> {
        self.via
    }

    /// A command a rule asks about, at the terminal and at the policy's console.
    fn decide_command(&mut self, request: &CommandRequest) -> Answer {
        self.via = None;
        let _keys = KeyMode::enter();
        let mut err = std::io::stderr().lock();
        let tool = request.tool.as_deref().unwrap_or("a tool");
        let worker = request.worker.as_deref().map(|w| format!(" (worker {w})")).unwrap_or_default();
        let console = self.console.clone().filter(|c| c.ask(&NewQuestion::of_command(request, "warden CLI", true)));
        let _ = writeln!(err, "\nwarden: {tool}{worker} asks to run {}", shown(&request.command));
        let _ = writeln!(err, "  because {}", shown(&request.reason()));
        if let Some(grant) = &request.grant {
            let _ = writeln!(err, "  it would get {grant}, for this command only");
        }
        let rules: Vec<String> = request.session_rules.iter().map(|r| format!("'{r}'")).collect();
        let session = if rules.is_empty() { String::new() } else { format!("  [s] allow {} for this session", rules.join(", ")) };
        let prompt = |err: &mut StderrLock| {
            let _ = write!(err, "  [o] allow once{session}  [d] deny ? ");
        };
        let on_key = |key: Option<u8>, err: &mut StderrLock| match key {
            Some(b'o' | b'O') => Some(Answer::Allow { scope: Scope::Once, choice: 0 }),
            Some(b's' | b'S') if !rules.is_empty() => Some(Answer::Allow { scope: Scope::Session, choice: 0 }),
            key => denied_or_again(key, err),
        };
        match self.answer(console.as_ref(), &mut err, prompt, on_key) {
            Answer::Allow { scope, .. } => Answer::Allow { scope, choice: 0 },
            answer => answer,
        }
    }
}

impl TerminalApprover {
    /// Shows `prompt` until a key answers (`on_key`; `None` shows it again)
    /// or the policy's console does, when it was asked too: the first
    /// answer wins and the other question is withdrawn.
    fn answer(
        &mut self,
        console: Option<&LocalConsole>,
        err: &mut StderrLock,
        prompt: impl Fn(&mut StderrLock),
        on_key: impl Fn(Option<u8>, &mut StderrLock) -> Option<Answer>,
    ) -> Answer {
        let asked_console = console.is_some();
        let mut console = console;
        if asked_console {
            let _ = writeln!(err, "  (asked at Warden's console too: the first answer wins)");
        }
        loop {
            prompt(err);
            let _ = err.flush();
            let key = match read_key(console) {
                Input::Key(key) => key,
                Input::Console(Heard::Answered(decision)) => {
                    self.via = Some("console");
                    let answer = decision.answer(true);
                    let _ = writeln!(err, "answered at Warden's console: {}", said(answer));
                    return answer;
                }
                Input::Console(_) if console.is_some_and(|c| c.cancelled().load(Ordering::SeqCst)) => {
                    let _ = writeln!(err, "cancelled at Warden's console");
                    return Answer::Unanswered;
                }
                Input::Console(_) => {
                    // The console went away: the terminal alone answers.
                    console = None;
                    let _ = writeln!(err);
                    continue;
                }
            };
            let Some(answer) = on_key(key, err) else { continue };
            if let Some(console) = console {
                console.withdraw();
            }
            // The console was asked too (it may have gone since): the answer says where it was given.
            if asked_console {
                self.via = Some("terminal");
            }
            let _ = writeln!(err, "{}", said(answer));
            return answer;
        }
    }
}

/// Esc, Ctrl-C, Ctrl-D, `d`, `n` and end of input deny; any other key asks again.
fn denied_or_again(key: Option<u8>, err: &mut StderrLock) -> Option<Answer> {
    match key {
        None | Some(b'd' | b'D' | b'n' | b'N' | 0x1b | 0x03 | 0x04) => Some(Answer::Deny),
        Some(_) => {
            let _ = writeln!(err);
            None
        }
    }
}

fn said(answer: Answer) -> &'static str {
    match answer {
        Answer::Allow { scope: Scope::Once, .. } => "allowed once",
        Answer::Allow { scope: Scope::Session, .. } => "allowed for this session",
        Answer::Deny => "denied",
        _ => "not answered",
    }
}

/// The terminal delivering single keys, unechoed, Ctrl-C and Ctrl-D as bytes,
/// for as long as it lives; output is still translated, so lines stay lines.
/// Held for the whole question: a key typed between two prompts must not meet
/// a line-editing terminal, which would turn Ctrl-D into a buffered end of line.
struct KeyMode {
    saved: Option<Termios>,
}

impl KeyMode {
    fn enter() -> KeyMode {
        let stdin = std::io::stdin();
        let saved = tcgetattr(stdin.as_fd()).ok();
        if let Some(saved) = &saved {
            let mut keys = saved.clone();
            keys.local_modes -= LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN;
            keys.special_codes[SpecialCodeIndex::VMIN] = 1;
            keys.special_codes[SpecialCodeIndex::VTIME] = 0;
            // Flush: keys typed before the question was shown never answer it.
            let _ = tcsetattr(stdin.as_fd(), OptionalActions::Flush, &keys);
        }
        KeyMode { saved }
    }
}

impl Drop for KeyMode {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = tcsetattr(std::io::stdin().as_fd(), OptionalActions::Now, saved);
        }
    }
}

/// One key from stdin, or the console's word, whichever comes first.
fn read_key(console: Option<&LocalConsole>) -> Input {
    let stdin = std::io::stdin();
    loop {
        let Some(console) = console else { return Input::Key(one_key()) };
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let wait = Timespec { tv_sec: 0, tv_nsec: 100_000_000 };
        if poll(&mut fds, Some(&wait)).is_ok_and(|n| n > 0) {
            return Input::Key(one_key());
        }
        match console.heard(Duration::ZERO) {
            Heard::Waiting => {}
            heard => return Input::Console(heard),
        }
    }
}

fn one_key() -> Option<u8> {
    let mut key = [0u8; 1];
    matches!(std::io::stdin().lock().read(&mut key), Ok(1)).then_some(key[0])
}

