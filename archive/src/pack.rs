//! Portable archives: one file (`.hrrz`) holding a whole archive, for storing an archive
//! as a matrix case, uploading a failing case's archive from CI and replaying it
//! elsewhere. `hrr-replay --pack ARCHIVE OUT.hrrz` and `--unpack IN.hrrz DIR`.
//!
//! Format: a zstd stream of a POSIX ustar archive. Its first member, `hrrz.json`, is the
//! index ([`Index`]): the format version and every file that follows, in order, with its
//! length and SHA-256; then each file as a regular-file member; then the two zero blocks
//! that end a tar. An archive kept in a code store has the store's code objects packed
//! into its process directories, so the file stands alone.
//!
//! Written and read here, not by the tar crate: the writer makes regular files with fixed
//! names only, and the reader must refuse everything else a tar can hold (links,
//! devices, absolute or `..` paths, long-name extensions) before anything is written. A
//! `.hrrz` is untrusted input: each member's name must be one an archive uses, each is
//! listed in the index in order with its length and hash, and the counts and bytes are
//! bounded by the reader's limits; files are created only under the new output
//! directory, with `O_EXCL | O_NOFOLLOW`.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::api::{fid, SEMANTIC_KINDS};
use crate::blob::{BLOBS_DIR, CODE_OBJECTS_DIR};
use crate::codestore::CodeStore;
use crate::manifest::{ProcessManifest, RootManifest, EVENTS_FILE, MANIFEST_FILE};
use crate::payload::Payload;
use crate::{safefs, Archive, ArchiveError, ContentHash, Limits, Result};

/// The index member's name.
pub const INDEX_NAME: &str = "hrrz.json";
/// The `.hrrz` format version this build writes and reads.
pub const HRRZ_VERSION: u32 = 1;
/// The most files one `.hrrz` may hold.
pub const MAX_FILES: usize = 1 << 20;
/// The largest index read.
const MAX_INDEX_BYTES: u64 = 256 << 20;
const BLOCK: usize = 512;
/// zstd's level for packing: fast, and blobs are often compressed already.
const LEVEL: i32 = 3;

/// The first member of a `.hrrz`: what follows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub hrrz_version: u32,
    /// Every file after the index, in order.
    pub files: Vec<IndexedFile>,
}

/// One file of a packed archive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexedFile {
    /// Relative to the archive root, `/`-separated.
    pub path: String,
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the file's bytes.
    pub sha256: String,
}

/// What `pack` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    pub files: usize,
    /// Bytes of the archive's files, before compression.
    pub bytes: u64,
    /// Code objects taken from the code store into the pack.
    pub from_store: usize,
    /// The `.hrrz` file's own SHA-256 (what a matrix case declares).
    pub sha256: String,
}

