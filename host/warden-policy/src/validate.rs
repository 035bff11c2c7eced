//! From a parsed [`PolicyDocument`] to a [`Policy`]: every check that needs
//! the host (roots exist, are folders, are not system folders, do not overlap).

use std::path::{Component, Path, PathBuf};

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use crate::derive::{plan_derive, DeriveRequest, EntryLookup, SandboxPermissionEscalationError};
use crate::oci::reference::{check_registry, host_of};
use crate::oci::{is_loopback_host, Lock, OciRef, OciSource, PinnedBy, RegistrySettings, DEFAULT_MAX_SIZE};
use crate::model::ComponentSource;
use crate::limits::parse_size;
use crate::document::{RegistrySpec, DynamicSpec, Mode, MountSpec, NetworkSpec, PolicyDocument, ShellBackend, ShellRead, ShellSpec, ToolSpec, WorkerSpec};
use crate::command_rules::{program_rules, worker_rules, Written};
use crate::dynamic::Dynamic;
use crate::error::PolicyError;
use crate::limits::Limits;
use crate::network::{AllowEntry, Allowlist, Network};
use crate::model::{OsBackend, ContainerSettings, ContainerUser, Layout, McpSettings, Mount, Policy, Rules, Shell, ToolDecl, Worker};
use crate::system_dirs::{host_exposing, system_dir_of};
use crate::vpath::VPath;

pub const SUPPORTED_VERSION: u32 = 1;

/// Whether an `oci://` tag needs a digest, a lock's pin or `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tags {
    MustBePinned,
    /// For `warden lock`, which pins them.
    MayBeUnpinned,
}

