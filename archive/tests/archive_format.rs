//! Format tests: every behaviour named in the archive issue, each failing if broken.

mod common;

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::{pid_dir, settings};
use hrr_archive::blob::Compression;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::manifest::{EVENTS_FILE, MANIFEST_FILE};
use hrr_archive::payload::{Payload, PayloadWriter};
use hrr_archive::record::{FILE_HEADER_LEN, RECORD_HEADER_LEN};
use hrr_archive::{
    repair, Archive, ArchiveError, CaptureSettings, Limits, LogStatus, ProcessWriter,
};

/// Writes `n` events, each with a u64 field holding its index, and finishes the archive.
fn write_archive(root: &Path, n: u64) -> hrr_archive::writer::Summary {
    let w = ProcessWriter::create(root, settings(), 1).unwrap();
    for i in 0..n {
        let mut p = PayloadWriter::new();
        p.u64(1, i);
        w.append(3, 0, 77, 0, p.as_bytes()).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn round_trip_of_every_record_kind() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let w = ProcessWriter::create(
        root,
        CaptureSettings {
            compression: Compression::Zstd { level: 3 },
            ..settings()
        },
        1,
    )
    .unwrap();
    let host = vec![7u8; 10_000];
    let blob = w.put_blob(&host).unwrap();
    let code = w
        .put_code_object(b"\x7fELF fake code object bytes")
        .unwrap();
    let mut arg = PayloadWriter::new();
    arg.u64(1, 8).devptr(2, 0x7000_0000);
    let mut p = PayloadWriter::new();
    p.u64(1, 42)
        .i64(2, -1)
        .f64(3, 2.5)
        .handle(4, 0xabc)
        .devptr(5, 0x7000_1000)
        .str(6, "_Z4axpyPfS_f");
    assert!(p.bytes(7, b"raw", false));
    p.blob(8, blob).u64_array(9, &[1, 2, 3]);
    assert!(p.nested(10, &arg));
    p.str(11, &code.to_hex());
    assert_eq!(w.append(12, 0, 5, -2, p.as_bytes()), Some(0));
    assert_eq!(w.append(13, 0, 6, 0, &[]), Some(1));
    assert!(w.note_unreplayable("cudaLaunchHostFunc", "host callback"));
    assert!(!w.note_unreplayable("cudaLaunchHostFunc", "host callback"));
    w.update_runtime(|r| {
        r.vendor = "cuda".into();
        r.runtime_version = "13.0".into();
    });
    let summary = w.finish().unwrap();
    assert!(summary.complete);
    assert_eq!(
        (summary.events, summary.blobs, summary.code_objects),
        (2, 1, 1)
    );

    let a = Archive::open(root, Limits::default()).unwrap();
    assert_eq!(a.processes.len(), 1);
    let proc_ = &a.processes[0];
    assert_eq!(proc_.status, LogStatus::Complete);
    assert!(proc_.is_complete());
    assert_eq!(proc_.events.len(), 2);
    let e = &proc_.events[0];
    assert_eq!(
        (e.header.api_id, e.header.seq, e.header.tid, e.header.ret),
        (12, 0, 5, -2)
    );
    let dec = Payload::parse(&e.payload).unwrap();
    assert_eq!(dec.u64(1, "a").unwrap(), 42);
    assert_eq!(dec.str(6, "name").unwrap(), "_Z4axpyPfS_f");
    let b = dec.blob(8, "blob").unwrap();
    assert_eq!(proc_.load_blob(&b).unwrap(), host);
    let co = proc_.load_code_object(dec.str(11, "co").unwrap()).unwrap();
    assert_eq!(co, b"\x7fELF fake code object bytes");
    assert_eq!(proc_.manifest.unreplayable_apis[0].count, 2);
    assert_eq!(proc_.manifest.runtime.vendor, "cuda");
    assert!(e.header.timestamp_ns <= proc_.events[1].header.timestamp_ns);
}

#[test]
fn identical_blobs_are_stored_once_even_from_many_threads() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    let data = Arc::new(data);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (w, data) = (w.clone(), data.clone());
            std::thread::spawn(move || w.put_blob(&data).unwrap())
        })
        .collect();
    let refs: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(refs.windows(2).all(|r| r[0] == r[1]));
    let s = w.finish().unwrap();
    assert_eq!(s.blobs, 1);
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let (files, _, _) = a.processes[0].stored_files();
    assert_eq!(files, 1, "one file on disk");
    assert_eq!(a.processes[0].manifest.blob_referenced_bytes, 8 << 20);
    // No temporary file is left behind.
    let leftovers: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| p.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn constant_content_is_stored_as_its_unit_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    // A 4-byte value repeated over 3 MiB and 5 bytes: one 16-byte unit on disk.
    let data: Vec<u8> = (0..(3 << 20) + 5).map(|i| [1u8, 2, 3, 4][i % 4]).collect();
    let a = w.put_blob(&data).unwrap();
    // The same content as a fill from the start (capture's readers hand fills over).
    let f = hrr_archive::fill::Fill::detect(&data).unwrap();
    let b = w.put_fill(&f).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.hash, hrr_archive::ContentHash::of(&data));
    let mut p = PayloadWriter::new();
    p.blob(hrr_archive::api::BLOB_FIELD | 1, a);
    w.append(3, 0, 1, 0, p.as_bytes()).unwrap();
    let s = w.finish().unwrap();
    assert_eq!(s.blobs, 1);
    let arch = Archive::open(dir.path(), Limits::default()).unwrap();
    let proc_ = &arch.processes[0];
    assert_eq!(proc_.manifest.blob_stored_bytes, 32, "header and unit");
    assert_eq!(proc_.load_blob(&a).unwrap(), data);
    let mut into = vec![0u8; data.len()];
    proc_.load_blob_into(&a, &mut into).unwrap();
    assert_eq!(into, data);
    // Replay compares with the fill itself, read without expanding it.
    let fill = proc_.blob_fill(&a).unwrap().expect("stored as a fill");
    assert_eq!(fill, f);
    assert!(fill.matches(&data));
}

