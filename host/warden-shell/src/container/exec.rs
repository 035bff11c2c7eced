//! One command in a running container: started by the container's runner
//! (`runner.rs`), or through the engine's API where there is none. Killing
//! the client does not stop a command inside a container, so a timeout or a
//! cancel kills inside: every process that carries the command's mark in its
//! environment, until none is left. The container stays usable.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::query_parameters::RestartContainerOptions;
use futures_util::StreamExt;

use tokio::sync::mpsc;

use crate::container::engine::Engine;
use crate::container::lifecycle::{engine_error, ExecSettings};
use crate::container::runner;
use crate::error::ShellError;
use crate::output::Captured;
use crate::run::Ended;

/// The variable that marks every process of one command.
const MARK: &str = "WARDEN_EXEC";

/// Kills the command's processes inside the container, pass after pass until
/// a pass finds none (a process may fork while a pass runs): every process
/// that carries the command's mark (`$1`) in its environment, and every orphan
/// (a child of the container's init) that started since the command (`$2`,
/// clock ticks since boot; in the command's own tick, from its first PID `$3`
/// on, when the runner said it) unless it carries the mark of another command
/// that is still running. An orphan with no mark, a made-up mark or an environment
/// that cannot be read (a process that made itself undumpable) is killed: it
/// is one that tried to slip away. Spared: init, the runner (init's child
/// that started first, which no command can precede) and this script.
const KILLER: &str = r#"mark="WARDEN_EXEC=$1"; since=$2; first=$3; me=$$
field() { stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; set -- ${stat##*\)}; state=$1; ppid=$2; start=${20}; }
marks() { tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | grep '^WARDEN_EXEC='; }
keep=; kept=
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  field "$p" || continue
  [ "$ppid" = 1 ] || continue
  if [ -z "$keep" ] || [ "$start" -lt "$kept" ] || { [ "$start" = "$kept" ] && [ "$p" -lt "$keep" ]; }; then keep=$p; kept=$start; fi
done
# A command may have stopped the runner, which other commands wait on.
[ -n "$keep" ] && kill -CONT "$keep" 2>/dev/null
live=" "
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  field "$p" || continue
  # The first process of each running command: the runner's child, or one
  # the engine started (its parent is outside the container).
  # The container's own mark and the killers' are no command's.
  if { [ "$ppid" = "$keep" ] || [ "$ppid" = 0 ]; } && [ "$p" != 1 ] && [ "$p" != "$me" ]; then
    m=$(marks "$p")
    case "$m" in WARDEN_EXEC=container|WARDEN_EXEC=warden-kill) ;; *) live="$live$m ";; esac
  fi
done
for pass in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  found=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case "$p" in 1|"$me"|"$keep") continue;; esac
    field "$p" || continue
    [ "$state" = Z ] && continue
    m=$(marks "$p")
    if [ "$m" = "$mark" ]; then
      kill -9 "$p" 2>/dev/null; found=1
    elif [ "$ppid" = 1 ] && { [ "$start" -gt "$since" ] || { [ "$start" = "$since" ] && [ "$p" -ge "$first" ]; }; }; then
      case "$live" in *" $m "*) [ -n "$m" ] && continue;; esac
      kill -9 "$p" 2>/dev/null; found=1
    fi
  done
  [ -z "$found" ] && exit 0
done
for d in /proc/[0-9]*; do printf '%s ' "${d#/proc/}"; done >&2
echo "are still running after 20 passes" >&2
exit 1"#;

/// Runs the command with an OOM score of 1000, which its children inherit:
/// when a command runs the container out of memory, the kernel kills the
/// command, not the process that keeps the container alive. (The runner sets
/// it itself; this is for commands the engine starts.)
const PREFERRED_BY_OOM: &str = r#"{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; exec "$@""#;

/// What a started command sends while it runs.
pub enum Event {
    /// Its first process, by PID inside the container (the runner says so).
    Started(u32),
    Out(Vec<u8>),
    Err(Vec<u8>),
    /// Its output is closed and it has exited, with this code.
    Exited(i32),
    Failed(ShellError),
}

/// The container a command runs in, and how to start one there.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub engine: &'a Engine,
    pub container: &'a str,
    /// How to reach the container's runner, when it has one.
    pub runner: Option<&'a runner::Link>,
}