pub(crate) fn validate(doc: PolicyDocument, file: &Path, tags: Tags) -> Result<Policy, PolicyError> {
    let err = |msg: String| PolicyError::new(file, msg);
    if doc.version != SUPPORTED_VERSION {
        return Err(err(format!(
            "unsupported version {}; this Warden reads version {SUPPORTED_VERSION}",
            doc.version
        ))
        .field("version"));
    }
    let base = file.parent().unwrap_or(Path::new("."));
    let sandbox = doc.sandbox.value;
    let (layout, mounts) = match (sandbox.paths, sandbox.root) {
        (Some(_), Some(_)) => {
            return Err(err("give either `paths` (named mounts) or `root` (one root at /), not both".into())
                .field("sandbox")
                .at(&doc.sandbox.referenced));
        }
        (None, None) => {
            return Err(err("give `paths` (named mounts) or `root` (one root at /)".into())
                .field("sandbox")
                .at(&doc.sandbox.referenced));
        }
        (None, Some(root)) => (Layout::Root, vec![mount(file, base, None, &root, "sandbox.root")?]),
        (Some(paths), None) => {
            if paths.is_empty() {
                return Err(err("at least one mount is needed".into()).field("sandbox.paths"));
            }
            let mut mounts = Vec::new();
            for (name, spec) in &paths {
                let field = format!("sandbox.paths.{name}");
                check_mount_name(name).map_err(|m| err(m).field(&field).at(&spec.referenced))?;
                mounts.push(mount(file, base, Some(name), spec, &field)?);
            }
            reject_overlaps(file, &mounts, &paths)?;
            (Layout::Named, mounts)
        }
    };
    let limits = match &sandbox.limits {
        None => Limits::default(),
        Some(spec) => spec
            .value
            .validate()
            .map_err(|(field, m)| err(m).field(format!("sandbox.limits.{field}")).at(&spec.referenced))?,
    };
    let shell = match &sandbox.shell {
        None => Shell::default(),
        Some(spec) => shell(&spec.value, base).map_err(|(field, m)| err(m).field(format!("sandbox.shell.{field}")).at(&spec.referenced))?,
    };

    for name in sandbox.env.keys() {
        check_env_name(name).map_err(|m| err(m).field(format!("sandbox.env.{name}")))?;
    }
    let dynamic = match &sandbox.dynamic {
        None => None,
        Some(spec) if layout == Layout::Root => {
            return Err(err("needs named mounts (`paths`): with one root at /, every path is already inside it".into())
                .field("sandbox.dynamic")
                .at(&spec.referenced));
        }
        Some(spec) => dynamic_ceiling(base, &spec.value)
            .map_err(|m| err(m).field("sandbox.dynamic.within").at(&spec.referenced))?,
    };
    let network = match &sandbox.network {
        None => Network::Off,
        Some(spec) => network(&spec.value).map_err(|(m, place)| err(m).field("sandbox.network").at(&place.unwrap_or(spec.referenced)))?,
    };
    let mut policy = Policy {
        file: file.to_owned(),
        layout,
        mounts,
        network,
        require_os_sandbox: sandbox.require_os_sandbox,
        limits,
        shell_section: sandbox.shell.is_some(),
        shell,
        env: sandbox.env.into_iter().collect(),
        dynamic,
        audit: sandbox.audit.as_deref().map(|a| lexically_normal(&base.join(a))),
        ask_via: sandbox.approvals.via,
        workers: IndexMap::new(),
        mcp: McpSettings { file_tools: doc.mcp.file_tools },
        tools: IndexMap::new(),
        registries: IndexMap::new(),
    };
    if let Some(spec) = &sandbox.shell {
        let s = &spec.value;
        let written = Written { rules: s.rules.as_deref(), unmatched: s.unmatched.as_ref(), unparsed: s.unparsed.as_ref(), field: "sandbox.shell".into() };
        policy.shell.rules = program_rules(&policy, &written)?;
    }
    for (name, spec) in doc.workers {
        let worker = worker(&policy, &name, spec)?;
        policy.workers.insert(name, worker);
    }
    for (name, spec) in &doc.registries {
        let settings = registry(name, &spec.value).map_err(|(sub, m)| PolicyError::new(file, m).field(format!("registries.\"{name}\"{sub}")).at(&spec.referenced))?;
        policy.registries.insert(name.clone(), settings);
    }
    let lock = if doc.tools.values().any(|t| OciRef::is_oci(&t.value.component)) {
        match (Lock::beside(file), tags) {
            (Ok(lock), _) => lock,
            // `warden lock` replaces a lock it cannot read.
            (Err(_), Tags::MayBeUnpinned) => Lock::default(),
            (Err(m), Tags::MustBePinned) => return Err(PolicyError::new(file, format!("cannot read the lock: {m}"))),
        }
    } else {
        Lock::default()
    };
    for (key, spec) in doc.tools {
        let decl = tool(&policy, base, (&lock, tags), &key, &spec)?;
        policy.tools.insert(key, decl);
    }
    Ok(policy)
}

/// A `tools:` entry: a usable key, an existing component file, a well-formed
/// digest, a known worker and valid limits.
fn tool(policy: &Policy, base: &Path, lock: (&Lock, Tags), key: &str, spec: &Spanned<ToolSpec>) -> Result<ToolDecl, PolicyError> {
    let fail = |sub: &str, m: String| {
        let field = if sub.is_empty() { format!("tools.{key}") } else { format!("tools.{key}.{sub}") };
        PolicyError::new(&policy.file, m).field(field).at(&spec.referenced)
    };
    let s = &spec.value;
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') || key.contains("__") {
        return Err(fail("", format!("'{}' is not a usable key: use letters, digits, '_' and '-', without '__'", key.escape_debug())));
    }
    let component = if OciRef::is_oci(&s.component) {
        ComponentSource::Oci(oci_source(base, lock, s).map_err(|(sub, m)| fail(sub, m))?)
    } else {
        if s.verify.is_some() || s.max_size.is_some() {
            let sub = if s.verify.is_some() { "verify" } else { "max_size" };
            return Err(fail(sub, "applies to an oci:// component only; a file is pinned by `digest`".into()));
        }
        let component = lexically_normal(&base.join(&s.component));
        if !component.is_file() {
            return Err(fail("component", format!("'{}' is not a file", s.component)));
        }
        ComponentSource::File(component)
    };
    let digest = match &s.digest {
        None => None,
        Some(d) => {
            let hex = d.strip_prefix("blake3:").filter(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()));
            Some(hex.ok_or_else(|| fail("digest", format!("'{d}' is not a digest; write blake3: and 64 hex digits")))?.to_ascii_lowercase())
        }
    };
    if let Some(worker) = &s.worker
        && !policy.workers.contains_key(worker)
    {
        let known: Vec<&str> = policy.workers.keys().map(String::as_str).collect();
        let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
        return Err(fail("worker", format!("unknown worker '{worker}'; the policy defines: {known}")));
    }
    let own = match &s.limits {
        None => Limits::default(),
        Some(limits) => limits.validate().map_err(|(field, m)| fail(&format!("limits.{field}"), m))?,
    };
    Ok(ToolDecl { key: key.to_owned(), component, digest, worker: s.worker.clone(), limits: policy.limits.overridden_by(own) })
}