#[test]
fn a_fill_is_verified_against_its_name_and_other_blobs_are_no_fill() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    let data = vec![9u8; 1 << 16];
    let a = w.put_blob(&data).unwrap();
    let varied: Vec<u8> = (0..1u32 << 16).map(|i| (i % 251) as u8).collect();
    let b = w.put_blob(&varied).unwrap();
    let mut p = PayloadWriter::new();
    p.blob(hrr_archive::api::BLOB_FIELD | 1, a);
    p.blob(hrr_archive::api::BLOB_FIELD | 2, b);
    w.append(3, 0, 1, 0, p.as_bytes()).unwrap();
    w.finish().unwrap();
    let arch = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(arch.processes[0].blob_fill(&b).unwrap(), None);
    // Another unit under the same name: the content it stands for hashes differently.
    let file = pid_dir(dir.path()).join(hrr_archive::blob::blob_rel_path(&a.hash));
    let mut stored = fs::read(&file).unwrap();
    assert_eq!(stored.len(), 32);
    stored[20] ^= 1;
    fs::write(&file, &stored).unwrap();
    let arch = Archive::open(dir.path(), Limits::default()).unwrap();
    for err in [
        arch.processes[0].blob_fill(&a).unwrap_err().to_string(),
        arch.processes[0]
            .load_blob_into(&a, &mut vec![0u8; 1 << 16])
            .unwrap_err()
            .to_string(),
    ] {
        assert!(err.contains("hash") && err.contains(".blob"), "{err}");
    }
    // A unit and more: refused by name.
    stored.push(0);
    fs::write(&file, &stored).unwrap();
    let arch = Archive::open(dir.path(), Limits::default()).unwrap();
    let err = arch.processes[0].blob_fill(&a).unwrap_err().to_string();
    assert!(err.contains("holds one 16-byte unit"), "{err}");
}

/// Every path under `p` (files and directories, not `p` itself).
fn walk(p: &Path) -> Vec<String> {
    walkdir::WalkDir::new(p)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .collect()
}

#[test]
fn bad_magic_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 3);
    let log = pid_dir(dir.path()).join(EVENTS_FILE);
    let mut b = fs::read(&log).unwrap();
    b[0] = b'X';
    fs::write(&log, b).unwrap();
    let err = Archive::open(dir.path(), Limits::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad magic") && err.contains("events.bin"),
        "{err}"
    );
}

