//! Content-addressed files: blobs (host bytes) and code objects (device images).
//!
//! Each file is a 16-byte header then the content, stored raw or as one zstd frame:
//! ```text
//! 0 4 magic "HRRB"
//! 4 1 codec (0 raw, 1 zstd, 2 fill: the stored bytes are one 16-byte unit, repeated to
//!   the content length: `fill`)
//! 5 3 reserved, zero
//! 8 8 content length before compression (u64 LE)
//! 16 . stored bytes
//! ```
//! Files are written under a temporary name and renamed into place, so a crash never
//! leaves half a file under a content name. Reading checks sizes against the limits
//! before allocating and verifies the content against the name.

use std::fs;
use std::path::{Path, PathBuf};

use crate::fill::{Fill, FILL_UNIT};
use crate::hash::ContentHash;
use crate::limits::Limits;
use crate::safefs;
use crate::{ArchiveError, Result};

mod parallel_io;
pub use parallel_io::{
    mapped_write_threads, read_exact_at_parallel, write_all_at_parallel, write_mapped_parallel,
    write_mapped_with, PARALLEL_IO_BYTES,
};

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

/// The codec byte of a fill: the body is the 16-byte unit the content repeats.
pub const CODEC_FILL: u8 = 2;

/// The on-disk form of a fill (header + unit).
pub fn encode_fill(f: &Fill) -> [u8; BLOB_HEADER_LEN + FILL_UNIT] {
    let mut out = [0u8; BLOB_HEADER_LEN + FILL_UNIT];
    out[..4].copy_from_slice(BLOB_MAGIC);
    out[4] = CODEC_FILL;
    out[8..16].copy_from_slice(&f.len.to_le_bytes());
    out[16..].copy_from_slice(&f.unit);
    out
}

/// The fill a codec-2 body declares: exactly one unit.
fn fill_of(path: &Path, raw_len: u64, body: &[u8]) -> Result<Fill> {
    let unit: [u8; FILL_UNIT] = body.try_into().map_err(|_| {
        ArchiveError::invalid(
            path,
            format!(
                "a fill blob holds one {FILL_UNIT}-byte unit; this one holds {} bytes",
                body.len()
            ),
        )
    })?;
    Ok(Fill { unit, len: raw_len })
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
/// then renamed, never through a symbolic link (`safefs`). `dest`'s parent must exist.
pub fn write_atomic(dest: &Path, bytes: &[u8], fsync: bool) -> Result<()> {
    write_atomic_parts(dest, &[bytes], fsync)
}

/// `write_atomic` for content in several pieces (a header and the caller's buffer), so a
/// large uncompressed blob is never copied.
pub fn write_atomic_parts(dest: &Path, parts: &[&[u8]], fsync: bool) -> Result<()> {
    safefs::write_atomic_with(dest, fsync, |f, tmp| {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mapped = total >= PARALLEL_IO_BYTES
            && write_mapped_parallel(f, parts).map_err(|e| ArchiveError::io(tmp, "write", e))?;
        if !mapped {
            let mut at = 0u64;
            for bytes in parts {
                write_all_at_parallel(f, bytes, at)
                    .map_err(|e| ArchiveError::io(tmp, "write", e))?;
                at += bytes.len() as u64;
            }
        }
        Ok(())
    })
}

/// Opens a file inside the archive, refusing symlinks and anything not a regular file
/// (without blocking on a FIFO), and checks its size against `max_file_bytes` before
/// reading it.
pub fn read_regular_file(path: &Path, limits: &Limits) -> Result<Vec<u8>> {
    use std::io::Read;
    let (f, len) = open_stored(path, limits)?;
    let mut bytes = Vec::with_capacity(len as usize);
    // One byte past the limit tells a file that grew after fstat from one that did not.
    f.take(limits.max_file_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ArchiveError::io(path, "read", e))?;
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
        None,
        limits,
    )
}

/// Opens a stored file for reading: no symbolic link, a regular file, no larger than
/// `max_file_bytes`. Returns the file and its length.
fn open_stored(path: &Path, limits: &Limits) -> Result<(fs::File, u64)> {
    let (f, len) = safefs::open_regular(path)?;
    Limits::check(path, "max_file_bytes", len, limits.max_file_bytes)?;
    Ok((f, len))
}

