//! Host folders that may never be mounted: the OS itself, other users' homes,
//! and the places that hold what gives the host away (service and agent
//! sockets, the user's whole home, Warden's own folder).

use std::path::{Path, PathBuf};

const SYSTEM_DIRS: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/boot", "/dev", "/proc", "/sys", "/root", "/var",
    "/lib", "/lib32", "/lib64", "/libx32",
    // macOS spells /etc and /var through /private.
    "/private/etc", "/private/var",
];

/// Scratch areas under /var that are fine to mount.
const EXCEPTIONS: &[&str] = &["/var/tmp", "/var/folders", "/private/var/tmp", "/private/var/folders"];

/// The system folder `path` is or lies in, if any. `/` itself counts.
pub fn system_dir_of(path: &Path) -> Option<PathBuf> {
    if path == Path::new("/") {
        return Some(PathBuf::from("/"));
    }
    if EXCEPTIONS.iter().any(|e| path.starts_with(e)) {
        return None;
    }
    SYSTEM_DIRS
        .iter()
        .find(|dir| path.starts_with(dir))
        .map(PathBuf::from)
}

/// Why `path` would expose the host if mounted, in words that end a sentence
/// beginning "'ROOT' is ...": a folder where sockets of services and agents
/// live (a mounted `docker.sock` is the host), a folder every user shares, a
/// whole home, Warden's own folder, or its compile cache (native code it
/// runs). `None` when it is none of those.
pub fn host_exposing(path: &Path) -> Option<String> {
    let runtime = |dir: &Path| path.starts_with(dir) || dir.starts_with(path);
    for run in ["/run", "/var/run"] {
        if path.starts_with(run) {
            return Some(format!("in {run}, where services keep their sockets (a container engine's socket gives the host away)"));
        }
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_absolute())
        && runtime(&dir)
    {
        return Some(format!("{} your runtime folder {}, where agent, engine and session sockets live", where_(path, &dir), dir.display()));
    }
    let own = warden_folder();
    if runtime(&own) {
        return Some(format!("{} Warden's own folder {} (its tokens and sockets)", where_(path, &own), own.display()));
    }
    for shared in ["/tmp", "/private/tmp", "/var/tmp", "/home", "/Users"] {
        if path == Path::new(shared) {
            return Some(format!("{shared} itself, which every user and program shares (mount a folder inside it)"));
        }
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute() && h != Path::new("/"))
        && path == home
    {
        return Some(format!("your whole home folder {} (keys, credentials, agent sockets; mount a project folder inside it)", home.display()));
    }
    // A tool that could write there would plant native code Warden runs.
    if let Some(cache) = compile_cache_folder().filter(|d| d.is_absolute()) {
        let resolved = cache.canonicalize().unwrap_or_else(|_| cache.clone());
        if let Some(dir) = [&cache, &resolved].into_iter().find(|dir| runtime(dir)) {
            return Some(format!(
                "{} Warden's compile cache {} (native code Warden itself loads and runs)",
                where_(path, dir),
                dir.display()
            ));
        }
    }
    None
}

fn where_(path: &Path, dir: &Path) -> &'static str {
    if path.starts_with(dir) { "inside" } else { "a folder that holds" }
}

/// Where Warden keeps compiled components and pulled ones:
/// `$WARDEN_CACHE_DIR`, else `$XDG_CACHE_HOME/warden`, else `~/.cache/warden`.
pub fn compile_cache_folder() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WARDEN_CACHE_DIR") {
        return Some(dir.into());
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("warden"))
}

/// The folder that holds Warden's own files (the MCP server's token, the
/// container runner's program, the podman service's socket): private to this
/// user. Only its place; whoever writes there makes it (see warden-shell).
pub fn warden_folder() -> PathBuf {
    let euid = rustix::process::geteuid();
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_absolute()) {
        Some(dir) => dir.join("warden"),
        None if euid.is_root() => PathBuf::from("/run/warden"),
        None => PathBuf::from(format!("/tmp/warden-{}", euid.as_raw())),
    }
}

/// [`warden_folder`], made private if new, and refused unless it is this
/// user's own and nobody else's to write (in /tmp another user could have made
/// it first, to plant a socket or read a token).
pub fn private_folder() -> Result<PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let folder = warden_folder();
    match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", folder.display())),
    }
    let meta = std::fs::symlink_metadata(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o077 != 0 {
        return Err(format!("{} is not a private folder of this user; remove it and try again", folder.display()));
    }
    Ok(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_system_dirs_are_refused() {
        for p in ["/", "/etc", "/etc/ssh", "/usr/lib", "/var", "/var/lib/x", "/proc/self", "/root"] {
            assert!(system_dir_of(Path::new(p)).is_some(), "{p}");
        }
    }

    #[test]
    fn scratch_and_user_dirs_are_allowed() {
        for p in ["/var/tmp", "/var/tmp/x", "/var/folders/ab", "/tmp/x", "/home/u/p", "/etcetera", "/variable"] {
            assert_eq!(system_dir_of(Path::new(p)), None, "{p}");
        }
    }

    #[test]
    fn places_that_expose_the_host_are_refused_and_folders_inside_shared_ones_are_not() {
        for p in ["/run", "/run/user/1000", "/run/docker.sock", "/var/run", "/tmp", "/home", "/var/tmp"] {
            assert!(host_exposing(Path::new(p)).is_some(), "{p}");
        }
        for p in ["/tmp/project", "/home/u/project", "/srv/data", "/var/tmp/x", "/running"] {
            assert_eq!(host_exposing(Path::new(p)), None, "{p}");
        }
        let own = warden_folder();
        assert!(host_exposing(&own).is_some());
        assert!(host_exposing(&own.join("x")).is_some());
    }
}
