//! The archive reader: opens an archive from anywhere and trusts nothing in it.
//!
//! - Exactly one format version is accepted; a mismatch names both numbers.
//! - A torn log keeps every whole record and is reported truncated; a missing trailer is
//!   reported incomplete.
//! - Names are checked before they become paths (process directories are `pid-<pid>`,
//!   blobs and code objects are 32-hex hashes); symbolic links are refused.
//! - Every size is checked against [`Limits`] before memory is allocated for it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::blob;
use crate::codestore::CodeStore;
use crate::fill::Fill;
use crate::hash::ContentHash;
use crate::logread;
use crate::manifest::{
    self, ProcessEntry, ProcessManifest, RootManifest, EVENTS_FILE, MANIFEST_FILE,
};
use crate::payload::{self, BlobRef, FieldType};
use crate::record::Event;
use crate::safefs;
use crate::{ArchiveError, Limits, Result};

pub use crate::logread::LogStatus;

/// One process's part of an archive.
#[derive(Clone, Debug)]
pub struct ProcessArchive {
    pub dir: PathBuf,
    pub entry: ProcessEntry,
    pub manifest: ProcessManifest,
    pub events: Vec<Event>,
    pub status: LogStatus,
    pub limits: Limits,
    /// Where code objects the archive does not hold are read: the store the manifest
    /// names (capture's `HRR_CAPTURE_CODE_STORE`), or the one replay's `--code-store`
    /// gives (`Archive::use_code_store`).
    pub code_store: Option<PathBuf>,
}

/// A whole archive: root manifest and every process.
#[derive(Clone, Debug)]
pub struct Archive {
    pub root: PathBuf,
    pub manifest: RootManifest,
    pub processes: Vec<ProcessArchive>,
    /// Things worth saying that do not make the archive unreadable.
    pub warnings: Vec<String>,
}

/// Checks a root-manifest entry: a directory name the writer gives its pid, listed once.
pub fn check_entry(
    root: &Path,
    entry: &ProcessEntry,
    seen: &mut std::collections::HashSet<String>,
) -> Result<()> {
    if !manifest::is_process_dir_of(entry.pid, &entry.dir) {
        return Err(ArchiveError::unsafe_path(
            root.join(MANIFEST_FILE),
            format!(
                "process directory {:?} is not pid-{} (or pid-{}.N, a later program image)",
                entry.dir, entry.pid, entry.pid
            ),
        ));
    }
    if !seen.insert(entry.dir.clone()) {
        return Err(ArchiveError::invalid(
            root.join(MANIFEST_FILE),
            format!(
                "process {} ({}) is listed more than once",
                entry.pid, entry.dir
            ),
        ));
    }
    Ok(())
}

/// Refuses a path that is a symbolic link or not a directory.
fn check_dir(path: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(path).map_err(|e| ArchiveError::io(path, "stat", e))?;
    if meta.file_type().is_symlink() {
        return Err(ArchiveError::unsafe_path(path, "is a symbolic link"));
    }
    if !meta.is_dir() {
        return Err(ArchiveError::unsafe_path(path, "is not a directory"));
    }
    Ok(())
}

impl Archive {
    /// Reads code objects the archive does not hold from `store`, whatever store the
    /// manifests name (replay's `--code-store`).
    pub fn use_code_store(&mut self, store: &Path) {
        for p in &mut self.processes {
            p.code_store = Some(store.to_path_buf());
        }
    }

    /// Opens the archive rooted at `root` (the directory `HRR_CAPTURE_OUTPUT` named).
    pub fn open(root: &Path, limits: Limits) -> Result<Archive> {
        let meta = fs::metadata(root).map_err(|e| ArchiveError::io(root, "open archive", e))?;
        if !meta.is_dir() {
            return Err(ArchiveError::invalid(
                root,
                "an archive is a directory; this is a file",
            ));
        }
        let manifest: RootManifest = manifest::read_manifest(&root.join(MANIFEST_FILE), &limits)?;
        let mut warnings = Vec::new();
        let mut processes = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for entry in &manifest.processes {
            check_entry(root, entry, &mut seen)?;
            processes.push(ProcessArchive::open(
                &root.join(&entry.dir),
                entry.clone(),
                limits,
            )?);
        }
        if let Ok(rd) = fs::read_dir(root) {
            for d in rd.flatten() {
                let name = d.file_name().to_string_lossy().into_owned();
                if name.starts_with("pid-") && !manifest.processes.iter().any(|p| p.dir == name) {
                    warnings.push(format!(
                        "{}: process directory not listed in the root manifest; ignored",
                        root.join(&name).display()
                    ));
                }
            }
        }
        Ok(Archive {
            root: root.to_path_buf(),
            manifest,
            processes,
            warnings,
        })
    }

