//! Every way a tool can fail, as the `tool-error` the host shows the model.

use std::io;
use std::path::Path;

use crate::bindings::ToolError;

/// Why a tool did not give its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The input does not match the tool's schema or makes no sense.
    InvalidInput(String),
    /// The sandbox refused a file access: the path, which the host replaces
    /// with the sandbox's own message (what is allowed instead).
    Denied(String),
    /// Anything else.
    Failed(String),
}

impl From<Error> for ToolError {
    fn from(error: Error) -> ToolError {
        match error {
            Error::InvalidInput(m) => ToolError::InvalidInput(m),
            Error::Denied(m) => ToolError::Denied(m),
            Error::Failed(m) => ToolError::Failed(m),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Error::Denied(m) => write!(f, "denied: {m}"),
            Error::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// wasi-libc's errno for a capability the sandbox did not grant (no
/// `io::ErrorKind` names it).
const ENOTCAPABLE: i32 = 76;

/// Names the path an I/O error is about, so that a refusal becomes
/// [`Error::Denied`] with that path, and anything else [`Error::Failed`].
pub trait PathContext<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T, Error>;
}

impl<T> PathContext<T> for io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T, Error> {
        self.map_err(|e| from_io(&e, path.as_ref()))
    }
}

/// What an I/O error on `path` means for the model.
pub fn from_io(error: &io::Error, path: &Path) -> Error {
    let shown = path.to_string_lossy().into_owned();
    let refused = matches!(
        error.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::FileTooLarge
    ) || error.raw_os_error() == Some(ENOTCAPABLE);
    // wasi-libc says "no such file" for a path under no mount: a refusal too.
    if refused || (error.kind() == io::ErrorKind::NotFound && outside_mounts(path)) {
        return Error::Denied(shown);
    }
    Error::Failed(format!("{shown}: {error}"))
}

/// Whether an absolute `path` lies under none of the sandbox's mounts (the preopens).
fn outside_mounts(path: &Path) -> bool {
    if !path.is_absolute() {
        return false;
    }
    let mounts = crate::bindings::wasi::filesystem::preopens::get_directories();
    !mounts.iter().any(|(_, mount)| {
        let mount = Path::new(mount.trim_end_matches('/'));
        mount.as_os_str().is_empty() || path.starts_with(mount)
    })
}

static LAST_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Keeps where and why the tool panicked, for [`panic_message`].
pub fn remember_panic(info: &std::panic::PanicHookInfo<'_>) {
    let at = info.location().map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column())).unwrap_or_default();
    let text = format!("panicked{at}: {}", payload_text(info.payload()));
    *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(text);
}

/// The message of a caught panic: where and why, as the hook saw it.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_else(|| format!("panicked: {}", payload_text(payload)))
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str)).unwrap_or("(no message)")
}