/// Lowercase hex SHA-256 of a file's bytes, read in pieces (a `.hrrz` a matrix names).
pub fn file_sha256(path: &Path) -> Result<String> {
    hash_file(path).map(|(_, h)| h)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether `path` is a name an archive's file has: `manifest.json`, or
/// `pid-N[.K]/manifest.json`, `.../events.bin`, `.../blobs/XX/<32 hex>.blob` (XX its first
/// two digits) or `.../code_objects/<32 hex>.co`.
pub fn is_archive_path(path: &str) -> bool {
    let hex32 = |s: &str| {
        s.len() == 32
            && s.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    let parts: Vec<&str> = path.split('/').collect();
    let process_dir = |d: &str| {
        let Some(rest) = d.strip_prefix("pid-") else {
            return false;
        };
        let (pid, image) = rest.split_once('.').unwrap_or((rest, "1"));
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit());
        digits(pid) && digits(image) && !pid.starts_with('0') && !image.starts_with('0')
    };
    match parts.as_slice() {
        [m] => *m == MANIFEST_FILE,
        [d, f] => process_dir(d) && (*f == MANIFEST_FILE || *f == EVENTS_FILE),
        [d, c, f] => {
            process_dir(d) && *c == CODE_OBJECTS_DIR && f.strip_suffix(".co").is_some_and(hex32)
        }
        [d, b, xx, f] => {
            process_dir(d)
                && *b == BLOBS_DIR
                && f.strip_suffix(".blob")
                    .is_some_and(|h| hex32(h) && h.starts_with(*xx))
        }
        _ => false,
    }
}

/// The files `pack` takes from `root`, in order, each with where to read it: the archive's
/// own files (every regular file with an archive's name; a link or any other kind of
/// file is refused), then code objects its processes keep in a code store.
fn collect(root: &Path, limits: Limits) -> Result<(Vec<(String, PathBuf)>, usize)> {
    let archive = Archive::open(root, limits)?;
    let mut files = vec![(MANIFEST_FILE.to_string(), root.join(MANIFEST_FILE))];
    let mut from_store = 0;
    for p in &archive.processes {
        let dir = &p.entry.dir;
        let mut own = Vec::new();
        walk(root, Path::new(dir), &mut own)?;
        own.sort();
        for rel in &own {
            if !is_archive_path(rel) {
                return Err(ArchiveError::unsafe_path(
                    root.join(rel),
                    "is not a file an archive holds (only manifests, event logs, blobs and code objects are packed)",
                ));
            }
        }
        for rel in &own {
            files.push((rel.clone(), root.join(rel)));
        }
        // Code objects the events name that the archive keeps in a store: packed as the
        // process's own (the store's file is in the archive's code-object format).
        if let Some(store) = p.manifest.code_store.as_deref().map(Path::new) {
            let mut named = std::collections::BTreeSet::new();
            for e in &p.events {
                if !SEMANTIC_KINDS.iter().any(|k| k.id == e.header.api_id) {
                    continue;
                }
                let Ok(pl) = Payload::parse(&e.payload) else {
                    continue;
                };
                for f in pl.all(fid::CODE_OBJECT) {
                    if let Some(h) = f.as_str().ok().and_then(ContentHash::from_hex) {
                        named.insert(h);
                    }
                }
            }
            let store = CodeStore::open(store)?;
            for h in named {
                let rel = format!("{dir}/{CODE_OBJECTS_DIR}/{}.co", h.to_hex());
                if own.contains(&rel) || !store.has(&h) {
                    continue;
                }
                files.push((rel, store.path_of(&h)));
                from_store += 1;
            }
        }
    }
    // The manifests first (the root's, then each process's): a reader meets what the
    // archive is, and where it was captured, before its bulk (`peek`).
    let rank = |p: &str| match p {
        MANIFEST_FILE => 0,
        p if p.ends_with(&format!("/{MANIFEST_FILE}")) => 1,
        _ => 2,
    };
    files.sort_by(|a, b| (rank(&a.0), &a.0).cmp(&(rank(&b.0), &b.0)));
    Ok((files, from_store))
}

/// Every regular file under `root/rel`, as `/`-separated paths relative to `root`; a
/// symbolic link or anything but a file or directory is refused, `.lock` skipped.
fn walk(root: &Path, rel: &Path, out: &mut Vec<String>) -> Result<()> {
    let dir = root.join(rel);
    let rd = fs::read_dir(&dir).map_err(|e| ArchiveError::io(&dir, "read directory", e))?;
    for entry in rd {
        let entry = entry.map_err(|e| ArchiveError::io(&dir, "read directory", e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(ArchiveError::unsafe_path(
                entry.path(),
                "has a name that is not UTF-8",
            ));
        };
        let ty = entry
            .file_type()
            .map_err(|e| ArchiveError::io(entry.path(), "stat", e))?;
        let child = rel.join(name);
        if ty.is_dir() {
            walk(root, &child, out)?;
        } else if ty.is_file() {
            out.push(child.to_string_lossy().into_owned());
        } else if name != ".lock" {
            return Err(ArchiveError::unsafe_path(
                entry.path(),
                "is a symbolic link or a special file, not packed",
            ));
        }
    }
    Ok(())
}

/// Packs the archive at `root` into `out` (written atomically; an existing `out` is
/// replaced, a link at its name is not followed).
pub fn pack(root: &Path, out: &Path, limits: Limits) -> Result<Packed> {
    let (files, from_store) = collect(root, limits)?;
    if files.len() > MAX_FILES {
        return Err(ArchiveError::LimitExceeded {
            path: root.to_path_buf(),
            limit: "files in a packed archive",
            value: files.len() as u64,
            max: MAX_FILES as u64,
        });
    }
    // Hash first: the index, written first, lists every file's hash.
    let mut index = Index {
        hrrz_version: HRRZ_VERSION,
        files: Vec::with_capacity(files.len()),
    };
    for (rel, src) in &files {
        let (bytes, sha256) = hash_file(src)?;
        index.files.push(IndexedFile {
            path: rel.clone(),
            bytes,
            sha256,
        });
    }
    let index_json = serde_json::to_vec_pretty(&index)
        .map_err(|e| ArchiveError::invalid(out, format!("index: {e}")))?;
    safefs::write_atomic_with(out, true, |f, tmp| {
        let io = |e: io::Error| ArchiveError::io(tmp, "write", e);
        let mut z = zstd::Encoder::new(f, LEVEL).map_err(io)?;
        write_member(&mut z, INDEX_NAME, &index_json).map_err(io)?;
        for ((rel, src), listed) in files.iter().zip(&index.files) {
            let (mut r, len) = safefs::open_regular(src)?;
            if len != listed.bytes {
                return Err(ArchiveError::invalid(src, "changed while it was packed"));
            }
            write_header(&mut z, rel, len).map_err(io)?;
            let copied = io::copy(&mut (&mut r).take(len), &mut z).map_err(io)?;
            if copied != len {
                return Err(ArchiveError::invalid(src, "shrank while it was packed"));
            }
            pad(&mut z, len).map_err(io)?;
        }
        z.write_all(&[0u8; 2 * BLOCK]).map_err(io)?;
        z.finish().map_err(io)?;
        Ok(())
    })?;
    Ok(Packed {
        files: index.files.len(),
        bytes: index.files.iter().map(|f| f.bytes).sum(),
        from_store,
        sha256: file_sha256(out)?,
    })
}

fn hash_file(path: &Path) -> Result<(u64, String)> {
    let (mut f, len) = safefs::open_regular(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f
            .read(&mut buf)
            .map_err(|e| ArchiveError::io(path, "read", e))?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    if n != len {
        return Err(ArchiveError::invalid(path, "changed while it was read"));
    }
    Ok((n, hex(&h.finalize())))
}

fn write_member(w: &mut impl Write, name: &str, bytes: &[u8]) -> io::Result<()> {
    write_header(w, name, bytes.len() as u64)?;
    w.write_all(bytes)?;
    pad(w, bytes.len() as u64)
}

fn pad(w: &mut impl Write, len: u64) -> io::Result<()> {
    let rem = (len % BLOCK as u64) as usize;
    if rem != 0 {
        w.write_all(&[0u8; BLOCK][..BLOCK - rem])?;
    }
    Ok(())
}

/// The largest member a ustar header's 11 octal digits can say.
const MAX_MEMBER: u64 = (1 << 33) - 1;

/// A ustar header for a regular file (mode 0644, owner 0, time 0: a pack of the same
/// archive is the same bytes).
fn header(name: &str, len: u64) -> io::Result<[u8; BLOCK]> {
    if name.len() >= 100 || len > MAX_MEMBER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name}: a name of at most 99 bytes and at most 8 GiB is packed"),
        ));
    }
    let mut h = [0u8; BLOCK];
    h[..name.len()].copy_from_slice(name.as_bytes());
    let octal = |field: &mut [u8], v: u64| {
        let s = format!("{:0width$o}", v, width = field.len() - 1);
        field[..s.len()].copy_from_slice(s.as_bytes());
    };
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], len);
    octal(&mut h[136..148], 0);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
    Ok(h)
}

