//! Archives given as one packed file (`.hrrz`, `hrr_archive::pack`): unpacked into a
//! directory of our own under the temporary directory for as long as they are read, then
//! removed. `--pack` and `--unpack` write and read the form themselves.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hrr_archive::{pack, Archive, ArchiveError, Limits};

/// An unpacked copy, removed when dropped.
pub struct Unpacked {
    dir: PathBuf,
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Opens the archive at `path`: a directory as it is, a packed file unpacked first (the
/// copy lives as long as the returned guard).
pub fn open(path: &Path, limits: Limits) -> Result<(Archive, Option<Unpacked>), ArchiveError> {
    if !path.is_file() || !pack::is_packed(path) {
        return Archive::open(path, limits).map(|a| (a, None));
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hrr-replay-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    // `unpack` refuses a name that exists (something planted there) and creates it.
    pack::unpack(path, &dir, limits)?;
    let guard = Unpacked { dir: dir.clone() };
    Archive::open(&dir, limits).map(|a| (a, Some(guard)))
}