fn read_header(path: &Path, f: &fs::File) -> Result<[u8; BLOB_HEADER_LEN]> {
    let mut header = [0u8; BLOB_HEADER_LEN];
    std::os::unix::fs::FileExt::read_exact_at(f, &mut header, 0).map_err(|_| {
        ArchiveError::invalid(
            path,
            "not a blob file (bad magic or shorter than its header)",
        )
    })?;
    Ok(header)
}

/// Reads `len` stored bytes after the header into `buf` and checks the file holds no more
/// (a file that grew after it was measured).
fn read_body_into(path: &Path, f: &fs::File, buf: &mut [u8]) -> Result<()> {
    read_exact_at_parallel(f, buf, BLOB_HEADER_LEN as u64)
        .map_err(|e| ArchiveError::io(path, "read", e))?;
    let mut extra = [0u8; 1];
    let end = (BLOB_HEADER_LEN + buf.len()) as u64;
    if std::os::unix::fs::FileExt::read_at(f, &mut extra, end)
        .map_err(|e| ArchiveError::io(path, "read", e))?
        > 0
    {
        return Err(ArchiveError::invalid(
            path,
            "the file grew while it was read",
        ));
    }
    Ok(())
}

/// Reads a blob file as header and body without copying the body again: the regular-file
/// and size checks of `read_regular_file`, then the body read straight into its buffer.
pub fn read_blob_file(path: &Path, limits: &Limits) -> Result<([u8; BLOB_HEADER_LEN], Vec<u8>)> {
    let (f, file_len) = open_stored(path, limits)?;
    let header = read_header(path, &f)?;
    let want = file_len.saturating_sub(BLOB_HEADER_LEN as u64);
    // Zeroed by the allocator's fresh pages (calloc), filled by large positioned reads.
    let mut body = vec![0u8; want as usize];
    read_body_into(path, &f, &mut body)?;
    Ok((header, body))
}

/// Reads and verifies the blob `path` straight into `out`, which must be exactly its
/// content length: replay fills reused (page-locked) buffers this way, with no
/// allocation and no second copy for an uncompressed blob.
pub fn read_blob_into(
    path: &Path,
    expected: &ContentHash,
    limits: &Limits,
    out: &mut [u8],
) -> Result<()> {
    let (f, file_len) = open_stored(path, limits)?;
    let header = read_header(path, &f)?;
    let (codec, raw_len) = parse_header(path, &header, limits)?;
    if raw_len != out.len() as u64 {
        return Err(ArchiveError::invalid(
            path,
            format!(
                "blob header says {raw_len} bytes, the event says {}",
                out.len()
            ),
        ));
    }
    let stored = file_len.saturating_sub(BLOB_HEADER_LEN as u64);
    match codec {
        0 => {
            if stored != raw_len {
                return Err(ArchiveError::invalid(
                    path,
                    format!("blob header says {raw_len} bytes, file holds {stored}"),
                ));
            }
            read_body_into(path, &f, out)?;
        }
        CODEC_FILL => {
            // Verified by the unit (the hash of the expanded bytes, computed without
            // them), then expanded: no hashing pass over the whole content.
            let fill = verified_fill(path, &f, stored, raw_len, expected)?;
            fill.expand_into(out);
            return Ok(());
        }
        _ => {
            let mut body = vec![0u8; stored as usize];
            read_body_into(path, &f, &mut body)?;
            decode_body_into(path, codec, &body, out)?;
        }
    }
    verify(path, out, expected)
}

