//! Where the plan's folders appear inside a container: each mount at its
//! virtual path (a root policy's folder at `/workspace`), read-only mounts
//! read-only, and the shield's protected and hidden paths over them, from the
//! same plan and shield the bubblewrap runner uses.

use std::path::{Path, PathBuf};

use bollard::models::{Mount, MountType};

use crate::error::ShellError;
use crate::plan::ExecPlan;
use crate::shield::Shield;

/// Where a root policy's folder (virtual `/`) appears.
pub const WORKSPACE: &str = "/workspace";

/// Top-level folders an image needs for itself; a mount may not cover one.
const IMAGE_OWN: &[&str] =
    &["bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "run", "sbin", "sys", "tmp", "usr", "var"];

#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub mounts: Vec<Mount>,
    /// Denied folders: an empty read-only tmpfs over each.
    pub hidden_dirs: Vec<String>,
    /// Host folder of each bind and where it appears, deepest host folder first.
    places: Vec<(PathBuf, PathBuf)>,
}

impl Layout {
    /// `root`: the policy maps one folder to virtual `/`, so every virtual path
    /// (a worker's or a grant's too) appears under `/workspace`.
    pub fn new(plan: &ExecPlan, shield: &Shield, root: bool) -> Result<Layout, ShellError> {
        let mut places = Vec::new();
        let mut mounts = Vec::new();
        for bind in &plan.binds {
            let target = if root { PathBuf::from(format!("{WORKSPACE}{}", bind.vpath.trim_end_matches('/'))) } else { PathBuf::from(&bind.vpath) };
            if let Some(top) = target.components().nth(1).and_then(|c| c.as_os_str().to_str())
                && IMAGE_OWN.contains(&top)
            {
                return Err(ShellError::Policy(format!(
                    "{} would hide the image's own /{top} inside the container; rename the mount",
                    bind.vpath
                )));
            }
            mounts.push(bind_mount(&bind.host, &target, !bind.writable));
            places.push((bind.host.clone(), target));
        }
        places.sort_by_key(|(host, _)| std::cmp::Reverse(host.components().count()));
        let mut layout = Layout { mounts, hidden_dirs: Vec::new(), places };
        let null = Path::new("/dev/null");
        for dir in &shield.hidden_dirs {
            let target = layout.inside(dir)?;
            layout.hidden_dirs.push(target.to_string_lossy().into_owned());
        }
        // (paths, what is bound there instead of the path itself, read-only)
        for (list, source, read_only) in [
            (&shield.hidden_files, Some(null), true),
            (&shield.pinned, None, false),
            (&shield.read_only, None, true),
            (&shield.placeholders, Some(null), true),
        ] {
            for path in list {
                let target = layout.inside(path)?;
                let source = source.filter(|_| !crate::placeholders::bound_onto_itself(path)).unwrap_or(path);
                layout.mounts.push(bind_mount(source, &target, read_only));
            }
        }
        Ok(layout)
    }

    /// Where the host path `path` (inside one of the binds) appears in the container.
    pub fn inside(&self, path: &Path) -> Result<PathBuf, ShellError> {
        let (host, target) = self
            .places
            .iter()
            .find(|(host, _)| path.starts_with(host))
            .ok_or_else(|| ShellError::Policy(format!("{} is not inside any mount", path.display())))?;
        let rest = path.strip_prefix(host).expect("checked by starts_with");
        Ok(if rest.as_os_str().is_empty() { target.clone() } else { target.join(rest) })
    }
}

/// Refuses a read-only mount with other file systems mounted below it on the
/// host: the engines bind it read-only at its top only (the API these engines
/// speak has no recursive read-only bind), and what is mounted below would
/// be writable inside.
pub fn refuse_nested_mounts(plan: &ExecPlan) -> Result<(), ShellError> {
    let mounted = mount_points();
    for bind in plan.binds.iter().filter(|b| !b.writable) {
        if let Some(below) = mounted.iter().find(|m| m.starts_with(&bind.host) && **m != bind.host) {
            return Err(ShellError::Policy(format!(
                "the read-only mount {} has another file system mounted inside it on the host ({}), which a container would \
                 leave writable; mount that folder apart, or unmount it",
                bind.vpath,
                below.display()
            )));
        }
    }
    Ok(())
}

