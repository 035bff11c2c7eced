//! The policy file exactly as written: the serde and JSON Schema model.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::limits::LimitsSpec;

/// A Warden policy: a program's sandbox and how each worker derives from it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyDocument {
    /// Format version; this Warden reads version 1.
    pub version: u32,
    /// The program's sandbox.
    #[schemars(with = "SandboxSpec")]
    pub sandbox: Spanned<SandboxSpec>,
    /// Workers derived from the sandbox, by name.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, WorkerSpec>")]
    pub workers: IndexMap<String, Spanned<WorkerSpec>>,
    /// What `warden mcp` offers an agent.
    #[serde(default)]
    pub mcp: McpSpec,
    /// Tool components `warden mcp` offers, by key: each tool `T` of component
    /// `KEY` is offered as `KEY__T`.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, ToolSpec>")]
    pub tools: IndexMap<String, Spanned<ToolSpec>>,
    /// How each registry that `oci://` components come from is reached, by
    /// `HOST` or `HOST:PORT` as the references write it.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, RegistrySpec>")]
    pub registries: IndexMap<String, Spanned<RegistrySpec>>,
}

/// How Warden reaches one registry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistrySpec {
    /// Plain HTTP instead of HTTPS; allowed only for a loopback registry
    /// (`localhost`, `127.0.0.0/8`, `[::1]`).
    #[serde(default)]
    pub insecure: bool,
}

/// Signature checks for an `oci://` component.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifySpec {
    /// Cosign public keys (PEM, ECDSA P-256), relative to the policy file's
    /// folder: the manifest pulled must carry a cosign signature by one of them.
    pub keys: Vec<String>,
}

/// A tool component the operator lets an agent call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The component file, relative to the policy file's folder, or a
    /// component in a registry: `oci://REGISTRY/REPOSITORY@sha256:HEX`, or
    /// `...:TAG` when `verify` is given or `warden.lock` pins the tag.
    pub component: String,
    /// `blake3:<64 hex digits>`: the component is refused when its file does not match.
    #[serde(default)]
    pub digest: Option<String>,
    /// The worker whose sandbox the component gets (default: the program's).
    #[serde(default)]
    pub worker: Option<String>,
    /// Limits for this component's calls, over the sandbox's `limits`.
    #[serde(default)]
    pub limits: Option<LimitsSpec>,
    /// For an `oci://` component: the signature it must carry.
    #[serde(default)]
    pub verify: Option<VerifySpec>,
    /// For an `oci://` component: the largest layer accepted, e.g. 64MiB (the default).
    #[serde(default)]
    pub max_size: Option<String>,
}

/// What `warden mcp` offers an agent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSpec {
    /// The file tools (read_file, write_file, ...) over the sandbox; default true.
    #[serde(default = "yes")]
    pub file_tools: bool,
}

impl Default for McpSpec {
    fn default() -> McpSpec {
        McpSpec { file_tools: true }
    }
}

fn yes() -> bool {
    true
}

/// What the program may see: named mounts (`paths`) or one `root` at `/`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// Named mounts; each appears in the virtual namespace as `/NAME`.
    #[serde(default)]
    #[schemars(with = "Option<std::collections::BTreeMap<String, MountSpec>>")]
    pub paths: Option<IndexMap<String, Spanned<MountSpec>>>,
    /// Exactly one host folder mapped to virtual `/`.
    #[serde(default)]
    #[schemars(with = "Option<MountSpec>")]
    pub root: Option<Spanned<MountSpec>>,
    /// Network access for components and shell commands: `false` (default), `true`,
    /// or `{ allow: ["host:port", ...] }` for exactly those pairs.
    #[serde(default)]
    #[schemars(with = "Option<NetworkSpec>")]
    pub network: Option<Spanned<NetworkSpec>>,
    /// Refuse to run shell commands when no OS sandbox is available.
    #[serde(default)]
    pub require_os_sandbox: bool,
    /// Resource limits for each run or call; command-line flags override them.
    #[serde(default)]
    #[schemars(with = "Option<LimitsSpec>")]
    pub limits: Option<Spanned<LimitsSpec>>,
    /// How native shell commands (`warden exec`) see the host beyond the mounts.
    #[serde(default)]
    #[schemars(with = "Option<ShellSpec>")]
    pub shell: Option<Spanned<ShellSpec>>,
    /// Environment variables a tool sees, besides those given with `--env`. No other variable passes.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub env: IndexMap<String, String>,
    /// An access outside every mount asks a person to add that folder, instead of failing.
    /// `true` grants exactly the folder asked for; `{ within: [folders] }` allows only folders
    /// inside those, and lets the person widen a grant up to them. Needs named mounts.
    #[serde(default)]
    #[schemars(with = "Option<DynamicSpec>")]
    pub dynamic: Option<Spanned<DynamicSpec>>,
    /// File that every approval request and answer is appended to, one JSON line each;
    /// relative to the policy file's folder. `--audit` overrides it.
    #[serde(default)]
    pub audit: Option<String>,
    /// Where a person is asked.
    #[serde(default)]
    pub approvals: ApprovalsSpec,
}

