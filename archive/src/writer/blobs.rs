//! The blobs and code objects of one process writer: content-addressed files written
//! under a temporary name and renamed, each content stored once.
//!
//! A content key is *claimed* before it is written: a second thread with the same bytes
//! waits for the claim and never writes or reserves space for a second copy. `finalize`
//! refuses new claims and waits for the claimed writes, so the manifest counts every blob
//! the log's events may reference.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::{Condvar, Mutex};

use crate::blob::{self, Compression};
use crate::codestore::CodeStore;
use crate::diskspace::{self, ReservePolicy};
use crate::fill::Fill;
use crate::hash::ContentHash;
use crate::safefs;
use crate::{ArchiveError, Result};

/// Blob or code object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentKind {
    Blob,
    CodeObject,
}

struct Index {
    known: HashSet<ContentHash>,
    claims: HashSet<ContentHash>,
    finalized: bool,
}

/// Counts for the process manifest.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub blobs: u64,
    pub blob_bytes: u64,
    pub blob_stored_bytes: u64,
    pub code_objects: u64,
    /// Of `code_objects`, those in the shared code store.
    pub code_objects_in_store: u64,
}

pub struct BlobStore {
    dir: PathBuf,
    compression: Compression,
    /// fsync each blob before the events that reference it (HRR_CAPTURE_FSYNC=all).
    fsync_blobs: bool,
    /// Free bytes a content write must leave (the disk reserve, the manifest's room and
    /// the event buffer's).
    keep_free: u64,
    index: Mutex<Index>,
    cv: Condvar,
    blobs: AtomicU64,
    blob_bytes: AtomicU64,
    blob_stored_bytes: AtomicU64,
    code_objects: AtomicU64,
    code_objects_in_store: AtomicU64,
    /// Where code objects go instead of this directory (`HRR_CAPTURE_CODE_STORE`).
    code_store: Option<CodeStore>,
    /// Blobs written but not yet fsync'd (synced before the events that reference them).
    unsynced: Mutex<Vec<PathBuf>>,
}

impl BlobStore {
    pub fn new(
        dir: PathBuf,
        compression: Compression,
        fsync_blobs: bool,
        keep_free: u64,
        code_store: Option<CodeStore>,
    ) -> Self {
        BlobStore {
            dir,
            compression,
            fsync_blobs,
            keep_free,
            index: Mutex::new(Index {
                known: HashSet::new(),
                claims: HashSet::new(),
                finalized: false,
            }),
            cv: Condvar::new(),
            blobs: AtomicU64::new(0),
            blob_bytes: AtomicU64::new(0),
            blob_stored_bytes: AtomicU64::new(0),
            code_objects: AtomicU64::new(0),
            code_objects_in_store: AtomicU64::new(0),
            code_store,
            unsynced: Mutex::new(Vec::new()),
        }
    }

    pub fn counts(&self) -> Counts {
        Counts {
            blobs: self.blobs.load(Ordering::Relaxed),
            blob_bytes: self.blob_bytes.load(Ordering::Relaxed),
            blob_stored_bytes: self.blob_stored_bytes.load(Ordering::Relaxed),
            code_objects: self.code_objects.load(Ordering::Relaxed),
            code_objects_in_store: self.code_objects_in_store.load(Ordering::Relaxed),
        }
    }

    /// Whether content named `hash` is stored already (written, not merely claimed).
    pub fn holds(&self, hash: &ContentHash) -> bool {
        self.index.lock().known.contains(hash)
    }

