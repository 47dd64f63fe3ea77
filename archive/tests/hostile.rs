//! Hostile archives: each test reproduces one way an archive on disk once made the reader,
//! repair or the edit tool write outside the archive, hang, or take unbounded memory, and
//! fails if that comes back.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::{pid_dir, settings};
use hrr_archive::api::{CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::blob::{self, Compression};
use hrr_archive::manifest::{RootManifest, EVENTS_FILE, MANIFEST_FILE};
use hrr_archive::payload::{BlobRef, Payload, PayloadWriter};
use hrr_archive::record::{FILE_HEADER_LEN, RECORD_HEADER_LEN};
use hrr_archive::{edit, repair, Archive, ArchiveError, Limits, LogStatus, ProcessWriter};

/// `n` plain events, then one device-to-host copy whose expected output is a blob.
fn archive_with_d2h(root: &Path, n: u64) -> BlobRef {
    let w = ProcessWriter::create(root, settings(), 1).unwrap();
    for i in 0..n {
        let mut p = PayloadWriter::new();
        p.u64(1, i);
        w.append(3, 0, 77, 0, p.as_bytes()).unwrap();
    }
    let out: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let r = w.put_blob(&out).unwrap();
    let mut p = PayloadWriter::new();
    p.u64(3, out.len() as u64)
        .blob(BLOB_FIELD | 1, r)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    w.append(3, 0, 77, 0, p.as_bytes()).unwrap();
    w.finish().unwrap();
    r
}

/// The peak resident set of this test process, in bytes.
fn peak_rss() -> u64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    u.ru_maxrss as u64 * 1024
}

/// Runs `f` on a thread and fails the test if it does not return within `secs`.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("did not return in time (blocked on a FIFO?)")
}

#[test]
fn edit_through_a_linked_blob_directory_writes_nothing_outside() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    archive_with_d2h(&root, 2);
    let outside = d.path().join("outside");
    fs::create_dir(&outside).unwrap();
    // Every two-hex blob directory the edited blob could land in points outside.
    let blobs = pid_dir(&root).join(blob::BLOBS_DIR);
    for i in 0..=255u8 {
        let sub = blobs.join(format!("{i:02x}"));
        if !sub.exists() {
            std::os::unix::fs::symlink(&outside, &sub).unwrap();
        }
    }
    let e = edit::edit_expected_output(&root, None, 3, Limits::default()).unwrap_err();
    assert!(matches!(e, ArchiveError::UnsafePath { .. }), "{e}");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn a_link_planted_at_the_log_is_replaced_by_repair_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    archive_with_d2h(&root, 4);
    let victim = d.path().join("victim");
    fs::write(&victim, b"precious").unwrap();
    // Truncate so repair has work, then plant links at the backup names.
    let log = pid_dir(&root).join(EVENTS_FILE);
    let len = fs::metadata(&log).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    std::os::unix::fs::symlink(&victim, pid_dir(&root).join(repair::BACKUP_NAME)).unwrap();
    let fixed = repair::repair(&root, Limits::default()).unwrap();
    assert_eq!(fixed.len(), 1);
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    assert_ne!(fixed[0].backup, pid_dir(&root).join(repair::BACKUP_NAME));
}

#[test]
fn repair_keeps_every_verified_record_and_the_original() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    archive_with_d2h(root, 63);
    let log = pid_dir(root).join(EVENTS_FILE);
    let original = fs::read(&log).unwrap();
    // Flip one bit inside record 1 (each plain record is a 36-byte header and a 16-byte
    // payload: one u64 field).
    let rec = RECORD_HEADER_LEN + 16;
    let mut bad = original.clone();
    bad[FILE_HEADER_LEN + rec + 40] ^= 0x04;
    fs::write(&log, &bad).unwrap();
    // The reader stops at the corrupt record...
    let a = Archive::open(root, Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 1);
    // ...repair keeps the 63 others and names what it lost.
    let fixed = repair::repair(root, Limits::default()).unwrap();
    let f = &fixed[0];
    assert_eq!(f.events_kept, 63);
    assert_eq!(
        (f.lost.len(), f.lost[0].first_seq, f.lost[0].last_seq),
        (1, 1, 1)
    );
    // Record 1, and the trailer, whose count (64) no longer matches what is kept.
    assert_eq!(f.bytes_dropped, (rec + RECORD_HEADER_LEN + 16) as u64);
    assert!(!f.complete, "an archive that lost an event is not complete");
    assert_eq!(
        fs::read(&f.backup).unwrap(),
        bad,
        "the original log is kept"
    );
    let a = Archive::open(root, Limits::default()).unwrap();
    let p = &a.processes[0];
    assert_eq!(p.events.len(), 63);
    assert!(!p.is_complete());
    assert_eq!(p.status, LogStatus::Incomplete);
    assert_eq!(p.manifest.lost_events, f.lost);
    let seqs: Vec<u64> = p.events.iter().map(|e| e.header.seq).collect();
    assert_eq!(seqs[..3], [0, 2, 3]);
    // The D2H event and its blob survived.
    let last = Payload::parse(&p.events[62].payload).unwrap();
    assert!(last.get(BLOB_FIELD | 1).is_some());
    // Nothing more to do the second time.
    assert!(repair::repair(root, Limits::default()).unwrap().is_empty());
}

