//! A command's side of the local channel, blocking: the command lists itself
//! at the console of its policy, if one runs, and puts questions there.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use warden_fs::approval::{Answer, Approver, Request};

use super::wire::{socket_of, FromCommand, ToCommand, MAX_LINE};
use crate::hub::{Decision, NewQuestion};

/// How long a person may take over one question.
const ANSWER_TIME: Duration = Duration::from_secs(300);

/// A command's connection to the console; clones share it, and it lasts
/// (the command listed) until the last is dropped.
#[derive(Clone)]
pub struct LocalConsole(Arc<Link>);

struct Link {
    stream: Mutex<UnixStream>,
    answers: Mutex<Receiver<Option<Decision>>>,
    cancelled: Arc<AtomicBool>,
}

/// What the console said so far to the question asked.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    Answered(Decision),
    /// It will give no answer: it went away, the command was cancelled there,
    /// or the page holds too many questions.
    Nothing,
    /// Nothing yet.
    Waiting,
}

impl LocalConsole {
    /// Lists the command `tool` (doing `detail`) at the console of
    /// `policy_file`; `None` when no console runs for it.
    pub fn connect(policy_file: &Path, tool: &str, detail: &str) -> Option<LocalConsole> {
        let stream = UnixStream::connect(socket_of(policy_file).ok()?).ok()?;
        let reading = stream.try_clone().ok()?;
        let (heard, answers) = mpsc::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let link = LocalConsole(Arc::new(Link { stream: Mutex::new(stream), answers: Mutex::new(answers), cancelled: cancelled.clone() }));
        link.say(&FromCommand::Call { tool: tool.to_owned(), detail: detail.to_owned() }).ok()?;
        std::thread::Builder::new().name("warden-console-link".into()).spawn(move || listen(reading, &heard, &cancelled)).ok()?;
        Some(link)
    }

    /// Set when the person cancels the command at the console.
    pub fn cancelled(&self) -> Arc<AtomicBool> {
        self.0.cancelled.clone()
    }

    fn say(&self, message: &FromCommand) -> std::io::Result<()> {
        let mut line = serde_json::to_string(message)?;
        line.push('\n');
        self.0.stream.lock().unwrap_or_else(|p| p.into_inner()).write_all(line.as_bytes())
    }

    /// Puts `question` on the page; what the person answers is [`LocalConsole::heard`].
    pub fn ask(&self, question: &NewQuestion) -> bool {
        // An answer to a question withdrawn before is no answer to this one.
        while self.0.answers.lock().unwrap_or_else(|p| p.into_inner()).try_recv().is_ok() {}
        self.say(&FromCommand::Ask(question.clone())).is_ok()
    }

    /// Takes the question off the page (it was answered elsewhere).
    pub fn withdraw(&self) {
        let _ = self.say(&FromCommand::Withdraw);
    }

    /// The answer to the question asked, waiting for it at most `wait`.
    pub fn heard(&self, wait: Duration) -> Heard {
        if self.0.cancelled.load(Ordering::SeqCst) {
            return Heard::Nothing;
        }
        match self.0.answers.lock().unwrap_or_else(|p| p.into_inner()).recv_timeout(wait) {
            Ok(Some(decision)) if !self.0.cancelled.load(Ordering::SeqCst) => Heard::Answered(decision),
            Ok(_) | Err(RecvTimeoutError::Disconnected) => Heard::Nothing,
            Err(RecvTimeoutError::Timeout) => Heard::Waiting,
        }
    }
}

/// Hands the console's answers to the asker and its cancel to the flag,
/// until the console closes the connection (then every question asked gets
/// [`Heard::Nothing`]).
fn listen(stream: UnixStream, heard: &mpsc::Sender<Option<Decision>>, cancelled: &AtomicBool) {
    let mut lines = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match (&mut lines).take(MAX_LINE as u64 + 1).read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if !line.ends_with('\n') => break,
            Ok(_) => {}
        }
        match serde_json::from_str(&line) {
            Ok(ToCommand::Answer(decision)) => {
                let _ = heard.send(decision);
            }
            Ok(ToCommand::Cancel) => {
                cancelled.store(true, Ordering::SeqCst);
                let _ = heard.send(None);
            }
            Err(_) => break,
        }
    }
}

/// Asks the person at the console alone (`approvals.via: console`, or no
/// terminal): no answer in time, or none at all, is no grant.
pub struct ConsoleApprover {
    pub console: LocalConsole,
}

impl Approver for ConsoleApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        // The console names the asker by the connection's process, whatever it is told.
        if !self.console.ask(&NewQuestion::of(request, "warden CLI", true)) {
            return Answer::Unanswered;
        }
        let deadline = Instant::now() + ANSWER_TIME;
        while Instant::now() < deadline {
            match self.console.heard(Duration::from_millis(200)) {
                Heard::Answered(decision) => return decision.answer(true),
                Heard::Nothing => return Answer::Unanswered,
                Heard::Waiting => {}
            }
        }
        self.console.withdraw();
        Answer::Unanswered
    }

    fn answered_via(&self) -> Option<&'static str> {
        Some("console")
    }
}