/// A `registries:` entry: a registry as references write it; plain HTTP for loopback only.
fn registry(name: &str, spec: &RegistrySpec) -> Result<RegistrySettings, (&'static str, String)> {
    check_registry(name).map_err(|m| ("", m))?;
    if spec.insecure && !is_loopback_host(host_of(name)) {
        return Err((".insecure", "plain HTTP is allowed only for a loopback registry".into()));
    }
    Ok(RegistrySettings { insecure: spec.insecure })
}

/// An `oci://` component: a digest, a lock's pin, or `verify` for a bare tag.
fn oci_source(base: &Path, (lock, tags): (&Lock, Tags), spec: &ToolSpec) -> Result<OciSource, (&'static str, String)> {
    let reference = OciRef::parse(&spec.component).map_err(|m| ("component", m))?;
    let verify_keys = match &spec.verify {
        None => Vec::new(),
        Some(verify) if verify.keys.is_empty() => return Err(("verify.keys", "is empty; name at least one cosign public key".into())),
        Some(verify) => {
            let mut keys = Vec::new();
            for key in &verify.keys {
                let path = lexically_normal(&base.join(key));
                if !path.is_file() {
                    return Err(("verify.keys", format!("'{key}' is not a file")));
                }
                keys.push(path);
            }
            keys
        }
    };
    let (pin, pinned_by) = match (&reference.digest, lock.pin_of(&reference)) {
        (Some(digest), _) => (Some(digest.clone()), PinnedBy::Reference),
        (None, Some(digest)) => (Some(digest.clone()), PinnedBy::Lock),
        (None, None) if !verify_keys.is_empty() || tags == Tags::MayBeUnpinned => (None, PinnedBy::Nothing),
        (None, None) => {
            return Err((
                "component",
                format!(
                    "'{}' names a tag without a digest; pin it with `warden lock`, write its @sha256: digest, or add verify:",
                    spec.component
                ),
            ));
        }
    };
    let max_size = match &spec.max_size {
        None => DEFAULT_MAX_SIZE,
        Some(size) => parse_size(size).map_err(|m| ("max_size", m))?,
    };
    Ok(OciSource { reference, pin, pinned_by, verify_keys, max_size })
}

/// `None` when dynamic expansion is off. Folders resolve like mount roots.
fn dynamic_ceiling(base: &Path, spec: &DynamicSpec) -> Result<Option<Dynamic>, String> {
    match spec {
        DynamicSpec::Enabled(false) => Ok(None),
        DynamicSpec::Enabled(true) => Ok(Some(Dynamic { within: None })),
        DynamicSpec::Within(w) if w.within.is_empty() => {
            Err("is empty; give at least one folder, or write `dynamic: true`".into())
        }
        DynamicSpec::Within(w) => {
            let within = w.within.iter().map(|dir| resolve_root(base, dir)).collect::<Result<_, _>>()?;
            Ok(Some(Dynamic { within: Some(within) }))
        }
    }
}