#[test]
fn repair_marks_complete_only_an_intact_log() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    archive_with_d2h(root, 5);
    // The log is whole (trailer included) but the manifest says incomplete, as when a
    // process died between its last two writes.
    let m = pid_dir(root).join(MANIFEST_FILE);
    let text = fs::read_to_string(&m)
        .unwrap()
        .replace("\"complete\": true", "\"complete\": false");
    fs::write(&m, text).unwrap();
    let fixed = repair::repair(root, Limits::default()).unwrap();
    assert!(fixed[0].complete);
    assert!(Archive::open(root, Limits::default())
        .unwrap()
        .is_complete());
    // A torn tail is kept out, and the archive stays incomplete.
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    archive_with_d2h(root, 5);
    let log = pid_dir(root).join(EVENTS_FILE);
    let len = fs::metadata(&log).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 7)
        .unwrap();
    let fixed = repair::repair(root, Limits::default()).unwrap();
    assert_eq!(fixed[0].events_kept, 6);
    assert!(!fixed[0].complete);
    assert_eq!(
        fixed[0].tail_bytes_dropped,
        (RECORD_HEADER_LEN + 16 - 7) as u64
    );
    assert!(!Archive::open(root, Limits::default())
        .unwrap()
        .is_complete());
}

#[test]
fn a_small_blob_declaring_gigabytes_is_refused_before_decompressing() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let r = archive_with_d2h(root, 1);
    // Replace the blob with a zstd frame of 4 GiB of zeros' worth declared, but holding
    // 64 KiB, under the same name.
    let path = pid_dir(root).join(blob::blob_rel_path(&r.hash));
    let small = zstd::bulk::compress(&vec![0u8; 65536], 3).unwrap();
    let mut f = blob::header(4 << 30, Compression::Zstd { level: 3 }).to_vec();
    f.extend_from_slice(&small);
    fs::remove_file(&path).unwrap();
    fs::write(&path, &f).unwrap();
    let before = peak_rss();
    let a = Archive::open(root, Limits::default()).unwrap();
    let e = a.processes[0].load_blob(&r).unwrap_err();
    assert!(e.to_string().contains("the event says 4096"), "{e}");
    // Even when the event agrees with the header, memory follows the frame's real size.
    let lie = BlobRef {
        hash: r.hash,
        len: 4 << 30,
    };
    let e = a.processes[0].load_blob(&lie).unwrap_err();
    assert!(e.to_string().contains("zstd frame holds 65536"), "{e}");
    let mut out = vec![0u8; 4096];
    assert!(a.processes[0].load_blob_into(&r, &mut out).is_err());
    assert!(
        peak_rss() - before < 512 << 20,
        "decompression allocated what the header claimed"
    );
}

#[test]
fn a_fifo_in_place_of_a_blob_is_refused_without_hanging() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().to_path_buf();
    let r = archive_with_d2h(&root, 1);
    let path = pid_dir(&root).join(blob::blob_rel_path(&r.hash));
    fs::remove_file(&path).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let msg = within(10, move || {
        let a = Archive::open(&root, Limits::default()).unwrap();
        let mut out = vec![0u8; r.len as usize];
        let e1 = a.processes[0].load_blob(&r).unwrap_err().to_string();
        let e2 = a.processes[0]
            .load_blob_into(&r, &mut out)
            .unwrap_err()
            .to_string();
        format!("{e1} / {e2}")
    });
    assert!(msg.contains("is not a regular file"), "{msg}");
}

