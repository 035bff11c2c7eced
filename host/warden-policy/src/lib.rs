//! Warden policy files: parsing, validation and the JSON Schema.
//!
//! This crate knows nothing of cap-std or wasmtime. Besides the file format it
//! holds the two pure pieces of the rules language that every runtime shares:
//! virtual paths ([`VPath`]) and derivation ([`plan_derive`]).

mod command_rules;
mod derive;
mod dir_flags;
mod dynamic;
mod document;
mod error;
mod limits;
mod model;
mod mounted;
mod network;
pub mod oci;
mod private_files;
mod system_dirs;
mod validate;
mod vpath;

use std::path::Path;

pub use command_rules::{CommandGrant, CommandRules, Granted};
pub use derive::{
    list_paths, plan_derive, Access, Area, DeriveError, DeriveRequest, EntryList, EntryLookup,
    SandboxPermissionEscalationError,
};
pub use dir_flags::{policy_from_dir_flags, DirFlag};
pub use dynamic::Dynamic;
pub use document::{AskVia, EngineChoice, PolicyDocument};
pub use error::PolicyError;
pub use limits::{parse_duration, parse_size, Limits, LimitsSpec};
pub use mounted::{policy_of_mounts, MountPoint};
pub use model::{ComponentSource, OsBackend, ContainerSettings, ContainerUser, Layout, McpSettings, Mount, Policy, Rules, Shell, ToolDecl, Worker};
pub use network::{non_public, AllowEntry, Allowlist, Host, HostPattern, NetRefusal, Network, RefusalReason, Target};
pub use private_files::{write_private_file, PrivateFile};
pub use system_dirs::{compile_cache_folder, host_exposing, private_folder, system_dir_of, warden_folder};
pub use validate::{check_env_name, check_root_as_written, SUPPORTED_VERSION};
pub use vpath::{shown, Namespace, PathError, VPath, MAX_PATH_BYTES};

/// Largest policy file read, in bytes.
const MAX_POLICY_BYTES: u64 = 1 << 20;

/// Reads and validates a policy file.
pub fn load(file: &Path) -> Result<Policy, PolicyError> {
    load_with(file, validate::Tags::MustBePinned)
}

/// Reads and validates a policy file for `warden lock`, which pins what
/// [`load`] refuses: `oci://` tags without a digest, a pin or `verify`.
pub fn load_to_lock(file: &Path) -> Result<Policy, PolicyError> {
    load_with(file, validate::Tags::MayBeUnpinned)
}

fn load_with(file: &Path, tags: validate::Tags) -> Result<Policy, PolicyError> {
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
    let size = std::fs::metadata(&file)
        .map_err(|e| PolicyError::new(&file, format!("cannot read the policy file: {e}")))?
        .len();
    if size > MAX_POLICY_BYTES {
        return Err(PolicyError::new(&file, format!("policy file is {size} bytes; the limit is {MAX_POLICY_BYTES}")));
    }
    let text = std::fs::read_to_string(&file)
        .map_err(|e| PolicyError::new(&file, format!("cannot read the policy file: {e}")))?;
    parse_with(&text, &file, tags)
}

/// Validates policy text; relative roots resolve against `file`'s folder.
pub fn parse(text: &str, file: &Path) -> Result<Policy, PolicyError> {
    parse_with(text, file, validate::Tags::MustBePinned)
}

fn parse_with(text: &str, file: &Path, tags: validate::Tags) -> Result<Policy, PolicyError> {
    let options = serde_saphyr::options! { with_snippet: false };
    let doc: PolicyDocument =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| yaml_error(&e, file))?;
    validate::validate(doc, file, tags)
}

/// The JSON Schema of the policy file, for editors.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(PolicyDocument);
    serde_json::to_string_pretty(&schema).expect("a schema always serializes")
}

/// One line, `file:line:column: message`, in the parser's user-facing wording.
fn yaml_error(e: &serde_saphyr::Error, file: &Path) -> PolicyError {
    let mut render = serde_saphyr::RenderOptions::new(&serde_saphyr::UserMessageFormatter);
    render.snippets = serde_saphyr::SnippetMode::Off;
    let mut message = e.render_with_options(render);
    let mut err = PolicyError::new(file, "");
    if let Some(loc) = e.location() {
        let suffix = format!(" at line {}, column {}", loc.line(), loc.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_owned();
        }
        err = err.at(&loc);
    }
    err.message = message;
    err
}
