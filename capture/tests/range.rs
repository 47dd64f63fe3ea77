//! Range capture (`HRR_CAPTURE_RANGE=profiler[:N]`) through the stand-in runtime
//! (tests/stand_in/runtime.c) under libhrr_capture.so: before the range only set-up is
//! recorded (the allocation, not the copy or the memset); at its start a `RangeRestore`
//! holds the allocation's bytes as they were, then a `RangeMark` with the snapshot's
//! size; inside, the program's D2H copy; after the stop, nothing. A range that never
//! starts and a trigger capture does not know are said, not passed.

use hrr_archive::api::{fid, id, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

fn expected_device_bytes(memset_len: usize) -> Vec<u8> {
    let mut b: Vec<u8> = (0..1024i32)
        .flat_map(|i| (i * 3 + 1).to_le_bytes())
        .collect();
    b[..memset_len].fill(7);
    b
}

#[test]
fn only_set_up_before_the_range_then_its_snapshot_and_its_work() {
    let si = StandIn::build("range", "range_program.c");
    let out = si.path().join("archive");
    let r = si
        .command(&out, &["2"])
        .env("HRR_CAPTURE_RANGE", "profiler:2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("range profiler:2: snapshot of 1 allocations, 4096 bytes"),
        "{stderr}"
    );
    let a = Archive::open(&out, Limits::default()).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let p = &a.processes[0];
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    let at = |k: u16| ids.iter().position(|&i| i == k);
    let restore = at(semantic::RANGE_RESTORE).expect("a RangeRestore");
    let malloc = at(id::Malloc).expect("the allocation is set-up");
    assert!(malloc < restore, "{ids:?}");
    for (i, &k) in ids.iter().enumerate() {
        if [id::Memcpy, id::Memset, id::DeviceSynchronize, id::Free].contains(&k) {
            assert!(i > restore, "work before the range recorded: {ids:?}");
        }
    }
    // The snapshot: the bytes the second round's copy and memset left.
    let e = &p.events[restore];
    let pl = Payload::parse(&e.payload).unwrap();
    assert_eq!(pl.u64(fid::SIZE, "size").unwrap(), 4096);
    let bytes = p
        .load_blob(&pl.blob(fid::RANGE_BYTES, "bytes").unwrap())
        .unwrap();
    assert_eq!(bytes, expected_device_bytes(17));
    // The mark, then exactly the range's work: one copy, then the end mark, then nothing
    // (the copy and the free after the stop are left out).
    let tail: Vec<u16> = ids[restore + 1..].to_vec();
    assert_eq!(
        tail,
        [semantic::RANGE_MARK, id::Memcpy, semantic::RANGE_MARK],
        "{ids:?}"
    );
    let mark = Payload::parse(&p.events[restore + 1].payload).unwrap();
    assert_eq!(mark.u64(fid::RANGE_OCCURRENCE, "n").unwrap(), 2);
    assert_eq!(mark.u64(fid::RANGE_ALLOCATIONS, "allocations").unwrap(), 1);
    assert_eq!(mark.u64(fid::SIZE, "bytes").unwrap(), 4096);
    let end = Payload::parse(&p.events[restore + 3].payload).unwrap();
    assert_eq!(end.u64(fid::RANGE_END, "end").unwrap(), 1);
}

#[test]
fn a_range_that_never_starts_is_said_and_an_unknown_trigger_turns_capture_off() {
    let si = StandIn::build("range-missing", "range_program.c");
    let out = si.path().join("archive");
    let r = si
        .command(&out, &["1"])
        .env("HRR_CAPTURE_RANGE", "profiler:3")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("started 1 profiler range(s), so range 3 never started"),
        "{stderr}"
    );
    let a = Archive::open(&out, Limits::default()).unwrap();
    let noted = &a.processes[0].manifest.unreplayable_apis;
    assert!(
        noted.iter().any(|u| u.api == "HRR_CAPTURE_RANGE"),
        "noted unreplayable: {noted:?}"
    );

    let out2 = si.path().join("archive-nvtx");
    let r = si
        .command(&out2, &["1"])
        .env("HRR_CAPTURE_RANGE", "nvtx:step")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        r.status.success(),
        "the program runs as without capture: {stderr}"
    );
    assert!(
        stderr
            .contains("capture off: HRR_CAPTURE_RANGE=\"nvtx:step\" is not profiler or profiler:N"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "first=117901063 last=3070\n"
    );
}
