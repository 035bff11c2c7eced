//! The environment of a sandboxed command: built from an allowlist, never inherited whole.

/// Host variables that pass when set (and no rule below refuses them).
const ALLOWED: &[&str] = &["PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "COLORTERM", "NO_COLOR"];

/// Hooks that make a program load or run code chosen by whoever sets them.
const LOADER_HOOKS: &[&str] = &[
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH",
    "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GIT_CONFIG_GLOBAL",
    "GIT_EXEC_PATH", "GIT_SSH_COMMAND", "IFS", "CDPATH",
];

/// Whether `name` may never reach a command, whatever the allowlist says.
pub fn refused(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"].iter().any(|s| upper.contains(s))
        || upper.starts_with("LD_")
        || upper.starts_with("DYLD_")
        || LOADER_HOOKS.contains(&upper.as_str())
}

/// The command's environment: allowed host variables, `LC_*`, then `extra`
/// (the policy's `env`), each passing the refusal rules; `HOME` is the working folder.
pub fn build(host: impl Iterator<Item = (String, String)>, extra: &[(String, String)], home: &str) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = host
        .filter(|(k, _)| ALLOWED.contains(&k.as_str()) || k.starts_with("LC_"))
        .chain(extra.iter().cloned())
        .filter(|(k, _)| !refused(k))
        .collect();
    env.retain(|(k, _)| k != "HOME");
    env.push(("HOME".into(), home.into()));
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn secrets_and_loader_hooks_never_pass() {
        let host = pairs(&[("PATH", "/bin"), ("AWS_SECRET_ACCESS_KEY", "x"), ("LD_PRELOAD", "/x.so"), ("HOME", "/root"), ("LC_ALL", "C")]);
        let extra = pairs(&[("GITHUB_TOKEN", "t"), ("NODE_OPTIONS", "--require x"), ("MODE", "ci")]);
        assert_eq!(build(host.into_iter(), &extra, "/work"), pairs(&[("PATH", "/bin"), ("LC_ALL", "C"), ("MODE", "ci"), ("HOME", "/work")]));
    }

    #[test]
    fn refusal_ignores_case() {
        assert!(refused("api_key") && refused("ld_library_path") && refused("PythonStartup"));
        assert!(!refused("EDITOR"));
    }
}