#[test]
fn a_fifo_in_place_of_the_log_is_refused_without_hanging() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().to_path_buf();
    archive_with_d2h(&root, 1);
    let log = pid_dir(&root).join(EVENTS_FILE);
    fs::remove_file(&log).unwrap();
    let c = std::ffi::CString::new(log.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = within(10, move || {
        Archive::open(&root, Limits::default()).map(|_| ())
    });
    assert!(matches!(e, Err(ArchiveError::UnsafePath { .. })), "{e:?}");
}

#[test]
fn a_huge_sparse_log_costs_only_its_whole_records() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    archive_with_d2h(root, 10);
    let log = pid_dir(root).join(EVENTS_FILE);
    let len = fs::metadata(&log).unwrap().len();
    // Cut the trailer off, then extend the file with an 8 GiB hole.
    let f = fs::OpenOptions::new().write(true).open(&log).unwrap();
    f.set_len(len - (RECORD_HEADER_LEN + 16) as u64).unwrap();
    f.set_len(8 << 30).unwrap();
    let before = peak_rss();
    let a = Archive::open(root, Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 11);
    assert!(matches!(a.processes[0].status, LogStatus::Truncated { .. }));
    assert!(
        peak_rss() - before < 256 << 20,
        "the reader held the hole in memory"
    );
}

#[test]
fn a_process_listed_twice_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    archive_with_d2h(root, 1);
    let m = root.join(MANIFEST_FILE);
    let mut rm: RootManifest = serde_json::from_slice(&fs::read(&m).unwrap()).unwrap();
    let first = rm.processes[0].clone();
    rm.processes.extend(std::iter::repeat_n(first, 1000));
    fs::write(&m, serde_json::to_vec(&rm).unwrap()).unwrap();
    let e = Archive::open(root, Limits::default()).unwrap_err();
    assert!(e.to_string().contains("listed more than once"), "{e}");
    let e = repair::repair(root, Limits::default()).unwrap_err();
    assert!(e.to_string().contains("listed more than once"), "{e}");
}

#[test]
fn an_edit_past_the_output_is_its_own_error() {
    let d = tempfile::tempdir().unwrap();
    archive_with_d2h(d.path(), 1);
    let e = edit::edit_expected_output(d.path(), None, 4096, Limits::default()).unwrap_err();
    assert!(
        matches!(
            e,
            ArchiveError::OffsetOutside {
                offset: 4096,
                len: 4096,
                ..
            }
        ),
        "{e}"
    );
    edit::edit_expected_output(d.path(), None, 4095, Limits::default()).unwrap();
}

#[test]
fn a_second_program_image_of_one_pid_records_beside_the_first() {
    // As when a program records, then execs another that records (same pid), or a pid is
    // reused by a later run into the same directory: the second gets `pid-N.2`, and both
    // are listed and read (before: "File exists", capture off for the second).
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let first = ProcessWriter::create(root, settings(), 1).unwrap();
    first.append(3, 0, 1, 0, b"").unwrap();
    first.finish().unwrap();
    let second = ProcessWriter::create(root, settings(), 1).unwrap();
    second.append(3, 0, 1, 0, b"").unwrap();
    second.append(3, 0, 1, 0, b"").unwrap();
    second.finish().unwrap();
    let pid = std::process::id();
    assert_eq!(second.dir(), root.join(format!("pid-{pid}.2")));
    let a = Archive::open(root, Limits::default()).unwrap();
    let dirs: Vec<(&str, usize)> = a
        .processes
        .iter()
        .map(|p| (p.entry.dir.as_str(), p.events.len()))
        .collect();
    assert_eq!(
        dirs,
        [
            (format!("pid-{pid}").as_str(), 1),
            (format!("pid-{pid}.2").as_str(), 2)
        ]
    );
    assert!(a.is_complete());
    // A planted name is skipped, never entered.
    std::os::unix::fs::symlink("/tmp", root.join(format!("pid-{pid}.3"))).unwrap();
    let third = ProcessWriter::create(root, settings(), 1).unwrap();
    assert_eq!(third.dir(), root.join(format!("pid-{pid}.4")));
    third.finish().unwrap();
    // Other names stay refused.
    let m = root.join(MANIFEST_FILE);
    let text = fs::read_to_string(&m).unwrap();
    fs::write(
        &m,
        text.replace(&format!("pid-{pid}.4"), &format!("pid-{pid}.x")),
    )
    .unwrap();
    let e = Archive::open(root, Limits::default()).unwrap_err();
    assert!(matches!(e, ArchiveError::UnsafePath { .. }), "{e}");
}

