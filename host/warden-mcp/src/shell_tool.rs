//! `run_command`: a shell command in the OS sandbox. Offered when the policy
//! has `shell:`. Under bubblewrap every command gets a sandbox of its own, so
//! one `ShellSandbox` serves every client; a container lives on between
//! commands, so each client session gets one of its own, made on its first
//! command and removed with the session, unless the operator names a kept
//! sandbox for all of them (`warden mcp --sandbox`).

use std::ffi::OsString;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_fs::approval::CommandVerdict;
use warden_policy::{CommandRules, Network};
use warden_shell::{ExecutionResult, ShellSandbox};

use crate::server::refused;

pub const NAME: &str = "run_command";

/// The longest a command may run when the policy sets no `limits.timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Makes a client's own container sandbox; its argument numbers the client.
pub type PerClient = Box<dyn Fn(u64) -> Result<ShellSandbox, String> + Send + Sync>;

/// Makes a sandbox of its own for a command a rule grants more: this
/// network, and, when it grants folders for writing, these mounts (the
/// session's sandbox in effect with the folders granted).
pub type Granted = Box<dyn Fn(&Network, Option<warden_fs::Sandbox>) -> Result<ShellSandbox, String> + Send + Sync>;

/// Judges a command line under the rules, asking a person if they say so;
/// with the session's sandbox in effect when a rule grants folders for writing.
pub type Judge<'a> = &'a dyn Fn(&CommandRules, &str, &Network) -> Result<(CommandVerdict, Option<warden_fs::Sandbox>), String>;

/// Where commands run, and their time ceiling.
pub struct ShellTool {
    commands: Commands,
    ceiling: Duration,
    pub definition: Tool,
    /// The policy's command rules, and the network commands get.
    rules: Option<(CommandRules, Network)>,
    /// Where a command a rule grants more network runs: a sandbox of its own.
    granted: Option<Granted>,
}

enum Commands {
    /// Shared by every client: bubblewrap, or a kept container named on purpose.
    Shared(Arc<ShellSandbox>),
    /// A container for each client, made by this on its first command.
    PerClient(PerClient),
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    /// The command, run with /bin/sh -c in the sandbox
    command: String,
    /// Seconds the command may run (at most the policy's limit; default that limit)
    #[serde(default)]
    timeout_s: Option<f64>,
    /// Working folder, a virtual path such as '/project' (default: the first writable mount)
    #[serde(default)]
    cwd: Option<String>,
}

/// What the command did.
#[derive(Serialize, JsonSchema)]
pub struct CommandResult {
    stdout: String,
    stderr: String,
    exit_code: i32,
    timed_out: bool,
    /// Output was cut at the policy's cap.
    truncated: bool,
    /// Whether an OS sandbox confined the command.
    sandboxed: bool,
    /// Which: `bwrap`, `landlock`, `seatbelt`, `container`, or `none`.
    sandbox: &'static str,
}

impl ShellTool {
    /// One sandbox for every client. `writes`: commands may write somewhere.
    pub fn shared(sandbox: ShellSandbox, ceiling: Option<Duration>, network: bool) -> ShellTool {
        let writes = sandbox.plan().binds.iter().any(|b| b.writable);
        ShellTool::with(Commands::Shared(Arc::new(sandbox)), writes, ceiling, network)
    }

    /// A container of its own for each client, made by `make`.
    pub fn per_client(make: PerClient, writes: bool, ceiling: Option<Duration>, network: bool) -> ShellTool {
        ShellTool::with(Commands::PerClient(make), writes, ceiling, network)
    }

