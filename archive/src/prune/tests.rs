//! The set-up a range archive keeps: the plan over hand-made events, then a written
//! archive pruned and read back.

use super::*;
use crate::diskspace::ReservePolicy;
use crate::payload::PayloadWriter;
use crate::{CaptureSettings, ProcessWriter};

const FATBIN_A: u64 = 0x5555_0000_1000;
const FATBIN_B: u64 = 0x5555_0000_2000;
const STUB_A1: u64 = 0x5555_0001_0000;
const STUB_A2: u64 = 0x5555_0001_0100;
const STUB_B: u64 = 0x5555_0002_0000;
const VAR_B: u64 = 0x5555_0002_0800;
const MODULE: u64 = 0x7f00_0000_1000;
const FUNCTION: u64 = 0x7f00_0000_2000;

fn hash(n: u8) -> ContentHash {
    ContentHash([n; 16])
}

fn event(seq: u64, api_id: u16, fill: impl FnOnce(&mut PayloadWriter)) -> Event {
    let mut p = PayloadWriter::new();
    fill(&mut p);
    Event {
        header: RecordHeader {
            api_id,
            flags: 0,
            seq,
            timestamp_ns: seq,
            tid: 1,
            ret: 0,
        },
        payload: p.finish(),
    }
}

/// A program's set-up: fat binary A (two kernels) and B (a kernel, a variable), a
/// module of code object C with one function, a stream; then the range's start.
fn setup() -> Vec<Event> {
    let reg = |seq, api, handle, stub: u64, co: u8| {
        event(seq, api, move |p| {
            p.handle(fid::HANDLE, handle)
                .u64(fid::HOST_STUB, stub)
                .str(fid::CODE_OBJECT, &hash(co).to_hex());
        })
    };
    vec![
        reg(0, semantic::REGISTER_FAT_BINARY, FATBIN_A, 0, 0xa),
        reg(1, semantic::REGISTER_FUNCTION, FATBIN_A, STUB_A1, 0xa),
        reg(2, semantic::REGISTER_FUNCTION, FATBIN_A, STUB_A2, 0xa),
        reg(3, semantic::REGISTER_FAT_BINARY, FATBIN_B, 0, 0xb),
        reg(4, semantic::REGISTER_FUNCTION, FATBIN_B, STUB_B, 0xb),
        reg(5, semantic::REGISTER_VAR, FATBIN_B, VAR_B, 0xb),
        event(6, semantic::MODULE_LOAD, |p| {
            p.handle(fid::HANDLE, MODULE)
                .str(fid::CODE_OBJECT, &hash(0xc).to_hex());
        }),
        event(7, semantic::MODULE_GET_FUNCTION, |p| {
            p.handle(fid::HANDLE, FUNCTION)
                .handle(fid::KERNEL, MODULE)
                .str(fid::NAME, "k")
                .str(fid::CODE_OBJECT, &hash(0xc).to_hex());
        }),
        // A stream made before the range (a table row): always kept.
        event(8, 300, |p| {
            p.handle(1, 0x9000_0000);
        }),
        event(9, semantic::RANGE_RESTORE, |p| {
            p.devptr(fid::DEVICE_ADDRESS, 0x7000_0000)
                .u64(fid::SIZE, 16);
        }),
        event(10, semantic::RANGE_MARK, |p| {
            p.str(fid::NAME, "profiler").u64(fid::RANGE_OCCURRENCE, 1);
        }),
    ]
}

fn launch(seq: u64, stub: u64, co: u8) -> Event {
    event(seq, semantic::LAUNCH_KERNEL, |p| {
        p.u64(fid::HOST_STUB, stub)
            .str(fid::NAME, "kernel")
            .str(fid::CODE_OBJECT, &hash(co).to_hex());
    })
}

fn kept_seqs(events: &[Event], plan: &Plan) -> Vec<u64> {
    (0..events.len())
        .filter(|i| !plan.drop.contains(i))
        .map(|i| events[i].header.seq)
        .collect()
}

#[test]
fn a_range_keeps_the_code_objects_it_launches_and_drops_the_rest() {
    let mut ev = setup();
    ev.push(launch(11, STUB_A2, 0xa));
    let plan = plan(&ev).unwrap();
    assert_eq!(plan.candidates, 8);
    // Fat binary A whole (both kernels: replay loads A by hash), the stream, the range.
    assert_eq!(kept_seqs(&ev, &plan), [0, 1, 2, 8, 9, 10, 11]);
    assert_eq!(
        plan.drop_code_objects,
        [hash(0xb), hash(0xc)].into_iter().collect()
    );
}

#[test]
fn a_module_function_launched_by_handle_keeps_its_load_and_lookup() {
    let mut ev = setup();
    // cuLaunchKernel names the function handle; the lookup names the module's.
    ev.push(event(11, semantic::MODULE_LAUNCH_KERNEL, |p| {
        p.handle(fid::KERNEL, FUNCTION);
    }));
    let plan = plan(&ev).unwrap();
    assert_eq!(kept_seqs(&ev, &plan), [6, 7, 8, 9, 10, 11]);
    assert_eq!(
        plan.drop_code_objects,
        [hash(0xa), hash(0xb)].into_iter().collect()
    );
}

