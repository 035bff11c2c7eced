//! Deriving a child's access from its parent's: the one place this rule lives.
//!
//! The rules, those of the hierarchical-sandbox design the policy language follows:
//! - Nothing given: the child sees nothing. `inherit: true` alone: the parent's
//!   access, without its writes when `readonly: true`.
//! - `allow_write` alone: read and write there (`allow_read` defaults to it).
//! - `allow_read` alone: read there, write nowhere.
//! - Both: read where `allow_read` says and write where `allow_write` says, so a
//!   folder named only in `allow_write` is write-only.
//! - Every entry must lie inside the parent's access of its kind, so with a list
//!   given `inherit` changes nothing: parent ∩ list is the list.
//!
//! Lexical here; the caller looks each entry up on the host (through the parent's
//! handles) with the `lookup` it passes to [`plan_derive`].

use std::fmt;

use crate::vpath::{Namespace, PathError, VPath};

/// Reading or writing: what an area grants and what a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// A part of the virtual namespace and what a sandbox may do there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Area {
    pub path: VPath,
    pub readable: bool,
    pub writable: bool,
}

impl Area {
    pub fn allows(&self, access: Access) -> bool {
        match access {
            Access::Read => self.readable,
            Access::Write => self.writable,
        }
    }

    /// Whether `path` lies in this area and the area allows `access`.
    pub fn grants(&self, path: &VPath, access: Access) -> bool {
        self.allows(access) && path.starts_with(&self.path)
    }
}

/// What a child asks of its parent. `None` for a list means it was not given,
/// which is not the same as an empty list (see the module's rules).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeriveRequest {
    /// Folders (or files, meaning their folder) the child may read.
    pub allow_read: Option<Vec<String>>,
    /// Folders (or files, meaning their folder) the child may write.
    pub allow_write: Option<Vec<String>>,
    /// `Some(true)` drops every write; `Some(false)` insists that the parent can write.
    pub readonly: Option<bool>,
    /// With no list given, start from the parent's whole access instead of nothing.
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

/// What the host found when it looked an entry up through the parent's handles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryLookup {
    /// The folder the entry grants: the entry itself, or a file's folder.
    Grants(VPath),
    /// Following the entry (a symlink on the way) leaves the parent's area.
    LeadsOut,
    Missing,
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
    MissingEntry {
        list: EntryList,
        index: usize,
        path: VPath,
    },
    ReadonlyWithWrites,
}

impl DeriveError {
    /// The request field at fault, e.g. `allow_write[0]`.
    pub fn field(&self) -> String {
        match self {
            DeriveError::Escalation { list: Some((list, i)), .. }
            | DeriveError::InvalidEntry { list, index: i, .. }
            | DeriveError::MissingEntry { list, index: i, .. } => format!("{list}[{i}]"),
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
            DeriveError::MissingEntry { path, .. } => write!(
                f,
                "'{path}' does not exist or cannot be opened; every allow_read and allow_write entry must name an existing \
                 folder or file when the sandbox is derived (create it first)"
            ),
            DeriveError::ReadonlyWithWrites => {
                f.write_str("readonly: true contradicts a non-empty allow_write; drop one of them")
            }
        }
    }
}

impl std::error::Error for DeriveError {}