#[test]
fn version_mismatch_names_both_numbers() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 3);
    let log = pid_dir(dir.path()).join(EVENTS_FILE);
    let mut b = fs::read(&log).unwrap();
    b[8..12].copy_from_slice(&7u32.to_le_bytes());
    fs::write(&log, b).unwrap();
    let err = Archive::open(dir.path(), Limits::default()).unwrap_err();
    assert!(
        matches!(
            err,
            ArchiveError::VersionMismatch {
                found: 7,
                supported: hrr_archive::FORMAT_VERSION,
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("version 7")
            && msg.contains(&format!("version {}", hrr_archive::FORMAT_VERSION)),
        "{msg}"
    );
    // The manifest's version is checked too.
    let dir2 = tempfile::tempdir().unwrap();
    write_archive(dir2.path(), 1);
    let m = dir2.path().join(MANIFEST_FILE);
    let s = fs::read_to_string(&m).unwrap().replace(
        &format!("\"format_version\": {}", hrr_archive::FORMAT_VERSION),
        "\"format_version\": 9",
    );
    fs::write(&m, s).unwrap();
    let err = Archive::open(dir2.path(), Limits::default()).unwrap_err();
    assert!(
        matches!(
            err,
            ArchiveError::VersionMismatch {
                found: 9,
                supported: hrr_archive::FORMAT_VERSION,
                ..
            }
        ),
        "{err}"
    );
}

fn truncate_log(root: &Path, keep: impl Fn(usize) -> usize) -> usize {
    let log = pid_dir(root).join(EVENTS_FILE);
    let b = fs::read(&log).unwrap();
    let n = keep(b.len());
    fs::write(&log, &b[..n]).unwrap();
    b.len()
}

#[test]
fn torn_header_keeps_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 10);
    // Each event: 36 header + 16 payload (one u64 field) = 52 bytes. Keep 4 events + 10 bytes.
    truncate_log(dir.path(), |_| FILE_HEADER_LEN + 4 * 52 + 10);
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let p = &a.processes[0];
    assert_eq!(p.events.len(), 4);
    assert!(
        matches!(
            p.status,
            LogStatus::Truncated {
                torn: hrr_archive::record::Torn::ShortHeader { .. },
                ..
            }
        ),
        "{:?}",
        p.status
    );
    assert!(!a.is_complete());
}

#[test]
fn torn_payload_keeps_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 10);
    truncate_log(dir.path(), |_| {
        FILE_HEADER_LEN + 6 * 52 + RECORD_HEADER_LEN + 3
    });
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let p = &a.processes[0];
    assert_eq!(p.events.len(), 6);
    assert!(matches!(
        p.status,
        LogStatus::Truncated {
            torn: hrr_archive::record::Torn::ShortPayload { .. },
            ..
        }
    ));
}

#[test]
fn implausible_length_counts_as_torn() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 5);
    let log = pid_dir(dir.path()).join(EVENTS_FILE);
    let mut b = fs::read(&log).unwrap();
    let at = FILE_HEADER_LEN + 2 * 52;
    b[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    fs::write(&log, b).unwrap();
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 2);
    assert!(matches!(
        a.processes[0].status,
        LogStatus::Truncated {
            torn: hrr_archive::record::Torn::ImplausibleLength { .. },
            ..
        }
    ));
}

#[test]
fn no_trailer_means_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 5);
    // Cut exactly the trailer record (36 + 16 bytes).
    truncate_log(dir.path(), |len| len - (RECORD_HEADER_LEN + 16));
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 5);
    assert_eq!(a.processes[0].status, LogStatus::Incomplete);
}

#[test]
fn repair_keeps_the_whole_records_of_a_torn_log() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 10);
    truncate_log(dir.path(), |_| FILE_HEADER_LEN + 7 * 52 + 20);
    let fixed = repair::repair(dir.path(), Limits::default()).unwrap();
    assert_eq!(fixed.len(), 1);
    assert_eq!((fixed[0].events_kept, fixed[0].was), (7, "truncated"));
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let p = &a.processes[0];
    // Three events were lost with the torn tail: the archive says so, it is not complete.
    assert!(!fixed[0].complete);
    assert!(!p.is_complete(), "{:?}", p.status);
    assert_eq!(p.status, LogStatus::Incomplete);
    assert!(p.manifest.repaired);
    assert_eq!(p.events.len(), 7);
    for (i, e) in p.events.iter().enumerate() {
        assert_eq!(
            Payload::parse(&e.payload).unwrap().u64(1, "i").unwrap(),
            i as u64
        );
    }
    // A second repair has nothing to do.
    assert!(repair::repair(dir.path(), Limits::default())
        .unwrap()
        .is_empty());
}

