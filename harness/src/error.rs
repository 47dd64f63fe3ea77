//! The error every command can end with, and the exit code each kind maps to. Modules
//! return their own typed errors; the command layer (`commands.rs`) adds the context (the
//! flag, the file) and turns them into a `HarnessError`.

use crate::exit::Exit;

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// Bad flags or a machine that does not fit the request.
    #[error("{0}")]
    Usage(String),
    /// The matrix file has problems (each with file, line, column).
    #[error("{0}")]
    Matrix(hrr_matrix::load::MatrixErrors),
    /// A build or I/O step failed (infrastructure, exit 7).
    #[error("{0}")]
    Failed(String),
    /// The family's GPUs or compilers are missing here; the text names what is missing
    /// (device nodes, what nvidia-smi or the KFD shows, the compiler and its package).
    #[error("{0}")]
    Missing(String),
    #[error("interrupted")]
    Interrupted,
}

impl HarnessError {
    pub fn usage(s: impl Into<String>) -> Self {
        HarnessError::Usage(s.into())
    }
    pub fn failed(s: impl Into<String>) -> Self {
        HarnessError::Failed(s.into())
    }
    pub fn missing(s: impl Into<String>) -> Self {
        HarnessError::Missing(s.into())
    }
    pub fn exit(&self) -> Exit {
        match self {
            HarnessError::Usage(_) | HarnessError::Matrix(_) => Exit::Usage,
            HarnessError::Failed(_) | HarnessError::Missing(_) => Exit::Infrastructure,
            HarnessError::Interrupted => Exit::Interrupted,
        }
    }
}
