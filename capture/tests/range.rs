//! Range capture (`HRR_CAPTURE_RANGE=profiler[:N]`, `nvtx:NAME[:N]`) through the stand-in runtime
//! (standin/) under libhrr_capture.so: before the range only set-up is
//! recorded (the allocation, not the copy or the memset); at its start a `RangeRestore`
//! holds the allocation's bytes as they were, then a `RangeMark` with the snapshot's
//! size; inside, the program's launch and D2H copy; after the stop, nothing; and of the
//! set-up, only the registrations of the code object the range launches. The same for an NVTX
//! range (the program built with NVTX 3's headers: capture is the injection library NVTX
//! loads), pushed, started or pushed in a domain with a registered message. A range that
//! never starts, an NVTX tool already named, and a trigger capture does not know are
//! said, not passed.

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
    let Some(si) = StandIn::build("range", "range_program.c") else {
        return;
    };
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
        [
            semantic::RANGE_MARK,
            semantic::LAUNCH_KERNEL,
            id::Memcpy,
            semantic::RANGE_MARK
        ],
        "{ids:?}"
    );
    // The set-up kept: the launched kernel's fat binary; the other's was left out, its
    // code object with it.
    let names: Vec<String> = p.events[..restore]
        .iter()
        .filter(|e| e.header.api_id == semantic::REGISTER_FUNCTION)
        .map(|e| {
            Payload::parse(&e.payload)
                .unwrap()
                .str(fid::NAME, "name")
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["used"], "{ids:?}");
    let pruned = p
        .manifest
        .pruned
        .as_ref()
        .expect("the unused set-up pruned");
    assert_eq!(
        (pruned.candidates, pruned.events, pruned.code_objects),
        (4, 2, 1)
    );
    assert_eq!(p.stored_files().2, 1, "one code object left");
    assert!(
        stderr.contains("the range's set-up cut to what it uses: 2 of 4 code registrations and loads dropped, with 1 code objects"),
        "{stderr}"
    );
    let mark = Payload::parse(&p.events[restore + 1].payload).unwrap();
    assert_eq!(mark.u64(fid::RANGE_OCCURRENCE, "n").unwrap(), 2);
    assert_eq!(mark.u64(fid::RANGE_ALLOCATIONS, "allocations").unwrap(), 1);
    assert_eq!(mark.u64(fid::SIZE, "bytes").unwrap(), 4096);
    let end = Payload::parse(&p.events[restore + 4].payload).unwrap();
    assert_eq!(end.u64(fid::RANGE_END, "end").unwrap(), 1);
}

#[test]
fn a_range_that_never_starts_is_said_and_an_unknown_trigger_turns_capture_off() {
    let Some(si) = StandIn::build("range-missing", "range_program.c") else {
        return;
    };
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

    let out2 = si.path().join("archive-roctx");
    let r = si
        .command(&out2, &["1"])
        .env("HRR_CAPTURE_RANGE", "roctx:step")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        r.status.success(),
        "the program runs as without capture: {stderr}"
    );
    assert!(
        stderr.contains(
            "capture off: HRR_CAPTURE_RANGE=\"roctx:step\" is not profiler or profiler:N"
        ),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "first=117901063 last=3070\n"
    );
}

/// The NVTX program built against the stand-in, or None (a skip) without NVTX's headers.
fn nvtx_program(tag: &str) -> Option<StandIn> {
    let include = hrr_testkit::tool(&hrr_testkit::tools::NVTX_HEADERS)?;
    let flag = format!("-I{}", include.display());
    StandIn::build_with(tag, "nvtx_program.c", &[&flag])
}

/// The archive's api ids after the `RangeRestore`, and the snapshot's bytes.
fn range_tail(out: &std::path::Path, stderr: &str) -> (Vec<u16>, Vec<u8>) {
    let a = Archive::open(out, Limits::default()).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let p = &a.processes[0];
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    let restore = ids
        .iter()
        .position(|&i| i == semantic::RANGE_RESTORE)
        .unwrap_or_else(|| panic!("no RangeRestore: {ids:?}\n{stderr}"));
    for (i, &k) in ids.iter().enumerate() {
        if [id::Memcpy, id::Memset, id::DeviceSynchronize, id::Free].contains(&k) {
            assert!(i > restore, "work before the range recorded: {ids:?}");
        }
    }
    let pl = Payload::parse(&p.events[restore].payload).unwrap();
    let bytes = p
        .load_blob(&pl.blob(fid::RANGE_BYTES, "bytes").unwrap())
        .unwrap();
    let mark = Payload::parse(&p.events[restore + 1].payload).unwrap();
    assert_eq!(mark.str(fid::NAME, "name").unwrap(), "nvtx:step");
    (ids[restore + 1..].to_vec(), bytes)
}

