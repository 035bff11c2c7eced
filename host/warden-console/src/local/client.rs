//! A command's side of the local channel, blocking: the command lists itself
//! at the console of its policy, if one runs, and puts questions there.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use warden_fs::approval::{Answer, Approver, CommandRequest, Request};

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
    /// Answers, each with the number of its question.
    answers: Mutex<Receiver<(u64, Option<Decision>)>>,
    cancelled: Arc<AtomicBool>,
    /// The number of the question asked last: an answer to another is none to it.
    asking: Arc<AtomicU64>,
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
        LocalConsole::connect_at(&socket_of(policy_file).ok()?, &policy_file.canonicalize().ok()?, tool, detail)
    }

    fn connect_at(socket: &Path, policy: &Path, tool: &str, detail: &str) -> Option<LocalConsole> {
        let stream = UnixStream::connect(socket).ok()?;
        let reading = stream.try_clone().ok()?;
        let (heard, answers) = mpsc::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let asking = Arc::new(AtomicU64::new(0));
        let link = LocalConsole(Arc::new(Link { stream: Mutex::new(stream), answers: Mutex::new(answers), cancelled: cancelled.clone(), asking: asking.clone() }));
        link.say(&FromCommand::Call { tool: tool.to_owned(), detail: detail.to_owned(), policy: policy.to_owned() }).ok()?;
        std::thread::Builder::new().name("warden-console-link".into()).spawn(move || listen(reading, &heard, &cancelled, &asking)).ok()?;
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
        let id = self.0.asking.fetch_add(1, Ordering::SeqCst) + 1;
        self.say(&FromCommand::Ask { id, question: question.clone() }).is_ok()
    }

    /// Takes the question asked off the page (it was answered elsewhere).
    pub fn withdraw(&self) {
        let _ = self.say(&FromCommand::Withdraw { id: self.0.asking.load(Ordering::SeqCst) });
    }

    /// The answer to the question asked, waiting for it at most `wait`.
    pub fn heard(&self, wait: Duration) -> Heard {
        if self.0.cancelled.load(Ordering::SeqCst) {
            return Heard::Nothing;
        }
        let answers = self.0.answers.lock().unwrap_or_else(|p| p.into_inner());
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match answers.recv_timeout(left) {
                // A late answer to a question withdrawn before.
                Ok((id, _)) if id != self.0.asking.load(Ordering::SeqCst) => continue,
                Ok((_, Some(decision))) if !self.0.cancelled.load(Ordering::SeqCst) => return Heard::Answered(decision),
                Ok(_) | Err(RecvTimeoutError::Disconnected) => return Heard::Nothing,
                Err(RecvTimeoutError::Timeout) => return Heard::Waiting,
            }
        }
    }
}

/// Hands the console's answers to the asker and its cancel to the flag,
/// until the console closes the connection (then every question asked gets
/// [`Heard::Nothing`]).
fn listen(stream: UnixStream, heard: &mpsc::Sender<(u64, Option<Decision>)>, cancelled: &AtomicBool, asking: &AtomicU64) {
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
            Ok(ToCommand::Answer { id, decision }) => {
                let _ = heard.send((id, decision));
            }
            Ok(ToCommand::Cancel) => {
                cancelled.store(true, Ordering::SeqCst);
                let _ = heard.send((asking.load(Ordering::SeqCst), None));
            }
            Err(_) => break,
        }
    }
}

/// Asks the person at the console alone (`approvals.via: console`, or no
/// terminal): no answer in time, or none at all, is no grant.
pub struct ConsoleApprover {
    pub console: LocalConsole,
    /// `console` when the last answer came from there; `None` when none came.
    pub via: Option<&'static str>,
}

impl Approver for ConsoleApprover {
    fn decide(&mut self, request: &Request) -> Answer {
        // The console names the asker by the connection's process, whatever it is told.
        self.wait_for(&NewQuestion::of(request, "warden CLI", true))
    }

    fn decide_command(&mut self, request: &CommandRequest) -> Answer {
        match self.wait_for(&NewQuestion::of_command(request, "warden CLI", true)) {
            Answer::Allow { scope, .. } => Answer::Allow { scope, choice: 0 },
            answer => answer,
        }
    }

    fn answered_via(&self) -> Option<&'static str> {
        self.via
    }
}

impl ConsoleApprover {
    /// Puts `question` at the console and waits for its answer.
    fn wait_for(&mut self, question: &NewQuestion) -> Answer {
        self.via = None;
        if !self.console.ask(question) {
            return Answer::Unanswered;
        }
        let deadline = Instant::now() + ANSWER_TIME;
        while Instant::now() < deadline {
            match self.console.heard(Duration::from_millis(200)) {
                Heard::Answered(decision) => {
                    self.via = Some("console");
                    return decision.answer(true);
                }
                Heard::Nothing => return Answer::Unanswered,
                Heard::Waiting => {}
            }
        }
        self.console.withdraw();
        Answer::Unanswered
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;

    use super::*;

    fn question() -> NewQuestion {
        NewQuestion {
            client: "c".into(),
            tool: "t".into(),
            access: "write".into(),
            path: "/p/a".into(),
            host_path: "/h/p/a".into(),
            reason: "r".into(),
            folders: vec!["/p".into()],
            offer_session: true,
        }
    }

    #[test]
    fn a_late_answer_to_a_withdrawn_question_is_no_answer_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("console.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let console = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut lines = BufReader::new(stream.try_clone().unwrap()).lines();
            let mut said = Vec::new();
            for _ in 0..4 {
                said.push(lines.next().unwrap().unwrap());
            }
            // Question 1 was answered at the terminal and withdrawn; its answer from the page crosses that.
            let mut out = stream;
            out.write_all(b"{\"answer\":{\"id\":1,\"decision\":{\"decision\":\"session\",\"folder\":0}}}\n").unwrap();
            std::thread::sleep(Duration::from_millis(200));
            out.write_all(b"{\"answer\":{\"id\":2,\"decision\":{\"decision\":\"deny\"}}}\n").unwrap();
            said
        });
        let link = LocalConsole::connect_at(&socket, dir.path(), "warden fs write", "/p/a").unwrap();
        assert!(link.ask(&question()));
        link.withdraw();
        assert!(link.ask(&question()));
        assert_eq!(link.heard(Duration::from_millis(100)), Heard::Waiting);
        assert_eq!(link.heard(Duration::from_secs(10)), Heard::Answered(Decision::Deny));
        let said = console.join().unwrap();
        assert!(said[1].starts_with("{\"ask\":{\"id\":1,") && said[2] == "{\"withdraw\":{\"id\":1}}" && said[3].starts_with("{\"ask\":{\"id\":2,"), "{said:?}");
    }
}