fn write_header(w: &mut impl Write, name: &str, len: u64) -> io::Result<()> {
    w.write_all(&header(name, len)?)
}

/// A member's name and length from its header; Err says what is wrong with it.
fn parse_header(h: &[u8; BLOCK]) -> std::result::Result<(String, u64), String> {
    if &h[257..263] != b"ustar\0" {
        return Err("not a ustar header".into());
    }
    let field = |r: std::ops::Range<usize>| {
        let f = &h[r];
        let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
        std::str::from_utf8(&f[..end]).map(|s| s.trim().to_string())
    };
    let octal = |r: std::ops::Range<usize>| -> std::result::Result<u64, String> {
        let s = field(r).map_err(|_| "a numeric field is not text".to_string())?;
        u64::from_str_radix(&s, 8).map_err(|_| format!("numeric field {s:?} is not octal"))
    };
    let mut copy = *h;
    copy[148..156].copy_from_slice(b"        ");
    let sum: u64 = copy.iter().map(|&b| u64::from(b)).sum();
    if octal(148..156)? != sum {
        return Err("header checksum does not match".into());
    }
    if !matches!(h[156], b'0' | 0) {
        return Err(format!(
            "member type {:?} is not a regular file (links, directories and extensions are refused)",
            h[156] as char
        ));
    }
    if h[345] != 0 {
        return Err("a ustar name prefix is refused (archive names are short)".into());
    }
    let name = field(0..100).map_err(|_| "name is not UTF-8".to_string())?;
    Ok((name, octal(124..136)?))
}