    fn with(commands: Commands, writes: bool, ceiling: Option<Duration>, network: bool) -> ShellTool {
        let hints = ToolAnnotations::new().read_only(false).destructive(writes).idempotent(false).open_world(network);
        let definition = Tool::new(
            NAME,
            "Run a shell command (/bin/sh -c) in the OS sandbox: the mounts at their host paths, writable where the \
             policy says, the system folders read-only, no network unless the policy allows it.",
            schema_for_type::<RunCommandArgs>(),
        )
        .with_raw_output_schema(schema_for_output::<CommandResult>())
        .with_annotations(hints);
        ShellTool { commands, ceiling: ceiling.unwrap_or(DEFAULT_TIMEOUT), definition, rules: None, granted: None }
    }

    /// Commands are judged by `rules` first; `granted` makes the sandbox of a
    /// command a rule grants more network (bubblewrap only).
    pub fn with_rules(mut self, rules: Option<(CommandRules, Network)>, granted: Option<Granted>) -> ShellTool {
        self.rules = rules;
        self.granted = granted;
        self
    }

    /// Whether commands are judged by rules before they run.
    pub fn judges(&self) -> bool {
        self.rules.is_some()
    }

    /// The sandbox client `client` runs its commands in: the shared one, or
    /// `own` (the client's), made now if it has none yet.
    pub fn sandbox_for(&self, client: u64, own: &mut Option<Arc<ShellSandbox>>) -> Result<Arc<ShellSandbox>, String> {
        match &self.commands {
            Commands::Shared(sandbox) => Ok(sandbox.clone()),
            Commands::PerClient(make) => {
                if own.is_none() {
                    *own = Some(Arc::new(make(client)?));
                }
                Ok(own.clone().expect("made above"))
            }
        }
    }

    /// Runs the command, blocking. A time-out, output past the cap or a
    /// sandbox that cannot be set up is `isError`; a command's own failure is
    /// its exit code.
    pub fn call(&self, sandbox: &ShellSandbox, arguments: Option<JsonObject>, cancel: &AtomicBool, judge: Judge) -> CallToolResult {
        let args: RunCommandArgs = match crate::args::parse(NAME, arguments) {
            Ok(args) => args,
            Err(message) => return refused(message),
        };
        let timeout = match args.timeout_s {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                return refused(format!("Invalid arguments for {NAME}: timeout_s: {s} is not a positive number of seconds"));
            }
            Some(s) => Duration::from_secs_f64(s.min(self.ceiling.as_secs_f64())),
            None => self.ceiling,
        };
        let granted_sandbox;
        let mut sandbox = sandbox;
        if let Some((rules, network)) = &self.rules {
            match judge(rules, &args.command, network) {
                Err(message) => return refused(message),
                Ok((CommandVerdict::Refused(text), _)) => return refused(text),
                Ok((CommandVerdict::Run { granted: None }, _)) => {}
                Ok((CommandVerdict::Run { granted: Some(granted) }, mounts)) => match &self.granted {
                    Some(make) => match make(&granted.network, mounts) {
                        Ok(made) => {
                            granted_sandbox = made;
                            sandbox = &granted_sandbox;
                        }
                        Err(message) => return refused(format!("warden: {message}")),
                    },
                    None => return refused("warden: this server cannot give a rule's network grant; the command was not run".into()),
                },
            }
        }
        let argv: Vec<OsString> = ["/bin/sh", "-c", &args.command].iter().map(OsString::from).collect();
        match sandbox.execute_argv_cancellable(&argv, args.cwd.as_deref(), timeout, cancel) {
            Err(e) => refused(format!("warden: {e}")),
            Ok(result) => {
                // Past a limit (its time, or the output cap) is an error, as for components.
                let limited = result.timed_out || result.truncated;
                let mut out = CallToolResult::structured(serde_json::to_value(CommandResult::from(result)).expect("results serialize"));
                out.is_error = Some(limited);
                out
            }
        }
    }
}

impl From<ExecutionResult> for CommandResult {
    fn from(r: ExecutionResult) -> CommandResult {
        CommandResult { stdout: r.stdout, stderr: r.stderr, exit_code: r.exit_code, timed_out: r.timed_out, truncated: r.truncated, sandboxed: r.sandboxed, sandbox: r.sandbox }
    }
}