pub async fn execute(
    target: &Target<'_>,
    settings: &ExecSettings,
    argv: &[OsString],
    cwd: &str,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Ended, ShellError> {
    let mark = fresh_mark();
    let since = ticks_since_boot();
    let mut run = Run::start(target, settings, argv, cwd, Some(&mark)).await?;
    let ending = run.until_end(timeout, cancel).await;
    let exit_code = match ending {
        Ending::Exited(code) => code,
        Ending::Failed(e) => {
            // Nothing of it may go on running, whatever went wrong.
            let _ = kill_marked(target, settings, &mark, since, run.first).await;
            return Err(e);
        }
        Ending::TimedOut | Ending::Cancelled => {
            let note = kill_marked(target, settings, &mark, since, run.first).await?;
            // What the command wrote before it died.
            let _ = tokio::time::timeout(Duration::from_secs(2), run.until_end(Duration::MAX, None)).await;
            if let Some(note) = note {
                run.stderr.bytes.extend_from_slice(note.as_bytes());
            }
            if matches!(ending, Ending::TimedOut) { crate::run::TIMED_OUT } else { crate::run::CANCELLED }
        }
    };
    Ok(Ended {
        stdout: run.stdout.finish(run.cap),
        stderr: run.stderr.finish(run.cap),
        exit_code,
        timed_out: matches!(ending, Ending::TimedOut),
        cancelled: matches!(ending, Ending::Cancelled),
    })
}

#[derive(Debug)]
enum Ending {
    Exited(i32),
    TimedOut,
    Cancelled,
    Failed(ShellError),
}

/// One started command and what it wrote so far.
struct Run {
    events: Events,
    /// Its first process, when known: see [`kill_marked`].
    first: Option<u32>,
    stdout: Captured,
    stderr: Captured,
    cap: u64,
}

impl Run {
    /// Starts `argv`, with the variable that marks its processes if `mark`.
    async fn start(target: &Target<'_>, settings: &ExecSettings, argv: &[OsString], cwd: &str, mark: Option<&str>) -> Result<Run, ShellError> {
        let mut env: Vec<String> = settings.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        env.extend(mark.map(|mark| format!("{MARK}={mark}")));
        let events = launch(target, settings, argv, env, cwd).await?;
        Ok(Run { events, first: None, stdout: Captured::new(), stderr: Captured::new(), cap: settings.plan.max_output_bytes })
    }

    /// Takes the command's output until it ends, its time is up or `cancel` is set.
    async fn until_end(&mut self, timeout: Duration, cancel: Option<&AtomicBool>) -> Ending {
        let deadline = tokio::time::Instant::now().checked_add(timeout);
        let mut poll = tokio::time::interval(Duration::from_millis(20));
        loop {
            tokio::select! {
                event = self.events.next() => match event {
                    Event::Started(pid) => self.first = Some(pid),
                    Event::Out(chunk) => self.stdout.push(&chunk, self.cap),
                    Event::Err(chunk) => self.stderr.push(&chunk, self.cap),
                    Event::Exited(code) => return Ending::Exited(code),
                    Event::Failed(e) => return Ending::Failed(e),
                },
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(far_future)), if deadline.is_some() => return Ending::TimedOut,
                _ = poll.tick(), if cancel.is_some() => if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) { return Ending::Cancelled },
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
        // A process left in the background may hold the output open for ever.
        self.pump.abort();
    }
}

/// Starts `argv` in the container: by its runner when it has one that
/// answers, else through the engine's exec.
async fn launch(target: &Target<'_>, settings: &ExecSettings, argv: &[OsString], env: Vec<String>, cwd: &str) -> Result<Events, ShellError> {
    let (sender, receiver) = mpsc::channel(64);
    if let Some(link) = target.runner
        && let Some(started) = link.start(target.engine, target.container, argv, &env, cwd).await?
    {
        return Ok(Events { receiver, pump: tokio::spawn(started.pump(sender)) });
    }
    let mut wrapped: Vec<OsString> = ["/bin/sh", "-c", PREFERRED_BY_OOM, "sh"].iter().map(OsString::from).collect();
    wrapped.extend(argv.iter().cloned());
    let cmd: Vec<String> = wrapped.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let engine = target.engine;
    let exec = engine
        .api
        .create_exec(
            target.container,
            CreateExecOptions {
                cmd: Some(cmd),
                env: Some(env),
                user: Some(settings.user.clone()),
                working_dir: Some(cwd.to_owned()),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| engine_error(engine, "start the command", e))?;
    let StartExecResults::Attached { output, .. } =
        engine.api.start_exec(&exec.id, None).await.map_err(|e| engine_error(engine, "start the command", e))?
    else {
        return Err(ShellError::Engine(format!("{} started the command detached", engine.kind.name())));
    };
    Ok(Events { receiver, pump: tokio::spawn(pump_exec(engine.clone(), exec.id, output, sender)) })
}

/// The events of a command the engine started: its output, then, once the
/// output is closed (which does not mean the command has ended), its exit
/// code when the engine reports one.
async fn pump_exec(
    engine: Engine,
    exec: String,
    mut output: std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>>,
    events: mpsc::Sender<Event>,
) {
    while let Some(chunk) = output.next().await {
        let event = match chunk {
            Ok(LogOutput::StdOut { message }) => Event::Out(message.to_vec()),
            Ok(LogOutput::StdErr { message }) => Event::Err(message.to_vec()),
            Ok(_) => continue,
            Err(e) => Event::Failed(engine_error(&engine, "read the command's output", e)),
        };
        if events.send(event).await.is_err() {
            return;
        }
    }
    let mut wait = Duration::from_millis(1);
    let event = loop {
        match engine.api.inspect_exec(&exec).await {
            Ok(inspect) if inspect.running != Some(true) => break Event::Exited(inspect.exit_code.unwrap_or(-1) as i32),
            Ok(_) => {}
            Err(e) => break Event::Failed(engine_error(&engine, "read the exit code", e)),
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_millis(50));
    };
    let _ = events.send(event).await;
}

/// Kills the command inside the container. The killer is started by the
/// engine, never by the runner: a command may have stopped the runner. When
/// it cannot kill (it cannot even start, say under a fork bomb at the process
/// limit, or does not finish), the container is restarted, which ends
/// everything in it; the note says so.
async fn kill_marked(target: &Target<'_>, settings: &ExecSettings, mark: &str, since: u64, first: Option<u32>) -> Result<Option<String>, ShellError> {
    let (since, first) = (since.to_string(), first.unwrap_or(0).to_string());
    let argv: Vec<OsString> = ["/bin/sh", "-c", KILLER, "warden-kill", mark, &since, &first].iter().map(OsString::from).collect();
    let env = vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()), (MARK.into(), "warden-kill".into())];
    let mut killer = ExecSettings { env, ..settings.clone() };
    killer.plan.max_output_bytes = 4096;
    let by_engine = Target { runner: None, ..*target };
    let why = match Run::start(&by_engine, &killer, &argv, "/", None).await {
        Ok(mut run) => match run.until_end(KILLER_TIME, None).await {
            Ending::Exited(0) => return Ok(None),
            Ending::Exited(code) => format!("exit code {code}: {}", String::from_utf8_lossy(&run.stderr.bytes).trim()),
            Ending::TimedOut | Ending::Cancelled => format!("the killer did not finish within {} s", KILLER_TIME.as_secs()),
            Ending::Failed(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    let engine = target.engine;
    let options = RestartContainerOptions { t: Some(0), ..Default::default() };
    engine.api.restart_container(target.container, Some(options)).await.map_err(|e| {
        ShellError::Engine(format!("the command did not stop inside the container ({why}), and restarting the container failed: {e}"))
    })?;
    Ok(Some(format!("\n[warden: the command could not be stopped inside the container ({why}); the container was restarted]\n")))
}

/// How long the killer may take before the container is restarted instead.
const KILLER_TIME: Duration = Duration::from_secs(30);

/// Now, in the clock ticks of `/proc/<pid>/stat`'s start time: both count
/// from boot on the kernel's boot-time clock, which the container shares.
/// Rounded down, so that every process of the command starts at or after it;
/// a process started in the same tick before the command counts as its own.
fn ticks_since_boot() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    let (whole, fraction) = uptime.split_whitespace().next().unwrap_or("0").split_once('.').unwrap_or(("0", "0"));
    let centiseconds = whole.parse::<u64>().unwrap_or(0) * 100 + fraction.get(..2).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    centiseconds * rustix::param::clock_ticks_per_second() / 100
}

/// A mark no other command of any host shares.
fn fresh_mark() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{}-{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}
