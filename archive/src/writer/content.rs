//! What a writer is handed to store beside its events: host bytes as blobs (a fill as
//! its unit, its name remembered for the fills seen last), device code objects; each
//! content-addressed through `blobs.rs`'s store, stored once, and dropped and counted
//! after capture stopped.

use std::path::Path;
use std::sync::atomic::Ordering;

use super::blobs::ContentKind;
use super::ProcessWriter;
use crate::fill::Fill;
use crate::hash::ContentHash;
use crate::payload::BlobRef;
use crate::{ArchiveError, Result};

/// Fill names remembered at most (`ProcessWriter::fill_hash`).
const FILL_NAMES_KEPT: usize = 64;

impl ProcessWriter {
    /// Stores host bytes as a blob and returns its reference. Identical content is stored
    /// once, also when several threads store it at the same time.
    pub fn put_blob(&self, data: &[u8]) -> Result<BlobRef> {
        if let Some(f) = Fill::detect(data) {
            return self.put_fill(&f);
        }
        self.put_named(ContentHash::of(data), data)
    }

    /// `put_blob` for bytes something else may write meanwhile (mapped or managed memory
    /// a running kernel writes): they are read once, into a copy, and the copy is what is
    /// named and stored, so a blob always holds what its name says. (Read twice, for the
    /// hash and then for the file, such bytes gave a blob whose content hashed to another
    /// name: seen on the H200.)
    pub fn put_blob_volatile(&self, data: &[u8]) -> Result<BlobRef> {
        let (copy, hash) = crate::hash::copy_and_hash(data);
        self.put_blob_hashed(hash, &copy)
    }

    /// `put_blob` for bytes whose name the caller has computed already (`hash` is
    /// `ContentHash::of(data)`, e.g. from `hash::copy_and_hash`): not hashed again.
    pub fn put_blob_hashed(&self, hash: ContentHash, data: &[u8]) -> Result<BlobRef> {
        debug_assert_eq!(hash, ContentHash::of(data));
        if let Some(f) = Fill::detect(data) {
            return self.put_fill(&f);
        }
        self.put_named(hash, data)
    }

    /// Stores `data`, which is no fill, under its name `hash`.
    fn put_named(&self, hash: ContentHash, data: &[u8]) -> Result<BlobRef> {
        self.put_content(hash, data, ContentKind::Blob)?;
        self.blob_referenced_bytes
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(BlobRef {
            hash,
            len: data.len() as u64,
        })
    }

    /// The blob already stored that `data` would be, named without copying `data` and
    /// referenced as `put_blob` references it; None when this content is new (or capture
    /// stopped). For memory that is read again and again and mostly unchanged (pinned
    /// snapshots, launch after launch): `hash` is `ContentHash::of(data)`, computed by
    /// the caller (several pieces may be hashed at once).
    pub fn stored_blob(&self, hash: ContentHash, len: u64) -> Option<BlobRef> {
        if self.stopped.load(Ordering::Relaxed) || !self.store.holds(&hash) {
            return None;
        }
        self.blob_referenced_bytes.fetch_add(len, Ordering::Relaxed);
        Some(BlobRef { hash, len })
    }

    /// Stores content that is the fill `f` (a 32-byte file; its name is its content's
    /// hash, found from the unit, and remembered for the fills seen last).
    pub fn put_fill(&self, f: &Fill) -> Result<BlobRef> {
        let hash = self.fill_hash(f);
        if self.stopped.load(Ordering::Relaxed) {
            self.dropped_after_stop.fetch_add(1, Ordering::Relaxed);
            return Err(ArchiveError::Finished);
        }
        match self.store.put_fill(hash, f) {
            Ok(()) => {}
            Err(ArchiveError::Finished) => {
                self.dropped_after_trailer.fetch_add(1, Ordering::Relaxed);
                return Err(ArchiveError::Finished);
            }
            Err(e) => {
                self.stop(&e.to_string());
                return Err(e);
            }
        }
        self.blob_referenced_bytes
            .fetch_add(f.len, Ordering::Relaxed);
        Ok(BlobRef { hash, len: f.len })
    }

    /// The name of `f`'s content: from the small cache of recent fills (a program
    /// copying the same constant buffer again pays no hash), else computed.
    fn fill_hash(&self, f: &Fill) -> ContentHash {
        if let Some(h) = self.fill_names.lock().get(f) {
            return *h;
        }
        let h = f.hash();
        let mut names = self.fill_names.lock();
        if names.len() >= FILL_NAMES_KEPT {
            names.clear();
        }
        names.insert(*f, h);
        h
    }

    /// Stores a device code object (fat binary, ELF, bundle) and returns its hash.
    pub fn put_code_object(&self, data: &[u8]) -> Result<ContentHash> {
        let hash = ContentHash::of(data);
        self.put_content(hash, data, ContentKind::CodeObject)?;
        Ok(hash)
    }

    /// Gives this process directory a code object `from_dir` (another process directory
    /// of the same archive, e.g. a forked child's parent) holds: a hard link.
    pub fn link_code_object(&self, from_dir: &Path, hash: ContentHash) -> Result<()> {
        self.store.link_code_object(from_dir, hash)
    }

    fn put_content(&self, hash: ContentHash, data: &[u8], kind: ContentKind) -> Result<()> {
        if self.stopped.load(Ordering::Relaxed) {
            self.dropped_after_stop.fetch_add(1, Ordering::Relaxed);
            return Err(ArchiveError::Finished);
        }
        match self.store.put(hash, data, kind) {
            Ok(()) => Ok(()),
            Err(ArchiveError::Finished) => {
                self.dropped_after_trailer.fetch_add(1, Ordering::Relaxed);
                Err(ArchiveError::Finished)
            }
            Err(e) => {
                self.stop(&e.to_string());
                Err(e)
            }
        }
    }
}
