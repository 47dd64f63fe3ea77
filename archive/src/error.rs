//! Error type of the archive crate: every variant names the file and what is wrong with it.

use std::fmt;
use std::path::{Path, PathBuf};

pub type Result<T> = std::result::Result<T, ArchiveError>;

#[derive(Debug)]
pub enum ArchiveError {
    /// An operating-system error while touching `path`.
    Io {
        path: PathBuf,
        op: &'static str,
        source: std::io::Error,
    },
    /// The file exists but its content breaks the format.
    Invalid { path: PathBuf, what: String },
    /// The archive was written by another format version.
    VersionMismatch {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// A limit set by the caller refuses the archive.
    LimitExceeded {
        path: PathBuf,
        limit: &'static str,
        value: u64,
        max: u64,
    },
    /// A name inside the archive would leave the archive directory.
    UnsafePath { path: PathBuf, what: String },
    /// A blob or code object whose content does not hash to its name.
    HashMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },
    /// Capture was refused or stopped because free disk space fell under the reserve.
    DiskReserve {
        path: PathBuf,
        free: u64,
        needed: u64,
        reserve: u64,
    },
    /// The writer was already finished; nothing more is accepted.
    Finished,
    /// A deliberate edit named a byte past the end of the output it edits.
    OffsetOutside {
        path: PathBuf,
        offset: u64,
        len: u64,
    },
}

impl ArchiveError {
    pub fn io(path: impl AsRef<Path>, op: &'static str, source: std::io::Error) -> Self {
        ArchiveError::Io {
            path: path.as_ref().to_path_buf(),
            op,
            source,
        }
    }
    pub fn invalid(path: impl AsRef<Path>, what: impl Into<String>) -> Self {
        ArchiveError::Invalid {
            path: path.as_ref().to_path_buf(),
            what: what.into(),
        }
    }
    pub fn unsafe_path(path: impl AsRef<Path>, what: impl Into<String>) -> Self {
        ArchiveError::UnsafePath {
            path: path.as_ref().to_path_buf(),
            what: what.into(),
        }
    }
    /// True for errors caused by a caller-set limit (replay maps these to exit code 2 too,
    /// but the harness reports them differently from corruption).
    pub fn is_limit(&self) -> bool {
        matches!(self, ArchiveError::LimitExceeded { .. })
    }
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveError::Io { path, op, source } => {
                write!(f, "{}: cannot {op}: {source}", path.display())
            }
            ArchiveError::Invalid { path, what } => write!(f, "{}: {what}", path.display()),
            ArchiveError::VersionMismatch { path, found, supported } => write!(
                f,
                "{}: archive format version {found}, but this build reads only version {supported}",
                path.display()
            ),
            ArchiveError::LimitExceeded { path, limit, value, max } => write!(
                f,
                "{}: {value} exceeds the limit {limit}={max} (raise it with --{})",
                path.display(),
                limit.replace('_', "-")
            ),
            ArchiveError::UnsafePath { path, what } => {
                write!(f, "{}: refused: {what}", path.display())
            }
            ArchiveError::HashMismatch { path, expected, found } => write!(
                f,
                "{}: content hashes to {found}, but its name says {expected}",
                path.display()
            ),
            ArchiveError::DiskReserve { path, free, needed, reserve } => write!(
                f,
                "{}: {free} bytes free, writing {needed} more would cut into the {reserve}-byte disk reserve",
                path.display()
            ),
            ArchiveError::Finished => write!(f, "the archive is already finished"),
            ArchiveError::OffsetOutside { path, offset, len } => write!(
                f,
                "{}: offset {offset} is outside the {len}-byte output",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArchiveError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
