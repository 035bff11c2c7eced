//! What a later `warden exec --sandbox NAME` needs to reach a kept sandbox
//! without asking the engine: where the engine is, the container's id and
//! init, and the settings its labels hold. Written by the process that
//! starts (or first attaches to) the sandbox, into Warden's private folder;
//! believed only while that init is alive and still in the container's
//! cgroup, which reading one file in `/proc` shows.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::container::engine::EngineAddress;
use crate::container::ExecSettings;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    pub engine: EngineAddress,
    /// The container's full id.
    pub id: String,
    /// Its init (the runner) as the host sees it, when this was written.
    pub init: u32,
    /// The digest of its settings (`io.warden.config`) and of its runner (`io.warden.runner`).
    pub config: String,
    pub runner: String,
    pub settings: ExecSettings,
}

impl Kept {
    /// What was written for `container`, if its init still runs in it.
    pub fn load(container: &str) -> Option<Kept> {
        let text = std::fs::read(path(container).ok()?).ok()?;
        let kept: Kept = serde_json::from_slice(&text).ok()?;
        crate::container::runner::in_container(kept.init, &kept.id).then_some(kept)
    }

    /// Written whole or not at all (a temporary file renamed into place).
    pub fn save(&self, container: &str) {
        let Ok(path) = path(container) else { return };
        let written = (|| {
            std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
            let temp = path.with_extension(format!("{}.tmp", std::process::id()));
            std::fs::write(&temp, serde_json::to_vec(self).expect("settings serialize"))?;
            std::fs::rename(&temp, &path)
        })();
        // Only a shortcut: without it, the engine is asked.
        let _ = written;
    }

    pub fn forget(container: &str) {
        if let Ok(path) = path(container) {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn path(container: &str) -> Result<PathBuf, String> {
    Ok(warden_policy::private_folder()?.join("kept").join(format!("{container}.json")))
}
