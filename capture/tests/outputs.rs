//! Asynchronous D2H copies into page-locked memory, through the stand-in runtime
//! (standin/: a copy happens only when its stream, an event after it or the device
//! is waited for) under libhrr_capture.so: each copy's record says its output is
//! pending, and exactly one `CopyOutput` record, written by a reader thread once the
//! copy completed (a blocking copy's snapshotted when its call returned), carries the
//! bytes the copy wrote, though the program reuses the buffer in stream order; repeated
//! content stored once; a copy the program never waited for is still read at exit, the
//! archive complete.

use std::collections::{BTreeMap, BTreeSet};

use hrr_archive::api::{fid, id, semantic, BLOB_FIELD, COPY_DIR_FIELD, OUTPUT_PENDING_FIELD};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits, ProcessArchive};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

const N: usize = 1 << 20;
const HALF: usize = N / 2;

fn pattern(mul: usize, add: usize) -> Vec<u8> {
    (0..N).map(|i| (i * mul + add) as u8).collect()
}

/// The D2H async copies' sequence ids, in order, and each one's attached output: (the
/// attaching record's index, its bytes).
fn outputs(p: &ProcessArchive) -> Vec<(u64, usize, Vec<u8>)> {
    let mut attached = BTreeMap::new();
    for (i, e) in p.events.iter().enumerate() {
        if e.header.api_id == semantic::COPY_OUTPUT {
            let pl = Payload::parse(&e.payload).unwrap();
            let seq = pl.u64(fid::COPY_SEQ, "copy").unwrap();
            let field = pl.u64(fid::COPY_FIELD, "field").unwrap() as u16;
            assert_eq!(field, 1, "the destination is parameter 1");
            let r = pl.blob(BLOB_FIELD | field, "output").unwrap();
            assert!(
                attached
                    .insert(seq, (i, p.load_blob(&r).unwrap()))
                    .is_none(),
                "one CopyOutput per copy"
            );
        }
    }
    let mut out = Vec::new();
    for e in &p.events {
        let pl = Payload::parse(&e.payload).unwrap();
        let d2h = pl.get(COPY_DIR_FIELD).map(|f| f.as_u64().unwrap()) == Some(2);
        if ![id::MemcpyAsync, id::Memcpy].contains(&e.header.api_id) || !d2h {
            continue;
        }
        assert_eq!(
            pl.u64(OUTPUT_PENDING_FIELD, "pending").unwrap(),
            1,
            "seq {}",
            e.header.seq
        );
        assert!(pl.get(BLOB_FIELD | 1).is_none(), "no inline output");
        let (i, bytes) = attached
            .remove(&e.header.seq)
            .unwrap_or_else(|| panic!("no CopyOutput for seq {}", e.header.seq));
        out.push((e.header.seq, i, bytes));
    }
    assert!(attached.is_empty(), "CopyOutput for no copy: {attached:?}");
    out
}

/// The program run in `mode` under capture and its archive; None after a skip.
fn run(mode: &str) -> Option<(StandIn, Archive)> {
    let si = StandIn::build(&format!("outputs-{mode}"), "outputs.c")?;
    let out = si.path().join("archive");
    let r = si.command(&out, &[mode]).output().unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for k in ["halves", "reused", "repeated"] {
        assert!(stdout.contains(&format!("{k}=0\n")), "{stdout}");
    }
    let a = Archive::open(&out, Limits::default())
        .unwrap_or_else(|e| panic!("{e}\ncapture said: {}", String::from_utf8_lossy(&r.stderr)));
    assert!(a.is_complete());
    Some((si, a))
}

