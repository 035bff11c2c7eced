use std::fmt;
use std::path::PathBuf;

/// A policy that cannot be used, pointing at the file, place and field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    pub file: PathBuf,
    /// 1-based line and column, when known.
    pub location: Option<(u64, u64)>,
    /// Dotted field path, e.g. `sandbox.paths.portfolio.root`.
    pub field: Option<String>,
    pub message: String,
}

impl PolicyError {
    pub(crate) fn new(file: &std::path::Path, message: impl Into<String>) -> Self {
        PolicyError { file: file.to_owned(), location: None, field: None, message: message.into() }
    }

    pub(crate) fn at(mut self, location: &serde_saphyr::Location) -> Self {
        if location.line() > 0 {
            self.location = Some((location.line(), location.column()));
        }
        self
    }

    pub(crate) fn for_worker(file: &std::path::Path, name: &str, location: Option<(u64, u64)>, error: &crate::DeriveError) -> Self {
        let mut e = PolicyError::new(file, error.to_string()).field(format!("workers.{name}.{}", error.field()));
        e.location = location;
        e
    }

    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.location {
            write!(f, ":{line}:{column}")?;
        }
        f.write_str(": ")?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}