/// The network of `spec`; an unusable entry is an error with the entry's own place, where known.
pub(crate) fn network(spec: &NetworkSpec) -> Result<Network, (String, Option<serde_saphyr::Location>)> {
    match spec {
        NetworkSpec::Enabled(false) => Ok(Network::Off),
        NetworkSpec::Enabled(true) => Ok(Network::Full),
        NetworkSpec::Allow(rules) => {
            let entries = rules.allow.iter().enumerate().map(|(i, e)| {
                AllowEntry::parse(&e.value).map_err(|m| (format!("allow[{i}]: {m}"), (e.referenced.line() > 0).then_some(e.referenced)))
            });
            Ok(Network::Allow(Allowlist { entries: entries.collect::<Result<_, _>>()?, listen: rules.listen }))
        }
    }
}

fn shell(spec: &ShellSpec, base: &Path) -> Result<Shell, (&'static str, String)> {
    let paths = |field, list: &[String]| {
        for p in list {
            if p.is_empty() || p.contains('\0') || p.split('/').any(|c| c == "..") {
                return Err((field, format!("'{}' is not a usable path: no empty paths, NUL or '..'", p.escape_debug())));
            }
        }
        Ok(list.to_vec())
    };
    let max_output_bytes = match &spec.max_output {
        Some(size) => crate::limits::parse_size(size).map_err(|m| ("max_output", m))?,
        None => Shell::default().max_output_bytes,
    };
    Ok(Shell {
        read_all: spec.read == Some(ShellRead::All),
        deny_read: paths("deny_read", &spec.deny_read)?,
        protect: paths("protect", &spec.protect)?,
        max_output_bytes,
        allow_unix_sockets: spec.allow_unix_sockets,
        container: container(spec, base)?,
        os_backend: match spec.backend {
            Some(ShellBackend::Bwrap) => OsBackend::Bwrap,
            Some(ShellBackend::Landlock) => OsBackend::Landlock,
            _ => OsBackend::Auto,
        },
        rules: None,
    })
}

fn container(spec: &ShellSpec, base: &Path) -> Result<Option<ContainerSettings>, (&'static str, String)> {
    let c = match (spec.backend, &spec.container) {
        (Some(ShellBackend::Container), Some(c)) => c,
        (Some(ShellBackend::Container), None) => {
            return Err(("container", "`backend: container` needs a `container:` section with an image".into()));
        }
        (_, None) => return Ok(None),
        (_, Some(_)) => return Err(("container", "container settings need `backend: container`".into())),
    };
    let image = c.image.clone().unwrap_or_default();
    if image.is_empty() || image.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
        return Err(("container.image", format!("'{}' is not an image name", image.escape_debug())));
    }
    let memory_bytes = c.memory.as_deref().map(crate::limits::parse_size).transpose().map_err(|m| ("container.memory", m))?;
    if memory_bytes.is_some_and(|m| m < 6 << 20) {
        return Err(("container.memory", "engines need at least 6MiB".into()));
    }
    let nano_cpus = match c.cpus {
        None => None,
        Some(cpus) if cpus.is_finite() && (0.01..=1024.0).contains(&cpus) => Some((cpus * 1e9) as u64),
        Some(cpus) => return Err(("container.cpus", format!("{cpus} is not a number of CPUs between 0.01 and 1024"))),
    };
    let user = c.user.as_deref().map(container_user).transpose().map_err(|m| ("container.user", m))?;
    Ok(Some(ContainerSettings {
        image,
        memory_bytes,
        nano_cpus,
        engine: c.engine.unwrap_or_default(),
        workspace_root: c.workspace_root.as_deref().map(|r| lexically_normal(&base.join(r))),
        user,
    }))
}

/// `root`, `UID` or `UID:GID` (the group defaults to the uid).
fn container_user(text: &str) -> Result<ContainerUser, String> {
    if text == "root" {
        return Ok(ContainerUser::Root);
    }
    let number = |n: &str| n.parse::<u32>().ok();
    let (uid, gid) = match text.split_once(':') {
        Some((uid, gid)) => (number(uid), number(gid)),
        None => (number(text), number(text)),
    };
    match (uid, gid) {
        (Some(0), _) => Err("write `root` for uid 0, so that running as root is never an accident".into()),
        (Some(uid), Some(gid)) => Ok(ContainerUser::Id { uid, gid }),
        _ => Err(format!("'{}' is not a user; write root, UID or UID:GID", text.escape_debug())),
    }
}

