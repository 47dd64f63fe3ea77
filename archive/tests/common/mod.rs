//! What the archive tests share: writer settings for small, fast test archives and the
//! process directory a writer of this test process creates.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use hrr_archive::blob::Compression;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::CaptureSettings;

/// Uncompressed, never flushed by time, no disk reserve, no fsync, no code store: what a
/// test writes is exactly what it appended, at once.
pub fn settings() -> CaptureSettings {
    CaptureSettings {
        compression: Compression::None,
        flush_interval: Duration::from_secs(3600),
        buffer_bytes: 1 << 16,
        reserve: ReservePolicy::Bytes(0),
        fsync: false,
        fsync_blobs: false,
        code_store: None,
    }
}

/// The process directory this test process's writer makes under `root`.
pub fn pid_dir(root: &Path) -> PathBuf {
    root.join(format!("pid-{}", std::process::id()))
}
