//! One command in a running container, started by the container's runner
//! (`runner.rs`), which keeps its time limit and ends it with every process
//! it made: when it exits, when its time is up, when it is cancelled, and
//! when Warden goes (the connection closes). A command is never started any
//! other way: without a runner that answers, it is refused.

use std::ffi::OsString;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bollard::query_parameters::RestartContainerOptions;
use tokio::sync::mpsc;

use crate::container::engine::Engine;
use crate::container::lifecycle::ExecSettings;
use crate::container::runner;
use crate::error::ShellError;
use crate::output::Captured;
use crate::run::Ended;

/// How long past a command's time Warden waits for the runner's answer
/// before it restarts the container instead (the runner ends what a command
/// left within 5 s).
const GRACE: Duration = Duration::from_secs(8);

/// What a started command sends while it runs.
pub enum Event {
    /// Its first process, by PID inside the container (the runner says so).
    Started,
    Out(Vec<u8>),
    Err(Vec<u8>),
    /// Its output is closed and it has exited, with this code.
    Exited(i32),
    /// The runner ended it at its time limit.
    TimedOut,
    /// The runner ended it when Warden cancelled it.
    Cancelled,
    Failed(ShellError),
}

/// The container a command runs in, and its runner.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub engine: &'a Engine,
    pub container: &'a str,
    pub runner: &'a runner::Link,
}

/// Runs `argv` through the runner `reached` connects to.
#[allow(clippy::too_many_arguments)]
pub async fn execute(
    target: &Target<'_>,
    reached: runner::Reached,
    settings: &ExecSettings,
    argv: &[OsString],
    cwd: &str,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Ended, ShellError> {
    let env: Vec<String> = settings.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let started = target.runner.start(reached, argv, &env, cwd, timeout)?;
    let canceller = started.canceller().map_err(|e| ShellError::Engine(format!("the container's runner: {e}")))?;
    let (sender, receiver) = mpsc::channel(64);
    let mut run = Run {
        events: Events { receiver, pump: tokio::spawn(started.pump(sender)) },
        canceller,
        stdout: Captured::new(),
        stderr: Captured::new(),
        cap: settings.plan.max_output_bytes,
    };
    let ending = run.until_end(timeout.saturating_add(GRACE), cancel).await;
    let exit_code = match ending {
        Ending::Exited(code) => code,
        Ending::TimedOut => crate::run::TIMED_OUT,
        Ending::Cancelled => crate::run::CANCELLED,
        Ending::Failed(e) => return Err(e),
        Ending::NoAnswer => {
            // The runner did not end it in time: restarting the container ends everything in it.
            let note = restart(target).await?;
            run.stderr.bytes.extend_from_slice(note.as_bytes());
            crate::run::TIMED_OUT
        }
    };
    Ok(Ended {
        stdout: run.stdout.finish(run.cap),
        stderr: run.stderr.finish(run.cap),
        exit_code,
        timed_out: matches!(ending, Ending::TimedOut | Ending::NoAnswer),
        cancelled: matches!(ending, Ending::Cancelled),
    })
}

#[derive(Debug)]
enum Ending {
    Exited(i32),
    TimedOut,
    Cancelled,
    Failed(ShellError),
    /// No answer from the runner, past the command's time and the grace.
    NoAnswer,
}

/// One started command and what it wrote so far.
struct Run {
    events: Events,
    /// Warden's side of the command's connection: shut, it cancels the command.
    canceller: UnixStream,
    stdout: Captured,
    stderr: Captured,
    cap: u64,
}

impl Run {
    /// Takes the command's output until the runner says how it ended, or
    /// `patience` has passed; `cancel`, when set, has the runner end it.
    async fn until_end(&mut self, patience: Duration, cancel: Option<&AtomicBool>) -> Ending {
        let mut deadline = tokio::time::Instant::now().checked_add(patience);
        let mut poll = tokio::time::interval(Duration::from_millis(20));
        let mut cancelled = false;
        loop {
            tokio::select! {
                event = self.events.next() => match event {
                    Event::Started => {}
                    Event::Out(chunk) => self.stdout.push(&chunk, self.cap),
                    Event::Err(chunk) => self.stderr.push(&chunk, self.cap),
                    Event::Exited(_) if cancelled => return Ending::Cancelled,
                    Event::Exited(code) => return Ending::Exited(code),
                    Event::TimedOut => return Ending::TimedOut,
                    Event::Cancelled => return Ending::Cancelled,
                    Event::Failed(e) => return Ending::Failed(e),
                },
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(far_future)), if deadline.is_some() => return Ending::NoAnswer,
                _ = poll.tick(), if cancel.is_some() && !cancelled => {
                    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                        cancelled = true;
                        // The runner ends the command and answers; past a short wait, the container is restarted.
                        let _ = self.canceller.shutdown(std::net::Shutdown::Write);
                        deadline = tokio::time::Instant::now().checked_add(GRACE);
                    }
                }
            }
        }
    }
}

fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(86400 * 365)
}

/// A started command's events, from a task that stops when this is dropped.
struct Events {
    receiver: mpsc::Receiver<Event>,
    pump: tokio::task::JoinHandle<()>,
}

impl Events {
    async fn next(&mut self) -> Event {
        self.receiver.recv().await.unwrap_or_else(|| Event::Failed(ShellError::Engine("the command's output was lost".into())))
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

/// Restarts the container, which ends everything in it; the note that says so.
async fn restart(target: &Target<'_>) -> Result<String, ShellError> {
    target.engine.serving().await?;
    let options = RestartContainerOptions { t: Some(0), ..Default::default() };
    target.engine.api().await?.restart_container(target.container, Some(options)).await.map_err(|e| {
        ShellError::Engine(format!("the container's runner did not end the command in time, and restarting the container failed: {e}"))
    })?;
    Ok("\n[warden: the container's runner did not end the command in time; the container was restarted, which ended it]\n".to_owned())
}