/// The child's areas. `lookup` tells what an entry is on the host, looked up
/// through the parent's handles that allow the access asked for.
pub fn plan_derive(
    parent: &[Area],
    namespace: Namespace<'_>,
    request: &DeriveRequest,
    mut lookup: impl FnMut(&VPath, Access) -> EntryLookup,
) -> Result<Vec<Area>, DeriveError> {
    let drop_writes = request.readonly == Some(true);
    if drop_writes && request.allow_write.as_ref().is_some_and(|w| !w.is_empty()) {
        return Err(DeriveError::ReadonlyWithWrites);
    }
    if request.readonly == Some(false) && !parent.iter().any(|a| a.writable) {
        return Err(DeriveError::Escalation {
            list: None,
            error: SandboxPermissionEscalationError {
                request: "readonly: false".to_owned(),
                parent_boundary: "the parent sandbox is read-only (writable paths: none)".to_owned(),
                alternative: "Use readonly: true, or leave readonly out.".to_owned(),
            },
        });
    }
    let mut entries = |list: EntryList, inputs: &[String], access: Access| {
        inputs
            .iter()
            .enumerate()
            .map(|(index, input)| entry(parent, namespace, &mut lookup, (list, index), input, access))
            .collect::<Result<Vec<VPath>, DeriveError>>()
    };
    let (reads, writes) = match (&request.allow_read, &request.allow_write) {
        (None, None) if request.inherit => {
            let paths = |access| parent.iter().filter(|a| a.allows(access)).map(|a| a.path.clone()).collect();
            let writes = if drop_writes { Vec::new() } else { paths(Access::Write) };
            (paths(Access::Read), writes)
        }
        (None, None) => (Vec::new(), Vec::new()),
        (None, Some(w)) => {
            let writes = entries(EntryList::AllowWrite, w, Access::Write)?;
            (entries(EntryList::AllowWrite, w, Access::Read)?, writes)
        }
        (Some(r), None) => (entries(EntryList::AllowRead, r, Access::Read)?, Vec::new()),
        (Some(r), Some(w)) => {
            let writes = entries(EntryList::AllowWrite, w, Access::Write)?;
            (entries(EntryList::AllowRead, r, Access::Read)?, writes)
        }
    };
    Ok(areas_of(&reads, &writes))
}

/// One entry: parsed, inside the parent's access, and looked up on the host.
fn entry(
    parent: &[Area],
    namespace: Namespace<'_>,
    lookup: &mut impl FnMut(&VPath, Access) -> EntryLookup,
    (list, index): (EntryList, usize),
    input: &str,
    access: Access,
) -> Result<VPath, DeriveError> {
    let path = VPath::parse(input, namespace).map_err(|reason| DeriveError::InvalidEntry {
        list,
        index,
        input: input.to_owned(),
        reason,
    })?;
    let escalation = |error| DeriveError::Escalation { list: Some((list, index)), error };
    if !parent.iter().any(|a| a.grants(&path, access)) {
        return Err(escalation(beyond_parent(parent, &path, access)));
    }
    match lookup(&path, access) {
        EntryLookup::Grants(folder) => Ok(folder),
        EntryLookup::LeadsOut => Err(escalation(leads_out(parent, &path, access))),
        EntryLookup::Missing => Err(DeriveError::MissingEntry { list, index, path }),
    }
}

/// One area per folder named, with the rights every entry above it gives;
/// a folder whose rights an enclosing one already gives is left out.
fn areas_of(reads: &[VPath], writes: &[VPath]) -> Vec<Area> {
    let under = |path: &VPath, list: &[VPath]| list.iter().any(|p| path.starts_with(p));
    let mut areas: Vec<Area> = Vec::new();
    for path in reads.iter().chain(writes) {
        if !areas.iter().any(|a| a.path == *path) {
            areas.push(Area { path: path.clone(), readable: under(path, reads), writable: under(path, writes) });
        }
    }
    let redundant = |area: &Area| {
        areas.iter().any(|outer| {
            outer.path != area.path
                && area.path.starts_with(&outer.path)
                && (outer.readable, outer.writable) == (area.readable, area.writable)
        })
    };
    areas.iter().filter(|a| !redundant(a)).cloned().collect()
}