/// What a packed archive says of itself, read from its first members only: the root
/// manifest and each process's manifest (where it was captured, on which devices).
#[derive(Clone, Debug, PartialEq)]
pub struct Peeked {
    pub root: RootManifest,
    pub processes: Vec<ProcessManifest>,
    /// Files and bytes the index lists.
    pub files: usize,
    pub bytes: u64,
}

/// Reads the index and the manifests of `hrrz` without unpacking it (they come first);
/// each manifest is checked against the index's length and hash.
pub fn peek(hrrz: &Path) -> Result<Peeked> {
    let (f, _) = safefs::open_regular(hrrz)?;
    let bad = |what: String| ArchiveError::invalid(hrrz, what);
    let mut z = zstd::Decoder::new(f).map_err(|e| ArchiveError::io(hrrz, "read zstd", e))?;
    let index = read_index(hrrz, &mut z)?;
    let mut root = None;
    let mut processes = Vec::new();
    for f in index
        .files
        .iter()
        .take_while(|f| f.path == MANIFEST_FILE || f.path.ends_with(&format!("/{MANIFEST_FILE}")))
    {
        let (_, len) = next_listed(hrrz, &mut z, f)?;
        if len > MAX_MANIFEST_BYTES {
            return Err(bad(format!(
                "{} is {len} bytes, more than a manifest",
                f.path
            )));
        }
        let mut bytes = vec![0u8; len as usize];
        z.read_exact(&mut bytes)
            .map_err(|e| bad(format!("truncated in {}: {e}", f.path)))?;
        skip_pad(&mut z, len).map_err(|e| bad(format!("truncated: {e}")))?;
        if hex(&Sha256::digest(&bytes)) != f.sha256 {
            return Err(bad(format!(
                "{} does not hash to what the index lists: the file was changed or damaged",
                f.path
            )));
        }
        let what = |e: serde_json::Error| bad(format!("{}: {e}", f.path));
        if f.path == MANIFEST_FILE {
            root = Some(serde_json::from_slice::<RootManifest>(&bytes).map_err(what)?);
        } else {
            processes.push(serde_json::from_slice::<ProcessManifest>(&bytes).map_err(what)?);
        }
    }
    Ok(Peeked {
        root: root.ok_or_else(|| bad("no manifest.json".into()))?,
        processes,
        files: index.files.len(),
        bytes: index.files.iter().map(|f| f.bytes).sum(),
    })
}

/// The AMD targets the code objects of `hrrz` carry (`gfx1100`, from each offload
/// bundle's entries; feature suffixes dropped), read by streaming the pack without
/// unpacking it: what a family must target to run the archive when its manifest names no
/// architecture (HIP's). Code objects that are not bundles add nothing.
pub fn code_object_targets(
    hrrz: &Path,
    limits: Limits,
) -> Result<std::collections::BTreeSet<String>> {
    let (f, _) = safefs::open_regular(hrrz)?;
    let bad = |what: String| ArchiveError::invalid(hrrz, what);
    let mut z = zstd::Decoder::new(f).map_err(|e| ArchiveError::io(hrrz, "read zstd", e))?;
    let index = read_index(hrrz, &mut z)?;
    let mut targets = std::collections::BTreeSet::new();
    for f in &index.files {
        let (name, len) = next_listed(hrrz, &mut z, f)?;
        let code = name
            .rsplit_once(&format!("/{CODE_OBJECTS_DIR}/"))
            .and_then(|(_, n)| n.strip_suffix(".co"))
            .and_then(ContentHash::from_hex);
        match code {
            Some(hash) if len <= limits.max_file_bytes => {
                let mut stored = vec![0u8; len as usize];
                z.read_exact(&mut stored)
                    .map_err(|e| bad(format!("truncated in {name}: {e}")))?;
                let bytes = crate::blob::decode(&hrrz.join(&name), &stored, &hash, &limits)?;
                for (triple, _) in crate::codeobject::bundle_entries(&bytes).unwrap_or_default() {
                    if let Some(t) = triple.rsplit("--").next().filter(|t| t.starts_with("gfx")) {
                        targets.insert(t.split(':').next().unwrap_or(t).to_string());
                    }
                }
            }
            _ => {
                io::copy(&mut (&mut z).take(len), &mut io::sink())
                    .map_err(|e| bad(format!("truncated in {name}: {e}")))?;
            }
        }
        skip_pad(&mut z, len).map_err(|e| bad(format!("truncated: {e}")))?;
    }
    Ok(targets)
}

