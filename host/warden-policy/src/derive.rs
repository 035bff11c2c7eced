//! Deriving a child's access from its parent's: the one place this rule lives.
//!
//! Pure and lexical: the filesystem crate maps file entries to their folders
//! before calling [`plan_derive`], then opens handles for the planned areas.

use std::fmt;

use crate::vpath::{Namespace, PathError, VPath};

/// A part of the virtual namespace a sandbox may read, and maybe write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Area {
    pub path: VPath,
    pub writable: bool,
}

/// What a child asks of its parent, as in the hierarchical-sandbox design.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeriveRequest {
    /// Folders (or files, meaning their folder) the child may read.
    pub allow_read: Vec<String>,
    /// Folders (or files, meaning their folder) the child may read and write.
    pub allow_write: Vec<String>,
    /// `Some(true)` drops every write; `Some(false)` insists on writes.
    pub readonly: Option<bool>,
    /// Start from the parent's whole access instead of nothing.
    pub inherit: bool,
}

/// Which list of a [`DeriveRequest`] an entry came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryList {
    AllowRead,
    AllowWrite,
}

impl fmt::Display for EntryList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EntryList::AllowRead => "allow_read",
            EntryList::AllowWrite => "allow_write",
        })
    }
}

/// A child asked for more than its parent holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPermissionEscalationError {
    /// What was asked, e.g. "write access to '/pipeline'".
    pub request: String,
    /// The parent's boundary, e.g. "the parent sandbox can write only to: /portfolio".
    pub parent_boundary: String,
    /// A request that would be valid instead.
    pub alternative: String,
}

impl fmt::Display for SandboxPermissionEscalationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SandboxPermissionEscalationError: cannot grant {}: {}. {}",
            self.request, self.parent_boundary, self.alternative
        )
    }
}

impl std::error::Error for SandboxPermissionEscalationError {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeriveError {
    Escalation {
        list: Option<(EntryList, usize)>,
        error: SandboxPermissionEscalationError,
    },
    InvalidEntry {
        list: EntryList,
        index: usize,
        input: String,
        reason: PathError,
    },
    ReadonlyWithWrites,
}

impl DeriveError {
    /// The request field at fault, e.g. `allow_write[0]`.
    pub fn field(&self) -> String {
        match self {
            DeriveError::Escalation { list: Some((list, i)), .. }
            | DeriveError::InvalidEntry { list, index: i, .. } => format!("{list}[{i}]"),
            DeriveError::Escalation { list: None, .. } | DeriveError::ReadonlyWithWrites => {
                "readonly".to_owned()
            }
        }
    }
}

impl fmt::Display for DeriveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeriveError::Escalation { error, .. } => error.fmt(f),
            DeriveError::InvalidEntry { input, reason, .. } => {
                write!(f, "'{}' is not a valid sandbox path: {reason}", input.escape_debug())
            }
            DeriveError::ReadonlyWithWrites => {
                f.write_str("readonly: true contradicts a non-empty allow_write; drop one of them")
            }
        }
    }
}

impl std::error::Error for DeriveError {}

/// Parses the request's entries; `to_folder` maps an entry naming a file to its folder.
pub fn plan_derive(
    parent: &[Area],
    namespace: Namespace<'_>,
    request: &DeriveRequest,
    mut to_folder: impl FnMut(&VPath) -> VPath,
) -> Result<Vec<Area>, DeriveError> {
    if request.readonly == Some(true) && !request.allow_write.is_empty() {
        return Err(DeriveError::ReadonlyWithWrites);
    }
    let writable_roots = list_paths(parent.iter().filter(|a| a.writable));
    if request.readonly == Some(false) && writable_roots == "none" {
        return Err(DeriveError::Escalation {
            list: None,
            error: SandboxPermissionEscalationError {
                request: "readonly: false".to_owned(),
                parent_boundary: "the parent sandbox is read-only (writable paths: none)".to_owned(),
                alternative: "Use readonly: true, or leave readonly out.".to_owned(),
            },
        });
    }

    let mut areas: Vec<Area> = Vec::new();
    if request.inherit {
        let drop_writes = request.readonly == Some(true);
        areas.extend(parent.iter().map(|a| Area {
            path: a.path.clone(),
            writable: a.writable && !drop_writes,
        }));
    }
    for (list, entries, writable) in [
        (EntryList::AllowWrite, &request.allow_write, true),
        (EntryList::AllowRead, &request.allow_read, false),
    ] {
        for (index, input) in entries.iter().enumerate() {
            let path = VPath::parse(input, namespace).map_err(|reason| DeriveError::InvalidEntry {
                list,
                index,
                input: input.clone(),
                reason,
            })?;
            let path = to_folder(&path);
            let granted = parent
                .iter()
                .any(|a| path.starts_with(&a.path) && (a.writable || !writable));
            if !granted {
                return Err(DeriveError::Escalation {
                    list: Some((list, index)),
                    error: escalation(parent, &path, writable, &writable_roots),
                });
            }
            areas.push(Area { path, writable });
        }
    }
    Ok(prune_covered(areas))
}

fn escalation(parent: &[Area], path: &VPath, write: bool, writable_roots: &str) -> SandboxPermissionEscalationError {
    let readable = parent.iter().any(|a| path.starts_with(&a.path));
    if write {
        let alternative = match (writable_roots, readable) {
            ("none", true) => format!("Request read access instead: allow_read: [{path}]."),
            ("none", false) => "The parent sandbox is read-only: request read access with allow_read.".to_owned(),
            (_, true) => format!(
                "Request write access inside {writable_roots}, or read access with allow_read: [{path}]."
            ),
            (_, false) => format!("Request write access inside {writable_roots}."),
        };
        SandboxPermissionEscalationError {
            request: format!("write access to '{path}'"),
            parent_boundary: format!("the parent sandbox can write only to: {writable_roots}"),
            alternative,
        }
    } else {
        let readable_roots = list_paths(parent.iter());
        SandboxPermissionEscalationError {
            request: format!("read access to '{path}'"),
            parent_boundary: format!("the parent sandbox can read only: {readable_roots}"),
            alternative: format!("Request a path inside {readable_roots}."),
        }
    }
}

