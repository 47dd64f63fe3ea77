//! Shared by replay's integration tests: an archive writer set up as capture's, without
//! fsync or disk reserve (test archives are scratch).

use std::path::Path;

use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::{CaptureSettings, ProcessWriter};

/// A writer for a CUDA process archive under `root`.
pub fn cuda_writer(root: &Path) -> std::sync::Arc<ProcessWriter> {
    let w = ProcessWriter::create(
        root,
        CaptureSettings {
            fsync: false,
            fsync_blobs: false,
            code_store: None,
            reserve: ReservePolicy::Bytes(0),
            ..Default::default()
        },
        1,
    )
    .unwrap();
    w.update_runtime(|r| r.vendor = "cuda".into());
    w
}