#[test]
fn an_nvtx_range_pushed_started_or_in_a_domain_is_recorded_alone() {
    let Some(si) = nvtx_program("range-nvtx") else {
        return;
    };
    for how in ["push", "start", "domain"] {
        let out = si.path().join(format!("archive-{how}"));
        let r = si
            .command(&out, &["3", how])
            .env("HRR_CAPTURE_RANGE", "nvtx:step:2")
            .env_remove("NVTX_INJECTION64_PATH")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{how}: {stderr}");
        assert!(
            stderr.contains("range nvtx:step:2: snapshot of 1 allocations, 4096 bytes"),
            "{how}: {stderr}"
        );
        // Pushes and pops return what they return without a tool.
        let stdout = String::from_utf8_lossy(&r.stdout);
        let pushes = if how == "push" {
            "-2,-2,-2 pop=-2"
        } else {
            "-2,0,0 pop=0"
        };
        assert!(
            stdout.ends_with(&format!("pushes={pushes}\n")),
            "{how}: {stdout}"
        );
        let (tail, bytes) = range_tail(&out, &stderr);
        assert_eq!(
            tail,
            [semantic::RANGE_MARK, id::Memcpy, semantic::RANGE_MARK],
            "{how}: the second round's copy, and nothing after its range"
        );
        assert_eq!(bytes, expected_device_bytes(17), "{how}");
    }
}

#[test]
fn an_nvtx_tool_already_named_is_left_alone_and_the_range_is_said_never_to_start() {
    let Some(si) = nvtx_program("range-nvtx-tool") else {
        return;
    };
    let out = si.path().join("archive");
    let r = si
        .command(&out, &["2", "push"])
        .env("HRR_CAPTURE_RANGE", "nvtx:step")
        .env("NVTX_INJECTION64_PATH", "/nonexistent/libother-tool.so")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "NVTX_INJECTION64_PATH already names another NVTX tool (/nonexistent/libother-tool.so)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("started 0 NVTX or roctx \"step\" range(s), so range 1 never started"),
        "{stderr}"
    );
    let a = Archive::open(&out, Limits::default()).unwrap();
    assert!(a.processes[0]
        .manifest
        .unreplayable_apis
        .iter()
        .any(|u| u.api == "HRR_CAPTURE_RANGE"));
}

#[test]
fn a_roctx_range_is_recorded_alone_and_roctx_still_answers() {
    if hrr_testkit::tools([&hrr_testkit::tools::CC, &hrr_testkit::tools::HIP_HEADERS]).is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("hrr-capture-roctx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in/roctx.c");
    let roctx = dir.join("libroctx64.so");
    common::cc(&[
        "-O1".into(),
        "-shared".into(),
        "-fPIC".into(),
        "-o".into(),
        roctx.display().to_string(),
        src.display().to_string(),
    ]);
    let exe = common::build_hip_program(&dir, "roctx_program.c", &["-l:libroctx64.so".into()]);
    for (how, answers) in [
        ("push", "outer=0 inner=1 pop=1 id=0"),
        ("start", "outer=0 inner=-9 pop=-9 id=102"),
    ] {
        let out = dir.join(format!("archive-{how}"));
        let r = std::process::Command::new(&exe)
            .args(["3", how])
            .env("HRR_CAPTURE_OUTPUT", &out)
            .env("LD_PRELOAD", common::capture_so())
            .env("HRR_CAPTURE_DISK_RESERVE", "16M")
            .env("HRR_CAPTURE_RANGE", "nvtx:step:2")
            .env_remove("HRR_STAND_IN_LOG")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{how}: {stderr}");
        assert!(
            stderr.contains("range nvtx:step:2: snapshot of 1 allocations, 4096 bytes"),
            "{how}: {stderr}"
        );
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(
            stdout.ends_with(&format!("{answers}\n")),
            "{how}: roctx's own answers reach the program: {stdout}"
        );
        let (tail, bytes) = range_tail(&out, &stderr);
        assert_eq!(
            tail,
            [semantic::RANGE_MARK, id::Memcpy, semantic::RANGE_MARK],
            "{how}: the second round's copy, and nothing after its range"
        );
        assert_eq!(bytes, expected_device_bytes(17), "{how}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