/// Comma-separated area paths, or `none`.
pub fn list_paths<'a>(areas: impl Iterator<Item = &'a Area>) -> String {
    let paths: Vec<&str> = areas.map(|a| a.path.as_str()).collect();
    if paths.is_empty() {
        "none".to_owned()
    } else {
        paths.join(", ")
    }
}

/// Drops areas that another area already grants, keeping order otherwise.
fn prune_covered(areas: Vec<Area>) -> Vec<Area> {
    let mut kept: Vec<Area> = Vec::new();
    for (i, area) in areas.iter().enumerate() {
        let covered = areas.iter().enumerate().any(|(j, other)| {
            let grants = area.path.starts_with(&other.path) && (other.writable || !area.writable);
            let identical = other == area;
            grants && (!identical || j < i)
        });
        if !covered {
            kept.push(area.clone());
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["portfolio".into(), "pipeline".into()]
    }

    fn area(path: &str, writable: bool) -> Area {
        Area { path: VPath::parse(path, Namespace::Root).unwrap(), writable }
    }

    fn parent() -> Vec<Area> {
        vec![area("/portfolio", true), area("/pipeline", false)]
    }

    fn plan(request: DeriveRequest) -> Result<Vec<Area>, DeriveError> {
        let names = names();
        plan_derive(&parent(), Namespace::Named(&names), &request, |p| p.clone())
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn no_arguments_give_an_empty_child() {
        assert_eq!(plan(DeriveRequest::default()).unwrap(), vec![]);
    }

    #[test]
    fn allow_read_alone_gives_no_writes() {
        let got = plan(DeriveRequest { allow_read: strings(&["/portfolio/reports"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![area("/portfolio/reports", false)]);
    }

    #[test]
    fn allow_write_implies_read() {
        let got = plan(DeriveRequest { allow_write: strings(&["portfolio:drafts"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![area("/portfolio/drafts", true)]);
    }

    #[test]
    fn inherit_starts_from_the_parent() {
        let got = plan(DeriveRequest { inherit: true, ..Default::default() });
        assert_eq!(got.unwrap(), parent());
    }

    #[test]
    fn inherit_readonly_drops_every_write() {
        let got = plan(DeriveRequest { inherit: true, readonly: Some(true), ..Default::default() });
        assert_eq!(got.unwrap(), vec![area("/portfolio", false), area("/pipeline", false)]);
    }

    #[test]
    fn covered_entries_are_pruned() {
        let got = plan(DeriveRequest {
            inherit: true,
            allow_write: strings(&["/portfolio/drafts"]),
            allow_read: strings(&["/pipeline/x", "/pipeline/x"]),
            ..Default::default()
        });
        assert_eq!(got.unwrap(), parent());
    }

    #[test]
    fn write_to_a_read_only_mount_is_an_escalation() {
        let err = plan(DeriveRequest { allow_write: strings(&["/pipeline"]), ..Default::default() }).unwrap_err();
        assert_eq!(err.field(), "allow_write[0]");
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant write access to '/pipeline': the parent \
             sandbox can write only to: /portfolio. Request write access inside /portfolio, or read \
             access with allow_read: [/pipeline]."
        );
    }

    #[test]
    fn read_outside_the_parent_is_an_escalation() {
        let err = plan(DeriveRequest { allow_read: strings(&["/etc"]), ..Default::default() }).unwrap_err();
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant read access to '/etc': the parent sandbox \
             can read only: /portfolio, /pipeline. Request a path inside /portfolio, /pipeline."
        );
    }

    #[test]
    fn readonly_false_on_a_read_only_parent_is_an_escalation() {
        let names = names();
        let ro_parent = vec![area("/pipeline", false)];
        let request = DeriveRequest { readonly: Some(false), inherit: true, ..Default::default() };
        let err = plan_derive(&ro_parent, Namespace::Named(&names), &request, |p| p.clone()).unwrap_err();
        assert_eq!(err.field(), "readonly");
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant readonly: false: the parent sandbox is \
             read-only (writable paths: none). Use readonly: true, or leave readonly out."
        );
    }

    #[test]
    fn readonly_with_writes_is_contradictory() {
        let request = DeriveRequest { readonly: Some(true), allow_write: strings(&["/portfolio"]), ..Default::default() };
        assert_eq!(plan(request).unwrap_err(), DeriveError::ReadonlyWithWrites);
    }

    #[test]
    fn entries_are_mapped_to_their_folder() {
        let names = names();
        let request = DeriveRequest { allow_read: strings(&["/portfolio/a/x.md"]), ..Default::default() };
        let got = plan_derive(&parent(), Namespace::Named(&names), &request, |p| p.parent()).unwrap();
        assert_eq!(got, vec![area("/portfolio/a", false)]);
    }

    #[test]
    fn invalid_entry_names_its_field() {
        let err = plan(DeriveRequest { allow_read: strings(&["ok", "~/x"]), ..Default::default() });
        let err = err.unwrap_err();
        assert!(matches!(err, DeriveError::Escalation { .. }), "{err:?}");
        let err = plan(DeriveRequest { allow_read: strings(&["~/x"]), ..Default::default() }).unwrap_err();
        assert_eq!(err.field(), "allow_read[0]");
        assert_eq!(err.to_string(), "'~/x' is not a valid sandbox path: '~' paths are not available in this sandbox");
    }
}
