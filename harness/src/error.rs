//! The harness's errors and the exit codes they map to.

use std::fmt;

/// Exit codes of `hrr-harness` (also in `--help` and DESIGN.md).
pub mod exit {
    /// Every case (or control) as expected.
    pub const OK: u8 = 0;
    /// `run`: a case did something the matrix does not expect.
    pub const UNEXPECTED: u8 = 1;
    /// Bad usage, a bad matrix, or a machine that does not match the family.
    pub const USAGE: u8 = 2;
    /// Interrupted (Ctrl-C / SIGTERM); partial results were written.
    pub const INTERRUPTED: u8 = 130;
}

#[derive(Debug)]
pub enum HarnessError {
    /// Bad flags or a machine that does not fit the request.
    Usage(String),
    /// The matrix file has problems (each with file, line, column).
    Matrix(hrr_matrix::load::MatrixErrors),
    /// A build or I/O step failed.
    Failed(String),
    Interrupted,
}

impl HarnessError {
    pub fn usage(s: impl Into<String>) -> Self {
        HarnessError::Usage(s.into())
    }
    pub fn failed(s: impl Into<String>) -> Self {
        HarnessError::Failed(s.into())
    }
    pub fn exit_code(&self) -> u8 {
        match self {
            HarnessError::Usage(_) | HarnessError::Matrix(_) => exit::USAGE,
            HarnessError::Failed(_) => exit::UNEXPECTED,
            HarnessError::Interrupted => exit::INTERRUPTED,
        }
    }
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            HarnessError::Usage(s) | HarnessError::Failed(s) => f.write_str(s),
            HarnessError::Matrix(e) => write!(f, "{e}"),
            HarnessError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for HarnessError {}
