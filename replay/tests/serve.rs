//! `hrr-replay --serve` and the replay engine end to end without a GPU: a stand-in CUDA
//! runtime (a few C functions over host memory, built here with cc and loaded through
//! HRR_REPLAY_CUDART) lets the request loop, the release of what an archive leaked, the
//! health check and the multi-archive result run on any machine.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;

/// "Device" memory is host memory; the log records live allocations at each sync.
const FAKE_RUNTIME: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int live;
int cudaGetDeviceCount(int* n) { *n = 1; return 0; }
int cudaMalloc(void** p, size_t n) { *p = malloc(n); live++; return 0; }
int cudaFree(void* p) { if (p) { free(p); live--; } return 0; }
int cudaMemcpy(void* d, const void* s, size_t n, int kind) {
    const char* hang = getenv("FAKE_HANG");
    if (hang) sleep((unsigned)atoi(hang));
    memmove(d, s, n);
    return 0;
}
int cudaStreamSynchronize(void* s) { return 0; }
int cudaHostRegister(void* p, size_t n, unsigned flags) { return 1; }
int cudaHostUnregister(void* p) { return 0; }
int cudaDeviceSynchronize(void) {
    FILE* f = fopen(getenv("FAKE_LOG"), "a");
    if (f) { fprintf(f, "live=%d\n", live); fclose(f); }
    const char* broken = getenv("FAKE_BROKEN");
    return broken && access(broken, F_OK) == 0 ? 700 : 0;
}
"#;

/// The fake runtime built with cc into `dir`; None (the calling test skipped through
/// `hrr_testkit`) without a C compiler.
#[track_caller]
fn fake_runtime(dir: &Path) -> Option<PathBuf> {
    let cc = hrr_testkit::tool(&hrr_testkit::tools::CC)?;
    let src = dir.join("fake.c");
    std::fs::write(&src, FAKE_RUNTIME).unwrap();
    let so = dir.join("libcudart.so.fake");
    let o = Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(so)
}