    /// Stores `data` under `hash` unless it is already stored. `Err(Finished)` after
    /// `finalize`.
    pub fn put(&self, hash: ContentHash, data: &[u8], kind: ContentKind) -> Result<()> {
        if !self.claim(hash)? {
            return Ok(());
        }
        let rel = match kind {
            ContentKind::Blob => blob::blob_rel_path(&hash),
            ContentKind::CodeObject => blob::code_object_rel_path(&hash),
        };
        let in_store = kind == ContentKind::CodeObject && self.code_store.is_some();
        let result = match &self.code_store {
            Some(s) if in_store => self.store_code_object(s, &hash, data),
            _ => self.write(data, &rel),
        };
        self.release(hash, result.is_ok());
        let stored = result?;
        match kind {
            ContentKind::CodeObject => {
                self.code_objects.fetch_add(1, Ordering::Relaxed);
                if in_store {
                    self.code_objects_in_store.fetch_add(1, Ordering::Relaxed);
                }
            }
            ContentKind::Blob => {
                self.blobs.fetch_add(1, Ordering::Relaxed);
                self.blob_bytes
                    .fetch_add(data.len() as u64, Ordering::Relaxed);
                self.blob_stored_bytes.fetch_add(stored, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Stores the fill `f` as a blob under `hash` (its content's name) unless that
    /// content is already stored: a 32-byte file, whatever the content's length.
    pub fn put_fill(&self, hash: ContentHash, f: &Fill) -> Result<()> {
        if !self.claim(hash)? {
            return Ok(());
        }
        let rel = blob::blob_rel_path(&hash);
        let stored = blob::encode_fill(f);
        let result = self.write_parts(&[&stored], &rel);
        self.release(hash, result.is_ok());
        let stored = result?;
        self.blobs.fetch_add(1, Ordering::Relaxed);
        self.blob_bytes.fetch_add(f.len, Ordering::Relaxed);
        self.blob_stored_bytes.fetch_add(stored, Ordering::Relaxed);
        Ok(())
    }

    /// Writes a code object into the shared store (unless it holds it), leaving this
    /// disk's reserve free as a write into the archive does.
    fn store_code_object(&self, s: &CodeStore, hash: &ContentHash, data: &[u8]) -> Result<u64> {
        if !s.has(hash) {
            diskspace::check(
                s.root(),
                ReservePolicy::Bytes(self.keep_free),
                data.len() as u64,
            )?;
        }
        s.put(hash, data, self.compression)
    }

    /// Hard-links a code object another process directory holds (a forked child's copy of
    /// what its parent registered): cheap, and the child's directory stays self-contained.
    /// A link never follows a link planted at its destination (link(2) refuses to replace).
    /// With a code store that holds it, the child only counts it there, as the parent did.
    pub fn link_code_object(&self, from_dir: &Path, hash: ContentHash) -> Result<()> {
        if !self.claim(hash)? {
            return Ok(());
        }
        if self.code_store.as_ref().is_some_and(|s| s.has(&hash)) {
            self.release(hash, true);
            self.code_objects.fetch_add(1, Ordering::Relaxed);
            self.code_objects_in_store.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let rel = blob::code_object_rel_path(&hash);
        let (src, dest) = (from_dir.join(&rel), self.dir.join(&rel));
        let result = dest
            .parent()
            .map_or(Ok(()), safefs::ensure_dir)
            .and_then(|_| {
                std::fs::hard_link(&src, &dest)
                    .map_err(|e| ArchiveError::io(&dest, "link code object", e))
            });
        self.release(hash, result.is_ok());
        result?;
        self.code_objects.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// true: the caller must write `hash`; false: it is stored already.
    fn claim(&self, hash: ContentHash) -> Result<bool> {
        let mut idx = self.index.lock();
        loop {
            if idx.finalized {
                return Err(ArchiveError::Finished);
            }
            if idx.known.contains(&hash) {
                return Ok(false);
            }
            if idx.claims.contains(&hash) {
                self.cv.wait(&mut idx);
                continue;
            }
            idx.claims.insert(hash);
            return Ok(true);
        }
    }

    fn release(&self, hash: ContentHash, stored: bool) {
        let mut idx = self.index.lock();
        idx.claims.remove(&hash);
        if stored {
            idx.known.insert(hash);
        }
        drop(idx);
        self.cv.notify_all();
    }

    /// Refuses new content and waits for the claimed writes to land.
    pub fn finalize(&self) {
        let mut idx = self.index.lock();
        idx.finalized = true;
        while !idx.claims.is_empty() {
            self.cv.wait(&mut idx);
        }
    }

    /// Writes one blob or code object (temporary name, then rename). It is not fsync'd
    /// here, on the program's thread: the next fsync'd checkpoint syncs every blob written
    /// since the last one before it syncs the events that reference them.
    fn write(&self, data: &[u8], rel: &Path) -> Result<u64> {
        let dest = self.dir.join(rel);
        let compressed;
        let header;
        let parts: [&[u8]; 2] = match self.compression {
            Compression::None => {
                header = blob::header(data.len() as u64, Compression::None);
                [&header, data]
            }
            c => {
                compressed =
                    blob::encode(data, c).map_err(|e| ArchiveError::io(&dest, "compress", e))?;
                [&compressed, &[]]
            }
        };
        self.write_parts(&parts, rel)
    }

    /// Writes a file of `parts` at `rel`, leaving the disk's reserve free.
    fn write_parts(&self, parts: &[&[u8]], rel: &Path) -> Result<u64> {
        let dest = self.dir.join(rel);
        let stored = parts.iter().map(|p| p.len() as u64).sum();
        diskspace::check(&self.dir, ReservePolicy::Bytes(self.keep_free), stored)?;
        if let Some(parent) = dest.parent() {
            safefs::ensure_dir(parent)?;
        }
        blob::write_atomic_parts(&dest, parts, false)?;
        if self.fsync_blobs {
            self.unsynced.lock().push(dest);
        }
        Ok(stored)
    }

    /// fsyncs the blobs written since the last call (and their directories' entries).
    pub fn sync(&self) {
        let paths = std::mem::take(&mut *self.unsynced.lock());
        let mut dirs = std::collections::BTreeSet::new();
        for p in paths {
            if let Ok(f) = File::open(&p) {
                let _ = f.sync_all();
            }
            if let Some(d) = p.parent() {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in dirs {
            if let Ok(f) = File::open(&d) {
                let _ = f.sync_all();
            }
        }
    }

    /// Fork prepare: holds the index lock across the fork.
    pub fn lock_and_keep(&self) {
        std::mem::forget(self.index.lock());
    }

    /// # Safety
    /// Must follow `lock_and_keep` on the same thread.
    pub unsafe fn force_unlock(&self) {
        // SAFETY: the caller's contract: lock_and_keep took the lock and forgot its guard.
        unsafe { self.index.force_unlock() }
    }
}
