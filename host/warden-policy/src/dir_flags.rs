//! `--dir HOST[::GUEST][:ro]` flags: an inline policy for quick runs.
//!
//! The flags are turned into a policy document and validated like a file, so
//! they get the same checks (folders exist, no system folders, no overlaps).

use std::path::Path;

use crate::error::PolicyError;
use crate::model::Policy;

/// One parsed `--dir` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirFlag {
    pub host: String,
    /// `/` or `/NAME`.
    pub guest: String,
    pub writable: bool,
}

impl DirFlag {
    /// Parses `HOST[::GUEST][:ro]`. Without GUEST the folder appears as `/` + its own name.
    pub fn parse(flag: &str) -> Result<DirFlag, String> {
        let (rest, writable) = match flag.strip_suffix(":ro") {
            Some(rest) => (rest, false),
            None => (flag, true),
        };
        let (host, guest) = match rest.split_once("::") {
            Some((host, guest)) => (host, guest.to_owned()),
            None => {
                let name = Path::new(rest).file_name().map(|n| n.to_string_lossy().into_owned());
                let name = name.ok_or_else(|| format!("--dir '{flag}': name the guest path, e.g. {rest}::/data"))?;
                (rest, format!("/{name}"))
            }
        };
        if host.is_empty() {
            return Err(format!("--dir '{flag}': the host folder is missing"));
        }
        let name = guest.strip_prefix('/').ok_or_else(|| format!("--dir '{flag}': the guest path must start with '/'"))?;
        if name.contains('/') {
            return Err(format!("--dir '{flag}': the guest path must be '/' or '/NAME', one level deep"));
        }
        Ok(DirFlag { host: host.to_owned(), guest, writable })
    }
}

/// Builds and validates the policy that `flags` describe: one `--dir X::/` is
/// a root layout, otherwise each flag is a named mount.
pub fn policy_from_dir_flags(flags: &[DirFlag], network: bool) -> Result<Policy, PolicyError> {
    let origin = Path::new("--dir");
    let mount = |f: &DirFlag| {
        let host = std::path::absolute(&f.host).unwrap_or_else(|_| f.host.clone().into());
        serde_json::json!({ "root": host, "mode": if f.writable { "rw" } else { "ro" } })
    };
    let sandbox = match flags {
        [only] if only.guest == "/" => serde_json::json!({ "root": mount(only), "network": network }),
        _ => {
            if flags.iter().any(|f| f.guest == "/") {
                return Err(PolicyError::new(origin, "a folder at '/' must be the only --dir"));
            }
            let mut paths = serde_json::Map::new();
            for f in flags {
                if paths.insert(f.guest[1..].to_owned(), mount(f)).is_some() {
                    return Err(PolicyError::new(origin, format!("two --dir flags name {}", f.guest)));
                }
            }
            serde_json::json!({ "paths": paths, "network": network })
        }
    };
    let text = serde_json::json!({ "version": 1, "sandbox": sandbox }).to_string();
    crate::parse(&text, origin).map_err(|mut e| {
        e.location = None;
        e
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(host: &str, guest: &str, writable: bool) -> DirFlag {
        DirFlag { host: host.into(), guest: guest.into(), writable }
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(DirFlag::parse("data"), Ok(flag("data", "/data", true)));
        assert_eq!(DirFlag::parse("/srv/x::/"), Ok(flag("/srv/x", "/", true)));
        assert_eq!(DirFlag::parse("/srv/x::/in:ro"), Ok(flag("/srv/x", "/in", false)));
        assert_eq!(DirFlag::parse("a::in"), Err("--dir 'a::in': the guest path must start with '/'".into()));
        assert_eq!(
            DirFlag::parse("a::/x/y"),
            Err("--dir 'a::/x/y': the guest path must be '/' or '/NAME', one level deep".into())
        );
    }

    #[test]
    fn root_must_be_alone() {
        let err = policy_from_dir_flags(&[flag(".", "/", true), flag(".", "/x", true)], false).unwrap_err();
        assert_eq!(err.to_string(), "--dir: a folder at '/' must be the only --dir");
    }

    #[test]
    fn system_folders_are_refused_as_in_files() {
        let err = policy_from_dir_flags(&[flag("/etc", "/etc", false)], false).unwrap_err();
        assert!(err.to_string().starts_with("--dir: sandbox.paths.etc.root: "), "{err}");
    }
}
