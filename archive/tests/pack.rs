//! Packed archives (`.hrrz`): an archive packs and unpacks to the same files, an archive
//! kept in a code store packs its code objects in, and a hostile `.hrrz` (a changed byte,
//! a name outside the archive, a link member, a member the index does not list, a
//! truncated file, an existing output directory) is refused naming the problem, with
//! nothing left behind.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hrr_archive::api::fid;
use hrr_archive::blob::Compression;
use hrr_archive::codestore::CodeStore;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::pack::{self, Index, INDEX_NAME};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::{Archive, ArchiveError, CaptureSettings, Limits, ProcessWriter};

fn settings(code_store: Option<PathBuf>) -> CaptureSettings {
    CaptureSettings {
        compression: Compression::Zstd { level: 3 },
        flush_interval: Duration::from_secs(3600),
        buffer_bytes: 1 << 16,
        reserve: ReservePolicy::Bytes(0),
        fsync: false,
        fsync_blobs: false,
        code_store,
    }
}

/// An archive with a blob, a code object named by a registration, and a few events.
fn write_archive(root: &Path, code_store: Option<PathBuf>) {
    let w = ProcessWriter::create(root, settings(code_store), 1).unwrap();
    let blob = w.put_blob(&[5u8; 3000]).unwrap();
    let co = w.put_code_object(b"\x7fELF a code object").unwrap();
    let mut p = PayloadWriter::new();
    p.str(fid::CODE_OBJECT, &co.to_hex());
    w.append(
        hrr_archive::api::semantic::REGISTER_FAT_BINARY,
        0,
        1,
        0,
        p.as_bytes(),
    )
    .unwrap();
    for i in 0..5u64 {
        let mut p = PayloadWriter::new();
        p.u64(1, i).blob(0x102, blob);
        w.append(3, 0, 1, 0, p.as_bytes()).unwrap();
    }
    w.finish().unwrap();
}

/// Every file under `root` with its bytes, by relative path.
fn files(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() && e.file_name() != ".lock" {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((rel, fs::read(e.path()).unwrap()));
        }
    }
    out
}

#[test]
fn an_archive_packs_and_unpacks_to_the_same_files() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    write_archive(&root, None);
    let hrrz = t.path().join("a.hrrz");
    let packed = pack::pack(&root, &hrrz, Limits::default()).unwrap();
    assert_eq!(packed.from_store, 0);
    assert_eq!(packed.files, files(&root).len());
    assert_eq!(packed.sha256, pack::file_sha256(&hrrz).unwrap());
    assert!(pack::is_packed(&hrrz));
    assert!(!pack::is_packed(&root.join("manifest.json")));
    // Packing again gives the same bytes (no time, owner or order in it).
    let again = t.path().join("b.hrrz");
    assert_eq!(
        pack::pack(&root, &again, Limits::default()).unwrap().sha256,
        packed.sha256
    );
    let out = t.path().join("out/u");
    let u = pack::unpack(&hrrz, &out, Limits::default()).unwrap();
    assert_eq!(u.files, packed.files);
    assert_eq!(files(&out), files(&root));
    Archive::open(&out, Limits::default()).unwrap();
    // Its manifests come first, read without unpacking.
    let peeked = pack::peek(&hrrz).unwrap();
    assert_eq!(peeked.processes.len(), 1);
    assert_eq!(peeked.processes[0].pid, std::process::id());
    assert_eq!(peeked.root.processes.len(), 1);
    assert_eq!((peeked.files, peeked.bytes), (u.files, u.bytes));
    // Never into a directory that exists.
    let e = pack::unpack(&hrrz, &out, Limits::default()).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
}

#[test]
fn code_objects_kept_in_a_store_are_packed_in() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store");
    CodeStore::create(&store).unwrap();
    let root = t.path().join("a");
    write_archive(&root, Some(store.clone()));
    assert!(files(&root)
        .iter()
        .all(|(p, _)| !p.contains("code_objects")));
    let hrrz = t.path().join("a.hrrz");
    let packed = pack::pack(&root, &hrrz, Limits::default()).unwrap();
    assert_eq!(packed.from_store, 1);
    let out = t.path().join("u");
    pack::unpack(&hrrz, &out, Limits::default()).unwrap();
    assert!(files(&out).iter().any(|(p, _)| p.contains("code_objects/")));
    // The store gone, the unpacked archive still loads its code object.
    fs::remove_dir_all(&store).unwrap();
    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    let name = files(&out)
        .into_iter()
        .find_map(|(p, _)| {
            p.split("code_objects/")
                .nth(1)
                .map(|n| n.trim_end_matches(".co").to_string())
        })
        .unwrap();
    assert_eq!(p.load_code_object(&name).unwrap(), b"\x7fELF a code object");
}

#[test]
fn files_that_are_no_part_of_an_archive_are_not_packed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    write_archive(&root, None);
    let pid = fs::read_dir(&root)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("pid-"))
        .unwrap()
        .path();
    fs::write(pid.join("notes.txt"), "x").unwrap();
    let e = pack::pack(&root, &t.path().join("a.hrrz"), Limits::default()).unwrap_err();
    assert!(
        e.to_string().contains("is not a file an archive holds"),
        "{e}"
    );
    fs::remove_file(pid.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", pid.join("events2.bin")).unwrap();
    let e = pack::pack(&root, &t.path().join("a.hrrz"), Limits::default()).unwrap_err();
    assert!(matches!(e, ArchiveError::UnsafePath { .. }), "{e}");
}

