//! `--watch`: the policy file and the components it declares are looked at
//! twice a second; a change is validated and swapped in, and the clients are
//! told. A policy that cannot be used keeps the old one, and says why.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::catalogue::Offer;
use crate::server::WardenMcp;

const LOOK_EVERY: Duration = Duration::from_millis(500);

/// Makes the offer anew from the files, and says which files it came from.
pub type Rebuild = Box<dyn Fn() -> Result<(Offer, Vec<PathBuf>), String> + Send + Sync>;

pub struct Reloader {
    /// The policy file and the component files it declares.
    pub files: Vec<PathBuf>,
    pub rebuild: Rebuild,
}

/// What a file looks like from outside: changed when this changes.
fn stamps(files: &[PathBuf]) -> Vec<Option<(SystemTime, u64)>> {
    files.iter().map(|f| std::fs::metadata(f).ok().and_then(|m| Some((m.modified().ok()?, m.len())))).collect()
}

/// Runs `serve` to its end on a runtime made by `runtime`, with the reloader,
/// if any, watching the files beside it: what both transports' `run_*` do.
pub(crate) fn run_serving<F>(
    mut runtime: tokio::runtime::Builder,
    server: WardenMcp,
    reloader: Option<Reloader>,
    serve: impl FnOnce(WardenMcp) -> F,
) -> Result<(), String>
where
    F: std::future::Future<Output = Result<(), String>>,
{
    let runtime = runtime.enable_all().build().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async move {
        if let Some(reloader) = reloader {
            spawn(server.clone(), reloader);
        }
        serve(server).await
    })
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "warden: {message}");
}

/// Watches on the current runtime until the server stops.
pub fn spawn(server: WardenMcp, reloader: Reloader) {
    let Reloader { mut files, rebuild } = reloader;
    let rebuild = std::sync::Arc::new(rebuild);
    tokio::spawn(async move {
        let mut seen = stamps(&files);
        loop {
            tokio::time::sleep(LOOK_EVERY).await;
            // Looked at before the rebuild reads the files: an edit made while
            // it runs differs from these, and is loaded next time round.
            let now = stamps(&files);
            if now == seen {
                continue;
            }
            seen = now;
            let rebuild = rebuild.clone();
            // Loading components compiles them: off the async threads.
            let rebuilt = tokio::task::spawn_blocking(move || rebuild()).await.unwrap_or_else(|e| Err(e.to_string()));
            match rebuilt {
                Ok((offer, new_files)) => match server.reload(offer).await {
                    Ok(()) => {
                        // A file the new policy names for the first time is looked at now.
                        seen = new_files.iter().map(|f| files.iter().position(|old| old == f).map_or_else(|| stamps(std::slice::from_ref(f))[0], |i| seen[i])).collect();
                        files = new_files;
                        say("the policy changed: its new tools are served");
                    }
                    Err(e) => say(&format!("the policy changed but cannot be used ({e}); the old one stays")),
                },
                Err(e) => say(&format!("the policy changed but cannot be used ({e}); the old one stays")),
            }
        }
    });
}
