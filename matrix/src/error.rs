//! What a matrix file can be wrong with: one problem, placed by file, line and column,
//! and every problem of one load. Both the prescan and the validation report these.

use std::fmt;
use std::path::PathBuf;

/// One problem in a matrix file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for MatrixError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

/// Every problem found, in file order.
#[derive(Clone, Debug)]
pub struct MatrixErrors(pub Vec<MatrixError>);

impl fmt::Display for MatrixErrors {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for MatrixErrors {}