/// Verifies the blob `path` against its name and the `len` an event gives, streaming its
/// content (raw or decompressed) through the hash: memory stays bounded whatever the
/// blob's size (issue 20: `--repair` loaded an 8 GiB sparse blob whole, 8.0 GB resident).
pub fn verify_blob_stream(
    path: &Path,
    expected: &ContentHash,
    limits: &Limits,
    len: u64,
) -> Result<()> {
    use std::io::Read;
    let (f, file_len) = open_stored(path, limits)?;
    let header = read_header(path, &f)?;
    let (codec, raw_len) = parse_header(path, &header, limits)?;
    if raw_len != len {
        return Err(ArchiveError::invalid(
            path,
            format!("blob header says {raw_len} bytes, the event says {len}"),
        ));
    }
    let stored = file_len.saturating_sub(BLOB_HEADER_LEN as u64);
    let body = std::io::BufReader::with_capacity(
        1 << 20,
        positioned(&f, BLOB_HEADER_LEN as u64).take(stored),
    );
    let mut content: Box<dyn Read> = match codec {
        0 if stored == raw_len => Box::new(body),
        0 => {
            return Err(ArchiveError::invalid(
                path,
                format!("blob header says {raw_len} bytes, file holds {stored}"),
            ))
        }
        CODEC_FILL => return verified_fill(path, &f, stored, raw_len, expected).map(|_| ()),
        1 => Box::new(
            zstd::stream::read::Decoder::with_buffer(body).map_err(|e| zstd_error(path, e))?,
        ),
        other => {
            return Err(ArchiveError::invalid(
                path,
                format!("unknown codec {other}"),
            ));
        }
    };
    let mut hash = crate::hash::StreamHash::new(raw_len);
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = content
            .read(&mut buf)
            .map_err(|e| ArchiveError::io(path, "read", e))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > raw_len {
            return Err(ArchiveError::invalid(
                path,
                format!("blob header says {raw_len} bytes, its content holds more"),
            ));
        }
        hash.update(&buf[..n]);
    }
    match hash.finish() {
        Some(found) if &found == expected => Ok(()),
        Some(found) => Err(ArchiveError::HashMismatch {
            path: path.to_path_buf(),
            expected: expected.to_hex(),
            found: found.to_hex(),
        }),
        None => Err(ArchiveError::invalid(
            path,
            format!("blob header says {raw_len} bytes, its content holds {total}"),
        )),
    }
}

/// A reader of `f` from byte `at` on (positioned reads: the descriptor's offset is
/// untouched).
fn positioned(f: &fs::File, at: u64) -> impl std::io::Read + '_ {
    struct At<'a>(&'a fs::File, u64);
    impl std::io::Read for At<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = std::os::unix::fs::FileExt::read_at(self.0, buf, self.1)?;
            self.1 += n as u64;
            Ok(n)
        }
    }
    At(f, at)
}

/// The fill a stored blob is, verified against its name, or None when the blob is stored
/// another way. Reads the header and the 16-byte unit only: a reader that can compare
/// with the fill directly never expands it.
pub fn read_blob_fill(
    path: &Path,
    expected: &ContentHash,
    limits: &Limits,
    len: u64,
) -> Result<Option<Fill>> {
    let (f, file_len) = open_stored(path, limits)?;
    let header = read_header(path, &f)?;
    let (codec, raw_len) = parse_header(path, &header, limits)?;
    if codec != CODEC_FILL {
        return Ok(None);
    }
    if raw_len != len {
        return Err(ArchiveError::invalid(
            path,
            format!("blob header says {raw_len} bytes, the event says {len}"),
        ));
    }
    let stored = file_len.saturating_sub(BLOB_HEADER_LEN as u64);
    verified_fill(path, &f, stored, raw_len, expected).map(Some)
}

/// Reads a fill's unit (the file must hold exactly one) and checks that the content it
/// stands for hashes to the blob's name.
fn verified_fill(
    path: &Path,
    f: &fs::File,
    stored: u64,
    raw_len: u64,
    expected: &ContentHash,
) -> Result<Fill> {
    if stored != FILL_UNIT as u64 {
        return Err(ArchiveError::invalid(
            path,
            format!("a fill blob holds one {FILL_UNIT}-byte unit; this one holds {stored} bytes"),
        ));
    }
    let mut body = [0u8; FILL_UNIT];
    read_body_into(path, f, &mut body)?;
    let fill = fill_of(path, raw_len, &body)?;
    let found = fill.hash();
    if &found != expected {
        return Err(ArchiveError::HashMismatch {
            path: path.to_path_buf(),
            expected: expected.to_hex(),
            found: found.to_hex(),
        });
    }
    Ok(fill)
}

/// The codec and content length a header declares; the length is checked against
/// `max_host_bytes` before anything is allocated for it.
fn parse_header(path: &Path, header: &[u8], limits: &Limits) -> Result<(u8, u64)> {
    if header.len() < BLOB_HEADER_LEN || &header[..4] != BLOB_MAGIC {
        return Err(ArchiveError::invalid(
            path,
            "not a blob file (bad magic or shorter than its header)",
        ));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[8..16]);
    let raw_len = u64::from_le_bytes(len);
    Limits::check(path, "max_host_bytes", raw_len, limits.max_host_bytes)?;
    Ok((header[4], raw_len))
}

