//! A policy made in code instead of a file: mounts at any virtual folder,
//! nested ones too (the most specific serves its paths), checked as a file's
//! roots are. The Python package's drop-in `SandboxConfig` comes this way.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use crate::document::AskVia;
use crate::error::PolicyError;
use crate::limits::Limits;
use crate::model::{Layout, McpSettings, Mount, Policy, Rules, Shell};
use crate::network::Network;
use crate::validate::resolve_root;
use crate::vpath::{Namespace, VPath};

/// One mount: where it appears, the host folder behind it, and its rules.
#[derive(Debug, Clone)]
pub struct MountPoint {
    /// An absolute virtual folder: `/`, `/docs`, `/data/sub`.
    pub at: String,
    /// The host folder; relative to the policy's folder when relative.
    pub root: PathBuf,
    pub rules: Rules,
}

/// The policy of `points` (nothing else: no network, default limits),
/// named `file` in errors; relative roots resolve against `file`'s folder.
/// Mount points are unique, and host folders do not overlap.
pub fn policy_of_mounts(points: &[MountPoint], file: &Path) -> Result<Policy, PolicyError> {
    let base = file.parent().unwrap_or(Path::new("."));
    let err = |i: usize, message: String| PolicyError::new(file, message).field(format!("mounts[{i}]"));
    if points.is_empty() {
        return Err(PolicyError::new(file, "at least one mount is needed").field("mounts"));
    }
    let mut mounts: Vec<Mount> = Vec::with_capacity(points.len());
    for (i, point) in points.iter().enumerate() {
        if !point.at.starts_with('/') {
            return Err(err(i, format!("mount point '{}' must start with '/'", point.at.escape_debug())));
        }
        let path = VPath::parse(&point.at, Namespace::Root).map_err(|reason| err(i, format!("mount point '{}': {reason}", point.at.escape_debug())))?;
        if path.as_str() != point.at.trim_end_matches('/') && !(path.is_root() && point.at == "/") {
            return Err(err(i, format!("mount point '{}' is not a plain folder path (write it as '{path}')", point.at.escape_debug())));
        }
        if mounts.iter().any(|m| m.path == path) {
            return Err(err(i, format!("duplicate mount point '{path}'")));
        }
        let host_root = resolve_root(base, &point.root.to_string_lossy()).map_err(|m| err(i, m))?;
        if let Some(other) = mounts.iter().find(|m| m.host_root.starts_with(&host_root) || host_root.starts_with(&m.host_root)) {
            return Err(err(i, format!("the host folder of '{path}' overlaps the host folder of '{}'; mounts must not overlap", other.path)));
        }
        let name = path.components().next().map(str::to_owned);
        mounts.push(Mount { name, path, host_root, rules: point.rules.clone() });
    }
    refuse_stricter_inside(&mounts, file)?;
    let layout = if mounts.iter().any(|m| m.path.is_root()) { Layout::Root } else { Layout::Named };
    if layout == Layout::Root {
        // Under one root every path parses the same: no mount is reached by name.
        mounts.iter_mut().for_each(|m| m.name = None);
    }
    Ok(Policy {
        file: file.to_owned(),
        layout,
        mounts,
        network: Network::Off,
        require_os_sandbox: false,
        limits: Limits::default(),
        shell: Shell::default(),
        shell_section: false,
        env: Vec::new(),
        dynamic: None,
        audit: None,
        ask_via: AskVia::default(),
        workers: IndexMap::new(),
        mcp: McpSettings { file_tools: true },
        tools: IndexMap::new(),
        registries: IndexMap::new(),
    })
}

/// A mount inside another may not be stricter than it: each access is
/// served by the narrowest mount that allows it, so a read-only folder (or
/// one that asks first) inside a writable mount would be written through
/// the outer mount instead.
fn refuse_stricter_inside(mounts: &[Mount], file: &Path) -> Result<(), PolicyError> {
    for (i, inner) in mounts.iter().enumerate() {
        for outer in mounts.iter().filter(|m| m.path != inner.path && inner.path.starts_with(&m.path)) {
            let (o, n) = (&outer.rules, &inner.rules);
            let stricter = if o.writable && !n.writable {
                Some("read-only inside a writable mount")
            } else if n.write_approval && !o.write_approval && o.writable {
                Some("asks before writes inside a mount that does not")
            } else if n.read_approval && !o.read_approval {
                Some("asks before reads inside a mount that does not")
            } else {
                None
            };
            if let Some(why) = stricter {
                return Err(PolicyError::new(
                    file,
                    format!("the mount at '{}' is {why} ('{}'); a mount inside another may not be stricter than it", inner.path, outer.path),
                )
                .field(format!("mounts[{i}]")));
            }
        }
    }
    Ok(())
}