/// The largest manifest `peek` reads.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Reads the next header of a tar stream: None at the end blocks.
fn read_header(hrrz: &Path, z: &mut impl Read) -> Result<Option<(String, u64)>> {
    let mut block = [0u8; BLOCK];
    z.read_exact(&mut block)
        .map_err(|e| ArchiveError::invalid(hrrz, format!("truncated: {e}")))?;
    if block.iter().all(|&b| b == 0) {
        return Ok(None);
    }
    parse_header(&block)
        .map(Some)
        .map_err(|w| ArchiveError::invalid(hrrz, w))
}

/// Reads the next member's header, which must be the file `f` the index lists next.
fn next_listed(hrrz: &Path, z: &mut impl Read, f: &IndexedFile) -> Result<(String, u64)> {
    let bad = |what: String| ArchiveError::invalid(hrrz, what);
    let (name, len) =
        read_header(hrrz, z)?.ok_or_else(|| bad(format!("ends before {}", f.path)))?;
    if name != f.path || len != f.bytes {
        return Err(bad(format!(
            "member {name:?} ({len} bytes) where the index lists {:?} ({} bytes)",
            f.path, f.bytes
        )));
    }
    Ok((name, len))
}

/// Reads and checks the index, the first member.
fn read_index(hrrz: &Path, z: &mut impl Read) -> Result<Index> {
    let bad = |what: String| ArchiveError::invalid(hrrz, what);
    let (name, len) = read_header(hrrz, z)?.ok_or_else(|| bad("empty: no index".into()))?;
    if name != INDEX_NAME {
        return Err(bad(format!(
            "the first member is {name:?}, not the index {INDEX_NAME}"
        )));
    }
    if len > MAX_INDEX_BYTES {
        return Err(ArchiveError::LimitExceeded {
            path: hrrz.to_path_buf(),
            limit: "packed archive index bytes",
            value: len,
            max: MAX_INDEX_BYTES,
        });
    }
    let mut index_bytes = vec![0u8; len as usize];
    z.read_exact(&mut index_bytes)
        .map_err(|e| bad(format!("truncated index: {e}")))?;
    skip_pad(z, len).map_err(|e| bad(format!("truncated: {e}")))?;
    let index: Index =
        serde_json::from_slice(&index_bytes).map_err(|e| bad(format!("index: {e}")))?;
    if index.hrrz_version != HRRZ_VERSION {
        return Err(ArchiveError::VersionMismatch {
            path: hrrz.to_path_buf(),
            found: index.hrrz_version,
            supported: HRRZ_VERSION,
        });
    }
    if index.files.len() > MAX_FILES {
        return Err(ArchiveError::LimitExceeded {
            path: hrrz.to_path_buf(),
            limit: "files in a packed archive",
            value: index.files.len() as u64,
            max: MAX_FILES as u64,
        });
    }
    Ok(index)
}

/// What `unpack` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unpacked {
    pub files: usize,
    pub bytes: u64,
}

/// Unpacks `hrrz` into `out`, a directory that must not exist yet (created, with its
/// missing parents); on any error what was written is removed. Every member is checked
/// against the index (name, order, length, SHA-256); limits bound the files, each file's
/// size and the total.
pub fn unpack(hrrz: &Path, out: &Path, limits: Limits) -> Result<Unpacked> {
    match fs::symlink_metadata(out) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Ok(_) => {
            return Err(ArchiveError::unsafe_path(
                out,
                "already exists: unpack into a new directory",
            ))
        }
        Err(e) => return Err(ArchiveError::io(out, "stat", e)),
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        safefs::ensure_dir(parent)?;
    }
    fs::create_dir(out).map_err(|e| ArchiveError::io(out, "create directory", e))?;
    let result = unpack_into(hrrz, out, limits);
    if result.is_err() {
        let _ = fs::remove_dir_all(out);
    }
    result
}