fn verify(path: &Path, data: &[u8], expected: &ContentHash) -> Result<()> {
    let found = ContentHash::of(data);
    if &found != expected {
        return Err(ArchiveError::HashMismatch {
            path: path.to_path_buf(),
            expected: expected.to_hex(),
            found: found.to_hex(),
        });
    }
    Ok(())
}

/// `decode` for a header and a body already apart (the body is moved, not copied).
/// `expected_len`, when the caller knows it (a blob an event references), must equal the
/// header's declared length before anything is decompressed: a small file declaring
/// gigabytes is refused by that comparison, not by running out of memory.
pub fn decode_parts(
    path: &Path,
    header: &[u8],
    body: Vec<u8>,
    expected: &ContentHash,
    expected_len: Option<u64>,
    limits: &Limits,
) -> Result<Vec<u8>> {
    let (codec, raw_len) = parse_header(path, header, limits)?;
    if let Some(want) = expected_len.filter(|&w| w != raw_len) {
        return Err(ArchiveError::invalid(
            path,
            format!("blob header says {raw_len} bytes, the event says {want}"),
        ));
    }
    let data = decode_body(path, codec, raw_len, body)?;
    verify(path, &data, expected)?;
    Ok(data)
}

fn zstd_error(path: &Path, e: std::io::Error) -> ArchiveError {
    ArchiveError::invalid(path, format!("zstd frame does not decode: {e}"))
}

/// The content of a stored body: as is (raw) or decompressed (zstd), `raw_len` long.
/// Decompression streams and stops one byte past `raw_len`, so memory follows what the
/// frame really holds, never only what the header claims.
fn decode_body(path: &Path, codec: u8, raw_len: u64, body: Vec<u8>) -> Result<Vec<u8>> {
    use std::io::Read;
    match codec {
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
            Ok(body)
        }
        1 => {
            let dec = zstd::stream::read::Decoder::with_buffer(&body[..])
                .map_err(|e| zstd_error(path, e))?;
            // A first reservation no larger than what a frame of this size plausibly
            // holds; the vector grows only as decompressed bytes arrive.
            let mut data = Vec::with_capacity(raw_len.min(body.len() as u64 * 8) as usize);
            dec.take(raw_len.saturating_add(1))
                .read_to_end(&mut data)
                .map_err(|e| zstd_error(path, e))?;
            if data.len() as u64 != raw_len {
                return Err(ArchiveError::invalid(
                    path,
                    format!(
                        "blob header says {raw_len} bytes, zstd frame holds {}{}",
                        data.len().min(raw_len as usize),
                        if data.len() as u64 > raw_len {
                            " or more"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            Ok(data)
        }
        CODEC_FILL => {
            // The length was checked against the limits with the header.
            let f = fill_of(path, raw_len, &body)?;
            let mut data = vec![0u8; raw_len as usize];
            f.expand_into(&mut data);
            Ok(data)
        }
        other => Err(ArchiveError::invalid(
            path,
            format!("unknown blob codec {other}"),
        )),
    }
}

/// `decode_body` straight into `out` (exactly the declared length): no second buffer.
fn decode_body_into(path: &Path, codec: u8, body: &[u8], out: &mut [u8]) -> Result<()> {
    use std::io::Read;
    if codec == CODEC_FILL {
        fill_of(path, out.len() as u64, body)?.expand_into(out);
        return Ok(());
    }
    if codec != 1 {
        return Err(ArchiveError::invalid(
            path,
            format!("unknown blob codec {codec}"),
        ));
    }
    let mut dec =
        zstd::stream::read::Decoder::with_buffer(body).map_err(|e| zstd_error(path, e))?;
    dec.read_exact(out).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            ArchiveError::invalid(
                path,
                format!(
                    "blob header says {} bytes, zstd frame holds fewer",
                    out.len()
                ),
            )
        } else {
            zstd_error(path, e)
        }
    })?;
    let mut extra = [0u8; 1];
    if dec.read(&mut extra).map_err(|e| zstd_error(path, e))? != 0 {
        return Err(ArchiveError::invalid(
            path,
            format!(
                "blob header says {} bytes, zstd frame holds more",
                out.len()
            ),
        ));
    }
    Ok(())
}

/// Reads the declared content length from a stored file's header without reading the body.
pub fn stored_content_len(path: &Path) -> Result<u64> {
    use std::io::Read;
    let (mut f, _) = safefs::open_regular(path)?;
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
mod tests;