#[test]
fn events_after_the_trailer_are_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    w.append(1, 0, 1, 0, &[]).unwrap();
    w.finish().unwrap();
    assert_eq!(w.append(1, 0, 1, 0, &[]), None);
    assert!(matches!(w.put_blob(b"late"), Err(ArchiveError::Finished)));
    let again = w.finish().unwrap();
    assert_eq!(again.dropped_after_trailer, 2);
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 1);
    assert_eq!(a.processes[0].status, LogStatus::Complete);
    assert_eq!(
        a.processes[0].stored_files().0,
        0,
        "the late blob was not written"
    );
}

#[test]
fn sixteen_threads_get_one_total_order() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(
        dir.path(),
        CaptureSettings {
            buffer_bytes: 4096,
            ..settings()
        },
        1,
    )
    .unwrap();
    let per = 5_000u64;
    let hs: Vec<_> = (0..16u32)
        .map(|t| {
            let w = w.clone();
            std::thread::spawn(move || {
                for i in 0..per {
                    let mut p = PayloadWriter::new();
                    p.u64(1, t as u64).u64(2, i);
                    w.append(9, 0, t, 0, p.as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    w.finish().unwrap();
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let ev = &a.processes[0].events;
    assert_eq!(ev.len() as u64, 16 * per);
    let mut next = [0u64; 16];
    for (i, e) in ev.iter().enumerate() {
        assert_eq!(
            e.header.seq, i as u64,
            "sequence ids are dense and in file order"
        );
        let p = Payload::parse(&e.payload).unwrap();
        let t = p.u64(1, "t").unwrap() as usize;
        assert_eq!(
            p.u64(2, "i").unwrap(),
            next[t],
            "each thread's events keep their order"
        );
        next[t] += 1;
        if i > 0 {
            assert!(ev[i - 1].header.timestamp_ns <= e.header.timestamp_ns);
        }
    }
}

#[test]
fn a_forked_child_writes_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    w.append(1, 0, 1, 0, b"").unwrap();
    w.fork_prepare();
    // SAFETY: test process; the child only uses async-signal-safe-enough code paths that
    // do not depend on other threads (this test is single-threaded at this point).
    match unsafe { nix::unistd::fork() }.unwrap() {
        nix::unistd::ForkResult::Child => {
            let code = (|| {
                let child = w.fork_child().ok()?;
                child.append(2, 0, 2, 0, b"").ok_or(()).ok()?;
                child.append(2, 0, 2, 0, b"").ok_or(()).ok()?;
                child.finish().ok()?;
                Some(())
            })()
            .map_or(1, |_| 0);
            // SAFETY: leave the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        nix::unistd::ForkResult::Parent { child } => {
            // SAFETY: fork_prepare above, same thread.
            unsafe { w.fork_parent() };
            w.append(1, 0, 1, 0, b"").unwrap();
            let status = nix::sys::wait::waitpid(child, None).unwrap();
            assert!(
                matches!(status, nix::sys::wait::WaitStatus::Exited(_, 0)),
                "{status:?}"
            );
            w.finish().unwrap();
            let a = Archive::open(dir.path(), Limits::default()).unwrap();
            assert_eq!(a.processes.len(), 2, "root manifest lists parent and child");
            let parent = a
                .processes
                .iter()
                .find(|p| p.entry.pid == std::process::id())
                .unwrap();
            let kid = a
                .processes
                .iter()
                .find(|p| p.entry.pid == child.as_raw() as u32)
                .unwrap();
            assert_eq!(parent.events.len(), 2);
            assert!(parent.events.iter().all(|e| e.header.api_id == 1));
            assert_eq!(kid.events.len(), 2);
            assert!(
                kid.events.iter().all(|e| e.header.api_id == 2),
                "the child never wrote the parent's buffered events"
            );
            assert_eq!(kid.entry.ppid, std::process::id());
            assert!(parent.is_complete() && kid.is_complete());
        }
    }
}

#[test]
fn a_blob_that_does_not_match_its_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    let r = w.put_blob(b"expected output bytes").unwrap();
    w.finish().unwrap();
    let path = pid_dir(dir.path()).join(hrr_archive::blob::blob_rel_path(&r.hash));
    let mut b = fs::read(&path).unwrap();
    let last = b.len() - 1;
    b[last] ^= 0xff;
    fs::write(&path, b).unwrap();
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let err = a.processes[0].load_blob(&r).unwrap_err();
    assert!(matches!(err, ArchiveError::HashMismatch { .. }), "{err}");
}

#[test]
fn path_traversal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_archive(dir.path(), 1);
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    let p = &a.processes[0];
    for name in [
        "../../etc/passwd",
        "/etc/passwd",
        "..",
        "0123456789abcdef0123456789abcdeF",
    ] {
        let err = p.load_code_object(name).unwrap_err();
        assert!(
            matches!(err, ArchiveError::UnsafePath { .. }),
            "{name}: {err}"
        );
    }
    // A process directory entry that points elsewhere.
    let m = dir.path().join(MANIFEST_FILE);
    let orig = fs::read_to_string(&m).unwrap();
    let pid = std::process::id();
    fs::write(
        &m,
        orig.replace(&format!("\"pid-{pid}\""), "\"../outside\""),
    )
    .unwrap();
    let err = Archive::open(dir.path(), Limits::default()).unwrap_err();
    assert!(matches!(err, ArchiveError::UnsafePath { .. }), "{err}");
    fs::write(&m, &orig).unwrap();
    // A blob replaced by a symlink to a file outside the archive.
    let outside = tempfile::NamedTempFile::new().unwrap();
    let w_dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(w_dir.path(), settings(), 1).unwrap();
    let r = w.put_blob(b"abc").unwrap();
    w.finish().unwrap();
    let bp = pid_dir(w_dir.path()).join(hrr_archive::blob::blob_rel_path(&r.hash));
    fs::remove_file(&bp).unwrap();
    std::os::unix::fs::symlink(outside.path(), &bp).unwrap();
    let a = Archive::open(w_dir.path(), Limits::default()).unwrap();
    let err = a.processes[0].load_blob(&r).unwrap_err();
    assert!(matches!(err, ArchiveError::UnsafePath { .. }), "{err}");
    // A symlinked blobs/ directory.
    let bdir = pid_dir(w_dir.path()).join("blobs");
    fs::rename(&bdir, w_dir.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(w_dir.path().join("elsewhere"), &bdir).unwrap();
    let err = a.processes[0].load_blob(&r).unwrap_err();
    assert!(matches!(err, ArchiveError::UnsafePath { .. }), "{err}");
}

#[test]
fn each_limit_refuses_and_zero_refuses_everything() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    let r = w.put_blob(&[1u8; 4096]).unwrap();
    for _ in 0..10 {
        w.append(1, 0, 1, 0, &[]).unwrap();
    }
    w.finish().unwrap();
    let ok = Limits::default();
    let check = |limits: Limits, name: &str| {
        let err = Archive::open(dir.path(), limits).unwrap_err();
        assert!(err.is_limit(), "{name}: {err}");
        assert!(err.to_string().contains(name), "{err}");
    };
    check(
        Limits {
            max_events: 9,
            ..ok
        },
        "max-events",
    );
    check(
        Limits {
            max_events: 0,
            ..ok
        },
        "max-events",
    );
    check(
        Limits {
            max_file_bytes: 100,
            ..ok
        },
        "max-file-bytes",
    );
    check(
        Limits {
            max_file_bytes: 0,
            ..ok
        },
        "max-file-bytes",
    );
    Archive::open(
        dir.path(),
        Limits {
            max_events: 10,
            ..ok
        },
    )
    .unwrap();
    let a = Archive::open(
        dir.path(),
        Limits {
            max_host_bytes: 4095,
            ..ok
        },
    )
    .unwrap();
    assert!(a.processes[0].load_blob(&r).unwrap_err().is_limit());
    let a = Archive::open(
        dir.path(),
        Limits {
            max_host_bytes: 0,
            ..ok
        },
    )
    .unwrap();
    assert!(a.processes[0].load_blob(&r).unwrap_err().is_limit());
    let a = Archive::open(
        dir.path(),
        Limits {
            max_host_bytes: 4096,
            ..ok
        },
    )
    .unwrap();
    assert_eq!(a.processes[0].load_blob(&r).unwrap().len(), 4096);
}

#[test]
fn disk_reserve_refuses_start_and_stops_capture_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let huge = ReservePolicy::Bytes(u64::MAX / 4);
    let err = ProcessWriter::create(
        dir.path(),
        CaptureSettings {
            reserve: huge,
            ..settings()
        },
        1,
    )
    .err()
    .unwrap();
    assert!(matches!(err, ArchiveError::DiskReserve { .. }), "{err}");

    // Leave the free space as reserve, the manifest's room and 256 KiB: a 256 MiB blob
    // must stop capture. Other processes share the file system and may free space
    // between the measurement and the write (a concurrent build deleting its outputs
    // once made an 8 MiB blob fit): a blob that fits is tried again, a few times.
    // Zeroes but the last byte: no fill, and calloc'd pages never touched but to hash.
    let mut big = vec![0u8; 256 << 20];
    *big.last_mut().unwrap() = 1;
    let mut stopped = None;
    for _ in 0..3 {
        let space = hrr_archive::diskspace::space(dir.path()).unwrap();
        let reserve = ReservePolicy::Bytes(
            space
                .available
                .saturating_sub(hrr_archive::writer::MANIFEST_ROOM + (256 << 10)),
        );
        let _ = std::fs::remove_dir_all(dir.path().join(format!("pid-{}", std::process::id())));
        let _ = std::fs::remove_file(dir.path().join(MANIFEST_FILE));
        let w = ProcessWriter::create(
            dir.path(),
            CaptureSettings {
                reserve,
                ..settings()
            },
            1,
        )
        .unwrap();
        w.append(1, 0, 1, 0, &[]).unwrap();
        if w.put_blob(&big).is_err() {
            stopped = Some(w);
            break;
        }
        w.finish().unwrap();
    }
    let w = stopped.expect("a blob past the reserve was refused in none of 3 tries");
    assert_eq!(w.append(1, 0, 1, 0, &[]), None, "recording stopped");
    let s = w.finish().unwrap();
    assert!(!s.complete);
    // The event appended before the stop is kept when it fits (other writers share this
    // file system, so it may not), and the summary counts what is on disk.
    assert!(
        s.stop_reason.as_deref().unwrap_or("").contains("reserve"),
        "{:?}",
        s.stop_reason
    );
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert!(!a.is_complete());
    assert!(a.processes[0].manifest.stop_reason.is_some());
    assert_eq!(a.processes[0].events.len() as u64, s.events);
    assert!(s.events <= 1);
}

#[test]
fn emergency_flush_writes_buffered_events_without_a_trailer() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(dir.path(), settings(), 1).unwrap();
    for _ in 0..3 {
        w.append(1, 0, 1, 0, b"").unwrap();
    }
    w.emergency_flush();
    assert_eq!(w.append(1, 0, 1, 0, b""), None);
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 3);
    assert_eq!(a.processes[0].status, LogStatus::Incomplete);
    assert!(!a.processes[0].manifest.complete);
}

