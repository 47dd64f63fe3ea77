//! Content-addressed files: blobs (host bytes) and code objects (device images).
//!
//! Each file is a 16-byte header then the content, stored raw or as one zstd frame:
//! ```text
//! 0 4 magic "HRRB"
//! 4 1 codec (0 raw, 1 zstd)
//! 5 3 reserved, zero
//! 8 8 content length before compression (u64 LE)
//! 16 . stored bytes
//! ```
//! Files are written under a temporary name and renamed into place, so a crash never
//! leaves half a file under a content name. Reading checks sizes against the limits
//! before allocating and verifies the content against the name.

use std::fs;
use std::path::{Path, PathBuf};

use crate::hash::ContentHash;
use crate::limits::Limits;
use crate::{ArchiveError, Result};

pub const BLOB_MAGIC: &[u8; 4] = b"HRRB";
pub const BLOB_HEADER_LEN: usize = 16;
pub const BLOBS_DIR: &str = "blobs";
pub const CODE_OBJECTS_DIR: &str = "code_objects";

/// How blob content is stored on disk, chosen at capture time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Zstd { level: i32 },
}

impl Compression {
    fn codec(&self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Zstd { .. } => 1,
        }
    }
}

/// Relative path of a blob inside a process directory.
pub fn blob_rel_path(hash: &ContentHash) -> PathBuf {
    let hex = hash.to_hex();
    PathBuf::from(BLOBS_DIR)
        .join(&hex[..2])
        .join(format!("{hex}.blob"))
}

/// Relative path of a code object inside a process directory.
pub fn code_object_rel_path(hash: &ContentHash) -> PathBuf {
    PathBuf::from(CODE_OBJECTS_DIR).join(format!("{}.co", hash.to_hex()))
}

/// Encodes `data` into the on-disk form (header + stored bytes).
pub fn encode(data: &[u8], compression: Compression) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(BLOB_HEADER_LEN + data.len());
    out.extend_from_slice(BLOB_MAGIC);
    out.push(compression.codec());
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    match compression {
        Compression::None => out.extend_from_slice(data),
        Compression::Zstd { level } => {
            let compressed = zstd::bulk::compress(data, level)?;
            out.extend_from_slice(&compressed);
        }
    }
    Ok(out)
}

/// The 16-byte header of a blob holding `len` bytes stored with `compression`.
pub fn header(len: u64, compression: Compression) -> [u8; BLOB_HEADER_LEN] {
    let mut h = [0u8; BLOB_HEADER_LEN];
    h[..4].copy_from_slice(BLOB_MAGIC);
    h[4] = compression.codec();
    h[8..].copy_from_slice(&len.to_le_bytes());
    h
}

/// Writes `bytes` to `dest` atomically: a temporary file in the same directory, fsync'd,
/// then renamed. `dest`'s parent must exist.
pub fn write_atomic(dest: &Path, bytes: &[u8], fsync: bool) -> Result<()> {
    write_atomic_parts(dest, &[bytes], fsync)
}

