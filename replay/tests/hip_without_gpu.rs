//! The HIP side without a GPU, against Debian's real libamdhip64 (HIP 5.2): a program built
//! with hipcc runs under libhrr_capture.so, its calls are recorded with the error codes the
//! real runtime returned, and hrr-replay exits 3 naming the missing device. Skips through
//! `hrr_testkit`, saying so, on a machine with an AMD GPU, and where hipcc or libamdhip64
//! is not installed (a failure under `CI=true` or `HRR_REQUIRE_ALL=1`; `.ci/install`
//! installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

use hrr_testkit::{tools, Need};

const PROGRAM: &str = r#"
#include <hip/hip_runtime.h>
#include <cstdio>
struct Pair { float* in; float* out; int n; double scale; };
__global__ void scale_pair(Pair p, char tag, long long big) { if (p.n > 0) p.out[0] = p.in[0] * p.scale + tag + big; }
int main() {
    int n = -1;
    hipError_t e1 = hipGetDeviceCount(&n);
    void* d = nullptr;
    hipError_t e2 = hipMalloc(&d, 4096);
    hipStream_t s = nullptr;
    hipError_t e3 = hipStreamCreate(&s);
    // hipLaunchKernel directly: `<<<>>>` stops at __hipPushCallConfiguration without a device.
    Pair p{(float*)0x1000, (float*)0x2000, 7, 2.5};
    char tag = 3;
    long long big = 42;
    void* args[] = {&p, &tag, &big};
    hipError_t e4 = hipLaunchKernel((const void*)scale_pair, dim3(1), dim3(1), args, 0, 0);
    std::printf("hipGetDeviceCount=%d (n=%d) hipMalloc=%d hipStreamCreate=%d hipLaunchKernel=%d\n", (int)e1, n, (int)e2, (int)e3, (int)e4);
    return 0;
}
"#;

/// The capture library this build of the workspace made (never built here).
fn capture_so() -> Option<PathBuf> {
    Some(hrr_testkit::built::built(
        &hrr_testkit::built::CAPTURE,
        Path::new(env!("CARGO_BIN_EXE_hrr-replay")),
    ))
}

