//! What operations return: plain frozen records.

use pyo3::prelude::*;

/// A file written: its virtual path, its size, and whether it was new.
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct Written {
    pub path: String,
    pub bytes: u64,
    pub created: bool,
}

/// One entry of a listing: its virtual path and kind (`file`, `dir`, `symlink`, `other`).
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct Entry {
    pub path: String,
    pub kind: &'static str,
}

/// A file's or folder's metadata, by its virtual path.
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct Stat {
    pub path: String,
    pub kind: &'static str,
    pub size: u64,
    /// Seconds since the epoch, when the OS gives it.
    pub modified: Option<f64>,
    pub writable: bool,
}

/// A command's outcome in the OS sandbox.
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct ExecResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub timed_out: bool,
    /// Some output was cut at the policy's output cap.
    pub truncated: bool,
    /// Whether an OS sandbox (bubblewrap, Landlock, a container) confined it.
    pub sandboxed: bool,
    /// Which: `bwrap`, `landlock`, `seatbelt`, `container`, or `none`.
    pub sandbox: &'static str,
}

/// A component tool's answer, with what it printed and logged.
#[pyclass(frozen, get_all, module = "warden._native")]
pub struct ToolResult {
    /// The tool's output: JSON text.
    pub output: String,
    pub stderr: Vec<u8>,
    /// `(level, message)` pairs, in order.
    pub logs: Vec<(String, String)>,
    pub fuel_consumed: u64,
}

/// A field as Python's `repr` writes it.
trait Repr {
    fn repr(&self) -> String;
}

impl Repr for bool {
    fn repr(&self) -> String {
        if *self { "True" } else { "False" }.to_owned()
    }
}

impl Repr for String {
    fn repr(&self) -> String {
        format!("{self:?}")
    }
}

impl Repr for &str {
    fn repr(&self) -> String {
        format!("{self:?}")
    }
}

macro_rules! repr_number {
    ($($ty:ty),*) => {$(
        impl Repr for $ty {
            fn repr(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

repr_number!(u64, i32);

macro_rules! repr {
    ($($ty:ident: $($field:ident),*;)*) => {$(
        #[pymethods]
        impl $ty {
            fn __repr__(&self) -> String {
                let fields = [$(format!("{}={}", stringify!($field), self.$field.repr())),*];
                format!("{}({})", stringify!($ty), fields.join(", "))
            }
        }
    )*};
}

repr! {
    Written: path, bytes, created;
    Entry: path, kind;
    Stat: path, kind, size, writable;
    ExecResult: exit_code, timed_out, truncated, sandboxed, sandbox;
    ToolResult: output, fuel_consumed;
}