/// `approvals:`: where a person is asked.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsSpec {
    /// `client`: the MCP client's form (the terminal, for the CLI); `console`:
    /// Warden's console alone, which no agent or client can answer; `both`
    /// (default): either, the first answer wins and the other is withdrawn.
    #[serde(default)]
    pub via: AskVia,
}

/// Where a person is asked: see [`ApprovalsSpec::via`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AskVia {
    Client,
    Console,
    #[default]
    Both,
}

impl std::str::FromStr for AskVia {
    type Err = String;

    fn from_str(s: &str) -> Result<AskVia, String> {
        match s {
            "client" => Ok(AskVia::Client),
            "console" => Ok(AskVia::Console),
            "both" => Ok(AskVia::Both),
            _ => Err(format!("'{s}' is not one of client, console, both")),
        }
    }
}

impl AskVia {
    /// Whether the MCP client's form (or the terminal) may be asked.
    pub fn client(self) -> bool {
        self != AskVia::Console
    }

    /// Whether Warden's console may be asked.
    pub fn console(self) -> bool {
        self != AskVia::Client
    }
}

/// `true`/`false`, or `{ allow: [...] }`.
#[derive(Debug, JsonSchema)]
#[serde(untagged)]
pub enum NetworkSpec {
    Enabled(bool),
    Allow(NetworkAllow),
}

/// By hand rather than `untagged`, which buffers the value and so loses the
/// place of each entry: an unusable one is reported at its own line and column.
impl<'de> Deserialize<'de> for NetworkSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = NetworkSpec;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("`true`, `false` or `{ allow: [HOST:PORT, ...] }`")
            }

            fn visit_bool<E: serde::de::Error>(self, enabled: bool) -> Result<NetworkSpec, E> {
                Ok(NetworkSpec::Enabled(enabled))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<NetworkSpec, A::Error> {
                NetworkAllow::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(NetworkSpec::Allow)
            }
        }
        deserializer.deserialize_any(Either)
    }
}

/// Exactly these connections, checked on the address actually connected to.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkAllow {
    /// `host:port` pairs: `api.example.com:443`, `*.pypi.org:443` (subdomains only),
    /// `10.1.2.3:5432`, `10.0.0.0/8:5432`, `[::1]:8080`. A listed name that resolves to a
    /// loopback, link-local, private or unspecified address is refused unless that
    /// address is listed too (`localhost` lists 127.0.0.1 and ::1). An empty list allows nothing.
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// Components may open listening sockets.
    #[serde(default)]
    pub listen: bool,
}

/// `true`/`false`, or `{ within: [folders] }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum DynamicSpec {
    Enabled(bool),
    Within(DynamicWithin),
}

/// The folders grants must lie in; a person may widen a grant up to one of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DynamicWithin {
    /// Host folders; relative ones are resolved against the policy file's folder.
    pub within: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Read-only.
    Ro,
    /// Read-write.
    Rw,
}

/// A mount: one of the named `paths`, or the single `root`.
/// `mode` and `readonly` say the same thing; give at most one. Read-only by default.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MountSpec {
    /// Host folder; a relative path is resolved against the policy file's folder.
    pub root: String,
    /// `ro` or `rw`.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// `false` means `mode: rw`.
    #[serde(default)]
    pub readonly: Option<bool>,
    /// File suffixes that may be read or written, e.g. `[.md, .pdf]`; null allows all.
    #[serde(default)]
    pub suffixes: Option<Vec<String>>,
    /// Largest file that may be read or written, in bytes; null means no limit.
    #[serde(default)]
    pub max_file_bytes: Option<u64>,
    /// Reads need a person's approval.
    #[serde(default)]
    pub read_approval: bool,
    /// Writes need a person's approval.
    #[serde(default)]
    pub write_approval: bool,
}