#[test]
fn a_fifo_at_the_roots_lock_is_refused_without_hanging() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().to_path_buf();
    let c = std::ffi::CString::new(root.join(".lock").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = within(10, move || {
        ProcessWriter::create(&root, settings(), 1)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let e = e.unwrap_err();
    assert!(
        e.contains(".lock") && e.contains("is not a regular file"),
        "{e}"
    );
}

#[test]
fn a_root_that_is_a_link_is_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("target");
    fs::create_dir(&target).unwrap();
    let root = d.path().join("root");
    std::os::unix::fs::symlink(&target, &root).unwrap();
    let e = ProcessWriter::create(&root, settings(), 1)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, ArchiveError::UnsafePath { .. }), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(
        fs::read_dir(&target).unwrap().count(),
        0,
        "nothing written in the link's target"
    );
}

#[test]
fn stored_files_never_follow_a_link_out_of_the_archive() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    archive_with_d2h(&root, 1);
    let dir = pid_dir(&root);
    // Outside: a directory that looks like a blob store, with a planted file each way.
    let outside = d.path().join("outside");
    fs::create_dir_all(outside.join("ab")).unwrap();
    fs::write(outside.join("ab/planted.blob"), vec![7u8; 4096]).unwrap();
    fs::write(outside.join("planted.co"), b"x").unwrap();
    let honest = Archive::open(&root, Limits::default()).unwrap().processes[0].stored_files();
    assert!(honest.0 >= 1, "{honest:?}");
    // blobs/ itself a link; then a real blobs/ holding a linked xx/; code_objects/ a link.
    let blobs = dir.join(blob::BLOBS_DIR);
    fs::rename(&blobs, d.path().join("blobs.real")).unwrap();
    std::os::unix::fs::symlink(&outside, &blobs).unwrap();
    let codes = dir.join(blob::CODE_OBJECTS_DIR);
    fs::rename(&codes, d.path().join("codes.real")).unwrap();
    std::os::unix::fs::symlink(&outside, &codes).unwrap();
    let a = Archive::open(&root, Limits::default()).unwrap();
    assert_eq!(a.processes[0].stored_files(), (0, 0, 0));
    fs::remove_file(&blobs).unwrap();
    fs::create_dir(&blobs).unwrap();
    std::os::unix::fs::symlink(outside.join("ab"), blobs.join("ab")).unwrap();
    let a = Archive::open(&root, Limits::default()).unwrap();
    assert_eq!(a.processes[0].stored_files().0, 0);
}

