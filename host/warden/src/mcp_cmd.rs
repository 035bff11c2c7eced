//! `warden mcp`: the policy's sandbox served to an agent over MCP.

use std::path::PathBuf;

use warden_fs::approval::{ApprovalSession, Approver, AuditLog, DenyAll, ScriptedApprover};
use warden_mcp::{Components, Granted, HttpOptions, Offer, PerClient, Reloader, SessionFactory, ShellTool, Token, WardenMcp};
use warden_shell::container::Owner;
use warden_shell::{ContainerName, ProcessCap, ShellSandbox};
use warden_wasm::{Runtime, RuntimeOptions};

use warden_policy::ComponentSource;

use crate::cli::McpArgs;
use crate::oci_cmd::{Fetcher, Resolved};
use crate::exit::Failure;

pub fn run(args: McpArgs) -> Result<(), Failure> {
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && args.token_file.is_none()
    {
        return Err(Failure::usage(format!("--http {addr}: not a loopback address; serving it needs --token-file")));
    }
    warden_mcp::log_to_stderr();
    raise_open_file_limit();
    let max_concurrent = args.max_concurrent.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |n| n as usize);
    let resolved = Resolved::default();
    let (first, files) = offer(&args, max_concurrent, &resolved)?;
    let http = match args.http {
        Some(addr) => Some(HttpOptions {
            addr,
            token: token(&args)?,
            max_sessions: args.max_sessions.map_or(warden_mcp::DEFAULT_MAX_SESSIONS, |n| n as usize),
            session_idle: args.session_idle.unwrap_or(warden_mcp::DEFAULT_SESSION_IDLE),
        }),
        None => None,
    };
    if first.ask_via == warden_policy::AskVia::Console && args.console.is_none() && !first.answers_in_advance {
        eprintln!("warden: approvals go to Warden's console alone, and --console is not given: every request that needs a person is denied");
    }
    let mut server = WardenMcp::new(first, max_concurrent, args.watch).map_err(Failure::usage)?;
    let mut login_file = None;
    if let Some(address) = args.console {
        let policy = warden_policy::load(&args.policy)?;
        let console = warden_console::Console::new(audit_log(&args, &policy));
        let login = warden_console::serve_in_background(console.clone(), address).map_err(|e| Failure::usage(format!("--console {address}: {e}")))?;
        // Not on stderr: a client keeps the server's stderr, in logs others may read.
        let file = warden_policy::write_private_file("console", ".url", &format!("{login}\n")).map_err(Failure::usage)?;
        eprintln!("warden: the console's one-time login URL is in {} (this user only): open it in your browser", file.path.display());
        login_file = Some(file);
        server = server.with_console(console);
    }
    let reloader = args.watch.then(|| Reloader {
        files,
        rebuild: Box::new(move || offer(&args, max_concurrent, &resolved).map_err(|f| f.message)),
    });
    let served = match http {
        None => warden_mcp::run_stdio(server, reloader),
        Some(options) => warden_mcp::run_http(server, options, reloader),
    };
    // Its clients' containers go with the server, and the console's login with it.
    warden_shell::container::remove_own();
    if let Some(file) = login_file {
        file.remove();
    }
    served.map_err(|e| Failure { status: Failure::FAILED, message: format!("warden: {e}") })
}

/// `--token-file`'s token, checked against the policy; else a new one.
fn token(args: &McpArgs) -> Result<Token, Failure> {
    match &args.token_file {
        Some(file) => {
            let policy = warden_policy::load(&args.policy)?;
            Token::read(file, &policy).map_err(Failure::usage)
        }
        None => Token::generate().map_err(|e| Failure::usage(format!("warden: {e}"))),
    }
}

/// Each HTTP session and each call holds descriptors (the mounts' folders,
/// the audit log): the soft limit goes up to the hard one, as far as it may.
fn raise_open_file_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            eprintln!("warden: the open-file limit stays where it was: {e}");
        }
    }
}

/// The audit log: `--audit`, else the policy's.
fn audit_log(args: &McpArgs, policy: &warden_policy::Policy) -> Option<PathBuf> {
    args.approvals.audit.clone().or_else(|| policy.audit.clone())
}

