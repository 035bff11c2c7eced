//! A validated policy: what the rest of Warden consumes.

use std::path::PathBuf;

use indexmap::IndexMap;

use crate::command_rules::CommandRules;
use crate::derive::{Area, DeriveError, DeriveRequest};
use crate::document::{AskVia, EngineChoice};
use crate::dynamic::Dynamic;
use crate::error::PolicyError;
use crate::limits::Limits;
use crate::network::Network;
use crate::oci::{OciSource, RegistrySettings};
use crate::vpath::{Namespace, VPath};

/// A policy that passed validation. Roots are canonical host folders.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The policy file it was read from.
    pub file: PathBuf,
    pub layout: Layout,
    pub mounts: Vec<Mount>,
    pub network: Network,
    pub require_os_sandbox: bool,
    pub limits: Limits,
    pub shell: Shell,
    /// The file has a `shell:` section: `warden mcp` offers `run_command`.
    pub shell_section: bool,
    /// Environment variables given to tools, in policy order.
    pub env: Vec<(String, String)>,
    /// Folders a person may add during a session; `None`: no dynamic expansion.
    pub dynamic: Option<Dynamic>,
    /// Where approval requests and answers are logged, from `audit:`.
    pub audit: Option<PathBuf>,
    /// Where a person is asked, from `approvals.via`.
    pub ask_via: AskVia,
    pub workers: IndexMap<String, Worker>,
    pub mcp: McpSettings,
    /// Tool components offered over MCP, in policy order.
    pub tools: IndexMap<String, ToolDecl>,
    /// How registries are reached, by `HOST[:PORT]`.
    pub registries: IndexMap<String, RegistrySettings>,
}

/// A tool component declared in `tools:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDecl {
    pub key: String,
    /// Where the component comes from.
    pub component: ComponentSource,
    /// The BLAKE3 digest the component's bytes must have, lowercase hex.
    pub digest: Option<String>,
    pub worker: Option<String>,
    /// The sandbox's limits with this tool's own over them.
    pub limits: Limits,
}

/// A component file, or a component in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentSource {
    /// Absolute path of the component file.
    File(PathBuf),
    Oci(OciSource),
}

impl std::fmt::Display for ComponentSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ComponentSource::File(path) => write!(f, "{}", path.display()),
            ComponentSource::Oci(oci) => write!(f, "{}", oci.reference),
        }
    }
}

/// What `warden mcp` offers, from `mcp:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSettings {
    pub file_tools: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One root mapped to `/`.
    Root,
    /// Named mounts at `/NAME`.
    Named,
}

#[derive(Debug, Clone)]
pub struct Mount {
    /// `None` for the single root.
    pub name: Option<String>,
    /// Where the mount appears: `/` or `/NAME`.
    pub path: VPath,
    /// Canonical host folder; for logs and OS sandboxes, never for messages to a model.
    pub host_root: PathBuf,
    pub rules: Rules,
}

/// Per-mount rules. `Rules::default()` is read-only with no other limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Only a derived area can be unreadable: one named in `allow_write` alone
    /// when `allow_read` is given too.
    pub readable: bool,
    pub writable: bool,
    /// Allowed suffixes, compared without regard to ASCII case; `None` allows all.
    pub suffixes: Option<Vec<String>>,
    pub max_file_bytes: Option<u64>,
    pub read_approval: bool,
    pub write_approval: bool,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules { readable: true, writable: false, suffixes: None, max_file_bytes: None, read_approval: false, write_approval: false }
    }
}

impl Rules {
    /// Whether a file called `name` may be read or written under these rules.
    pub fn allows_name(&self, name: &str) -> bool {
        match &self.suffixes {
            None => true,
            Some(list) => list.iter().any(|s| has_suffix(name, s)),
        }
    }

    /// The suffix to blame when `name` is refused: from the last dot on, or `(none)`.
    pub fn suffix_of(name: &str) -> &str {
        match name.rfind('.') {
            Some(i) if i > 0 => &name[i..],
            _ => "(none)",
        }
    }
}

fn has_suffix(name: &str, suffix: &str) -> bool {
    name.len() >= suffix.len()
        && name.is_char_boundary(name.len() - suffix.len())
        && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// Validated `shell:` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    /// The whole host read-only, not just the system folders.
    pub read_all: bool,
    /// Relative to every mount (`.env`) or absolute host paths inside one.
    pub deny_read: Vec<String>,
    pub protect: Vec<String>,
    pub max_output_bytes: u64,
    pub allow_unix_sockets: bool,
    /// `backend: container`: commands run in this container, not under bubblewrap.
    pub container: Option<ContainerSettings>,
    /// Which OS sandbox runs commands when there is no container.
    pub os_backend: OsBackend,
    /// Command rules; `None`: every command runs, as the OS sandbox allows.
    pub rules: Option<CommandRules>,
}