/// What a shell command may see outside the mounts, and what it may not see inside them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellSpec {
    /// `system` (default): the system's runtime folders (/usr, /bin, /lib*, /etc, /opt) read-only.
    /// `all`: the whole host read-only.
    #[serde(default)]
    pub read: Option<ShellRead>,
    /// Paths inside mounts that appear absent or empty, e.g. `[.env, secrets/]`; relative ones
    /// apply in every mount.
    #[serde(default)]
    pub deny_read: Vec<String>,
    /// More paths inside writable mounts that stay read-only, besides Warden's own list.
    #[serde(default)]
    pub protect: Vec<String>,
    /// Captured output per stream, e.g. `1MiB` (the default).
    #[serde(default)]
    pub max_output: Option<String>,
    /// Allow new Unix-domain sockets (default false).
    #[serde(default)]
    pub allow_unix_sockets: bool,
    /// `auto` (default; also written `os`): bubblewrap on Linux, else Landlock where
    /// bubblewrap cannot start (in a container, on a locked-down kernel), Seatbelt on
    /// macOS; one sandbox per command. `bwrap` or `landlock`: that one only.
    /// `container`: one long-lived podman or docker container (see `container`).
    #[serde(default)]
    pub backend: Option<ShellBackend>,
    /// The container of `backend: container`.
    #[serde(default)]
    pub container: Option<ContainerSpec>,
    /// Command rules, checked before a command runs: each a mapping with `prefix` and
    /// `decision` (`allow`, `ask` or `forbid`), or Claude Code's `"Bash(npm test:*)"`, read
    /// as `allow`. The strictest decision of every matching rule wins.
    #[serde(default)]
    #[schemars(with = "Option<Vec<RuleEntry>>")]
    pub rules: Option<Vec<Spanned<RuleEntry>>>,
    /// A command no rule names: `allow` (default), `ask` or `forbid`.
    #[serde(default)]
    #[schemars(with = "Option<DecisionSpec>")]
    pub unmatched: Option<Spanned<DecisionSpec>>,
    /// A script Warden cannot split safely (substitutions, control flow, code given
    /// to an interpreter): `ask` (default), `forbid`, or `allow`.
    #[serde(default)]
    #[schemars(with = "Option<DecisionSpec>")]
    pub unparsed: Option<Spanned<DecisionSpec>>,
}

/// A worker's own command rules, on top of the program's: they can only be stricter.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerShellSpec {
    /// More rules, as in `sandbox.shell.rules`; a grant lies within what the program's could give.
    #[serde(default)]
    #[schemars(with = "Option<Vec<RuleEntry>>")]
    pub rules: Option<Vec<Spanned<RuleEntry>>>,
    /// As strict as the program's, or stricter.
    #[serde(default)]
    #[schemars(with = "Option<DecisionSpec>")]
    pub unmatched: Option<Spanned<DecisionSpec>>,
    /// As strict as the program's, or stricter.
    #[serde(default)]
    #[schemars(with = "Option<DecisionSpec>")]
    pub unparsed: Option<Spanned<DecisionSpec>>,
}

/// What a command rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecisionSpec {
    /// Runs.
    Allow,
    /// Runs once a person approves (once, or the rule's prefix for the session).
    Ask,
    /// Refused before anything runs, with the justification.
    Forbid,
}

/// A command rule, or Claude Code's `Bash(PREFIX:*)` / `Bash(COMMAND)` as an `allow` rule.
#[derive(Debug, JsonSchema)]
#[serde(untagged)]
pub enum RuleEntry {
    Claude(String),
    Rule(RuleSpec),
}

/// By hand rather than `untagged`, so that an error inside a rule keeps its own words.
impl<'de> Deserialize<'de> for RuleEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = RuleEntry;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a rule `{ prefix: [...], decision: ... }` or a string `Bash(PREFIX:*)`")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<RuleEntry, E> {
                Ok(RuleEntry::Claude(text.to_owned()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RuleEntry, A::Error> {
                RuleSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(RuleEntry::Rule)
            }
        }
        deserializer.deserialize_any(Either)
    }
}

/// One command rule.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The words a command starts with; a position may list alternatives: `[git, [status, diff]]`.
    pub prefix: Vec<PrefixWord>,
    /// What a command that starts with `prefix` gets: `allow`, `ask` or `forbid`.
    pub decision: DecisionSpec,
    /// Why, shown to the person asked and in a refusal.
    #[serde(default)]
    pub justification: Option<String>,
    /// What a command this rule lets run gets beyond the sandbox, for that command only.
    #[serde(default)]
    pub grant: Option<GrantSpec>,
    /// Commands this rule must match, checked when the policy loads: a script
    /// (`"git push origin main"`) or an argv (`[git, push]`).
    #[serde(default, rename = "match")]
    pub examples: Vec<Example>,
    /// Commands this rule must not match, checked when the policy loads.
    #[serde(default)]
    pub not_match: Vec<Example>,
}

/// One position of a prefix: a word, or the words it may be.
#[derive(Debug, JsonSchema)]
#[serde(untagged)]
pub enum PrefixWord {
    One(String),
    Any(Vec<String>),
}

