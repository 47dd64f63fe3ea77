//! hrr-format: the encoding of an archive's bytes, no I/O: the event log's records
//! (`record`), their typed payloads (`payload`), content hashes (`hash`) and fills
//! (`fill`, content that repeats one 16-byte unit). hrr-archive re-exports each module
//! under its own name and does the file work around them. docs/format.md describes the
//! format byte by byte.

pub mod fill;
pub mod hash;
pub mod payload;
pub mod record;

pub use hash::ContentHash;
pub use record::{Event, RecordHeader};

/// The archive format version this build reads and writes. Readers accept exactly this.
pub const FORMAT_VERSION: u32 = 2;