/// Allocates, uploads 4 KiB, reads them back, uploads what it read (replay reuses the
/// verified expected bytes as the source) and reads again; never frees (as programs may).
fn archive(root: &Path) {
    let w = common::cuda_writer(root);
    let dev = 0x7f00_0000_0000u64;
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), dev)
        .u64(ApiDesc::field_id(1), 4096);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let r = w.put_blob(&bytes).unwrap();
    for dir in [
        CopyDir::HostToDevice,
        CopyDir::DeviceToHost,
        CopyDir::HostToDevice,
        CopyDir::DeviceToHost,
    ] {
        let h2d = dir == CopyDir::HostToDevice;
        let (dst, src) = if h2d { (dev, 0x5000) } else { (0x5000, dev) };
        let mut p = PayloadWriter::new();
        p.devptr(1, dst)
            .devptr(2, src)
            .u64(3, 4096)
            .u64(4, dir as u64)
            .blob(BLOB_FIELD | if h2d { 2 } else { 1 }, r)
            .u64(COPY_DIR_FIELD, dir as u64);
        w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn serve_replays_requests_in_one_process_releases_leaks_and_stops_when_broken() {
    let t = tempfile::tempdir().unwrap();
    let Some(so) = fake_runtime(t.path()) else {
        return;
    };
    let good = t.path().join("good");
    archive(&good);
    let log = t.path().join("fake.log");
    let broken = t.path().join("broken");
    let mut server = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--serve", "cuda"])
        .env("HRR_REPLAY_CUDART", &so)
        .env("FAKE_LOG", &log)
        .env("FAKE_BROKEN", &broken)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = server.stdin.take().unwrap();
    let mut from = BufReader::new(server.stdout.take().unwrap());
    let mut ask = |line: String| -> serde_json::Value {
        writeln!(to, "{line}").unwrap();
        to.flush().unwrap();
        let mut reply = String::new();
        from.read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{reply:?}: {e}"))
    };
    let json = |n: &str| t.path().join(n).display().to_string();
    // One archive: it passes, its summary goes to the log file, and the allocation it
    // never freed is released before the health check.
    let reply = ask(format!(
        r#"{{"archives": ["{}"], "json": "{}", "log": "{}", "continue_on_error": true}}"#,
        good.display(),
        json("r1.json"),
        json("r1.log")
    ));
    assert_eq!(reply["exit_code"], 0, "{reply}");
    assert_eq!(reply["healthy"], true, "{reply}");
    let r1: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("r1.json")).unwrap()).unwrap();
    assert_eq!(r1["verdict"], "PASS", "{r1}");
    assert_eq!(r1["counts"]["d2h_pass"], 2, "{r1}");
    let summary = std::fs::read_to_string(t.path().join("r1.log")).unwrap();
    assert!(summary.contains("PASS: 2 D2H checks passed"), "{summary}");
    let syncs = std::fs::read_to_string(&log).unwrap();
    assert!(syncs.trim_end().ends_with("live=0"), "{syncs}");
    // A malformed line is answered, and the service goes on.
    let reply = ask("{not json".into());
    assert!(
        reply["error"].as_str().unwrap().contains("bad request"),
        "{reply}"
    );
    // Two archives in one request: an array of results, the worst exit code.
    let reply = ask(format!(
        r#"{{"archives": ["{}", "{}"], "json": "{}", "log": "{}"}}"#,
        good.display(),
        t.path().join("missing").display(),
        json("r2.json"),
        json("r2.log")
    ));
    assert_eq!(reply["exit_code"], 2, "{reply}");
    let r2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("r2.json")).unwrap()).unwrap();
    assert_eq!(r2[0]["exit_code"], 0, "{r2}");
    assert_eq!(r2[1]["exit_code"], 2, "{r2}");
    // A device left unusable: the answer says so and the service ends.
    std::fs::write(&broken, "").unwrap();
    let reply = ask(format!(
        r#"{{"archives": ["{}"], "json": "{}", "log": "{}"}}"#,
        good.display(),
        json("r3.json"),
        json("r3.log")
    ));
    assert_eq!(reply["healthy"], false, "{reply}");
    let status = server.wait().unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn serve_without_a_runtime_exits_3_naming_it() {
    if Path::new("/dev/nvidia0").exists() {
        hrr_testkit::skip(
            hrr_testkit::Need::Gpu,
            "this machine has an NVIDIA GPU (/dev/nvidia0): the no-runtime path is tested without one",
        );
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--serve", "cuda"])
        .env("HRR_REPLAY_CUDART", "/nonexistent/libcudart.so")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--serve") && err.contains("/nonexistent/libcudart.so"),
        "{err}"
    );
}

/// A request's `sync_watchdog_s`: a copy that does not return (the stand-in's sleeps 30
/// s) ends the service after the limit, its stderr naming the event, so the harness
/// reports a named hang instead of waiting for the case's timeout.
#[test]
fn serve_with_a_watchdog_names_a_stuck_call_and_ends() {
    let t = tempfile::tempdir().unwrap();
    let Some(so) = fake_runtime(t.path()) else {
        return;
    };
    let good = t.path().join("good");
    archive(&good);
    let began = std::time::Instant::now();
    let mut server = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--serve", "cuda"])
        .env("HRR_REPLAY_CUDART", &so)
        .env("FAKE_LOG", t.path().join("fake.log"))
        .env("FAKE_HANG", "30")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = server.stdin.take().unwrap();
    let mut from = BufReader::new(server.stdout.take().unwrap());
    // A limit of 0 or past a day is refused, and the service goes on.
    for bad in [0u64, 86_401] {
        writeln!(to, r#"{{"archives": [], "sync_watchdog_s": {bad}}}"#).unwrap();
        to.flush().unwrap();
        let mut reply = String::new();
        from.read_line(&mut reply).unwrap();
        assert!(
            reply.contains(&format!(
                "bad request: sync_watchdog_s {bad} is not 1 to 86400 seconds"
            )),
            "{reply}"
        );
    }
    writeln!(
        to,
        r#"{{"archives": ["{}"], "log": "{}", "continue_on_error": true, "sync_watchdog_s": 1}}"#,
        good.display(),
        t.path().join("r.log").display()
    )
    .unwrap();
    to.flush().unwrap();
    drop(from);
    let out = server.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        began.elapsed().as_secs() < 20,
        "{:?}: {err}",
        began.elapsed()
    );
    assert!(
        err.contains(" seq 1 cudaMemcpy has not returned after ")
            && err.contains("(--sync-watchdog 1 s)"),
        "{err}"
    );
}