/// `n` plain events of `payload` bytes each, finished: (log path, record offsets).
fn plain_log(root: &Path, n: u64, payload: usize) -> (PathBuf, Vec<usize>) {
    let w = ProcessWriter::create(root, settings(), 1).unwrap();
    for i in 0..n {
        let mut p = PayloadWriter::new();
        p.u64(1, i);
        assert!(p.bytes(2, &vec![(i % 251) as u8; payload], false));
        w.append(3, 0, 77, 0, p.as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let log = pid_dir(root).join(EVENTS_FILE);
    let bytes = fs::read(&log).unwrap();
    let mut starts = Vec::new();
    let mut at = FILE_HEADER_LEN;
    while at < bytes.len() {
        starts.push(at);
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        at += RECORD_HEADER_LEN + len;
    }
    (log, starts)
}

fn seqs(root: &Path) -> Vec<u64> {
    let a = Archive::open(root, Limits::default()).unwrap();
    a.processes[0].events.iter().map(|e| e.header.seq).collect()
}

/// Issue 20's repair shapes: bytes after the trailer, a duplicated record, two records
/// swapped, a hole in the middle of the log. Repair keeps every record whose checksum
/// verifies, in sequence order, drops duplicates, and says what it dropped; it refuses
/// none of them.
#[test]
fn repair_keeps_every_verified_record_past_junk_duplicates_reordering_and_holes() {
    // 100 zero bytes after the trailer of an intact 65-event log.
    let d = tempfile::tempdir().unwrap();
    let (log, _) = plain_log(d.path(), 65, 8);
    let mut b = fs::read(&log).unwrap();
    b.extend_from_slice(&[0u8; 100]);
    fs::write(&log, &b).unwrap();
    let f = &repair::repair(d.path(), Limits::default()).unwrap()[0];
    assert_eq!((f.events_kept, f.tail_bytes_dropped), (65, 100), "{f:?}");
    assert!(
        f.complete && f.lost.is_empty() && f.duplicates_dropped == 0,
        "{f:?}"
    );
    assert_eq!(seqs(d.path()), (0..65).collect::<Vec<_>>());

    // Record 10 written twice.
    let d = tempfile::tempdir().unwrap();
    let (log, starts) = plain_log(d.path(), 65, 8);
    let b = fs::read(&log).unwrap();
    let mut dup = b[..starts[11]].to_vec();
    dup.extend_from_slice(&b[starts[10]..starts[11]]);
    dup.extend_from_slice(&b[starts[11]..]);
    fs::write(&log, &dup).unwrap();
    let f = &repair::repair(d.path(), Limits::default()).unwrap()[0];
    assert_eq!((f.events_kept, f.duplicates_dropped), (65, 1), "{f:?}");
    assert!(f.lost.is_empty(), "{f:?}");
    assert_eq!(seqs(d.path()), (0..65).collect::<Vec<_>>());

    // Records 10 and 11 swapped: both kept, in sequence order.
    let d = tempfile::tempdir().unwrap();
    let (log, starts) = plain_log(d.path(), 65, 8);
    let b = fs::read(&log).unwrap();
    let mut swapped = b[..starts[10]].to_vec();
    swapped.extend_from_slice(&b[starts[11]..starts[12]]);
    swapped.extend_from_slice(&b[starts[10]..starts[11]]);
    swapped.extend_from_slice(&b[starts[12]..]);
    fs::write(&log, &swapped).unwrap();
    let f = &repair::repair(d.path(), Limits::default()).unwrap()[0];
    assert_eq!(f.events_kept, 65, "{f:?}");
    assert!(f.lost.is_empty(), "{f:?}");
    assert_eq!(seqs(d.path()), (0..65).collect::<Vec<_>>());

    // 16 KiB zeroed in the middle of a 605-event log of 100-byte records: every record
    // after the hole is kept (the last 8 were once dropped as torn).
    let d = tempfile::tempdir().unwrap();
    let (log, starts) = plain_log(d.path(), 605, 100);
    let mut b = fs::read(&log).unwrap();
    let from = starts[300] + 5;
    b[from..from + (16 << 10)].fill(0);
    fs::write(&log, &b).unwrap();
    let f = &repair::repair(d.path(), Limits::default()).unwrap()[0];
    let first_after = starts.iter().position(|&s| s >= from + (16 << 10)).unwrap();
    let kept = seqs(d.path());
    assert_eq!(
        kept.iter().filter(|&&s| s >= first_after as u64).count(),
        605 - first_after,
        "{f:?}"
    );
    assert_eq!(f.lost.len(), 1, "{f:?}");
    assert_eq!(
        (f.lost[0].first_seq, f.lost[0].last_seq),
        (300, first_after as u64 - 1)
    );
}

/// A blob replaced by an 8 GiB sparse file (its header kept): repair checks it by
/// streaming, in bounded memory, and names it missing or corrupt (it read the whole file
/// into memory: 8.0 GB resident).
#[test]
fn repair_checks_a_huge_sparse_blob_in_bounded_memory() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let r = archive_with_d2h(root, 3);
    let a = Archive::open(root, Limits::default()).unwrap();
    a.processes[0].verify_blob(&r).unwrap();
    let path = pid_dir(root).join(blob::blob_rel_path(&r.hash));
    let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(8 << 30).unwrap();
    drop(f);
    // A torn trailer, so the process is repaired.
    let log = pid_dir(root).join(EVENTS_FILE);
    let len = fs::metadata(&log).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 3)
        .unwrap();
    let before = peak_rss();
    let fixed = within(60, {
        let root = root.to_path_buf();
        // Files of 16 GiB allowed: the sparse blob is not refused by its size.
        let limits = Limits {
            max_file_bytes: 16 << 30,
            ..Limits::default()
        };
        move || repair::repair(&root, limits).unwrap()
    });
    assert_eq!(fixed[0].missing_blobs, 1, "{:?}", fixed[0]);
    assert!(
        peak_rss() - before < 256 << 20,
        "repair loaded the sparse blob"
    );
}