/// Builds `source` with hipcc for gfx90a into `dir/name`; None (the reason printed) where
/// hipcc or libamdhip64 is missing.
#[track_caller]
fn hip_program(dir: &Path, name: &str, source: &str) -> Option<PathBuf> {
    let [hipcc, _] = hrr_testkit::tools([&tools::HIPCC, &tools::LIBAMDHIP64])?;
    let src = dir.join(format!("{name}.hip"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let o = Command::new(hipcc)
        .arg("--offload-arch=gfx90a")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .env("TMPDIR", dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "hipcc: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(exe)
}

/// What `hrr-replay MODE ARCHIVE` prints on stdout.
fn replay_stdout(mode: &str, archive: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(mode)
        .arg(archive)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_hip_program_is_captured_against_the_real_runtime_and_replay_names_the_missing_device() {
    if Path::new("/dev/kfd").exists() {
        hrr_testkit::skip(
            Need::Gpu,
            "this machine has an AMD GPU (/dev/kfd): the no-GPU path does not apply",
        );
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let Some(exe) = hip_program(t.path(), "prog", PROGRAM) else {
        return;
    };
    let so = capture_so().expect("libhrr_capture.so was not built");
    // Natively: the real runtime's error codes.
    let native = Command::new(&exe).output().unwrap();
    let native_out = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(native.status.success(), "{native_out}");
    // Under capture: the same output (capture never changes behaviour), and an archive.
    let archive = t.path().join("archive");
    let cap = Command::new(&exe)
        .env("HRR_CAPTURE_OUTPUT", &archive)
        .env("LD_PRELOAD", &so)
        .env("HRR_CAPTURE_DISK_RESERVE", "16M")
        .output()
        .unwrap();
    let cap_out = String::from_utf8_lossy(&cap.stdout).into_owned();
    let cap_err = String::from_utf8_lossy(&cap.stderr).into_owned();
    assert!(cap.status.success(), "{cap_out}{cap_err}");
    assert_eq!(cap_out, native_out, "capture changed the program's results");
    assert!(cap_err.contains("hrr-capture: recording pid"), "{cap_err}");
    // The events carry the codes the program saw.
    let events = replay_stdout("--events", &archive);
    let code_of = |name: &str| -> i64 {
        let field = format!("{name}=");
        let start = native_out.find(&field).unwrap() + field.len();
        native_out[start..]
            .split(|c: char| !c.is_ascii_digit() && c != '-')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    for (api, name) in [
        ("hipGetDeviceCount", "hipGetDeviceCount"),
        ("hipMalloc", "hipMalloc"),
        ("hipStreamCreate", "hipStreamCreate"),
        ("LaunchKernel", "hipLaunchKernel"),
    ] {
        let code = code_of(name);
        assert_ne!(code, 0, "{name} succeeded without a GPU?");
        let line = events
            .lines()
            .find(|l| l.contains(api.trim_start_matches("hip")))
            .unwrap_or_else(|| panic!("no {api} event in:\n{events}"));
        assert!(
            line.contains(&format!("ret={code}")) || line.contains(&format!("ret {code}")),
            "{api}: {line}"
        );
    }
    // The launch carries its arguments at the offsets and sizes of the code object's
    // AMDGPU metadata note: Pair (32 bytes) at 0, char at 32, long long at 40.
    let a = hrr_archive::Archive::open(&archive, hrr_archive::Limits::default()).unwrap();
    let launch = a.processes[0]
        .events
        .iter()
        .find(|e| e.header.api_id == hrr_archive::api::semantic::LAUNCH_KERNEL)
        .expect("no launch event");
    assert_eq!(launch.header.ret as i64, code_of("hipLaunchKernel"));
    let pl = hrr_archive::payload::Payload::parse(&launch.payload).unwrap();
    let layout: Vec<(u64, u64, Vec<u8>)> = pl
        .all(hrr_archive::api::fid::ARG)
        .map(|f| {
            let n = f.as_nested().unwrap();
            (
                n.u64(hrr_archive::api::fid::ARG_OFFSET, "offset").unwrap(),
                n.u64(hrr_archive::api::fid::ARG_SIZE, "size").unwrap(),
                n.bytes(hrr_archive::api::fid::ARG_BYTES, "bytes")
                    .unwrap()
                    .to_vec(),
            )
        })
        .collect();
    assert_eq!(
        layout.iter().map(|(o, s, _)| (*o, *s)).collect::<Vec<_>>(),
        vec![(0, 32), (32, 1), (40, 8)]
    );
    assert_eq!(layout[0].2[..8], 0x1000u64.to_le_bytes());
    assert_eq!(layout[1].2, vec![3]);
    assert_eq!(layout[2].2, 42u64.to_le_bytes());
    assert!(replay_stdout("--info", &archive).contains("runtime        hip"));
    // Replay: the runtime loads, finds no device, exits 3 and says so.
    let r = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(&archive)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    assert_eq!(r.status.code(), Some(3), "{text}");
    assert!(
        text.contains("no hip device") && text.contains("hipGetDeviceCount returned"),
        "{text}"
    );
}

const SIGNALLED: &str = r#"
#include <hip/hip_runtime.h>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>
static void own(int) { const char m[] = "own handler\n"; write(1, m, sizeof m - 1); _exit(0); }
int main(int argc, char** argv) {
    // "own": the program handles SIGTERM itself, before capture starts (first HIP call).
    if (argc > 1 && std::strcmp(argv[1], "own") == 0) std::signal(SIGTERM, own);
    int n = -1;
    for (int i = 0; i < 5; ++i) (void)hipGetDeviceCount(&n);
    void* d = nullptr;
    (void)hipMalloc(&d, 4096);
    // Well inside the flush interval: nothing has been written yet but for the signal.
    std::raise(SIGTERM);
    return 3;
}
"#;

/// A process ended by a fatal signal keeps the events capture had buffered; a program
/// that handles the signal itself is left alone.
#[test]
fn a_fatal_signal_flushes_buffered_events_and_a_program_handler_is_kept() {
    use std::os::unix::process::ExitStatusExt;
    let t = tempfile::tempdir().unwrap();
    let Some(exe) = hip_program(t.path(), "sig", SIGNALLED) else {
        return;
    };
    let so = capture_so().expect("libhrr_capture.so was not built");
    let run = |arg: &str, archive: &Path| {
        Command::new(&exe)
            .arg(arg)
            .env("HRR_CAPTURE_OUTPUT", archive)
            .env("LD_PRELOAD", &so)
            .env("HRR_CAPTURE_DISK_RESERVE", "16M")
            .env("HRR_CAPTURE_DISK_RESERVE", "16M")
            .output()
            .unwrap()
    };
    // Default SIGTERM: the process still dies of it, and the six calls are on disk.
    let archive = t.path().join("a");
    let o = run("default", &archive);
    assert_eq!(o.status.signal(), Some(libc::SIGTERM), "{o:?}");
    let events = replay_stdout("--events", &archive);
    assert_eq!(events.matches("GetDeviceCount").count(), 5, "{events}");
    assert_eq!(events.matches("Malloc").count(), 1, "{events}");
    let info = replay_stdout("--info", &archive);
    assert!(info.contains("incomplete"), "{info}");
    // The program's own handler runs, as it would without capture.
    let o = run("own", &t.path().join("b"));
    assert!(o.status.success(), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "own handler\n");
}

/// Launch configuration and stream-ordered memory through HIP 5.2's real runtime: the HIP
/// source compiles with hipcc, capture changes nothing, and each call is its record with
/// the runtime's code (hipLaunchCooperativeKernel's `unsigned` shared memory read as such,
/// hipExtLaunchKernel's events, the pool properties by their 88-byte layout).
const LAUNCH_CONFIG_PROGRAM: &str = r#"
#include <hip/hip_runtime.h>
#include <hip/hip_ext.h>
#include <cstdio>
#include <cstring>
__global__ void k(int* p) { if (p) p[0] = 1; }
int main() {
    int* d = nullptr;
    void* args[] = {&d};
    std::printf("attr=%d\n", (int)hipFuncSetAttribute((const void*)k, hipFuncAttributeMaxDynamicSharedMemorySize, 1024));
    std::printf("cache=%d\n", (int)hipFuncSetCacheConfig((const void*)k, hipFuncCachePreferL1));
    std::printf("coop=%d\n", (int)hipLaunchCooperativeKernel((const void*)k, dim3(2), dim3(64), args, 128u, 0));
    std::printf("ext=%d\n", (int)hipExtLaunchKernel((const void*)k, dim3(2), dim3(64), args, 0, 0, nullptr, nullptr, 0));
    hipMemPoolProps props;
    std::memset(&props, 0, sizeof props);
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    hipMemPool_t pool = nullptr;
    std::printf("pool=%d\n", (int)hipMemPoolCreate(&pool, &props));
    void* a = nullptr;
    std::printf("malloc_async=%d\n", (int)hipMallocAsync(&a, 64, 0));
    std::printf("cache_dev=%d\n", (int)hipDeviceSetCacheConfig(hipFuncCachePreferShared));
    return 0;
}
"#;

#[test]
fn hip_launch_configuration_and_pools_are_recorded_against_the_real_runtime() {
    if Path::new("/dev/kfd").exists() {
        hrr_testkit::skip(
            Need::Gpu,
            "this machine has an AMD GPU (/dev/kfd): the no-GPU path does not apply",
        );
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let Some(exe) = hip_program(t.path(), "launch_config", LAUNCH_CONFIG_PROGRAM) else {
        return;
    };
    let so = capture_so().expect("libhrr_capture.so was not built");
    let native = Command::new(&exe).output().unwrap();
    let native_out = String::from_utf8_lossy(&native.stdout).into_owned();
    let archive = t.path().join("archive");
    let cap = Command::new(&exe)
        .env("HRR_CAPTURE_OUTPUT", &archive)
        .env("LD_PRELOAD", &so)
        .env("HRR_CAPTURE_DISK_RESERVE", "16M")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&cap.stdout),
        native_out,
        "capture changed the program's results"
    );
    assert_eq!(native_out.lines().count(), 7, "{native_out}");
    let events = replay_stdout("--events", &archive);
    let lines: Vec<&str> = events.lines().collect();
    // The program's calls; the coverage marker of the runtime's unregistration at exit
    // (an exempt unmodelled call) is not this test's subject.
    let kinds: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|k| *k != "UnmodelledCall")
        .collect();
    assert_eq!(
        kinds,
        [
            "RegisterFatBinary",
            "RegisterFunction",
            "FuncSetAttribute",
            "FuncSetCacheConfig",
            "LaunchCooperativeKernel",
            "HipExtLaunchKernel",
            "MemPoolCreate",
            "MallocAsync",
            "DeviceSetCacheConfig",
        ],
        "{events}"
    );
    // Each record carries the code the program saw.
    for (line, name) in lines[2..].iter().zip([
        "attr",
        "cache",
        "coop",
        "ext",
        "pool",
        "malloc_async",
        "cache_dev",
    ]) {
        let code = native_out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap();
        assert!(line.contains(&format!(" ret={code} ")), "{name}: {line}");
    }
    assert!(
        lines[2].contains("f4=\"_Z1kPi\"") && lines[2].contains("f40=8 f41=1024"),
        "{}",
        lines[2]
    );
    assert!(lines[4].contains("f8=128 "), "{}", lines[4]);
    assert!(lines[5].contains("f43=0x0 f44=0x0 f45=0"), "{}", lines[5]);
    assert!(lines[6].contains("(88B)"), "{}", lines[6]);
}