/// A variable name the OS accepts: not empty, no `=`, no NUL.
pub fn check_env_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(format!("'{}' is not a variable name; it must be non-empty and have no '=' or NUL", name.escape_debug()));
    }
    Ok(())
}

fn check_mount_name(name: &str) -> Result<(), String> {
    let valid_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if name.is_empty() || name == "." || name == ".." || !valid_chars {
        return Err(format!(
            "'{}' is not a valid mount name (use letters, digits, '.', '_' and '-')",
            name.escape_debug()
        ));
    }
    Ok(())
}

fn mount(
    file: &Path,
    base: &Path,
    name: Option<&String>,
    spec: &Spanned<MountSpec>,
    field: &str,
) -> Result<Mount, PolicyError> {
    let fail = |sub: &str, msg: String| {
        PolicyError::new(file, msg).field(format!("{field}.{sub}")).at(&spec.referenced)
    };
    let s = &spec.value;
    let writable = match (s.mode, s.readonly) {
        (Some(Mode::Rw), Some(true)) | (Some(Mode::Ro), Some(false)) => {
            return Err(fail("readonly", "contradicts `mode`; give only one of them".into()));
        }
        (Some(mode), _) => mode == Mode::Rw,
        (None, Some(readonly)) => !readonly,
        (None, None) => false,
    };
    if let Some(suffixes) = &s.suffixes
        && let Some(bad) = suffixes.iter().find(|x| x.len() < 2 || !x.starts_with('.') || x.contains('/'))
    {
        return Err(fail("suffixes", format!("'{bad}' is not a suffix; write it with a leading dot, like '.md'")));
    }
    let host_root = resolve_root(base, &s.root).map_err(|m| fail("root", m))?;
    Ok(Mount {
        name: name.cloned(),
        path: match name {
            Some(n) => VPath::root().join(n),
            None => VPath::root(),
        },
        host_root,
        rules: Rules {
            readable: true,
            writable,
            suffixes: s.suffixes.clone(),
            max_file_bytes: s.max_file_bytes,
            read_approval: s.read_approval,
            write_approval: s.write_approval,
        },
    })
}

/// Checks a root as written, before it exists: not `~`, not a system folder
/// or one that exposes the host. Returns it made absolute and lexically normal.
pub fn check_root_as_written(base: &Path, root: &str) -> Result<PathBuf, String> {
    if root.starts_with('~') {
        return Err(format!("'{root}': '~' is not expanded; write the full path or one relative to the policy file"));
    }
    let written = lexically_normal(&base.join(root));
    if let Some(sys) = system_dir_of(&written) {
        return Err(format!("'{root}' is the system folder {} or inside it; it cannot be mounted", sys.display()));
    }
    if let Some(why) = host_exposing(&written) {
        return Err(format!("'{root}' is {why}; it cannot be mounted"));
    }
    Ok(written)
}

/// Resolves a root against the policy's folder, checking it as written and as resolved.
pub(crate) fn resolve_root(base: &Path, root: &str) -> Result<PathBuf, String> {
    let written = check_root_as_written(base, root)?;
    let resolved = written
        .canonicalize()
        .map_err(|e| format!("'{root}' does not exist or cannot be reached ({})", e.kind()))?;
    if !resolved.is_dir() {
        return Err(format!("'{root}' is not a folder"));
    }
    if let Some(sys) = system_dir_of(&resolved) {
        return Err(format!(
            "'{root}' resolves through symlinks to {}, in the system folder {}; it cannot be mounted",
            resolved.display(),
            sys.display()
        ));
    }
    if let Some(why) = host_exposing(&resolved) {
        return Err(format!("'{root}' resolves through symlinks to {}, which is {why}; it cannot be mounted", resolved.display()));
    }
    Ok(resolved)
}