fn unpack_into(hrrz: &Path, out: &Path, limits: Limits) -> Result<Unpacked> {
    let (f, _) = safefs::open_regular(hrrz)?;
    let bad = |what: String| ArchiveError::invalid(hrrz, what);
    let mut z = zstd::Decoder::new(f).map_err(|e| ArchiveError::io(hrrz, "read zstd", e))?;
    let index = read_index(hrrz, &mut z)?;
    let total: u64 = index.files.iter().map(|f| f.bytes).sum();
    // The whole archive on disk: bounded by what a reader would open, times the files.
    let max_total = limits.max_file_bytes.saturating_mul(4);
    if total > max_total {
        return Err(ArchiveError::LimitExceeded {
            path: hrrz.to_path_buf(),
            limit: "packed archive bytes (4 x max_file_bytes)",
            value: total,
            max: max_total,
        });
    }
    let mut seen = std::collections::HashSet::new();
    for f in &index.files {
        if !is_archive_path(&f.path) {
            return Err(ArchiveError::unsafe_path(
                out.join(&f.path),
                "is not a name an archive's file has: refused",
            ));
        }
        if !seen.insert(f.path.as_str()) {
            return Err(bad(format!("{} is listed twice", f.path)));
        }
        if f.bytes > limits.max_file_bytes {
            return Err(ArchiveError::LimitExceeded {
                path: out.join(&f.path),
                limit: "max_file_bytes",
                value: f.bytes,
                max: limits.max_file_bytes,
            });
        }
    }
    if index.files.first().map(|f| f.path.as_str()) != Some(MANIFEST_FILE) {
        return Err(bad(
            "the index does not list the archive's manifest.json first".into(),
        ));
    }
    let mut buf = vec![0u8; 1 << 20];
    for f in &index.files {
        let (_, len) = next_listed(hrrz, &mut z, f)?;
        let dest = out.join(&f.path);
        if let Some(parent) = dest.parent() {
            safefs::ensure_dir(parent)?;
        }
        let mut h = Sha256::new();
        safefs::write_atomic_with(&dest, false, |mut w, tmp| {
            let mut left = len;
            while left > 0 {
                let k = left.min(buf.len() as u64) as usize;
                z.read_exact(&mut buf[..k])
                    .map_err(|e| bad(format!("truncated in {}: {e}", f.path)))?;
                h.update(&buf[..k]);
                w.write_all(&buf[..k])
                    .map_err(|e| ArchiveError::io(tmp, "write", e))?;
                left -= k as u64;
            }
            Ok(())
        })?;
        let found = hex(&h.finalize_reset());
        if found != f.sha256 {
            return Err(bad(format!(
                "{} has SHA-256 {found} where the index lists {}: the file was changed or damaged",
                f.path, f.sha256
            )));
        }
        skip_pad(&mut z, len).map_err(|e| bad(format!("truncated: {e}")))?;
    }
    if read_header(hrrz, &mut z)?.is_some() {
        return Err(bad("a member follows the last file the index lists".into()));
    }
    Ok(Unpacked {
        files: index.files.len(),
        bytes: total,
    })
}

fn skip_pad(r: &mut impl Read, len: u64) -> io::Result<()> {
    let rem = (len % BLOCK as u64) as usize;
    if rem != 0 {
        let mut pad = [0u8; BLOCK];
        r.read_exact(&mut pad[..BLOCK - rem])?;
    }
    Ok(())
}

/// Whether `path` names a packed archive (by its magic: a zstd frame), for tools that
/// take either form.
pub fn is_packed(path: &Path) -> bool {
    let Ok((mut f, _)) = safefs::open_regular(path) else {
        return false;
    };
    let mut magic = [0u8; 4];
    f.read_exact(&mut magic).is_ok() && magic == [0x28, 0xb5, 0x2f, 0xfd]
}

#[cfg(test)]
mod tests;
