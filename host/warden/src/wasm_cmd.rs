//! `warden run`, `call`, `tools` and `compile`: components in the sandbox.

use std::io::{Read, Write};

use warden_policy::{policy_from_dir_flags, DirFlag, Limits, LimitsSpec};
use warden_wasm::{
    call_approved, give_sandbox, Loaded, RunConfig, RunError, RunLimits, RunReport, Runtime, RuntimeOptions, Sink, Stdin, ToolError,
};

use crate::approve::{Approvals, Listed};
use crate::cli::{CacheArgs, CallArgs, OciArgs, RunArgs, SandboxArgs};
use crate::exit::Failure;

pub const TIMED_OUT: u8 = 124;
pub const TRAPPED: u8 = 125;

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let runtime = runtime(&args.sandbox.cache)?;
    let name = component_name(&args.component);
    let listed = Listed { tool: "warden run".into(), detail: std::iter::once(name.clone()).chain(args.args.iter().cloned()).collect::<Vec<_>>().join(" ") };
    let (mut config, approvals) = config(&args.sandbox, &listed)?;
    if let Some(mut approvals) = approvals {
        approvals.ask_before_running(&name)?;
        give_sandbox(&mut config, &approvals.session.sandbox()?).map_err(run_failure)?;
    }
    config.args = std::iter::once(name).chain(args.args).collect();
    config.stdin = Stdin::Inherit;
    config.stdout = Sink::Stdout;
    config.stderr = Sink::Stderr;
    let loaded = load(&runtime, &args.component, &args.oci, &args.sandbox.cache, args.sandbox.policy.as_deref())?;
    let outcome = runtime.run(&loaded, &config).map_err(run_failure)?;
    let cache = loaded.cache;
    leave_to_exit(runtime, loaded);
    if args.sandbox.stats {
        print_stats(&outcome.report, &format!("{cache:?}"));
    }
    match outcome.exit_code {
        0 => Ok(()),
        code => Err(Failure::exit_code(code)),
    }
}

pub fn call(args: CallArgs) -> Result<(), Failure> {
    let input = match args.input {
        Some(input) => input,
        None => {
            let mut input = String::new();
            std::io::stdin().read_to_string(&mut input)?;
            input
        }
    };
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&input) {
        return Err(Failure::usage(format!("the input is not JSON: {e}")));
    }
    let runtime = runtime(&args.sandbox.cache)?;
    let listed = Listed { tool: "warden call".into(), detail: format!("{} {}", component_name(&args.component), args.tool) };
    let (mut config, approvals) = config(&args.sandbox, &listed)?;
    let loaded = load(&runtime, &args.component, &args.oci, &args.sandbox.cache, args.sandbox.policy.as_deref())?;
    let outcome = match approvals {
        None => runtime.call(&loaded, &config, &args.tool, &input),
        Some(mut approvals) => {
            let label = format!("{} {}", component_name(&args.component), args.tool);
            call_approved(&runtime, &loaded, &mut config, &mut approvals.session, &label, &args.tool, &input)?
        }
    }
    .map_err(run_failure)?;
    let cache = loaded.cache;
    leave_to_exit(runtime, loaded);
    let report = &outcome.report;
    std::io::stderr().write_all(&report.stderr)?;
    for line in &report.logs {
        eprintln!("[{}] {}", line.level, line.message);
    }
    if args.sandbox.stats {
        print_stats(report, &format!("{cache:?}"));
    }
    match outcome.result {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(output.as_bytes())?;
            if !output.ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
            Ok(())
        }
        Err(ToolError::Denied(message)) => Err(Failure { status: Failure::DENIED, message }),
        Err(ToolError::InvalidInput(message)) => Err(Failure { status: Failure::FAILED, message: format!("invalid input: {message}") }),
        Err(ToolError::Failed(message)) => Err(Failure { status: Failure::FAILED, message }),
    }
}

pub fn tools(component: &std::path::Path, cache: &CacheArgs, oci: &OciArgs) -> Result<(), Failure> {
    let runtime = runtime(cache)?;
    let loaded = load(&runtime, component, oci, cache, None)?;
    let tools = runtime.describe(&loaded, &RunConfig::default()).map_err(run_failure)?;
    let list: Vec<_> = tools
        .into_iter()
        .map(|t| {
            let schema = serde_json::from_str(&t.input_schema).unwrap_or(serde_json::Value::String(t.input_schema));
            serde_json::json!({ "name": t.name, "description": t.description, "input_schema": schema })
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&list).expect("JSON values serialize"));
    Ok(())
}

pub fn compile(component: &std::path::Path, cache: &CacheArgs, oci: &OciArgs) -> Result<(), Failure> {
    if cache.no_cache {
        return Err(Failure::usage("compile fills the cache; it cannot be used with --no-cache"));
    }
    let runtime = runtime(cache)?;
    let loaded = load(&runtime, component, oci, cache, None)?;
    let dir = runtime.cache_dir().map(|d| d.display().to_string()).unwrap_or_default();
    println!("{}: {:?} ({:?}), cache {dir}", component.display(), loaded.kind, loaded.cache);
    Ok(())
}

