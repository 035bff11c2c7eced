//! The command line, as clap sees it. The doc comments are the `--help` text.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Run untrusted tools in sandboxes.
///
/// A policy file names the host folders a tool may see and the rules for each.
/// Every access goes through directory handles opened once per mount, so `..`
/// and symlinks cannot leave a mount. Tools are WebAssembly components (`run`,
/// `call`); their files are those handles, with the same rules.
///
/// When a mount's rules ask for approval, or `dynamic` lets a tool reach a
/// folder outside its mounts, a person decides at the moment of access: at the
/// terminal, at the policy's `warden console` page, or by answers given in
/// advance with --approve. See `--help` of `fs`, `call`, `run`, `exec` and
/// `console`, and `warden suggest`.
///
/// Exit status: 0 success, 1 failure (e.g. a missing file, or a tool error),
/// 2 usage error or invalid policy, 3 denied by the sandbox (the reason is on
/// stderr), 124 a component ran past its time limit, 125 a component trapped
/// or hit another limit. `warden run` otherwise exits with the component's code.
#[derive(Debug, Parser)]
#[command(name = "warden", version, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a policy and print the effective mounts of the program and of each worker,
    /// and the tools each declared component offers to `warden mcp` (loaded and checked as the server does).
    Check {
        /// The policy file (YAML).
        policy: PathBuf,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Fetch a component from an OCI registry into the cache, checking every byte.
    ///
    /// The manifest must have the digest the reference names; its one wasm
    /// layer (the CNCF wasm artifact, or the older Bytecode Alliance layout)
    /// must have the digest and size the manifest gives, within --max-size.
    /// With --verify-key, a cosign signature by one of the keys must name this
    /// very manifest. Nothing is stored unless everything checks out. Prints
    /// the manifest digest, the component's sha256 and blake3 (for a policy's
    /// `digest:`), and the signature that verified.
    Pull(PullArgs),
    /// Pin every tag the policy's `tools:` name to the digest it has now, in
    /// `warden.lock` beside the policy; a pinned tag never follows the registry again.
    ///
    /// Each component is pulled and checked as `warden pull` does (with the
    /// tool's `verify` keys), so a pin is only written for what would load.
    Lock {
        /// The policy file (YAML).
        policy: PathBuf,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Print the JSON Schema of policy files, for editors.
    Schema,
    /// Use the capability filesystem of a policy, as a tool inside it would.
    ///
    /// Paths are virtual: `/portfolio/x.md` (also `portfolio/x.md` or
    /// `portfolio:x.md`) with named mounts, `/src/a.py` or `src/a.py` with one root.
    Fs(FsArgs),
    /// Run a command component (or a preview1 module) in the sandbox, like a program.
    ///
    /// Arguments after COMPONENT go to the component. Stdin, stdout and stderr are
    /// passed through; the exit status is the component's own.
    Run(RunArgs),
    /// Call one tool of a tool component and print its output.
    ///
    /// The input is a JSON object: --input, or standard input when --input is absent.
    /// A tool error exits 1 with the tool's message; a sandbox denial exits 3 with
    /// the sandbox's message, which says what is allowed.
    Call(CallArgs),
    /// Print the tools a component offers: name, description and input JSON Schema, as JSON.
    Tools {
        /// The component file (.wasm), or oci://REGISTRY/REPOSITORY@sha256:HEX.
        component: PathBuf,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        oci: OciArgs,
    },
    /// Run a native command in the OS sandbox (bubblewrap on Linux, Seatbelt on macOS).
    ///
    /// The host is read-only and mostly hidden: the command sees the system's runtime
    /// folders (/usr, /bin, /lib*, /etc, /opt) and the policy's mounts at their host
    /// paths, writable where the policy says rw. Protected paths (.git/hooks,
    /// .git/config, shell rc files, .vscode/, ...) stay read-only. No network unless
    /// the policy allows it. The exit status is the command's; 124 means it timed out
    /// (it and all its children were killed); 2 means an invalid policy, or no OS
    /// sandbox under `require_os_sandbox: true`.
    ///
    /// With `shell: { backend: container }` the command runs in a podman or docker
    /// container instead, started for it and removed after, with the mounts at their
    /// virtual paths (/portfolio; a root policy's folder at /workspace). With
    /// --sandbox it runs in a container kept by `warden sandbox start`.
    Exec(ExecArgs),
    /// Keep a container sandbox across commands (policies with `backend: container`).
    ///
    /// `warden sandbox start --policy P --name N` starts container `warden-N` (or
    /// reuses it while it runs with the same settings); `warden exec --sandbox N -- CMD`
    /// runs commands in it; `warden sandbox stop N` removes it.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Serve the sandbox to an agent over the Model Context Protocol, on stdio or HTTP.
    ///
    /// The agent gets the file tools of pydantic-ai-filesystem-sandbox (read_file,
    /// write_file, edit_file, list_files, delete_file, move_file, copy_file) over
    /// the program's mounts, or a worker's; `mcp: { file_tools: false }` in the
    /// policy turns them off. The policy's `tools:` are offered as KEY__TOOL, and
    /// `run_command` when it has `shell:`. A refusal comes back as a tool error
    /// (`isError`) in the sandbox's words and the server goes on. Requests that need a person's
    /// approval are answered by --approve/--answers, or refused. JSON-RPC goes on
    /// stdout; logs go to stderr (`WARDEN_LOG=debug` for more).
    Mcp(McpArgs),
    /// Serve Warden's console for a policy: a page on loopback where you answer
    /// the questions of the CLI's commands under that policy (`fs`, `run`, `call`,
    /// `exec`), see and cancel them while they run, and read the audit log.
    ///
    /// While it runs, every command under the policy lists itself there and
    /// puts its questions to it (beside the terminal, if it has one; the first
    /// answer wins), as `approvals: { via }` or --ask-via allows. The commands
    /// find it through a socket in Warden's private folder, which no sandboxed
    /// command or component sees. Log in once with the URL printed on stderr
    /// (or --open it); it is spent when used. Stop it with Ctrl-C.
    Console(ConsoleArgs),
    /// Create a tool project in a new folder: the tool, its WIT, a build script, a policy and a test.
    ///
    /// The folder's name is the tool's. `build.sh` installs the language's toolchain
    /// into `.toolchain/` on first use (or into $WARDEN_TOOLCHAIN) and builds NAME.wasm;
    /// `test.sh` runs the tool under Warden with `policy.yaml` and checks its answers.
    /// C needs cargo once (for wit-bindgen), JavaScript needs node and npm, and every
    /// language needs python3 (toolchains come from PyPI).
    New {
        /// The tool's language.
        #[arg(long, value_enum)]
        lang: crate::new_cmd::Lang,
        /// The new folder; its name becomes the tool's name, e.g. `word_count`.
        path: PathBuf,
    },
    /// Print the policy snippet that would make an approval session's grants permanent.
    ///
    /// Reads the audit log that `--audit` (or the policy's `audit:`) wrote. Grants
    /// "for this session" of folders outside the mounts become new mounts; grants
    /// inside a mount with approval rules become comments naming the rule to drop.
    /// Grants given once, denials and unanswered requests are left out. Commands a
    /// person allowed become command rules: an asking rule approved for the session
    /// is named (make it `decision: allow`), and a single command no rule named
    /// becomes an allow rule of its program and subcommand. Review the snippet
    /// before adding it to a policy: nothing is changed by this command.
    Suggest {
        /// The audit log (JSON lines).
        #[arg(long, value_name = "FILE")]
        audit: PathBuf,
        /// The session to use [default: the last one in the log].
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
    /// Test a policy's command rules: how a command is split and judged.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Compile a component into the cache ahead of time, so that its first run starts fast.
    Compile {
        /// The component file (.wasm), or oci://REGISTRY/REPOSITORY@sha256:HEX.
        component: PathBuf,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        oci: OciArgs,
    },
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub oci: OciArgs,
    /// The component file: a `wasi:cli/command` component or a preview1 module;
    /// or one in a registry, oci://REGISTRY/REPOSITORY@sha256:HEX.
    pub component: PathBuf,
    /// Arguments for the component.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The policy file (YAML).
    #[arg(long, value_name = "POLICY", required_unless_present = "sandbox")]
    pub policy: Option<PathBuf>,
    /// Run in the kept container sandbox NAME (see `warden sandbox`), under the
    /// policy it was started with. With --policy too, only if NAME runs with that
    /// policy's settings (it is started now if it does not run); another sandbox
    /// of that name is an error, never used instead.
    #[arg(long, value_name = "NAME")]
    pub sandbox: Option<String>,
    /// Run as this worker of the policy, with its derived (narrower) mounts.
    #[arg(long, value_name = "NAME")]
    pub worker: Option<String>,
    /// Time limit, e.g. 500ms, 10s [default: the policy's limits.timeout, else 120s].
    #[arg(long, value_name = "DUR")]
    pub timeout: Option<String>,
    /// Working folder, a virtual path such as /portfolio/src [default: the first writable mount].
    #[arg(long, value_name = "VIRTUAL_PATH")]
    pub cwd: Option<String>,
    #[command(flatten)]
    pub approvals: ApprovalArgs,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]...")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Start container `warden-NAME` under a policy with `backend: container`, and leave it running.
    Start {
        /// The policy file (YAML).
        #[arg(long, value_name = "POLICY")]
        policy: PathBuf,
        /// The sandbox's name: letters, digits, '.', '_' and '-'.
        #[arg(long, value_name = "NAME")]
        name: String,
        /// Start it for this worker of the policy, with its derived (narrower) mounts.
        #[arg(long, value_name = "WORKER")]
        worker: Option<String>,
    },
    /// Remove container `warden-NAME`, with whatever still runs in it.
    Stop {
        /// The sandbox's name, as given to `start`.
        name: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct CallArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub oci: OciArgs,
    /// The tool component file (world `warden:tool/tool`), or
    /// oci://REGISTRY/REPOSITORY@sha256:HEX.
    pub component: PathBuf,
    /// The tool to call, as `warden tools` lists it.
    pub tool: String,
    /// The input, a JSON object; read from standard input when absent.
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
}

/// What a component may see and use. With neither --policy nor --dir it sees no files.
#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// The policy file (YAML): mounts, network, limits and environment.
    #[arg(long, value_name = "POLICY", conflicts_with = "dirs")]
    pub policy: Option<PathBuf>,
    /// Run as this worker of the policy, with its derived (narrower) mounts.
    #[arg(long, value_name = "NAME", requires = "policy")]
    pub worker: Option<String>,
    /// Give the component a host folder without a policy file: HOST[::GUEST][:ro].
    /// GUEST is `/` (the only folder then) or `/NAME`; it defaults to `/` and the
    /// folder's name. Read-write unless `:ro`. May be repeated.
    #[arg(long = "dir", value_name = "HOST[::GUEST][:ro]")]
    pub dirs: Vec<String>,
    /// Set an environment variable (K=V), or pass the host's value of K. May be
    /// repeated. The component sees only these and the policy's `env`.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Fixed clocks, seeded randomness, sorted listings and fuel instead of wall
    /// time: the same component, input and files give the same output and fuel.
    #[arg(long)]
    pub deterministic: bool,
    /// The seed of --deterministic randomness.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "deterministic")]
    pub seed: u64,
    /// Fuel (about one unit per instruction); running out stops the component.
    #[arg(long, value_name = "N")]
    pub fuel: Option<u64>,
    /// Wall-time limit, e.g. 500ms, 10s [default: 30s; none with --deterministic].
    #[arg(long, value_name = "DUR")]
    pub timeout: Option<String>,
    /// Memory limit, e.g. 64MiB [default: 512MiB].
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Limit on each of stdout, stderr and the tool log, e.g. 1MiB [default: 1MiB].
    #[arg(long, value_name = "SIZE")]
    pub max_output: Option<String>,
    /// Print the fuel used, the cache outcome and the denials to stderr afterwards.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub approvals: ApprovalArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// Who decides when an access needs a person's approval.
///
/// `fs` and `call` ask at the moment of access and then retry the operation
/// (a component call runs again, with the new folder among its preopens).
/// `run` and `exec` cannot pause a running program, so they ask before it
/// starts, for each mount with approval rules and each --approve folder.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ApprovalArgs {
    /// Answer in advance: VERB:PATH, VERB one of read, write (for the session),
    /// read-once, write-once (this operation only) or deny; PATH is a virtual
    /// folder, or a host folder for `dynamic` grants. The first answer whose
    /// folder holds the path decides; requests no answer covers are denied.
    /// Commands a rule asks about: exec:PREFIX (for the session), exec-once:PREFIX
    /// or deny-exec:PREFIX, e.g. `exec:git push`; it answers when every command
    /// that asks starts with PREFIX, never for a line Warden cannot read.
    /// Without answers, a person is asked at the terminal on stdin and at the
    /// policy's `warden console` if one runs (see --ask-via); with neither,
    /// every request is denied. May be repeated.
    #[arg(long = "approve", value_name = "VERB:PATH")]
    pub approve: Vec<String>,
    /// Answers in advance from a file: one VERB:PATH per line, `#` comments.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Append every request and answer to FILE, one JSON line each [default: the policy's `audit`].
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Where a person is asked: `client` (the MCP client's form; for the CLI,
    /// the terminal), `console` (Warden's console alone, which no agent or
    /// client can answer) or `both`, the first answer winning [default: the
    /// policy's `approvals.via`, else both].
    #[arg(long, value_name = "WHERE", value_parser = clap::value_parser!(warden_policy::AskVia))]
    pub ask_via: Option<warden_policy::AskVia>,
}

#[derive(Debug, clap::Args)]
pub struct ConsoleArgs {
    /// The policy file (YAML) whose commands ask here.
    #[arg(long)]
    pub policy: PathBuf,
    /// Serve the page at http://ADDR/ (loopback only) [default: 127.0.0.1 on a free port].
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", hide_default_value = true)]
    pub listen: std::net::SocketAddr,
    /// Open the login page in your browser (xdg-open, or open on macOS), from a
    /// file of Warden's private folder: the URL is never on a command line.
    #[arg(long)]
    pub open: bool,
    /// The audit log to show [default: the policy's `audit`].
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The policy file (YAML).
    #[arg(long)]
    pub policy: PathBuf,
    /// Serve a worker's sandbox instead of the program's.
    #[arg(long)]
    pub worker: Option<String>,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio, e.g. 127.0.0.1:8765.
    /// Every request needs `Authorization: Bearer <token>`, loopback included:
    /// without --token-file, Warden makes a random token at start, in a new file
    /// only you can read (outside every mount), and prints where it is and how
    /// a client sends it. A request from a browser page of another origin gets 403.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// The token every HTTP request must carry: the file's content. The file must
    /// be yours, readable by nobody else, and outside every folder the policy lets
    /// a tool read. Needed to serve an address other than loopback.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Also serve Warden's console at http://ADDR/, e.g. 127.0.0.1:8766 (loopback
    /// only): a page where you answer the sandbox's questions whatever the
    /// client can show, see and cancel the calls running, revoke grants and read
    /// the audit log. Questions go to the client's form and to the console; the
    /// first answer wins. Log in with the one-time URL in the file whose path is
    /// printed on stderr (in Warden's private folder, this user only).
    #[arg(long, value_name = "ADDR")]
    pub console: Option<std::net::SocketAddr>,
    /// HTTP client sessions open at once; an `initialize` beyond gets a JSON-RPC
    /// error while the open sessions go on [default: 64].
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: Option<u32>,
    /// Close an HTTP client session idle this long, with its grants, e.g. 10m [default: 5m].
    #[arg(long, value_name = "DURATION", requires = "http", value_parser = duration)]
    pub session_idle: Option<std::time::Duration>,
    /// Tool calls that may run at once, over all clients; the rest wait [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent: Option<u32>,
    /// Run every client's `run_command` in the kept container sandbox NAME (see
    /// `warden sandbox`), started now with the policy's settings if it does not run.
    /// Without it, under `backend: container` each client gets a container of its
    /// own, made on its first command and removed with its session.
    #[arg(long, value_name = "NAME")]
    pub sandbox: Option<String>,
    /// Look at the policy file and its components twice a second: a change is
    /// validated and swapped in, and clients are told the tool list changed;
    /// a policy that cannot be used keeps the old one. Without it the tool
    /// list is fixed for the server's life.
    #[arg(long)]
    pub watch: bool,
    #[command(flatten)]
    pub approvals: ApprovalArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, clap::Args)]
pub struct PullArgs {
    /// oci://REGISTRY/REPOSITORY@sha256:HEX, or :TAG (pulled to show the digest to pin).
    pub reference: String,
    /// Take the registries' settings (`registries:`) from this policy.
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<PathBuf>,
    #[command(flatten)]
    pub oci: OciArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// A component named oci://... on the command line, and its registry.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OciArgs {
    /// A cosign public key (PEM, ECDSA P-256): the component's manifest must
    /// carry a cosign signature by this key or another --verify-key. Needed
    /// for a tag without a digest. May be repeated.
    #[arg(long = "verify-key", value_name = "FILE")]
    pub verify_keys: Vec<PathBuf>,
    /// The largest component layer accepted, e.g. 16MiB [default: 64MiB].
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// How OCI registries are reached.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RegistryArgs {
    /// Speak plain HTTP to this registry (HOST:PORT), as a policy's
    /// `registries: {HOST:PORT: {insecure: true}}` does; loopback only. May be repeated.
    #[arg(long = "insecure-registry", value_name = "HOST:PORT")]
    pub insecure_registries: Vec<String>,
    /// Registry credentials: a Docker config file's `auths` [default:
    /// $DOCKER_CONFIG/config.json, else ~/.docker/config.json]. Credential helpers are not run.
    #[arg(long, value_name = "FILE")]
    pub registry_config: Option<PathBuf>,
    /// Ask no registry: components come from the cache (`warden pull` fills it).
    #[arg(long)]
    pub offline: bool,
    /// Seconds one registry request may take, from the first byte sent to the last received.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub registry_timeout: u64,
}

#[derive(Debug, clap::Args)]
pub struct CacheArgs {
    /// Folder of compiled components [default: $WARDEN_CACHE_DIR, else ~/.cache/warden].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile every time; read and write no cache.
    #[arg(long, conflicts_with = "cache_dir")]
    pub no_cache: bool,
}

#[derive(Debug, clap::Args)]
pub struct FsArgs {
    /// The policy file (YAML).
    #[arg(long, value_name = "POLICY")]
    pub policy: PathBuf,
    /// Act as this worker of the policy, with its derived (narrower) access.
    #[arg(long, value_name = "NAME")]
    pub worker: Option<String>,
    #[command(flatten)]
    pub approvals: ApprovalArgs,
    #[command(subcommand)]
    pub op: FsOp,
}

#[derive(Debug, Subcommand)]
pub enum FsOp {
    /// Print a text file, or a window of it counted in characters.
    ///
    /// A truncated read says so on stderr, with the offset to read the rest from.
    Read {
        path: String,
        /// First character to print.
        #[arg(long, default_value_t = 0, value_name = "N")]
        offset: usize,
        /// Most characters to print.
        #[arg(long, value_name = "N")]
        max_chars: Option<usize>,
    },
    /// Write standard input to a file, atomically; missing parent folders are created.
    Write { path: String },
    /// Replace the one occurrence of --old with --new in a text file.
    Edit {
        path: String,
        /// Text to replace; it must occur exactly once.
        #[arg(long, allow_hyphen_values = true)]
        old: String,
        /// Replacement text.
        #[arg(long, allow_hyphen_values = true)]
        new: String,
    },
    /// List files and folders below PATH (default: everything), one per line, sorted.
    ///
    /// Folders end in `/`. Files that the mount's suffix rule hides are left out.
    List {
        path: Option<String>,
        /// Keep entries matching this glob. Without a `/` it matches names at
        /// any depth (`*.md`); with one, the path below PATH (`src/**/*.rs`).
        #[arg(long, value_name = "PATTERN")]
        glob: Option<String>,
    },
    /// Print what a path is, as JSON: kind, size, modification time, writable.
    Stat { path: String },
    /// Delete a file, a symlink or an empty folder.
    Delete { path: String },
    /// Create a folder and any missing parents.
    Mkdir { path: String },
    /// Move a file or folder; DST must not exist and its parents are created.
    Move { src: String, dst: String },
    /// Copy a file, e.g. from a read-only mount into a writable one; DST must not exist.
    Copy { src: String, dst: String },
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Print the decision on a command (allow, ask or forbid), the rules that
    /// matched and how the command was split, without running anything.
    ///
    /// The command is an argv after `--`, matched as `warden exec` matches it,
    /// or --script, split as `run_command` splits it. Exit status: 0, or 1 when
    /// --expect names another decision; 2 for an invalid policy.
    Check(RulesCheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct RulesCheckArgs {
    /// The policy file (YAML).
    #[arg(long)]
    pub policy: PathBuf,
    /// Judge under this worker's rules (the program's with its own on top).
    #[arg(long)]
    pub worker: Option<String>,
    /// A shell script, as `run_command` gets it.
    #[arg(long, value_name = "STRING", conflicts_with = "command")]
    pub script: Option<String>,
    /// Print the judgement as JSON.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 unless the decision is this one (for checks in CI).
    #[arg(long, value_name = "DECISION", value_parser = ["allow", "ask", "forbid"])]
    pub expect: Option<String>,
    /// The command, as `warden exec` gets it.
    #[arg(last = true, required_unless_present = "script")]
    pub command: Vec<String>,
}

/// A duration flag in the policy's words (`500ms`, `10s`, `5m`).
fn duration(text: &str) -> Result<std::time::Duration, String> {
    warden_policy::parse_duration(text)
}