/// An example command: a script, or an argv.
#[derive(Debug, JsonSchema)]
#[serde(untagged)]
pub enum Example {
    Script(String),
    Argv(Vec<String>),
}

/// A string or a list of strings, read without buffering (an `untagged` enum
/// buffers each value and tries each variant: a policy of 100 rules took 1.5 ms).
fn string_or_list<'de, D: serde::Deserializer<'de>, T>(deserializer: D, one: fn(String) -> T, many: fn(Vec<String>) -> T) -> Result<T, D::Error> {
    struct Either<T> {
        one: fn(String) -> T,
        many: fn(Vec<String>) -> T,
    }
    impl<'de, T> serde::de::Visitor<'de> for Either<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a word or a list of words")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
            Ok((self.one)(text.to_owned()))
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
            Vec::<String>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(self.many)
        }
    }
    deserializer.deserialize_any(Either { one, many })
}

impl<'de> Deserialize<'de> for PrefixWord {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_or_list(deserializer, PrefixWord::One, PrefixWord::Any)
    }
}

impl<'de> Deserialize<'de> for Example {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_or_list(deserializer, Example::Script, Example::Argv)
    }
}

/// A rule's grant.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantSpec {
    /// Network for the command: `true`, or `{ allow: [HOST:PORT, ...] }` added to the sandbox's.
    #[serde(default)]
    #[schemars(with = "Option<NetworkSpec>")]
    pub network: Option<Spanned<NetworkSpec>>,
    /// Virtual folders the command may write, inside mounts that are `rw` (those with
    /// `write_approval` included, which commands otherwise see read-only until a person allows).
    #[serde(default)]
    pub write: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShellBackend {
    Auto,
    Os,
    Bwrap,
    Landlock,
    Container,
}

/// A container for shell commands: mounts at their virtual paths, hardened, limited.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContainerSpec {
    /// The image, present in the engine's store, e.g. `localhost/warden-busybox:1`.
    /// It needs `/bin/sh`; Warden starts it with a read-only root and a fresh `/tmp`.
    pub image: Option<String>,
    /// Memory limit, e.g. `512MiB`; a command over it is killed, the container stays.
    #[serde(default)]
    pub memory: Option<String>,
    /// CPU limit in cores, e.g. `1.5`.
    #[serde(default)]
    pub cpus: Option<f64>,
    /// `auto` (default: docker if its daemon answers, else podman), `podman` or `docker`.
    #[serde(default)]
    pub engine: Option<EngineChoice>,
    /// A folder under which every mount must lie, relative to this file.
    #[serde(default)]
    pub workspace_root: Option<String>,
    /// Who commands run as: `root`, or `UID` or `UID:GID`. Default: the owner of
    /// the first writable mount (so that files written there stay theirs), never
    /// root unless written here (on rootful docker that is the host's root).
    #[serde(default)]
    pub user: Option<String>,
}

/// Which container engine runs a `backend: container` sandbox.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    #[default]
    Auto,
    Podman,
    Docker,
}

impl EngineChoice {
    pub fn name(self) -> &'static str {
        match self {
            EngineChoice::Auto => "auto",
            EngineChoice::Podman => "podman",
            EngineChoice::Docker => "docker",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShellRead {
    System,
    All,
}

/// How a worker derives from the program's sandbox. With nothing set it sees nothing.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerSpec {
    /// Virtual folders (or files, meaning their folder) the worker may read.
    /// Given without `allow_write`: no writes.
    #[serde(default)]
    pub allow_read: Option<Vec<String>>,
    /// Virtual folders (or files, meaning their folder) the worker may write;
    /// also readable unless `allow_read` is given, which then alone says what is readable.
    #[serde(default)]
    pub allow_write: Option<Vec<String>>,
    /// `true` drops every write; `false` insists that the program can write.
    #[serde(default)]
    pub readonly: Option<bool>,
    /// With neither list given, the program's whole access (else nothing).
    /// With a list, the list alone decides, since it lies inside the program's access.
    #[serde(default)]
    pub inherit: bool,
    /// Folders this worker may be granted during a session: `true` for the program's
    /// `dynamic` ceiling, or `{ within: [...] }` inside it. None by default.
    #[serde(default)]
    #[schemars(with = "Option<DynamicSpec>")]
    pub dynamic: Option<Spanned<DynamicSpec>>,
    /// The worker's network, within the program's (`false`, or a narrower `allow` list).
    /// Left out: the program's.
    #[serde(default)]
    #[schemars(with = "Option<NetworkSpec>")]
    pub network: Option<Spanned<NetworkSpec>>,
    /// The worker's own command rules, on top of the program's.
    #[serde(default)]
    #[schemars(with = "Option<WorkerShellSpec>")]
    pub shell: Option<Spanned<WorkerShellSpec>>,
}