fn runtime(cache: &CacheArgs) -> Result<Runtime, Failure> {
    let cache_dir = if cache.no_cache { None } else { cache.cache_dir.clone().or_else(warden_wasm::default_cache_dir) };
    Runtime::new(RuntimeOptions { cache_dir, max_concurrent: 4, pooled: false }).map_err(run_failure)
}

/// In a program that ends with this command, the runtime and the component
/// are left to the process's end, which unmaps everything at once: dropping
/// them would unmap their code and take their unwind tables back one by one,
/// only to exit. (Neither holds a file to flush or a process to wait for.)
fn leave_to_exit(runtime: Runtime, loaded: Loaded) {
    if crate::process_ends_after_this_command() {
        std::mem::forget((runtime, loaded));
    }
}

/// A component file, or one pulled from its registry (checked, and cached).
fn load(runtime: &Runtime, component: &std::path::Path, oci: &OciArgs, cache: &CacheArgs, policy: Option<&std::path::Path>) -> Result<Loaded, Failure> {
    match crate::oci_cmd::command_line_component(component, oci, cache, policy)? {
        Some(bytes) => runtime.load(bytes).map_err(run_failure),
        None => runtime.load_file(component).map_err(run_failure),
    }
}

/// The component's file name (for `oci://`, the repository's last part), as
/// a command's argv[0] and in approval requests.
fn component_name(component: &std::path::Path) -> String {
    if let Some(reference) = component.to_str().and_then(|t| warden_oci::OciRef::parse(t).ok()) {
        return reference.repository.rsplit('/').next().unwrap_or_default().to_owned();
    }
    component.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}


/// The policy (from a file or --dir flags) as an approval session, and the limits.
/// `listed`: the command, as the policy's console lists it; cancelled there, the run stops.
fn config(args: &SandboxArgs, listed: &Listed) -> Result<(RunConfig, Option<Approvals>), Failure> {
    let policy = match (&args.policy, args.dirs.is_empty()) {
        (Some(file), _) => Some(warden_policy::load(file)?),
        (None, false) => {
            let flags = args.dirs.iter().map(|d| DirFlag::parse(d)).collect::<Result<Vec<_>, _>>().map_err(Failure::usage)?;
            Some(policy_from_dir_flags(&flags, false)?)
        }
        (None, true) => None,
    };
    let mut config = RunConfig::default();
    let mut limits = Limits::default();
    let mut approvals = None;
    if let Some(policy) = &policy {
        let opened = Approvals::open(policy, args.worker.as_deref(), &args.approvals, listed)?;
        // Only a console can cancel a run: without one, no flag is looked at every tick.
        config.cancel = opened.cancelled();
        approvals = Some(opened);
        config.network = policy.network_for(args.worker.as_deref()).clone();
        config.env = policy.env.clone();
        limits = policy.limits;
    }
    config.env.extend(env_flags(&args.env)?);
    config.deterministic = args.deterministic.then_some(args.seed);
    config.limits = RunLimits::resolve(limits.overridden_by(limit_flags(args)?), args.deterministic);
    Ok((config, approvals))
}

fn env_flags(flags: &[String]) -> Result<Vec<(String, String)>, Failure> {
    flags
        .iter()
        .map(|flag| {
            let (name, value) = match flag.split_once('=') {
                Some((k, v)) => (k.to_owned(), v.to_owned()),
                None => (flag.clone(), std::env::var(flag).unwrap_or_default()),
            };
            warden_policy::check_env_name(&name).map_err(|m| Failure::usage(format!("--env: {m}")))?;
            Ok((name, value))
        })
        .collect()
}

/// The limit flags, checked by the same rules as a policy's `limits:`.
fn limit_flags(args: &SandboxArgs) -> Result<Limits, Failure> {
    let spec = LimitsSpec {
        memory: args.max_memory.clone(),
        timeout: args.timeout.clone(),
        fuel: args.fuel,
        output: args.max_output.clone(),
    };
    spec.validate().map_err(|(field, message)| {
        let flag = match field {
            "memory" => "max-memory",
            "output" => "max-output",
            other => other,
        };
        Failure::usage(format!("--{flag}: {message}"))
    })
}

fn print_stats(report: &RunReport, cache: &str) {
    eprintln!("warden: fuel consumed: {}", report.fuel_consumed);
    eprintln!("warden: compile cache: {cache}");
    for denial in &report.denials {
        eprintln!("warden: denied: {}", denial.to_string().replace('\n', " "));
    }
}

fn run_failure(e: RunError) -> Failure {
    let status = match e {
        RunError::Timeout { .. } => TIMED_OUT,
        RunError::OutOfFuel { .. } | RunError::MemoryLimit(_) | RunError::OutputLimit(_) | RunError::Trap(_) => TRAPPED,
        RunError::Unenforceable(_) | RunError::Usage(_) => Failure::USAGE,
        RunError::Load { .. } | RunError::Instantiate(_) | RunError::Cancelled => Failure::FAILED,
    };
    Failure { status, message: format!("warden: {e}") }
}

