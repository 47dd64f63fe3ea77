//! HIP as ROCm 6/7 ship it, through the repository's stand-in HIP runtime (standin/, built
//! here against HIP 5.2's headers, reporting the version `HRR_STAND_IN_HIP_VERSION` names):
//! a program calling `hipGetDevicePropertiesR0600` has the R0600 struct recorded at its
//! full 1472 bytes; functions it obtained through `hipGetProcAddress` and
//! `hipGetDriverEntryPoint` are capture's shims, so their calls are recorded; the `_spt`
//! forms are recorded with the per-thread default stream. Needs cc and HIP's headers
//! (/usr/include/hip, which .ci/install installs; `hrr_testkit`: skipped, saying so,
//! without them, a failure under `CI=true` or `HRR_REQUIRE_ALL=1`).

use std::path::{Path, PathBuf};
use std::process::Command;

use hrr_archive::api::hip_abi::{layout, STREAM_PER_THREAD};
use hrr_archive::api::{fid, id, semantic, ApiDesc, BLOB_FIELD};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};
use hrr_testkit::tools;

mod common;
use common::{build_hip_program, capture_so};

/// The stand-in HIP runtime and the program, built into `dir`; the program's path.
fn build(dir: &Path) -> PathBuf {
    build_hip_program(dir, "rocm7_program.c", &[])
}

fn results(stdout: &str) -> Vec<(String, i64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn rocm7_names_are_recorded_through_the_stand_in() {
    if hrr_testkit::tools([&tools::CC, &tools::HIP_HEADERS]).is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("hrr-capture-rocm7-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build(&dir);
    let out = dir.join("archive");
    let run = Command::new(&exe)
        .env("HRR_CAPTURE_OUTPUT", &out)
        .env("LD_PRELOAD", capture_so())
        .env("HRR_CAPTURE_DISK_RESERVE", "16M")
        .env("HRR_STAND_IN_HIP_VERSION", "7.1")
        .env_remove("HRR_STAND_IN_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let seen = results(&String::from_utf8_lossy(&run.stdout));
    for (call, r) in &seen {
        let want = match call.as_str() {
            "runtime" => 70_100_000,
            "copied" | "same_props" => 1,
            _ => 0,
        };
        assert_eq!(*r, want, "{call}: {seen:?}\n{stderr}");
    }
    assert_eq!(seen.len(), 15, "{seen:?}");

    let a = Archive::open(&out, Limits::default()).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let p = &a.processes[0];
    assert_eq!(p.manifest.runtime.runtime_version, "70100000");
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    assert_eq!(
        ids,
        [
            // hipRuntimeGetVersion's first call: a pass-through, exempt (a version query).
            semantic::UNMODELLED_CALL,
            id::Malloc,
            id::GetDevicePropertiesR0600,
            id::MemsetAsyncSpt,
            id::StreamSynchronizeSpt,
            // The copy made through the pointer hipGetProcAddress handed out.
            id::MemcpyAsync,
            id::StreamSynchronizeSpt,
            // hipGetDeviceProperties through hipGetDriverEntryPoint: the R0600 function.
            id::GetDevicePropertiesR0600,
            id::Free,
        ],
        "no other unmodelled note: every name handed out was capture's"
    );
    let payload = |i: usize| Payload::parse(&p.events[i].payload).unwrap();
    assert_eq!(
        payload(0).str(fid::API_NAME, "api").unwrap(),
        "hipRuntimeGetVersion"
    );
    for i in [2, 7] {
        let pl = payload(i);
        let props = pl.bytes(ApiDesc::field_id(0), "props").unwrap();
        assert_eq!(
            props.len(),
            layout::DEVICE_PROP_R0600,
            "the R0600 struct at its full size"
        );
        let arch = &props[layout::R0600_GCN_ARCH_NAME..layout::R0600_GCN_ARCH_NAME + 6];
        assert_eq!(
            arch, b"gfx90a",
            "a field past HIP 5.2's 792-byte struct was recorded"
        );
    }
    // The per-thread forms' null stream is recorded as hipStreamPerThread.
    let stream = |i: usize, f: usize| {
        payload(i)
            .get(ApiDesc::field_id(f))
            .unwrap()
            .as_u64()
            .unwrap()
    };
    assert_eq!(stream(3, 3), STREAM_PER_THREAD);
    assert_eq!(stream(4, 0), STREAM_PER_THREAD);
    // The looked-up copy is a whole D2H record: its expected bytes are stored.
    assert!(
        payload(5).get(BLOB_FIELD | ApiDesc::field_id(0)).is_some(),
        "no expected output"
    );
    replay_by_version(&dir, &out);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The archive replays through the same stand-in reporting 7.1, and is refused by one
/// reporting 5.2, naming both versions (hrr-replay as this build of the workspace made
/// it: another package's binary, never built here).
fn replay_by_version(dir: &Path, archive: &Path) {
    let exe = std::env::current_exe().unwrap();
    let replay = hrr_testkit::built::built(&hrr_testkit::built::REPLAY, &exe);
    let run = |v: &str| {
        Command::new(&replay)
            .arg(archive)
            .env("HRR_REPLAY_AMDHIP", dir.join("libamdhip64.so.5"))
            .env("HRR_STAND_IN_HIP_VERSION", v)
            .output()
            .unwrap()
    };
    let same = run("7.1");
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&same.stderr)
    );
    assert!(text.contains("libamdhip64.so.5, HIP 7.1.0"), "{text}");
    let older = run("5.2");
    let text = String::from_utf8_lossy(&older.stdout);
    assert_eq!(older.status.code(), Some(3), "{text}");
    assert!(
        text.contains("captured on HIP 7.1.0") && text.contains("is HIP 5.2.0"),
        "{text}"
    );
}
