//! One command in a running container, through the engine's API. Killing the
//! API client does not stop a command inside a container, so a timeout or a
//! cancel kills inside: every process that carries the command's mark in its
//! environment, until none is left. The container stays usable.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::query_parameters::RestartContainerOptions;
use futures_util::StreamExt;

use crate::container::engine::Engine;
use crate::container::lifecycle::{engine_error, ExecSettings};
use crate::error::ShellError;
use crate::output::Captured;
use crate::run::Ended;

/// The variable that marks every process of one command.
const MARK: &str = "WARDEN_EXEC";

/// Kills the command's processes inside the container, pass after pass until
/// a pass finds none (a process may fork while a pass runs): every process
/// that carries the command's mark (`$1`) in its environment, and every orphan
/// (a child of the container's init) that started since the command (`$2`,
/// clock ticks since boot) unless it carries the mark of another command that
/// is still running. An orphan with no mark, a made-up mark or an environment
/// that cannot be read (a process that made itself undumpable) is killed: it
/// is one that tried to slip away. Spared: init, the keep-alive (init's first
/// child, which no command can precede) and this script.
const KILLER: &str = r#"mark="WARDEN_EXEC=$1"; since=$2; me=$$
field() { stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; set -- ${stat##*\)}; state=$1; ppid=$2; start=${20}; }
marks() { tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | grep '^WARDEN_EXEC='; }
keep=; live=" "
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  field "$p" || continue
  if [ "$ppid" = 1 ] && { [ -z "$keep" ] || [ "$p" -lt "$keep" ]; }; then keep=$p; fi
  # The first process of each running command (its parent is outside the container).
  if [ "$ppid" = 0 ] && [ "$p" != 1 ] && [ "$p" != "$me" ]; then live="$live$(marks "$p") "; fi
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
    elif [ "$ppid" = 1 ] && [ "$start" -ge "$since" ]; then
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
/// command, not the process that keeps the container alive.
const PREFERRED_BY_OOM: &str = r#"{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; exec "$@""#;

pub async fn execute(
    engine: &Engine,
    container: &str,
    settings: &ExecSettings,
    argv: &[OsString],
    cwd: &str,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Ended, ShellError> {
    let mut wrapped: Vec<OsString> = ["/bin/sh", "-c", PREFERRED_BY_OOM, "sh"].iter().map(OsString::from).collect();
    wrapped.extend(argv.iter().cloned());
    execute_as_is(engine, container, settings, &wrapped, cwd, timeout, cancel).await
}

async fn execute_as_is(
    engine: &Engine,
    container: &str,
    settings: &ExecSettings,
    argv: &[OsString],
    cwd: &str,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Ended, ShellError> {
    let mark = fresh_mark();
    let since = ticks_since_boot();
    let mut env: Vec<String> = settings.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    env.push(format!("{MARK}={mark}"));
    let cmd: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let exec = engine
        .api
        .create_exec(
            container,
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
    let StartExecResults::Attached { mut output, .. } =
        engine.api.start_exec(&exec.id, None).await.map_err(|e| engine_error(engine, "start the command", e))?
    else {
        return Err(ShellError::Engine(format!("{} started the command detached", engine.kind.name())));
    };
    let (mut stdout, mut stderr) = (Captured::new(), Captured::new());
    let cap = settings.plan.max_output_bytes;
    let deadline = tokio::time::Instant::now() + timeout;
    let stopped = |cancel: Option<&AtomicBool>| cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let mut poll = tokio::time::interval(Duration::from_millis(20));
    let mut ending = Ending::Running;
    while matches!(ending, Ending::Running) {
        tokio::select! {
            chunk = output.next() => match chunk {
                Some(Ok(LogOutput::StdOut { message })) => stdout.push(&message, cap),
                Some(Ok(LogOutput::StdErr { message })) => stderr.push(&message, cap),
                Some(Ok(_)) => {}
                Some(Err(e)) => ending = Ending::Failed(engine_error(engine, "read the command's output", e)),
                // The output is closed, which does not mean the command has ended.
                None => ending = exited(engine, &exec.id, deadline, cancel).await,
            },
            _ = tokio::time::sleep_until(deadline) => ending = Ending::TimedOut,
            _ = poll.tick(), if cancel.is_some() => if stopped(cancel) { ending = Ending::Cancelled },
        }
    }
    let exit_code = match ending {
        Ending::Exited(code) => code,
        Ending::Running => unreachable!("the loop ends with an ending"),
        Ending::Failed(e) => {
            // Nothing of it may go on running, whatever went wrong.
            let _ = kill_marked(engine, container, settings, &mark, since).await;
            return Err(e);
        }
        Ending::TimedOut | Ending::Cancelled => {
            let note = kill_marked(engine, container, settings, &mark, since).await?;
            // What the command wrote before it died.
            let _ = tokio::time::timeout(Duration::from_secs(2), async {
                while let Some(Ok(chunk)) = output.next().await {
                    match chunk {
                        LogOutput::StdOut { message } => stdout.push(&message, cap),
                        LogOutput::StdErr { message } => stderr.push(&message, cap),
                        _ => {}
                    }
                }
            })
            .await;
            if let Some(note) = note {
                stderr.bytes.extend_from_slice(note.as_bytes());
            }
            if matches!(ending, Ending::TimedOut) { crate::run::TIMED_OUT } else { crate::run::CANCELLED }
        }
    };
    Ok(Ended {
        stdout: stdout.finish(cap),
        stderr: stderr.finish(cap),
        exit_code,
        timed_out: matches!(ending, Ending::TimedOut),
        cancelled: matches!(ending, Ending::Cancelled),
    })
}

#[derive(Debug)]
enum Ending {
    Running,
    Exited(i32),
    TimedOut,
    Cancelled,
    Failed(ShellError),
}

/// How the command ends once its output is closed: its exit code when the
/// engine reports it, else the time limit or a cancel.
async fn exited(engine: &Engine, exec: &str, deadline: tokio::time::Instant, cancel: Option<&AtomicBool>) -> Ending {
    let mut wait = Duration::from_millis(1);
    loop {
        match engine.api.inspect_exec(exec).await {
            Ok(inspect) if inspect.running != Some(true) => return Ending::Exited(inspect.exit_code.unwrap_or(-1) as i32),
            Ok(_) => {}
            Err(e) => return Ending::Failed(engine_error(engine, "read the exit code", e)),
        }
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Ending::Cancelled;
        }
        if tokio::time::Instant::now() + wait >= deadline {
            tokio::time::sleep_until(deadline).await;
            return Ending::TimedOut;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_millis(50));
    }
}

/// Kills the command inside the container. When that cannot be done (the
/// killer cannot even start, say under a fork bomb at the process limit), the
/// container is restarted, which ends everything in it; the note says so.
async fn kill_marked(engine: &Engine, container: &str, settings: &ExecSettings, mark: &str, since: u64) -> Result<Option<String>, ShellError> {
    let since = since.to_string();
    let argv: Vec<OsString> = ["/bin/sh", "-c", KILLER, "warden-kill", mark, &since].iter().map(OsString::from).collect();
    let mut killer = ExecSettings { env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())], ..settings.clone() };
    killer.plan.max_output_bytes = 4096;
    let why = match Box::pin(execute_as_is(engine, container, &killer, &argv, "/", Duration::from_secs(30), None)).await {
        Ok(ended) if ended.exit_code == 0 => return Ok(None),
        Ok(ended) => format!("exit code {}: {}", ended.exit_code, String::from_utf8_lossy(&ended.stderr.bytes).trim()),
        Err(e) => e.to_string(),
    };
    let options = RestartContainerOptions { t: Some(0), ..Default::default() };
    engine.api.restart_container(container, Some(options)).await.map_err(|e| {
        ShellError::Engine(format!("the command did not stop inside the container ({why}), and restarting the container failed: {e}"))
    })?;
    Ok(Some(format!("\n[warden: the command could not be stopped inside the container ({why}); the container was restarted]\n")))
}

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