    pub fn is_complete(&self) -> bool {
        self.processes.iter().all(|p| p.is_complete())
    }
}

/// Decodes an event log held in memory: the whole records, and how the log ends (no
/// sequence gap is accepted; see `logread` for a repaired log's).
pub fn decode_log(path: &Path, bytes: &[u8], limits: &Limits) -> Result<(Vec<Event>, LogStatus)> {
    logread::decode_bytes(path, bytes, limits, &Default::default())
}

impl ProcessArchive {
    pub fn open(dir: &Path, entry: ProcessEntry, limits: Limits) -> Result<ProcessArchive> {
        check_dir(dir)?;
        let manifest: ProcessManifest = manifest::read_manifest(&dir.join(MANIFEST_FILE), &limits)?;
        if manifest.pid != entry.pid {
            return Err(ArchiveError::invalid(
                dir.join(MANIFEST_FILE),
                format!(
                    "manifest is for pid {}, directory is for pid {}",
                    manifest.pid, entry.pid
                ),
            ));
        }
        let log_path = dir.join(EVENTS_FILE);
        let (file, len) = safefs::open_regular(&log_path)?;
        Limits::check(&log_path, "max_file_bytes", len, limits.max_file_bytes)?;
        let (events, status) =
            logread::read_file(&log_path, file, len, &limits, &manifest.seq_gaps())?;
        let code_store = manifest.code_store.as_ref().map(PathBuf::from);
        Ok(ProcessArchive {
            dir: dir.to_path_buf(),
            entry,
            manifest,
            events,
            status,
            limits,
            code_store,
        })
    }

    /// Complete means a consistent trailer and a manifest that says so.
    pub fn is_complete(&self) -> bool {
        self.status == LogStatus::Complete && self.manifest.complete
    }

    /// The path of `rel` in the process directory, every directory between the two
    /// checked to be a real directory (no symbolic link leads out of the archive).
    fn checked_path(&self, rel: &Path) -> Result<PathBuf> {
        let mut cur = self.dir.clone();
        for comp in rel.parent().into_iter().flat_map(|p| p.components()) {
            cur.push(comp);
            check_dir(&cur)?;
        }
        Ok(self.dir.join(rel))
    }

    /// Reads and verifies stored content; `len`, when an event gives it, must match the
    /// file's declared length before anything is decompressed.
    fn load_content(&self, rel: PathBuf, hash: &ContentHash, len: Option<u64>) -> Result<Vec<u8>> {
        let path = self.checked_path(&rel)?;
        let (header, body) = blob::read_blob_file(&path, &self.limits)?;
        blob::decode_parts(&path, &header, body, hash, len, &self.limits)
    }

    /// A blob's path inside the process directory, once its declared length passed
    /// `max_host_bytes`.
    fn blob_rel_within_limits(&self, r: &BlobRef) -> Result<PathBuf> {
        let rel = blob::blob_rel_path(&r.hash);
        Limits::check(
            &self.dir.join(&rel),
            "max_host_bytes",
            r.len,
            self.limits.max_host_bytes,
        )?;
        Ok(rel)
    }

    /// Loads and verifies a blob.
    pub fn load_blob(&self, r: &BlobRef) -> Result<Vec<u8>> {
        let rel = self.blob_rel_within_limits(r)?;
        let data = self.load_content(rel.clone(), &r.hash, Some(r.len))?;
        if data.len() as u64 != r.len {
            return Err(ArchiveError::invalid(
                self.dir.join(rel),
                format!("event says {} bytes, blob holds {}", r.len, data.len()),
            ));
        }
        Ok(data)
    }

    /// Loads and verifies a blob into `out`, which must be exactly its length (no
    /// allocation: replay reuses its buffers from event to event).
    pub fn load_blob_into(&self, r: &BlobRef, out: &mut [u8]) -> Result<()> {
        let rel = blob::blob_rel_path(&r.hash);
        let path = self.dir.join(&rel);
        Limits::check(&path, "max_host_bytes", r.len, self.limits.max_host_bytes)?;
        if out.len() as u64 != r.len {
            return Err(ArchiveError::invalid(
                &path,
                format!("event says {} bytes, the buffer holds {}", r.len, out.len()),
            ));
        }
        let path = self.checked_path(&rel)?;
        blob::read_blob_into(&path, &r.hash, &self.limits, out)
    }

    /// The fill a blob is stored as, verified against its name (its unit read, nothing
    /// expanded), or None when it is stored another way: replay compares a result with
    /// a fill directly instead of loading the bytes it stands for.
    pub fn blob_fill(&self, r: &BlobRef) -> Result<Option<Fill>> {
        let rel = self.blob_rel_within_limits(r)?;
        let path = self.checked_path(&rel)?;
        blob::read_blob_fill(&path, &r.hash, &self.limits, r.len)
    }