/// Where file systems are mounted, as this process sees them (`/proc/self/mountinfo`).
fn mount_points() -> Vec<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines().filter_map(|line| line.split(' ').nth(4)).map(|p| PathBuf::from(unescape(p))).collect()
}

/// mountinfo writes space, tab, newline and backslash in octal (`\040`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            out.push(u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 4]).unwrap_or("0"), 8).unwrap_or(0));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn bind_mount(source: &Path, target: &Path, read_only: bool) -> Mount {
    Mount {
        target: Some(target.to_string_lossy().into_owned()),
        source: Some(source.to_string_lossy().into_owned()),
        typ: Some(MountType::BIND),
        read_only: Some(read_only),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Bind;

    fn plan(binds: Vec<Bind>) -> ExecPlan {
        ExecPlan {
            binds,
            read_all: false,
            protected: vec![],
            denied: vec![],
            network: warden_policy::Network::Off,
            allow_unix_sockets: false,
            max_output_bytes: 1024,
            default_cwd: PathBuf::from("/"),
        }
    }

    fn bind(host: &str, vpath: &str, writable: bool) -> Bind {
        Bind { host: host.into(), vpath: vpath.into(), writable }
    }

    #[test]
    fn mounts_appear_at_their_virtual_paths_and_a_root_folder_at_workspace() {
        let layout = Layout::new(&plan(vec![bind("/h/p", "/portfolio", true), bind("/h/q", "/pipeline", false)]), &Shield::default(), false).unwrap();
        let shown: Vec<_> = layout.mounts.iter().map(|m| (m.source.clone().unwrap(), m.target.clone().unwrap(), m.read_only.unwrap())).collect();
        assert_eq!(shown, [("/h/p".into(), "/portfolio".into(), false), ("/h/q".into(), "/pipeline".into(), true)]);
        assert_eq!(layout.inside(Path::new("/h/p/a/b")).unwrap(), Path::new("/portfolio/a/b"));
        let root = Layout::new(&plan(vec![bind("/h/r", "/", true)]), &Shield::default(), true).unwrap();
        assert_eq!(root.inside(Path::new("/h/r/x")).unwrap(), Path::new("/workspace/x"));
        // A worker of a root policy: its folder keeps its place under /workspace.
        let worker = Layout::new(&plan(vec![bind("/h/r/etc", "/etc", false)]), &Shield::default(), true).unwrap();
        assert_eq!(worker.mounts[0].target.as_deref(), Some("/workspace/etc"));
        assert!(root.inside(Path::new("/h/other")).is_err());
    }

    #[test]
    fn a_mount_cannot_cover_the_images_own_folders() {
        let err = Layout::new(&plan(vec![bind("/h/e", "/etc", true)]), &Shield::default(), false).unwrap_err();
        assert_eq!(err.to_string(), "/etc would hide the image's own /etc inside the container; rename the mount");
    }

    #[test]
    fn protected_paths_are_read_only_and_denied_ones_hidden() {
        let shield = Shield {
            hidden_files: vec!["/h/p/.env".into()],
            hidden_dirs: vec!["/h/p/secrets".into()],
            pinned: vec!["/h/p/.git".into()],
            read_only: vec!["/h/p/.git/hooks".into()],
            placeholders: vec!["/h/p/.vscode".into()],
            links: vec![],
        };
        let layout = Layout::new(&plan(vec![bind("/h/p", "/portfolio", true)]), &shield, false).unwrap();
        assert_eq!(layout.hidden_dirs, ["/portfolio/secrets"]);
        let shown: Vec<_> = layout.mounts[1..]
            .iter()
            .map(|m| (m.typ.unwrap(), m.source.clone().unwrap_or_default(), m.target.clone().unwrap(), m.read_only.unwrap()))
            .collect();
        assert_eq!(
            shown,
            [
                (MountType::BIND, "/dev/null".into(), "/portfolio/.env".into(), true),
                (MountType::BIND, "/h/p/.git".into(), "/portfolio/.git".into(), false),
                (MountType::BIND, "/h/p/.git/hooks".into(), "/portfolio/.git/hooks".into(), true),
                (MountType::BIND, "/dev/null".into(), "/portfolio/.vscode".into(), true),
            ]
        );
    }
}