#[test]
fn each_async_output_is_read_when_its_copy_completes_before_the_program_sees_it() {
    let Some((_si, a)) = run("sync") else {
        return;
    };
    let p = &a.processes[0];
    let (aa, b, c) = (pattern(7, 1), pattern(13, 2), pattern(5, 3));
    let got = outputs(p);
    let want: Vec<&[u8]> = vec![
        &aa[..HALF],
        &aa[HALF..],
        &aa[..],
        &c[..HALF],
        &b[..HALF],
        &b[..HALF],
        &b[..HALF],
        &b[..HALF],
    ];
    assert_eq!(got.len(), want.len());
    for ((seq, _, bytes), w) in got.iter().zip(&want) {
        assert!(bytes == w, "seq {seq}: the bytes the copy wrote");
    }
    // Each output is attached after its copy (a reader writes it once the bytes were
    // gathered: possibly after the synchronisation that let the program see them).
    for (seq, at, _) in &got {
        assert!(p.events[*at].header.seq > *seq);
    }
    // Content stored once: a, b (sources and outputs) and c's halves... every distinct
    // blob referenced once in the manifest's count.
    let distinct: BTreeSet<_> = p
        .events
        .iter()
        .flat_map(|e| {
            let pl = Payload::parse(&e.payload).unwrap();
            pl.iter()
                .filter_map(|f| f.as_blob().ok())
                .map(|r| r.hash)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(p.manifest.blob_count, distinct.len() as u64);
    assert!(p.manifest.blob_referenced_bytes >= p.manifest.blob_bytes + 3 * HALF as u64);
    assert!(p.manifest.capture_failures.is_empty());
}

#[test]
fn a_copy_the_program_never_waited_for_is_read_at_exit() {
    let Some((_si, a)) = run("exit") else {
        return;
    };
    let p = &a.processes[0];
    let got = outputs(p);
    assert_eq!(got.len(), 9);
    let (seq, _, bytes) = got.last().unwrap();
    assert!(bytes[..] == pattern(13, 2)[..HALF], "seq {seq}");
    assert!(p.manifest.capture_failures.is_empty());
}

/// Each D2H copy's output bytes, in order, and whether a reader attached them
/// (`CopyOutput`, after capture's event) or capture read them on the spot (inline).
fn every_output(p: &ProcessArchive) -> Vec<(Vec<u8>, bool)> {
    let mut attached = BTreeMap::new();
    for e in &p.events {
        if e.header.api_id == semantic::COPY_OUTPUT {
            let pl = Payload::parse(&e.payload).unwrap();
            let seq = pl.u64(fid::COPY_SEQ, "copy").unwrap();
            let r = pl.blob(BLOB_FIELD | 1, "output").unwrap();
            attached.insert(seq, p.load_blob(&r).unwrap());
        }
    }
    let mut out = Vec::new();
    for e in &p.events {
        let pl = Payload::parse(&e.payload).unwrap();
        if e.header.api_id != id::MemcpyAsync
            || pl.get(COPY_DIR_FIELD).map(|f| f.as_u64().unwrap()) != Some(2)
        {
            continue;
        }
        match pl.get(BLOB_FIELD | 1) {
            Some(f) => out.push((p.load_blob(&f.as_blob().unwrap()).unwrap(), false)),
            None => out.push((
                attached
                    .remove(&e.header.seq)
                    .unwrap_or_else(|| panic!("no output for seq {}", e.header.seq)),
                true,
            )),
        }
    }
    out
}

#[test]
fn capture_events_are_of_the_streams_device_and_leave_the_program_no_error() {
    let Some(si) = StandIn::build("outputs-devices", "devices.c") else {
        return;
    };
    let native = std::process::Command::new(&si.exe)
        .env("LD_LIBRARY_PATH", si.path())
        .env("HRR_STAND_IN_DEVICES", "2")
        .output()
        .unwrap();
    let native_out = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(native.status.success(), "{native_out}");
    // What the program sees alone: no error after its copies, the invalid device it
    // asked for still its last error after the copy that followed.
    assert!(
        native_out.contains("device 1's stream, device 0 current: last error 0\n"),
        "{native_out}"
    );
    assert!(
        native_out.contains("an error pending across a copy: 101\n"),
        "{native_out}"
    );
    assert!(
        native_out.contains("first bytes 10 11 11 10\n"),
        "{native_out}"
    );

    let out = si.path().join("archive");
    let r = si
        .command(&out, &[])
        .env("HRR_STAND_IN_DEVICES", "2")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        native_out,
        "the program saw what it saw alone"
    );
    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    let got = every_output(p);
    // Each device's stream with its device current, and a copy with an error pending
    // (CUDA keeps it through capture's calls), get capture's event; the second device's
    // stream with the first current gets none, its copy read on the spot.
    let want = [(0x10u8, true), (0x11, true), (0x11, false), (0x10, true)];
    assert_eq!(got.len(), want.len());
    for (i, ((bytes, deferred), (w, by_event))) in got.iter().zip(want).enumerate() {
        assert!(
            bytes.len() == 4096 && bytes.iter().all(|&b| b == w),
            "copy {i}"
        );
        assert_eq!(*deferred, by_event, "copy {i}: read after capture's event");
    }
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );
}
