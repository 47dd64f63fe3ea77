//! hrr-archive: the archive on disk, shared by capture, replay and the harness.
//!
//! This crate owns an archive's files: the event log (`events.bin`) written and read,
//! content-addressed blobs and code objects, both manifests, repair, edit, range pruning
//! and packing. The bytes' encoding is hrr-format's (`record`, `payload`, `hash`, `fill`,
//! re-exported here) and the API registry hrr-registry's (re-exported as `api`).
//! The writer half is used inside `libhrr_capture.so`, so it stays lean (no async, no
//! HTTP) and never panics on I/O trouble; the reader half treats every archive as
//! untrusted input. docs/format.md describes the format byte by byte.

pub mod amdgpu;
pub mod blob;
pub mod codeobject;
pub mod codestore;
pub mod diskspace;
pub mod edit;
pub mod error;
pub mod limits;
pub mod logread;
pub mod manifest;
pub mod pack;
pub mod prune;
pub mod reader;
pub mod repair;
pub mod safefs;
pub mod sync;
pub mod writer;

pub use hrr_format::{fill, hash, payload, record, FORMAT_VERSION};
pub use hrr_registry as api;
pub use hrr_registry::hrr_api_table;

pub use error::{ArchiveError, Result};
pub use hash::ContentHash;
pub use limits::Limits;
pub use reader::{Archive, LogStatus, ProcessArchive};
pub use record::{Event, RecordHeader};
pub use writer::{CaptureSettings, ProcessWriter};

/// The tool version, stamped into every manifest.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The source revision this build came from (set by the build environment, else "unknown").
pub const SOURCE_REVISION: &str = match option_env!("HRR_SOURCE_REVISION") {
    Some(rev) => rev,
    None => "unknown",
};