#[test]
fn set_up_kept_and_symbol_copies_keep_what_they_name() {
    let mut ev = setup();
    // A function attribute set before the range names B's code object; a copy to
    // B's variable in the range names its host address.
    ev.insert(
        8,
        event(8, semantic::FUNC_SET_ATTRIBUTE, |p| {
            p.str(fid::CODE_OBJECT, &hash(0xb).to_hex());
        }),
    );
    for (i, e) in ev.iter_mut().enumerate() {
        e.header.seq = i as u64;
    }
    let plan1 = plan(&ev).unwrap();
    assert_eq!(
        plan1.drop_code_objects,
        [hash(0xa), hash(0xc)].into_iter().collect()
    );
    let mut ev = setup();
    ev.push(event(11, semantic::SYMBOL_ADDRESS, |p| {
        p.u64(fid::HOST_STUB, VAR_B);
    }));
    let plan2 = plan(&ev).unwrap();
    assert_eq!(kept_seqs(&ev, &plan2), [3, 4, 5, 8, 9, 10, 11]);
}

#[test]
fn unloads_go_with_their_loads_and_untied_records_stay() {
    let mut ev = setup();
    let range = ev.split_off(9);
    // The module unloaded before the range; a registration capture could not tie to
    // a code object.
    ev.push(event(9, semantic::MODULE_UNLOAD, |p| {
        p.handle(fid::HANDLE, MODULE);
    }));
    ev.push(event(10, semantic::REGISTER_FAT_BINARY, |p| {
        p.handle(fid::HANDLE, 0x5555_0000_3000);
    }));
    ev.extend(range);
    ev.push(launch(13, STUB_A1, 0xa));
    for (i, e) in ev.iter_mut().enumerate() {
        e.header.seq = i as u64;
    }
    let plan = plan(&ev).unwrap();
    assert_eq!(kept_seqs(&ev, &plan), [0, 1, 2, 8, 10, 11, 12, 13]);
}

#[test]
fn a_log_without_a_range_start_is_left_alone() {
    let mut ev = setup();
    ev.truncate(9);
    ev.push(launch(9, STUB_A1, 0xa));
    assert_eq!(plan(&ev), None);
}

/// The defaults, with no disk reserve (a test's temporary directory may be nearly full)
/// and no fsync.
fn settings() -> CaptureSettings {
    CaptureSettings {
        reserve: ReservePolicy::Bytes(0),
        fsync: false,
        fsync_blobs: false,
        ..CaptureSettings::default()
    }
}

#[test]
fn a_pruned_archive_reads_back_without_the_unused_set_up_or_its_code_objects() {
    let t = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(t.path(), settings(), 1).unwrap();
    let a = w.put_code_object(b"\x7fELF code object A").unwrap();
    let b = w
        .put_code_object(b"\x7fELF code object B, never launched")
        .unwrap();
    let reg = |co: &ContentHash, stub: u64| {
        let mut p = PayloadWriter::new();
        let fatbin = if *co == a { FATBIN_A } else { FATBIN_B };
        p.handle(fid::HANDLE, fatbin)
            .u64(fid::HOST_STUB, stub)
            .str(fid::CODE_OBJECT, &co.to_hex());
        p.finish()
    };
    w.append(semantic::REGISTER_FUNCTION, 0, 1, 0, &reg(&a, STUB_A1));
    for k in 0..50 {
        w.append(semantic::REGISTER_FUNCTION, 0, 1, 0, &reg(&b, STUB_B + k));
    }
    w.append(semantic::RANGE_MARK, 0, 1, 0, &[]);
    let mut p = PayloadWriter::new();
    p.u64(fid::HOST_STUB, STUB_A1)
        .str(fid::CODE_OBJECT, &a.to_hex());
    w.append(semantic::LAUNCH_KERNEL, 0, 1, 0, p.as_bytes());
    let dir = w.dir().to_path_buf();
    w.finish().unwrap();

    let pid = std::process::id();
    let limits = Limits::default();
    let pruned = prune_process(&dir, pid, &limits).unwrap().unwrap();
    assert_eq!((pruned.events, pruned.code_objects), (50, 1));
    assert_eq!(
        pruned.stretches,
        [SeqGap {
            first_seq: 1,
            last_seq: 50
        }]
    );
    assert!(pruned.code_object_bytes > 0);
    assert!(!dir.join(blob::code_object_rel_path(&b)).exists());
    assert!(dir.join(blob::code_object_rel_path(&a)).exists());

    let entry = ProcessEntry {
        pid,
        ppid: 1,
        dir: dir.file_name().unwrap().to_string_lossy().into_owned(),
    };
    let back = ProcessArchive::open(&dir, entry.clone(), limits).unwrap();
    assert!(back.is_complete());
    let seqs: Vec<u64> = back.events.iter().map(|e| e.header.seq).collect();
    assert_eq!(seqs, [0, 51, 52]);
    assert_eq!(back.manifest.event_count, 3);
    assert_eq!(back.manifest.code_object_count, 1);
    assert_eq!(back.manifest.pruned.as_ref(), Some(&pruned));
    // Once pruned, never again.
    assert_eq!(prune_process(&dir, pid, &limits).unwrap(), None);
}

#[test]
fn a_whole_program_archive_is_not_pruned() {
    let t = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(t.path(), settings(), 1).unwrap();
    let b = w.put_code_object(b"\x7fELF code object").unwrap();
    let mut p = PayloadWriter::new();
    p.str(fid::CODE_OBJECT, &b.to_hex());
    w.append(semantic::REGISTER_FAT_BINARY, 0, 1, 0, p.as_bytes());
    let dir = w.dir().to_path_buf();
    w.finish().unwrap();
    let pid = std::process::id();
    assert_eq!(prune_process(&dir, pid, &Limits::default()).unwrap(), None);
    assert!(dir.join(blob::code_object_rel_path(&b)).exists());
}
