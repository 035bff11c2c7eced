//! From a Warden sandbox to the guest's preopens: the mounts' own handles.

use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::{FsPerms, OpenMode};
use warden_fs::Sandbox;

use crate::error::RunError;
use crate::fs_guard::{GuardedPreopen, SandboxLists};

/// One preopen per mount, each a duplicate of the mount's handle. Refuses a
/// sandbox with a rule this runtime cannot enforce (fail closed): approvals
/// are applied by an approval session, whose sandbox in effect has none left;
/// a write-only folder has no WASI form (a preopen that can write can read).
pub fn preopens_for(sandbox: &Sandbox) -> Result<(Vec<GuardedPreopen>, SandboxLists), RunError> {
    let mut preopens = Vec::with_capacity(sandbox.mounts().len());
    for mount in sandbox.mounts() {
        let rules = &mount.rules;
        if rules.read_approval || rules.write_approval {
            let what = if rules.read_approval { "reads" } else { "writes" };
            return Err(RunError::Unenforceable(format!(
                "Cannot run a component in this sandbox: {} needs a person's approval for {what}. \
                 Give the component the sandbox in effect of an approval session instead.",
                mount.path
            )));
        }
        if !rules.readable {
            return Err(RunError::Unenforceable(format!(
                "Cannot run a component in this sandbox: {} is write-only, and a component's files \
                 cannot be written without being readable. Give the worker read access there too.",
                mount.path
            )));
        }
        let handle = mount.dir().try_clone().map_err(|e| RunError::Instantiate(format!("{}: {e}", mount.path)))?;
        let (perms, mode) = if rules.writable {
            (FsPerms::ReadWrite, OpenMode::READ | OpenMode::WRITE)
        } else {
            (FsPerms::ReadOnly, OpenMode::READ)
        };
        preopens.push(GuardedPreopen {
            guest_path: mount.path.to_string(),
            dir: Dir::new(handle.into_std_file(), perms, mode, true),
            rules: rules.clone(),
        });
    }
    let lists = SandboxLists { readable: sandbox.readable_list(), writable: sandbox.writable_list() };
    Ok((preopens, lists))
}