/// `shell.backend` when it is not `container`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OsBackend {
    /// bubblewrap, else Landlock, else (visibly) none.
    #[default]
    Auto,
    Bwrap,
    Landlock,
}

impl Default for Shell {
    fn default() -> Shell {
        Shell {
            read_all: false,
            deny_read: Vec::new(),
            protect: Vec::new(),
            max_output_bytes: 1 << 20,
            allow_unix_sockets: false,
            container: None,
            os_backend: OsBackend::Auto,
            rules: None,
        }
    }
}

/// Validated `shell.container` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerSettings {
    pub image: String,
    pub memory_bytes: Option<u64>,
    /// CPUs in billionths, as the Docker API takes them.
    pub nano_cpus: Option<u64>,
    pub engine: EngineChoice,
    pub workspace_root: Option<PathBuf>,
    /// Who commands run as; `None`: the first writable mount's owner, unless root.
    pub user: Option<ContainerUser>,
}

/// `shell.container.user`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerUser {
    Root,
    Id { uid: u32, gid: u32 },
}


#[derive(Debug, Clone)]
pub struct Worker {
    pub name: String,
    pub request: DeriveRequest,
    /// The worker's own ceiling, never wider than the program's.
    pub dynamic: Option<Dynamic>,
    /// Within the program's.
    pub network: Network,
    /// Where the worker is defined in the policy file (1-based line and column).
    pub location: Option<(u64, u64)>,
    /// The program's command rules with the worker's own on top.
    pub rules: Option<CommandRules>,
}

impl Policy {
    /// The dynamic ceiling of `worker`, or of the program when `None`.
    pub fn dynamic_for(&self, worker: Option<&str>) -> Option<&Dynamic> {
        match worker {
            None => self.dynamic.as_ref(),
            Some(name) => self.workers.get(name).and_then(|w| w.dynamic.as_ref()),
        }
    }

    /// The network of `worker`, or of the program when `None`.
    pub fn network_for(&self, worker: Option<&str>) -> &Network {
        match worker.and_then(|name| self.workers.get(name)) {
            Some(w) => &w.network,
            None => &self.network,
        }
    }

    /// The command rules of `worker`, or of the program when `None`.
    pub fn command_rules_for(&self, worker: Option<&str>) -> Option<&CommandRules> {
        match worker.and_then(|name| self.workers.get(name)) {
            Some(w) => w.rules.as_ref(),
            None => self.shell.rules.as_ref(),
        }
    }

    /// This policy with `worker`'s network and command rules as its own, for
    /// a runtime that takes them from the policy it is given.
    pub fn with_network_of(mut self, worker: Option<&str>) -> Policy {
        self.network = self.network_for(worker).clone();
        self.shell.rules = self.command_rules_for(worker).cloned();
        self
    }

    pub fn mount_names(&self) -> Vec<String> {
        self.mounts.iter().filter_map(|m| m.name.clone()).collect()
    }

    /// The program's areas: one per mount.
    pub fn areas(&self) -> Vec<Area> {
        self.mounts
            .iter()
            .map(|m| Area { path: m.path.clone(), readable: m.rules.readable, writable: m.rules.writable })
            .collect()
    }

    /// A worker that cannot be derived, reported as the policy's error at the
    /// worker's place, whether policy validation or the host found it.
    pub fn worker_error(&self, name: &str, error: &DeriveError) -> PolicyError {
        let location = self.workers.get(name).and_then(|w| w.location);
        PolicyError::for_worker(&self.file, name, location, error)
    }

    /// Runs `f` with the namespace this policy's paths are parsed in.
    pub fn with_namespace<T>(&self, f: impl FnOnce(Namespace<'_>) -> T) -> T {
        let names = self.mount_names();
        match self.layout {
            Layout::Root => f(Namespace::Root),
            Layout::Named => f(Namespace::Named(&names)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_match_the_end_of_the_name_without_case() {
        let rules = Rules { suffixes: Some(vec![".md".into(), ".tar.gz".into()]), ..Rules::default() };
        assert!(rules.allows_name("a.md"));
        assert!(rules.allows_name("A.MD"));
        assert!(rules.allows_name("x.tar.gz"));
        assert!(!rules.allows_name("a.md.exe"));
        assert!(!rules.allows_name("amd"));
        assert!(!rules.allows_name("é"));
    }

    #[test]
    fn blamed_suffix_is_from_the_last_dot() {
        assert_eq!(Rules::suffix_of("a.tar.gz"), ".gz");
        assert_eq!(Rules::suffix_of("Makefile"), "(none)");
        assert_eq!(Rules::suffix_of(".bashrc"), "(none)");
    }
}