#[test]
fn periodic_flush_bounds_what_a_kill_loses() {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(
        dir.path(),
        CaptureSettings {
            flush_interval: Duration::from_millis(20),
            ..settings()
        },
        1,
    )
    .unwrap();
    w.start_flusher();
    w.append(1, 0, 1, 0, b"").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // Without finish (as if killed): the idle event reached the file.
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(a.processes[0].events.len(), 1);
    assert_eq!(a.processes[0].manifest.event_count, 1);
}

#[test]
fn a_root_with_several_processes_lists_each() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    // Two child processes of this test binary each write their own pid directory.
    for _ in 0..2 {
        let st = std::process::Command::new(&exe)
            .args([
                "--exact",
                "helper_write_one_process",
                "--ignored",
                "--nocapture",
            ])
            .env("HRR_TEST_ROOT", dir.path())
            .status()
            .unwrap();
        assert!(st.success());
    }
    let a = Archive::open(dir.path(), Limits::default()).unwrap();
    assert_eq!(a.processes.len(), 2);
    assert!(a
        .processes
        .iter()
        .all(|p| p.is_complete() && p.events.len() == 4));
    assert_ne!(a.processes[0].entry.pid, a.processes[1].entry.pid);
}

#[test]
#[ignore = "helper run by a_root_with_several_processes_lists_each in a child process"]
fn helper_write_one_process() {
    let root = std::env::var_os("HRR_TEST_ROOT").expect("HRR_TEST_ROOT");
    write_archive(Path::new(&root), 4);
}

