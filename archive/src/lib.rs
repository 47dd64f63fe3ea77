//! hrr-archive: the on-disk capture format shared by capture, replay and the harness.
//!
//! This crate owns every byte of an archive: the event log (`events.bin`), the typed
//! payload encoding, content-addressed blobs and code objects, and both manifests.
//! The writer half is used inside `libhrr_capture.so`, so it stays lean (no async, no
//! HTTP) and never panics on I/O trouble; the reader half treats every archive as
//! untrusted input. docs/format.md describes the format byte by byte.

pub mod amdgpu;
pub mod api;
pub mod blob;
pub mod codeobject;
pub mod codestore;
pub mod diskspace;
pub mod edit;
pub mod error;
pub mod fill;
pub mod hash;
pub mod limits;
pub mod logread;
pub mod manifest;
pub mod pack;
pub mod payload;
pub mod prune;
pub mod reader;
pub mod record;
pub mod repair;
pub mod safefs;
pub mod sync;
pub mod writer;

pub use error::{ArchiveError, Result};
pub use hash::ContentHash;
pub use limits::Limits;
pub use reader::{Archive, LogStatus, ProcessArchive};
pub use record::{Event, RecordHeader};
pub use writer::{CaptureSettings, ProcessWriter};

/// The archive format version this build reads and writes. Readers accept exactly this.
pub const FORMAT_VERSION: u32 = 2;

/// The tool version, stamped into every manifest.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The source revision this build came from (set by the build environment, else "unknown").
pub const SOURCE_REVISION: &str = match option_env!("HRR_SOURCE_REVISION") {
    Some(rev) => rev,
    None => "unknown",
};