/// `write_atomic` for content in several pieces (a header and the caller's buffer), so a
/// large uncompressed blob is never copied.
pub fn write_atomic_parts(dest: &Path, parts: &[&[u8]], fsync: bool) -> Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".tmp-{}-{}-{}",
        std::process::id(),
        thread_token(),
        dest.file_name().and_then(|n| n.to_str()).unwrap_or("file")
    ));
    let result = (|| {
        let f = fs::File::create(&tmp).map_err(|e| ArchiveError::io(&tmp, "create", e))?;
        let mut at = 0u64;
        for bytes in parts {
            write_all_at_parallel(&f, bytes, at).map_err(|e| ArchiveError::io(&tmp, "write", e))?;
            at += bytes.len() as u64;
        }
        if fsync {
            f.sync_all()
                .map_err(|e| ArchiveError::io(&tmp, "fsync", e))?;
        }
        drop(f);
        fs::rename(&tmp, dest).map_err(|e| ArchiveError::io(dest, "rename into place", e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Buffers at least this large are written and read by several threads at once: one
/// thread copying into or out of the page cache manages 1-3 GB/s, far below memory
/// bandwidth, and a gigabyte copy would otherwise stall the program for a second.
pub const PARALLEL_IO_BYTES: usize = 64 << 20;
const IO_THREADS: usize = 8;

fn chunks_of(len: usize) -> usize {
    if len < PARALLEL_IO_BYTES {
        return 1;
    }
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    cores.clamp(1, IO_THREADS).min(len / (8 << 20)).max(1)
}

/// `write_all_at` of `data` at `offset`, split over threads for large buffers.
pub fn write_all_at_parallel(f: &fs::File, data: &[u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let n = chunks_of(data.len());
    if n == 1 {
        return f.write_all_at(data, offset);
    }
    let step = data.len().div_ceil(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = data
            .chunks(step)
            .enumerate()
            .map(|(i, chunk)| s.spawn(move || f.write_all_at(chunk, offset + (i * step) as u64)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(std::io::Error::other("writer thread panicked")))
        })
    })
}

/// Fills `buf` from `offset`, split over threads for large buffers.
pub fn read_exact_at_parallel(f: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let n = chunks_of(buf.len());
    if n == 1 {
        return f.read_exact_at(buf, offset);
    }
    let step = buf.len().div_ceil(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = buf
            .chunks_mut(step)
            .enumerate()
            .map(|(i, chunk)| s.spawn(move || f.read_exact_at(chunk, offset + (i * step) as u64)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(std::io::Error::other("reader thread panicked")))
        })
    })
}

fn thread_token() -> u64 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// Opens a file inside the archive, refusing symlinks and anything not a regular file,
/// and checks its size against `max_file_bytes` before reading it.
pub fn read_regular_file(path: &Path, limits: &Limits) -> Result<Vec<u8>> {
    let meta = fs::symlink_metadata(path).map_err(|e| ArchiveError::io(path, "stat", e))?;
    if meta.file_type().is_symlink() {
        return Err(ArchiveError::unsafe_path(path, "is a symbolic link"));
    }
    if !meta.is_file() {
        return Err(ArchiveError::unsafe_path(path, "is not a regular file"));
    }
    Limits::check(path, "max_file_bytes", meta.len(), limits.max_file_bytes)?;
    let bytes = fs::read(path).map_err(|e| ArchiveError::io(path, "read", e))?;
    // The file may have grown between stat and read.
    Limits::check(
        path,
        "max_file_bytes",
        bytes.len() as u64,
        limits.max_file_bytes,
    )?;
    Ok(bytes)
}

/// Decodes a stored blob, checking its declared length against `max_host_bytes` before
/// decompressing, and its content against `expected`.
pub fn decode(
    path: &Path,
    stored: &[u8],
    expected: &ContentHash,
    limits: &Limits,
) -> Result<Vec<u8>> {
    if stored.len() < BLOB_HEADER_LEN {
        return Err(ArchiveError::invalid(
            path,
            "not a blob file (bad magic or shorter than its header)",
        ));
    }
    decode_parts(
        path,
        &stored[..BLOB_HEADER_LEN],
        stored[BLOB_HEADER_LEN..].to_vec(),
        expected,
        limits,
    )
}

/// Reads a blob file as header and body without copying the body again: the regular-file
/// and size checks of `read_regular_file`, then the body read straight into its buffer.
pub fn read_blob_file(path: &Path, limits: &Limits) -> Result<([u8; BLOB_HEADER_LEN], Vec<u8>)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                ArchiveError::unsafe_path(path, "is a symbolic link")
            } else {
                ArchiveError::io(path, "open", e)
            }
        })?;
    let meta = f
        .metadata()
        .map_err(|e| ArchiveError::io(path, "stat", e))?;
    if !meta.is_file() {
        return Err(ArchiveError::unsafe_path(path, "is not a regular file"));
    }
    Limits::check(path, "max_file_bytes", meta.len(), limits.max_file_bytes)?;
    let mut header = [0u8; BLOB_HEADER_LEN];
    f.read_exact(&mut header).map_err(|_| {
        ArchiveError::invalid(
            path,
            "not a blob file (bad magic or shorter than its header)",
        )
    })?;
    let want = meta.len().saturating_sub(BLOB_HEADER_LEN as u64);
    // Zeroed by the allocator's fresh pages (calloc), filled by large positioned reads.
    let mut body = vec![0u8; want as usize];
    read_exact_at_parallel(&f, &mut body, BLOB_HEADER_LEN as u64)
        .map_err(|e| ArchiveError::io(path, "read", e))?;
    // A file that grew after stat shows up as a length mismatch in decode.
    let mut extra = [0u8; 1];
    let end = BLOB_HEADER_LEN as u64 + want;
    if std::os::unix::fs::FileExt::read_at(&f, &mut extra, end)
        .map_err(|e| ArchiveError::io(path, "read", e))?
        > 0
    {
        return Err(ArchiveError::invalid(
            path,
            "the file grew while it was read",
        ));
    }
    Ok((header, body))
}

