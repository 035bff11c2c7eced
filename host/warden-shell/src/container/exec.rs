//! One command in a running container, through the engine's API. Killing the
//! API client does not stop a command inside a container, so a timeout or a
//! cancel kills inside: every process that carries the command's mark in its
//! environment, until none is left. The container stays usable.

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use futures_util::StreamExt;

use crate::container::engine::Engine;
use crate::container::lifecycle::{engine_error, ExecSettings};
use crate::error::ShellError;
use crate::output::Captured;
use crate::run::Ended;

/// The variable that marks every process of one command.
const MARK: &str = "WARDEN_EXEC";

/// Kills, again and again until a pass finds none (a process may fork while
/// a pass runs), every process that carries the command's mark (`$1`) in its
/// environment, and every orphan (a child of the container's init) that
/// started since the command (`$2`, clock ticks since boot) and carries no
/// mark: one that cleared its environment to slip away. Orphans of other
/// commands keep their own marks and are spared.
const KILLER: &str = r#"mark="WARDEN_EXEC=$1"; since=$2
for pass in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  found=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    env=$(tr '\0' '\n' < "$d/environ" 2>/dev/null) || continue
    stat=$(cat "$d/stat" 2>/dev/null) || continue
    set -- ${stat##*\)}
    [ "$1" = Z ] && continue
    ppid=$2; start=${20}
    if printf '%s\n' "$env" | grep -qx "$mark"; then
      kill -9 "$p" 2>/dev/null; found=1
    elif [ "$ppid" = 1 ] && [ "$start" -ge "$since" ] && ! printf '%s\n' "$env" | grep -q '^WARDEN_EXEC='; then
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
const PREFERRED_BY_OOM: &str = r#"echo 1000 > /proc/self/oom_score_adj 2>/dev/null; exec "$@""#;

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
    let cap = settings.max_output_bytes;
    let deadline = tokio::time::Instant::now() + timeout;
    let mut poll = tokio::time::interval(Duration::from_millis(20));
    let (mut timed_out, mut cancelled) = (false, false);
    loop {
        tokio::select! {
            chunk = output.next() => match chunk {
                Some(Ok(LogOutput::StdOut { message })) => stdout.push(&message, cap),
                Some(Ok(LogOutput::StdErr { message })) => stderr.push(&message, cap),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(engine_error(engine, "read the command's output", e)),
                None => break,
            },
            _ = tokio::time::sleep_until(deadline) => { timed_out = true; break; }
            _ = poll.tick(), if cancel.is_some() => {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) { cancelled = true; break; }
            }
        }
    }
    if timed_out || cancelled {
        kill_marked(engine, container, settings, &mark, since).await?;
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
    }
    let exit_code = if timed_out || cancelled { None } else { Some(exit_code(engine, &exec.id).await?) };
    Ok(Ended {
        stdout: stdout.finish(cap),
        stderr: stderr.finish(cap),
        exit_code: exit_code.unwrap_or(if timed_out { crate::run::TIMED_OUT } else { crate::run::CANCELLED }),
        timed_out,
        cancelled,
    })
}

/// The exit code, once the engine has noticed that the command ended.
async fn exit_code(engine: &Engine, exec: &str) -> Result<i32, ShellError> {
    let started = Instant::now();
    loop {
        let inspect = engine.api.inspect_exec(exec).await.map_err(|e| engine_error(engine, "read the exit code", e))?;
        if inspect.running != Some(true) || started.elapsed() > Duration::from_secs(5) {
            return Ok(inspect.exit_code.unwrap_or(-1) as i32);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn kill_marked(engine: &Engine, container: &str, settings: &ExecSettings, mark: &str, since: u64) -> Result<(), ShellError> {
    let since = since.to_string();
    let argv: Vec<OsString> = ["/bin/sh", "-c", KILLER, "warden-kill", mark, &since].iter().map(OsString::from).collect();
    let killer = ExecSettings { env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())], max_output_bytes: 4096, ..settings.clone() };
    let ended = Box::pin(execute_as_is(engine, container, &killer, &argv, "/", Duration::from_secs(30), None)).await?;
    if ended.exit_code != 0 {
        return Err(ShellError::Engine(format!(
            "the command did not stop inside the container (exit code {}): {}",
            ended.exit_code,
            String::from_utf8_lossy(&ended.stderr.bytes).trim()
        )));
    }
    Ok(())
}

/// Now, in the clock ticks of `/proc/<pid>/stat`'s start time (the kernel's,
/// which the container shares), a little early to be safe.
fn ticks_since_boot() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    let seconds: f64 = uptime.split_whitespace().next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let hz = rustix::param::clock_ticks_per_second();
    ((seconds - 0.05).max(0.0) * hz as f64) as u64
}

/// A mark no other command of any host shares.
fn fresh_mark() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{}-{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}
