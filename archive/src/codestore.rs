//! The code-object store one machine's archives share (`HRR_CAPTURE_CODE_STORE=DIR`):
//! capture writes each code object there once, by content hash, instead of into every
//! archive; replay reads there what an archive does not hold.
//!
//! Layout: `DIR/code_objects/<32-hex>.co`, each file in the blob-file format an archive's
//! own `code_objects/` uses (header, then the bytes, possibly compressed).
//!
//! Trust: content hashes are XXH3-128, which is not collision resistant, so a store is
//! used only when nobody else can write into it: `DIR` and `DIR/code_objects` must be
//! real directories (no symbolic link), owned by the effective user, writable by no group
//! and no other user. Files are created as an archive's are (fresh name, `O_NOFOLLOW`,
//! rename) and read as an archive's are (no link, no FIFO, a regular file, limits checked
//! before allocation, the content hashed against its name).

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::blob::{self, Compression};
use crate::hash::ContentHash;
use crate::{ArchiveError, Limits, Result};

/// One machine's code-object store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeStore {
    root: PathBuf,
}

impl CodeStore {
    /// Opens the store at `root` for writing, creating `root` (one level) and its
    /// `code_objects/` if missing; refuses a store someone else could write into.
    pub fn create(root: &Path) -> Result<CodeStore> {
        if !root.is_absolute() {
            return Err(ArchiveError::unsafe_path(
                root,
                "the code store must be an absolute path",
            ));
        }
        let objects = root.join(blob::CODE_OBJECTS_DIR);
        for dir in [root, &objects] {
            // 0755 whatever the umask leaves: a store the creator's group may write
            // into would be refused below.
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(dir)
                .map_err(|e| ArchiveError::io(dir, "create directory", e))?;
            check_private(dir)?;
        }
        Ok(CodeStore {
            root: root.to_path_buf(),
        })
    }

    /// Opens an existing store for reading, with the same checks as `create`.
    pub fn open(root: &Path) -> Result<CodeStore> {
        check_private(root)?;
        check_private(&root.join(blob::CODE_OBJECTS_DIR))?;
        Ok(CodeStore {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the store keeps `hash`.
    pub fn path_of(&self, hash: &ContentHash) -> PathBuf {
        self.root.join(blob::code_object_rel_path(hash))
    }

    /// Whether the store holds `hash` (a regular file by that name; never a link).
    pub fn has(&self, hash: &ContentHash) -> bool {
        fs::symlink_metadata(self.path_of(hash)).is_ok_and(|m| m.is_file())
    }

    /// Stores `data` under `hash` unless the store holds it already. Returns the bytes
    /// written (0 when it was there). Two captures storing the same object race
    /// harmlessly: each writes a fresh name and renames it over the same content.
    pub fn put(&self, hash: &ContentHash, data: &[u8], compression: Compression) -> Result<u64> {
        if self.has(hash) {
            return Ok(0);
        }
        let dest = self.path_of(hash);
        let (header, encoded);
        let parts: [&[u8]; 2] = match compression {
            Compression::None => {
                header = blob::header(data.len() as u64, Compression::None);
                [&header, data]
            }
            c => {
                encoded =
                    blob::encode(data, c).map_err(|e| ArchiveError::io(&dest, "compress", e))?;
                [&encoded, &[]]
            }
        };
        blob::write_atomic_parts(&dest, &parts, false)?;
        Ok(parts.iter().map(|p| p.len() as u64).sum())
    }

    /// Loads `hash` from the store and checks it against its name.
    pub fn load(&self, hash: &ContentHash, limits: &Limits) -> Result<Vec<u8>> {
        let path = self.path_of(hash);
        let (header, body) = blob::read_blob_file(&path, limits)?;
        blob::decode_parts(&path, &header, body, hash, None, limits)
    }
}

/// `dir` is a real directory, owned by the effective user and writable by nobody else.
fn check_private(dir: &Path) -> Result<()> {
    let m = fs::symlink_metadata(dir).map_err(|e| ArchiveError::io(dir, "stat", e))?;
    if m.file_type().is_symlink() {
        return Err(ArchiveError::unsafe_path(dir, "is a symbolic link"));
    }
    if !m.is_dir() {
        return Err(ArchiveError::unsafe_path(dir, "is not a directory"));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(ArchiveError::unsafe_path(
            dir,
            format!(
                "is owned by uid {}, not by this user (uid {me}): a code store must be \
                 one nobody else can write into",
                m.uid()
            ),
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(ArchiveError::unsafe_path(
            dir,
            format!(
                "is writable by its group or by others (mode {:o}): a code store must be \
                 one nobody else can write into (chmod go-w)",
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn store() -> (tempfile::TempDir, CodeStore) {
        let d = tempfile::tempdir().unwrap();
        let s = CodeStore::create(&d.path().join("store")).unwrap();
        (d, s)
    }

    #[test]
    fn an_object_is_written_once_and_read_back_verified() {
        let (_d, s) = store();
        let data = vec![7u8; 5000];
        let h = ContentHash::of(&data);
        assert!(!s.has(&h));
        assert!(s.put(&h, &data, Compression::None).unwrap() > 5000);
        assert!(s.has(&h));
        assert_eq!(s.put(&h, &data, Compression::None).unwrap(), 0);
        assert_eq!(s.load(&h, &Limits::default()).unwrap(), data);
        let z = vec![3u8; 100_000];
        let hz = ContentHash::of(&z);
        s.put(&hz, &z, Compression::Zstd { level: 3 }).unwrap();
        assert_eq!(s.load(&hz, &Limits::default()).unwrap(), z);
    }

    #[test]
    fn a_planted_object_that_does_not_hash_to_its_name_is_refused() {
        let (_d, s) = store();
        let data = b"the real code object".to_vec();
        let h = ContentHash::of(&data);
        let other = b"something else entirely".to_vec();
        s.put(&ContentHash::of(&other), &other, Compression::None)
            .unwrap();
        fs::rename(s.path_of(&ContentHash::of(&other)), s.path_of(&h)).unwrap();
        let e = s.load(&h, &Limits::default()).unwrap_err();
        assert!(matches!(e, ArchiveError::HashMismatch { .. }), "{e}");
    }

    #[test]
    fn a_store_others_can_write_or_reached_by_a_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let e = CodeStore::create(&open).unwrap_err().to_string();
        assert!(e.contains("writable by its group or by others"), "{e}");
        let real = d.path().join("real");
        CodeStore::create(&real).unwrap();
        let link = d.path().join("link");
        symlink(&real, &link).unwrap();
        let e = CodeStore::open(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = CodeStore::create(Path::new("relative/store"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("absolute"), "{e}");
        // A planted link at an object's name is not an object.
        let s = CodeStore::open(&real).unwrap();
        let h = ContentHash::of(b"x");
        symlink("/etc/passwd", s.path_of(&h)).unwrap();
        assert!(!s.has(&h));
        assert!(s.load(&h, &Limits::default()).is_err());
    }
}