/// HRR_CAPTURE_CODE_STORE: code objects go to the shared store once, the archive holds
/// none of them, and a reader finds them through the manifest or an explicit store.
#[test]
fn code_objects_go_to_the_shared_store_once_and_are_read_back_from_it() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    let with_store = || CaptureSettings {
        code_store: Some(store.clone()),
        ..settings()
    };
    let image = vec![0x5au8; 300_000];
    let mut hashes = Vec::new();
    for name in ["a", "b"] {
        let root = d.path().join(name);
        let w = ProcessWriter::create(&root, with_store(), 1).unwrap();
        assert_eq!(w.code_store_refused(), None);
        let h = w.put_code_object(&image).unwrap();
        hashes.push(h);
        let mut p = PayloadWriter::new();
        p.str(1, &h.to_hex());
        w.append(3, 0, 1, 0, p.as_bytes()).unwrap();
        let s = w.finish().unwrap();
        assert_eq!((s.code_objects, s.code_objects_in_store), (1, 1));
        assert_eq!(
            fs::read_dir(pid_dir(&root).join("code_objects"))
                .unwrap()
                .count(),
            0,
            "the archive holds no copy"
        );
        let a = Archive::open(&root, Limits::default()).unwrap();
        let m = &a.processes[0].manifest;
        assert_eq!(m.code_store.as_deref(), Some(store.to_str().unwrap()));
        assert_eq!((m.code_object_count, m.code_objects_in_store), (1, 1));
        assert_eq!(a.processes[0].load_code_object(&h.to_hex()).unwrap(), image);
    }
    assert_eq!(hashes[0], hashes[1]);
    assert_eq!(
        fs::read_dir(store.join("code_objects")).unwrap().count(),
        1,
        "stored once for both archives"
    );

    // Moved elsewhere: the manifest's store no longer holds it, an explicit one does.
    let moved = d.path().join("moved");
    fs::rename(&store, &moved).unwrap();
    let mut a = Archive::open(&d.path().join("a"), Limits::default()).unwrap();
    let e = a.processes[0]
        .load_code_object(&hashes[0].to_hex())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("code object missing") && e.contains("--code-store"),
        "{e}"
    );
    a.use_code_store(&moved);
    assert_eq!(
        a.processes[0]
            .load_code_object(&hashes[0].to_hex())
            .unwrap(),
        image
    );
}

/// A store another user could write into is not used: the capture goes on and keeps its
/// code objects in the archive, and says why.
#[test]
fn an_unusable_code_store_leaves_code_objects_in_the_archive() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("shared");
    fs::create_dir(&store).unwrap();
    fs::set_permissions(&store, fs::Permissions::from_mode(0o777)).unwrap();
    let root = d.path().join("a");
    let w = ProcessWriter::create(
        &root,
        CaptureSettings {
            code_store: Some(store.clone()),
            ..settings()
        },
        1,
    )
    .unwrap();
    let why = w.code_store_refused().unwrap().to_string();
    assert!(why.contains("writable by its group or by others"), "{why}");
    let h = w.put_code_object(b"\x7fELF bytes").unwrap();
    let s = w.finish().unwrap();
    assert_eq!((s.code_objects, s.code_objects_in_store), (1, 0));
    let a = Archive::open(&root, Limits::default()).unwrap();
    assert_eq!(a.processes[0].manifest.code_store, None);
    assert_eq!(
        a.processes[0].load_code_object(&h.to_hex()).unwrap(),
        b"\x7fELF bytes"
    );
    assert!(!store.join("code_objects").exists());
}
