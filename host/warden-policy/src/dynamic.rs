//! Dynamic expansion: which host folders a person may add to a sandbox
//! during a session. Callers pass canonical host paths; system folders and
//! places that expose the host (see `host_exposing`) are never offered.

use std::path::{Path, PathBuf};

use crate::system_dirs::{host_exposing, system_dir_of};

/// The ceiling of dynamic grants, from `dynamic:` in a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dynamic {
    /// Canonical host folders that grants must lie in, and may be widened up to.
    /// `None` (`dynamic: true`): any folder outside the system ones, granted exactly
    /// as asked for, never widened.
    pub within: Option<Vec<PathBuf>>,
}

/// System folders and places that expose the host are never offered.
fn never_granted(dir: &Path) -> bool {
    system_dir_of(dir).is_some() || host_exposing(dir).is_some()
}

impl Dynamic {
    /// The folders a person may grant for an access inside `dir` (a canonical host
    /// folder), narrowest first: `dir` and its ancestors up to the ceiling. Empty
    /// when nothing may be granted. System folders and `/` never appear.
    pub fn grantable(&self, dir: &Path) -> Vec<PathBuf> {
        if !dir.is_absolute() || never_granted(dir) {
            return Vec::new();
        }
        let Some(within) = &self.within else {
            return vec![dir.to_owned()];
        };
        // The longest ceiling holding `dir` is the one that applies: a nested
        // ceiling cannot lift another one's limit.
        let Some(ceiling) = within.iter().filter(|w| dir.starts_with(w)).max_by_key(|w| w.as_os_str().len()) else {
            return Vec::new();
        };
        dir.ancestors()
            .take_while(|a| a.starts_with(ceiling))
            .filter(|a| !never_granted(a))
            .map(Path::to_owned)
            .collect()
    }

    /// Whether `dir` may be granted at all.
    pub fn allows(&self, dir: &Path) -> bool {
        !self.grantable(dir).is_empty()
    }

    /// A worker's ceiling: `narrower` must lie inside this one. `None` asks for
    /// this ceiling as it is.
    pub fn narrowed(&self, narrower: Option<Vec<PathBuf>>) -> Result<Dynamic, String> {
        let Some(list) = narrower else {
            return Ok(self.clone());
        };
        for dir in &list {
            let inside = match &self.within {
                None => !never_granted(dir),
                Some(own) => own.iter().any(|w| dir.starts_with(w)),
            };
            if !inside {
                return Err(format!(
                    "'{}' is outside the program's dynamic ceiling ({}); a worker can only lose rights",
                    dir.display(),
                    self.describe()
                ));
            }
        }
        Ok(Dynamic { within: Some(list) })
    }

    /// The ceiling in words, for messages and `warden check`.
    pub fn describe(&self) -> String {
        match &self.within {
            None => "any folder outside the system folders, exactly as asked".to_owned(),
            Some(list) => {
                let dirs: Vec<String> = list.iter().map(|d| d.display().to_string()).collect();
                format!("folders within {}", dirs.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(dirs: &[&str]) -> Dynamic {
        Dynamic { within: Some(dirs.iter().map(PathBuf::from).collect()) }
    }

    fn paths(list: Vec<PathBuf>) -> Vec<String> {
        list.into_iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn without_a_ceiling_only_the_folder_asked_for_is_grantable() {
        let d = Dynamic { within: None };
        assert_eq!(paths(d.grantable(Path::new("/srv/data/reports"))), ["/srv/data/reports"]);
    }

    #[test]
    fn a_grant_widens_up_to_its_ceiling_and_no_further() {
        let d = within(&["/srv/data"]);
        assert_eq!(paths(d.grantable(Path::new("/srv/data/a/b"))), ["/srv/data/a/b", "/srv/data/a", "/srv/data"]);
        assert_eq!(paths(d.grantable(Path::new("/srv/data"))), ["/srv/data"]);
    }

    #[test]
    fn folders_outside_the_ceiling_are_not_grantable() {
        let d = within(&["/srv/data"]);
        assert!(d.grantable(Path::new("/srv/database")).is_empty());
        assert!(d.grantable(Path::new("/srv")).is_empty());
        assert!(d.grantable(Path::new("/home/u")).is_empty());
    }

    #[test]
    fn system_folders_and_the_root_are_never_grantable() {
        for ceiling in [Dynamic { within: None }, within(&["/"])] {
            for dir in ["/", "/etc", "/etc/ssh", "/proc/self", "/usr/lib", "/root"] {
                assert!(ceiling.grantable(Path::new(dir)).is_empty(), "{dir}");
            }
            assert!(!paths(ceiling.grantable(Path::new("/home/u/p"))).contains(&"/".to_owned()));
        }
    }

    #[test]
    fn relative_folders_are_never_grantable() {
        assert!(Dynamic { within: None }.grantable(Path::new("data")).is_empty());
    }

    #[test]
    fn the_narrowest_ceiling_holding_a_folder_applies() {
        let d = within(&["/srv", "/srv/data"]);
        assert_eq!(paths(d.grantable(Path::new("/srv/data/a"))), ["/srv/data/a", "/srv/data"]);
    }

    #[test]
    fn a_worker_ceiling_must_lie_inside_the_programs() {
        let program = within(&["/srv/data"]);
        assert_eq!(program.narrowed(None).unwrap(), program);
        assert_eq!(program.narrowed(Some(vec!["/srv/data/a".into()])).unwrap(), within(&["/srv/data/a"]));
        assert_eq!(
            program.narrowed(Some(vec!["/srv".into()])).unwrap_err(),
            "'/srv' is outside the program's dynamic ceiling (folders within /srv/data); a worker can only lose rights"
        );
        let open = Dynamic { within: None };
        assert!(open.narrowed(Some(vec!["/etc".into()])).is_err());
        assert!(open.narrowed(Some(vec!["/srv".into()])).is_ok());
    }
}