fn beyond_parent(parent: &[Area], path: &VPath, access: Access) -> SandboxPermissionEscalationError {
    let writable_roots = list_paths(parent.iter().filter(|a| a.writable));
    let readable_roots = list_paths(parent.iter().filter(|a| a.readable));
    match access {
        Access::Write => {
            let readable = parent.iter().any(|a| a.grants(path, Access::Read));
            let alternative = match (writable_roots.as_str(), readable) {
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
        }
        Access::Read => SandboxPermissionEscalationError {
            request: format!("read access to '{path}'"),
            parent_boundary: format!("the parent sandbox can read only: {readable_roots}"),
            alternative: if readable_roots == "none" {
                "The parent sandbox can read nothing: request no reads.".to_owned()
            } else {
                format!("Request a path inside {readable_roots}.")
            },
        },
    }
}

fn leads_out(parent: &[Area], path: &VPath, access: Access) -> SandboxPermissionEscalationError {
    let roots = list_paths(parent.iter().filter(|a| a.allows(access)));
    SandboxPermissionEscalationError {
        request: format!("{} access to '{path}'", access.as_str()),
        parent_boundary: "it leads out of the parent sandbox through a symbolic link".to_owned(),
        alternative: format!("Request a folder that lies inside {roots} itself."),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["portfolio".into(), "pipeline".into()]
    }

    fn p(path: &str) -> VPath {
        VPath::parse(path, Namespace::Root).unwrap()
    }

    fn rw(path: &str) -> Area {
        Area { path: p(path), readable: true, writable: true }
    }

    fn ro(path: &str) -> Area {
        Area { path: p(path), readable: true, writable: false }
    }

    fn wo(path: &str) -> Area {
        Area { path: p(path), readable: false, writable: true }
    }

    fn parent() -> Vec<Area> {
        vec![rw("/portfolio"), ro("/pipeline")]
    }

    fn plan_in(parent: &[Area], request: DeriveRequest) -> Result<Vec<Area>, DeriveError> {
        let names = names();
        plan_derive(parent, Namespace::Named(&names), &request, |p, _| EntryLookup::Grants(p.clone()))
    }

    fn plan(request: DeriveRequest) -> Result<Vec<Area>, DeriveError> {
        plan_in(&parent(), request)
    }

    fn list(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn no_arguments_give_an_empty_child() {
        assert_eq!(plan(DeriveRequest::default()).unwrap(), vec![]);
    }

    #[test]
    fn allow_read_alone_gives_no_writes() {
        let got = plan(DeriveRequest { allow_read: list(&["/portfolio/reports"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![ro("/portfolio/reports")]);
    }

    #[test]
    fn allow_write_alone_implies_read() {
        let got = plan(DeriveRequest { allow_write: list(&["portfolio:drafts"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![rw("/portfolio/drafts")]);
    }

    #[test]
    fn inherit_alone_starts_from_the_parent() {
        let got = plan(DeriveRequest { inherit: true, ..Default::default() });
        assert_eq!(got.unwrap(), parent());
    }

    #[test]
    fn inherit_readonly_drops_every_write() {
        let got = plan(DeriveRequest { inherit: true, readonly: Some(true), ..Default::default() });
        assert_eq!(got.unwrap(), vec![ro("/portfolio"), ro("/pipeline")]);
    }

    #[test]
    fn inherit_with_allow_write_is_narrowed_to_the_list() {
        let got = plan(DeriveRequest { inherit: true, allow_write: list(&["/portfolio/drafts"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![rw("/portfolio/drafts")]);
    }

    #[test]
    fn inherit_with_allow_read_is_narrowed_to_the_list_without_writes() {
        let got = plan(DeriveRequest { inherit: true, allow_read: list(&["/pipeline"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![ro("/pipeline")]);
    }

    #[test]
    fn inherit_with_an_empty_list_gives_nothing() {
        let got = plan(DeriveRequest { inherit: true, allow_read: Some(vec![]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![]);
    }

    #[test]
    fn both_lists_read_only_where_allow_read_says() {
        let got = plan(DeriveRequest {
            allow_read: list(&["/portfolio/reports"]),
            allow_write: list(&["/portfolio/drafts"]),
            ..Default::default()
        });
        assert_eq!(got.unwrap(), vec![ro("/portfolio/reports"), wo("/portfolio/drafts")]);
    }

    #[test]
    fn a_folder_gets_the_rights_of_every_entry_above_it() {
        let got = plan(DeriveRequest {
            allow_read: list(&["/portfolio"]),
            allow_write: list(&["/portfolio/drafts", "/portfolio/drafts/x", "/portfolio/drafts"]),
            ..Default::default()
        });
        assert_eq!(got.unwrap(), vec![ro("/portfolio"), rw("/portfolio/drafts")]);
    }

    #[test]
    fn a_read_entry_inside_a_write_only_parent_area_is_an_escalation() {
        let parent = vec![ro("/portfolio/reports"), wo("/portfolio/drafts")];
        let err = plan_in(&parent, DeriveRequest { allow_write: list(&["/portfolio/drafts/a"]), ..Default::default() })
            .unwrap_err();
        assert_eq!(err.field(), "allow_write[0]");
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant read access to '/portfolio/drafts/a': the parent \
             sandbox can read only: /portfolio/reports. Request a path inside /portfolio/reports."
        );
        let got = plan_in(
            &parent,
            DeriveRequest { allow_read: Some(vec![]), allow_write: list(&["/portfolio/drafts/a"]), ..Default::default() },
        );
        assert_eq!(got.unwrap(), vec![wo("/portfolio/drafts/a")]);
    }

    #[test]
    fn write_to_a_read_only_mount_is_an_escalation() {
        let err = plan(DeriveRequest { allow_write: list(&["/pipeline"]), ..Default::default() }).unwrap_err();
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
        let err = plan(DeriveRequest { allow_read: list(&["/etc"]), ..Default::default() }).unwrap_err();
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant read access to '/etc': the parent sandbox \
             can read only: /portfolio, /pipeline. Request a path inside /portfolio, /pipeline."
        );
    }

    #[test]
    fn readonly_false_on_a_read_only_parent_is_an_escalation() {
        let request = DeriveRequest { readonly: Some(false), inherit: true, ..Default::default() };
        let err = plan_in(&[ro("/pipeline")], request).unwrap_err();
        assert_eq!(err.field(), "readonly");
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant readonly: false: the parent sandbox is \
             read-only (writable paths: none). Use readonly: true, or leave readonly out."
        );
    }

    #[test]
    fn readonly_with_writes_is_contradictory() {
        let request = DeriveRequest { readonly: Some(true), allow_write: list(&["/portfolio"]), ..Default::default() };
        assert_eq!(plan(request).unwrap_err(), DeriveError::ReadonlyWithWrites);
        let request = DeriveRequest { readonly: Some(true), allow_write: Some(vec![]), ..Default::default() };
        assert_eq!(plan(request).unwrap(), vec![]);
    }

    #[test]
    fn entries_are_what_the_lookup_says() {
        let names = names();
        let request = DeriveRequest { allow_read: list(&["/portfolio/a/x.md"]), ..Default::default() };
        let got = plan_derive(&parent(), Namespace::Named(&names), &request, |p, _| EntryLookup::Grants(p.parent()));
        assert_eq!(got.unwrap(), vec![ro("/portfolio/a")]);
    }

    #[test]
    fn an_entry_leading_out_is_an_escalation_even_when_another_entry_covers_it() {
        let names = names();
        let request = DeriveRequest { allow_read: list(&["/portfolio", "/portfolio/out.md"]), ..Default::default() };
        let lookup = |p: &VPath, _| match p.as_str() {
            "/portfolio/out.md" => EntryLookup::LeadsOut,
            _ => EntryLookup::Grants(p.clone()),
        };
        let err = plan_derive(&parent(), Namespace::Named(&names), &request, lookup).unwrap_err();
        assert_eq!(err.field(), "allow_read[1]");
        assert_eq!(
            err.to_string(),
            "SandboxPermissionEscalationError: cannot grant read access to '/portfolio/out.md': it leads out \
             of the parent sandbox through a symbolic link. Request a folder that lies inside /portfolio, \
             /pipeline itself."
        );
    }

    #[test]
    fn a_missing_entry_names_its_field() {
        let names = names();
        let request = DeriveRequest { allow_write: list(&["/portfolio/new"]), ..Default::default() };
        let err = plan_derive(&parent(), Namespace::Named(&names), &request, |_, _| EntryLookup::Missing).unwrap_err();
        assert_eq!(err.field(), "allow_write[0]");
        assert!(err.to_string().starts_with("'/portfolio/new' does not exist or cannot be opened;"), "{err}");
    }

    #[test]
    fn entries_lose_surrounding_whitespace() {
        let got = plan(DeriveRequest { allow_read: list(&[" /portfolio/reports \n"]), ..Default::default() });
        assert_eq!(got.unwrap(), vec![ro("/portfolio/reports")]);
    }

    #[test]
    fn invalid_entry_names_its_field() {
        let err = plan(DeriveRequest { allow_read: list(&["ok", "~/x"]), ..Default::default() });
        let err = err.unwrap_err();
        assert!(matches!(err, DeriveError::Escalation { .. }), "{err:?}");
        let err = plan(DeriveRequest { allow_read: list(&["~/x"]), ..Default::default() }).unwrap_err();
        assert_eq!(err.field(), "allow_read[0]");
        assert_eq!(err.to_string(), "'~/x' is not a valid sandbox path: '~' paths are not available in this sandbox");
    }
}
