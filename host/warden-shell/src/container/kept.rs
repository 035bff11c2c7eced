//! What a later `warden exec --sandbox NAME` needs to reach a kept sandbox
//! without asking the engine: where the engine is, the container's id and
//! init, and the settings its labels hold. Written by the process that
//! starts (or first attaches to) the sandbox, into Warden's private folder;
//! believed only while that init (the same process: its start time too) is
//! alive and in the container's cgroup, which two files in `/proc` show.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::container::engine::EngineAddress;
use crate::container::ExecSettings;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    pub engine: EngineAddress,
    /// The container's full id.
    pub id: String,
    /// Its init (the runner) as the host sees it, when this was written, and
    /// when that process started.
    pub init: u32,
    pub init_started: u64,
    /// The digest of its settings (`io.warden.config`) and of its runner (`io.warden.runner`).
    pub config: String,
    pub runner: String,
    pub settings: ExecSettings,
}

impl Kept {
    /// What was written for `container`, if its init still runs in it.
    pub fn load(container: &str) -> Option<Kept> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path(container).ok()?).ok()?;
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut text).ok()?;
        let kept: Kept = serde_json::from_slice(&text).ok()?;
        let runner = crate::container::runner::started_at(kept.init) == Some(kept.init_started);
        (runner && crate::container::runner::in_container(kept.init, &kept.id)).then_some(kept)
    }

    /// What `init` of the container `id` needs to be believed later.
    pub fn of(engine: EngineAddress, id: String, init: u32, config: String, runner: String, settings: ExecSettings) -> Option<Kept> {
        let init_started = crate::container::runner::started_at(init)?;
        Some(Kept { engine, id, init, init_started, config, runner, settings })
    }

    /// Written whole or not at all: a new file of this user's alone, renamed into place.
    pub fn save(&self, container: &str) {
        let Ok(path) = path(container) else { return };
        let folder = path.parent().expect("a file in a folder");
        let written = std::fs::create_dir_all(folder).and_then(|()| {
            let mut temp = tempfile::NamedTempFile::new_in(folder)?;
            std::io::Write::write_all(&mut temp, &serde_json::to_vec(self).expect("settings serialize"))?;
            temp.persist(&path).map(drop).map_err(|e| e.error)
        });
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