/// `decode` for a header and a body already apart (the body is moved, not copied).
pub fn decode_parts(
    path: &Path,
    header: &[u8],
    body: Vec<u8>,
    expected: &ContentHash,
    limits: &Limits,
) -> Result<Vec<u8>> {
    if header.len() < BLOB_HEADER_LEN || &header[..4] != BLOB_MAGIC {
        return Err(ArchiveError::invalid(
            path,
            "not a blob file (bad magic or shorter than its header)",
        ));
    }
    let codec = header[4];
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[8..16]);
    let raw_len = u64::from_le_bytes(len);
    Limits::check(path, "max_host_bytes", raw_len, limits.max_host_bytes)?;
    let data = match codec {
        0 => {
            if body.len() as u64 != raw_len {
                return Err(ArchiveError::invalid(
                    path,
                    format!(
                        "blob header says {raw_len} bytes, file holds {}",
                        body.len()
                    ),
                ));
            }
            body
        }
        1 => {
            let data = zstd::bulk::decompress(&body, raw_len as usize).map_err(|e| {
                ArchiveError::invalid(path, format!("zstd frame does not decode: {e}"))
            })?;
            if data.len() as u64 != raw_len {
                return Err(ArchiveError::invalid(
                    path,
                    format!(
                        "blob header says {raw_len} bytes, zstd frame holds {}",
                        data.len()
                    ),
                ));
            }
            data
        }
        other => {
            return Err(ArchiveError::invalid(
                path,
                format!("unknown blob codec {other}"),
            ))
        }
    };
    let found = ContentHash::of(&data);
    if &found != expected {
        return Err(ArchiveError::HashMismatch {
            path: path.to_path_buf(),
            expected: expected.to_hex(),
            found: found.to_hex(),
        });
    }
    Ok(data)
}

/// Reads the declared content length from a stored file's header without reading the body.
pub fn stored_content_len(path: &Path) -> Result<u64> {
    use std::io::Read;
    let mut f = fs::File::open(path).map_err(|e| ArchiveError::io(path, "open", e))?;
    let mut h = [0u8; BLOB_HEADER_LEN];
    f.read_exact(&mut h)
        .map_err(|e| ArchiveError::io(path, "read header", e))?;
    if &h[..4] != BLOB_MAGIC {
        return Err(ArchiveError::invalid(path, "not a blob file (bad magic)"));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&h[8..16]);
    Ok(u64::from_le_bytes(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_both_codecs() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        let h = ContentHash::of(&data);
        for c in [Compression::None, Compression::Zstd { level: 3 }] {
            let stored = encode(&data, c).unwrap();
            let back = decode(Path::new("x"), &stored, &h, &Limits::default()).unwrap();
            assert_eq!(back, data);
        }
        let stored = encode(&data, Compression::Zstd { level: 3 }).unwrap();
        assert!(
            stored.len() < data.len() / 4,
            "zstd should shrink a repetitive buffer"
        );
    }

    #[test]
    fn declared_length_is_checked_before_decompressing() {
        let data = vec![0u8; 1 << 20];
        let stored = encode(&data, Compression::Zstd { level: 1 }).unwrap();
        let limits = Limits {
            max_host_bytes: 1 << 10,
            ..Limits::default()
        };
        let err = decode(Path::new("b"), &stored, &ContentHash::of(&data), &limits).unwrap_err();
        assert!(err.is_limit(), "{err}");
    }
}