/// What the policy file offers now, and the files that offer came from.
/// `resolved` lives as long as the server: a tag resolved once keeps its digest across reloads.
fn offer(args: &McpArgs, max_concurrent: usize, resolved: &Resolved) -> Result<(Offer, Vec<PathBuf>), Failure> {
    let policy = warden_policy::load(&args.policy)?;
    let fetcher = Fetcher::new(&args.registry, None, Some(&policy.registries))?.remembering(resolved.clone());
    let rules = crate::approve::answers(&args.approvals)?;
    let answers_in_advance = !rules.is_empty();
    // An unusable worker is an unusable policy before anything is served.
    warden_fs::Sandbox::open_for(&policy, args.worker.as_deref())?;
    let audit = audit_log(args, &policy);
    let components = if policy.tools.is_empty() {
        None
    } else {
        let runtime = Runtime::new(RuntimeOptions { cache_dir: warden_wasm::default_cache_dir(), max_concurrent: max_concurrent as u32, pooled: true })
            .map_err(|e| Failure::usage(format!("warden: {e}")))?;
        let components = Components::load(&policy, runtime, &|source| fetcher.fetch(source)).map_err(|e| Failure::usage(format!("invalid policy: {}: {e}", policy.file.display())))?;
        for refusal in &components.refused {
            eprintln!("warden: {refusal}");
        }
        Some(components)
    };
    let shell = if policy.shell_section { Some(shell_tool(args, &policy)?) } else { None };
    let mut files = vec![policy.file.clone()];
    files.extend(policy.tools.values().filter_map(|t| match &t.component {
        ComponentSource::File(path) => Some(path.clone()),
        ComponentSource::Oci(_) => None,
    }));
    files.push(policy.file.with_file_name(warden_policy::oci::LOCK_FILE));
    let file_tools = policy.mcp.file_tools;
    let ask_via = args.approvals.ask_via.unwrap_or(policy.ask_via);
    // Each client connection gets its own sessions (one per worker used): its own grants.
    let new_session: SessionFactory = Box::new(move |worker| {
        let approver: Box<dyn Approver> =
            if rules.is_empty() { Box::new(DenyAll) } else { Box::new(ScriptedApprover::of(&rules)) };
        let audit = audit
            .as_deref()
            .map(AuditLog::open)
            .transpose()
            .map_err(|e| format!("cannot open the audit log: {e}"))?;
        ApprovalSession::open(&policy, worker, approver, audit).map_err(|e| e.to_string())
    });
    Ok((Offer { file_tools, worker: args.worker.clone(), components, shell, answers_in_advance, ask_via, new_session }, files))
}

/// `run_command`'s sandbox, over the sandbox in effect of a session nobody
/// answers (mounts that need approval are hidden or read-only): one for every
/// client under bubblewrap or with `--sandbox`, else a container for each client.
fn shell_tool(args: &McpArgs, policy: &warden_policy::Policy) -> Result<ShellTool, Failure> {
    let worker = args.worker.clone();
    let worker_name = worker.clone();
    let mut shell_policy = policy.clone().with_network_of(worker.as_deref());
    // `read: all` shows the whole host to commands: the token file stays hidden.
    if let Some(file) = args.token_file.as_deref().and_then(|f| f.canonicalize().ok()) {
        shell_policy.shell.deny_read.push(file.display().to_string());
    }
    let network = !shell_policy.network.is_off();
    let in_effect = move |policy: &warden_policy::Policy| ApprovalSession::open(policy, worker.as_deref(), Box::new(DenyAll), None)?.sandbox();
    let fs = in_effect(&shell_policy)?;
    let shared = |container: ContainerName| {
        ShellSandbox::with_options(&shell_policy, fs.try_clone()?, ProcessCap::start()?, container).map_err(|e| Failure::usage(format!("warden: {e}")))
    };
    let ceiling = policy.limits.timeout;
    // A command a rule grants more network runs in a sandbox of its own (a container, under that backend), never kept.
    let granted: Granted = {
        let (policy, fs) = (shell_policy.clone(), fs.try_clone()?);
        let made = std::sync::atomic::AtomicU64::new(0);
        Box::new(move |network, mounts| {
            let granted = warden_policy::Policy { network: network.clone(), ..policy.clone() };
            let container = ContainerName { name: format!("mcp-grant{}", made.fetch_add(1, std::sync::atomic::Ordering::Relaxed)), owner: Owner::ThisProcess };
            let cap = ProcessCap::start().map_err(|e| e.to_string())?;
            let fs = match mounts {
                Some(mounts) => mounts,
                None => fs.try_clone().map_err(|e| e.to_string())?,
            };
            ShellSandbox::with_options(&granted, fs, cap, container).map_err(|e| e.to_string())
        })
    };
    let rules = shell_policy.command_rules_for(worker_name.as_deref()).cloned().map(|r| (r, shell_policy.network.clone()));
    Ok(match (&shell_policy.shell.container, &args.sandbox) {
        (None, Some(_)) => return Err(Failure::usage("--sandbox names a kept container sandbox; this policy has no `shell: { backend: container }`")),
        (None, None) => ShellTool::shared(shared(ContainerName::default())?, ceiling, network),
        (Some(_), Some(name)) => {
            crate::sandbox_cmd::check_name(name)?;
            ShellTool::shared(shared(ContainerName { name: name.clone(), owner: Owner::Kept })?, ceiling, network)
        }
        (Some(_), None) => {
            let writes = !fs.writable_roots().is_empty();
            let make: PerClient = Box::new(move |client| {
                let fs = in_effect(&shell_policy).map_err(|e| e.to_string())?;
                let container = ContainerName { name: format!("mcp-c{client}"), owner: Owner::ThisProcess };
                let cap = ProcessCap::start().map_err(|e| e.to_string())?;
                ShellSandbox::with_options(&shell_policy, fs, cap, container).map_err(|e| e.to_string())
            });
            ShellTool::per_client(make, writes, ceiling, network)
        }
    }
    .with_rules(rules, Some(granted)))
}