/// Folds `.` and `..` without touching the host (so `/tmp/../etc` is seen as `/etc`).
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in std::path::absolute(path).unwrap_or_else(|_| path.to_owned()).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn reject_overlaps(
    file: &Path,
    mounts: &[Mount],
    specs: &IndexMap<String, Spanned<MountSpec>>,
) -> Result<(), PolicyError> {
    for (i, later) in mounts.iter().enumerate() {
        for earlier in &mounts[..i] {
            let (a, b) = (&earlier.host_root, &later.host_root);
            if a.starts_with(b) || b.starts_with(a) {
                let (en, ln) = (earlier.name.as_deref().unwrap_or("/"), later.name.as_deref().unwrap_or("/"));
                let relation = if a == b { "is the same folder as" } else if b.starts_with(a) { "lies inside" } else { "contains" };
                return Err(PolicyError::new(file, format!("root of '{ln}' {relation} the root of '{en}'; mounts must not overlap"))
                    .field(format!("sandbox.paths.{ln}.root"))
                    .at(&specs[ln].referenced));
            }
        }
    }
    Ok(())
}

fn worker(policy: &Policy, name: &str, spec: Spanned<WorkerSpec>) -> Result<Worker, PolicyError> {
    let s = spec.value;
    let fail = |m: String| PolicyError::new(&policy.file, m).field(format!("workers.{name}.dynamic")).at(&spec.referenced);
    let base = policy.file.parent().unwrap_or(Path::new("."));
    let dynamic = match s.dynamic.as_ref().map(|d| dynamic_ceiling(base, &d.value)).transpose().map_err(fail)?.flatten() {
        None => None,
        Some(asked) => match &policy.dynamic {
            None => return Err(fail("the program's sandbox has no `dynamic`, and a worker cannot have more than it".into())),
            Some(program) => Some(program.narrowed(asked.within).map_err(fail)?),
        },
    };
    let request = DeriveRequest {
        allow_read: s.allow_read,
        allow_write: s.allow_write,
        readonly: s.readonly,
        inherit: s.inherit,
    };
    let location = (spec.referenced.line() > 0).then(|| (spec.referenced.line(), spec.referenced.column()));
    let network = match &s.network {
        None => policy.network.clone(),
        Some(asked) => {
            let fail = |m: String| PolicyError::new(&policy.file, m).field(format!("workers.{name}.network")).at(&asked.referenced);
            let network = network(&asked.value).map_err(|(m, place)| {
                PolicyError::new(&policy.file, m).field(format!("workers.{name}.network")).at(&place.unwrap_or(asked.referenced))
            })?;
            policy.network.narrows_to(&network).map_err(|what| {
                fail(
                    SandboxPermissionEscalationError {
                        request: what,
                        parent_boundary: format!("the parent sandbox allows only: {}", policy.network.allowed_hosts()),
                        alternative: "Ask for pairs within those, or leave `network` out to inherit them.".into(),
                    }
                    .to_string(),
                )
            })?;
            network
        }
    };
    let rules = match &s.shell {
        None => policy.shell.rules.clone(),
        Some(spec) => {
            let w = &spec.value;
            let field = format!("workers.{name}.shell");
            let written = Written { rules: w.rules.as_deref(), unmatched: w.unmatched.as_ref(), unparsed: w.unparsed.as_ref(), field };
            // A worker's grant lies within what the program's network and rules could give.
            let program = policy.shell.rules.as_ref();
            let grants = program.into_iter().flat_map(|r| r.grants.iter().flatten()).filter_map(|g| g.network.as_ref());
            let ceiling = grants.fold(policy.network.clone(), |n, g| n.widened_by(g));
            worker_rules(policy, program, &written, name, &ceiling)?
        }
    };
    let worker = Worker { name: name.to_owned(), request, dynamic, location, network, rules };
    // Lexical here; the filesystem crate looks the entries up on the host when it derives.
    policy
        .with_namespace(|ns| plan_derive(&policy.areas(), ns, &worker.request, |p, _| EntryLookup::Grants(p.clone())))
        .map_err(|e| PolicyError::for_worker(&policy.file, name, location, &e))?;
    Ok(worker)
}