    /// Verifies a blob without loading it whole: its content streamed through the hash
    /// (bounded memory whatever its size).
    pub fn verify_blob(&self, r: &BlobRef) -> Result<()> {
        let rel = self.blob_rel_within_limits(r)?;
        let path = self.checked_path(&rel)?;
        blob::verify_blob_stream(&path, &r.hash, &self.limits, r.len)
    }

    /// Loads a code object by the name an event gives; the name must be a 32-hex hash.
    pub fn load_code_object(&self, name: &str) -> Result<Vec<u8>> {
        let hash = ContentHash::from_hex(name).ok_or_else(|| {
            ArchiveError::unsafe_path(
                &self.dir,
                format!("code object name {name:?} is not a 32-hex content hash"),
            )
        })?;
        let rel = blob::code_object_rel_path(&hash);
        let in_archive = self.dir.join(&rel);
        match fs::symlink_metadata(&in_archive) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // Present (or a link, refused by load_content): the archive's copy decides.
            _ => return self.load_content(rel, &hash, None),
        }
        let Some(store) = &self.code_store else {
            return Err(ArchiveError::invalid(
                in_archive,
                "code object missing: the archive does not hold it and names no code store",
            ));
        };
        let found = CodeStore::open(store).and_then(|s| {
            if s.has(&hash) {
                s.load(&hash, &self.limits).map(Some)
            } else {
                Ok(None)
            }
        });
        match found {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(ArchiveError::invalid(
                in_archive,
                format!(
                    "code object missing: the archive keeps it in the code store {}, which \
                     does not hold it (captured on another machine, or the store was \
                     cleaned: replay with --code-store DIR naming a store that holds it)",
                    store.display()
                ),
            )),
            Err(e) => Err(ArchiveError::invalid(
                in_archive,
                format!(
                    "code object missing: the archive keeps it in the code store {}, which \
                     cannot be used ({e}; replay with --code-store DIR)",
                    store.display()
                ),
            )),
        }
    }

    /// Sum of the blob references the events make (duplicates included) and the distinct blobs.
    pub fn blob_references(&self) -> (u64, Vec<BlobRef>) {
        let mut total = 0u64;
        let mut distinct = std::collections::BTreeMap::new();
        fn walk(
            p: &[u8],
            total: &mut u64,
            distinct: &mut std::collections::BTreeMap<ContentHash, u64>,
            depth: u32,
        ) {
            if depth > 8 {
                return;
            }
            for f in payload::fields(p).flatten() {
                match f.field_type() {
                    Some(FieldType::Blob) => {
                        if let Ok(b) = f.as_blob() {
                            *total = total.saturating_add(b.len);
                            distinct.insert(b.hash, b.len);
                        }
                    }
                    Some(FieldType::Fields) => walk(f.value, total, distinct, depth + 1),
                    _ => {}
                }
            }
        }
        for e in &self.events {
            walk(&e.payload, &mut total, &mut distinct, 0);
        }
        (
            total,
            distinct
                .into_iter()
                .map(|(hash, len)| BlobRef { hash, len })
                .collect(),
        )
    }

    /// Files under `blobs/` and `code_objects/`: (blob files, blob bytes on disk, code objects).
    /// Only real directories are entered and only regular files counted: a link planted at
    /// `blobs/`, `blobs/xx` or `code_objects/` is never followed out of the archive.
    pub fn stored_files(&self) -> (u64, u64, u64) {
        // A directory, not a link to one (symlink_metadata does not follow the last name).
        let real_dir = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        let entries = |p: &Path| {
            real_dir(p)
                .then(|| fs::read_dir(p).ok())
                .flatten()
                .into_iter()
                .flat_map(|rd| rd.flatten())
        };
        let mut blobs = 0;
        let mut bytes = 0;
        for sub in entries(&self.dir.join(blob::BLOBS_DIR)) {
            for f in entries(&sub.path()) {
                // DirEntry::metadata does not follow a link either.
                let meta = f.metadata().ok().filter(|m| m.is_file());
                if let (Some(m), true) = (meta, f.file_name().to_string_lossy().ends_with(".blob"))
                {
                    blobs += 1;
                    bytes += m.len();
                }
            }
        }
        let codes = entries(&self.dir.join(blob::CODE_OBJECTS_DIR))
            .filter(|f| f.file_type().is_ok_and(|t| t.is_file()))
            .filter(|f| f.file_name().to_string_lossy().ends_with(".co"))
            .count() as u64;
        (blobs, bytes, codes)
    }
}