/// The tar inside a `.hrrz`.
fn tar_of(hrrz: &Path) -> Vec<u8> {
    let mut v = Vec::new();
    zstd::Decoder::new(fs::File::open(hrrz).unwrap())
        .unwrap()
        .read_to_end(&mut v)
        .unwrap();
    v
}

fn write_hrrz(path: &Path, tar: &[u8]) {
    let mut z = zstd::Encoder::new(fs::File::create(path).unwrap(), 3).unwrap();
    z.write_all(tar).unwrap();
    z.finish().unwrap();
}

/// Offsets of each member's header in a tar: (offset, name, size).
fn members(tar: &[u8]) -> Vec<(usize, String, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 512 <= tar.len() && tar[at..at + 512].iter().any(|&b| b != 0) {
        let h = &tar[at..at + 512];
        let name = String::from_utf8_lossy(&h[..100])
            .trim_end_matches('\0')
            .to_string();
        let size = usize::from_str_radix(String::from_utf8_lossy(&h[124..135]).trim(), 8).unwrap();
        out.push((at, name, size));
        at += 512 + size.div_ceil(512) * 512;
    }
    out
}

fn recheck(h: &mut [u8]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

#[test]
fn a_hostile_pack_is_refused_and_leaves_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    write_archive(&root, None);
    let hrrz = t.path().join("a.hrrz");
    pack::pack(&root, &hrrz, Limits::default()).unwrap();
    let tar = tar_of(&hrrz);
    let m = members(&tar);
    assert_eq!(m[0].1, INDEX_NAME);
    let refused = |name: &str, tar: &[u8], why: &str| {
        let bad = t.path().join(format!("{name}.hrrz"));
        write_hrrz(&bad, tar);
        let out = t.path().join(format!("out-{name}"));
        let e = pack::unpack(&bad, &out, Limits::default()).unwrap_err();
        assert!(e.to_string().contains(why), "{name}: {e}");
        assert!(!out.exists(), "{name}: left {}", out.display());
    };
    // One byte of the last file changed.
    let (at, _, size) = *m.last().unwrap();
    let mut changed = tar.clone();
    changed[at + 512 + size / 2] ^= 1;
    refused("changed", &changed, "where the index lists");
    // A member renamed out of the archive (the index renamed alike).
    let index_len = m[0].2;
    let mut index: Index = serde_json::from_slice(&tar[512..512 + index_len]).unwrap();
    index.files[1].path = "../escape".into();
    let json = serde_json::to_vec(&index).unwrap();
    let mut rebuilt = Vec::new();
    let mut h = tar[..512].to_vec();
    let len = format!("{:011o}", json.len());
    h[124..135].copy_from_slice(len.as_bytes());
    recheck(&mut h);
    rebuilt.extend_from_slice(&h);
    rebuilt.extend_from_slice(&json);
    rebuilt.resize(rebuilt.len().div_ceil(512) * 512, 0);
    rebuilt.extend_from_slice(&tar[512 + index_len.div_ceil(512) * 512..]);
    refused("escape", &rebuilt, "is not a name an archive's file has");
    // A member made a symbolic link.
    let mut link = tar.clone();
    link[m[1].0 + 156] = b'2';
    recheck(&mut link[m[1].0..m[1].0 + 512]);
    refused("link", &link, "is not a regular file");
    // A member the index does not list, after the last.
    let mut extra = tar[..tar.len() - 1024].to_vec();
    extra.extend_from_slice(&tar[m[1].0..m[1].0 + 512 + m[1].2.div_ceil(512) * 512]);
    extra.extend_from_slice(&[0u8; 1024]);
    refused(
        "extra",
        &extra,
        "a member follows the last file the index lists",
    );
    // Truncated inside the last file.
    refused("truncated", &tar[..at + 512 + size / 2], "truncated");
    // No index first.
    refused("noindex", &tar[m[1].0..], "not the index");
    // A manifest changed: peek refuses it too.
    let mut manifest = tar.clone();
    manifest[m[1].0 + 512 + 3] ^= 1;
    let bad = t.path().join("manifest.hrrz");
    write_hrrz(&bad, &manifest);
    let e = pack::peek(&bad).unwrap_err();
    assert!(
        e.to_string()
            .contains("does not hash to what the index lists"),
        "{e}"
    );
    // Not zstd at all.
    let plain = t.path().join("plain.hrrz");
    fs::write(&plain, &tar).unwrap();
    assert!(pack::unpack(&plain, &t.path().join("out-plain"), Limits::default()).is_err());
    assert!(!t.path().join("out-plain").exists());
}

#[test]
fn limits_bound_a_pack() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    write_archive(&root, None);
    let hrrz = t.path().join("a.hrrz");
    pack::pack(&root, &hrrz, Limits::default()).unwrap();
    let small = Limits {
        max_file_bytes: 16,
        ..Limits::default()
    };
    let e = pack::unpack(&hrrz, &t.path().join("u"), small).unwrap_err();
    assert!(matches!(e, ArchiveError::LimitExceeded { .. }), "{e}");
}
