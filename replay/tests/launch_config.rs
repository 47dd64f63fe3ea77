//! Launch configuration and stream-ordered memory through the hrr-replay binary, against
//! the repository's stand-in runtime (standin/), which checks what a GPU checks: a
//! launch with more than 48 KiB of dynamic shared memory needs the function's attribute
//! raised first, a cluster dimension must divide the grid, an access policy window's base
//! must be device memory, launch events and pools must be ones it made, pool
//! properties must carry no host pointer, and an attribute id CUDA 13 does not define is
//! an invalid value. Archives are written as capture writes them
//! (`capture/tests/launch_config.rs` checks capture's side).

// The writer and the row encodings only; the rich archive is the fuzzer's.
#[allow(dead_code)]
#[path = "common/seeds.rs"]
mod seeds;
#[path = "common/stand_in.rs"]
mod stand_in;

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{fid, id, semantic, CopyDir};
use hrr_archive::blob::Compression;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::ProcessWriter;

const DEV_A: u64 = 0x7f00_0000_0000;
const DEV_B: u64 = 0x7f00_0100_0000;
const DEV_C: u64 = 0x7f00_0200_0000;
const STREAM: u64 = 0x5500;
const EVENT: u64 = 0x5600;
const POOL: u64 = 0x6600;
const DEFAULT_POOL: u64 = 0x6500;

/// What the archive holds besides the common part.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// Everything as a program would do it: replay passes.
    Whole,
    /// The function attribute that allows 64 KiB of dynamic shared memory is missing.
    NoFuncAttribute,
    /// A launch attribute names an event the program never created.
    UnknownEvent,
    /// The program ends with its own pool as the device's current pool, not destroyed.
    LeavesPoolSet,
    /// The attributed launch also carries an id CUDA 13 does not define (a newer
    /// runtime's), which replay keeps verbatim.
    NewerAttribute,
}

fn append(w: &ProcessWriter, id: u16, p: &PayloadWriter) {
    w.append(id, 0, 1, 0, p.as_bytes()).unwrap();
}

/// A generic row's payload: parameter i's field is i + 1.
fn row(fill: impl FnOnce(&mut PayloadWriter)) -> PayloadWriter {
    let mut p = PayloadWriter::new();
    fill(&mut p);
    p
}

fn launch(code: &str, shmem: u64, grid: u64, args: &[u64]) -> PayloadWriter {
    let mut p = PayloadWriter::new();
    p.str(fid::NAME, "k")
        .str(fid::CODE_OBJECT, code)
        .u64_array(fid::GRID, &[grid, 1, 1])
        .u64_array(fid::BLOCK, &[128, 1, 1])
        .u64(fid::SHARED_MEM, shmem)
        .handle(fid::STREAM, STREAM);
    for a in args {
        p.nested_with(fid::ARG, |n| {
            n.bytes(fid::ARG_BYTES, &a.to_le_bytes(), false);
            n.bytes(fid::ARG_POINTER_WORDS, &0u64.to_le_bytes(), false);
        });
    }
    p
}

fn attr(p: &mut PayloadWriter, id: u32, words: &[u64]) {
    let mut value = [0u8; 64];
    for (i, w) in words.iter().enumerate() {
        value[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    p.nested_with(fid::LAUNCH_ATTR, |n| {
        n.u64(fid::LAUNCH_ATTR_ID, u64::from(id));
        n.bytes(fid::LAUNCH_ATTR_VALUE, &value, false);
    });
}

fn write(root: &Path, v: Variant) {
    let w = seeds::writer(root, Compression::None);
    let code = w
        .put_code_object(&stand_in::ptx(&[("k", &[8])], &[]))
        .unwrap()
        .to_hex();
    append(
        &w,
        id::Malloc,
        &row(|p| {
            p.devptr(1, DEV_A).u64(2, 1 << 20);
        }),
    );
    append(
        &w,
        id::StreamCreate,
        &row(|p| {
            p.handle(1, STREAM);
        }),
    );
    append(
        &w,
        id::EventCreate,
        &row(|p| {
            p.handle(1, EVENT);
        }),
    );
    append(
        &w,
        id::DeviceSetLimit,
        &row(|p| {
            p.u64(1, 0).u64(2, 4096);
        }),
    );
    append(
        &w,
        id::DeviceSetCacheConfig,
        &row(|p| {
            p.u64(1, 2);
        }),
    );
    if v != Variant::NoFuncAttribute {
        let mut p = PayloadWriter::new();
        p.u64(fid::HOST_STUB, 0x4010)
            .str(fid::NAME, "k")
            .str(fid::CODE_OBJECT, &code)
            .i64(fid::FUNC_ATTRIBUTE, 8)
            .i64(fid::CONFIG_VALUE, 64 << 10);
        append(&w, semantic::FUNC_SET_ATTRIBUTE, &p);
    }
    let mut p = PayloadWriter::new();
    p.u64(fid::HOST_STUB, 0x4010)
        .str(fid::NAME, "k")
        .str(fid::CODE_OBJECT, &code)
        .i64(fid::CONFIG_VALUE, 1);
    append(&w, semantic::FUNC_SET_CACHE_CONFIG, &p);
    append(
        &w,
        semantic::LAUNCH_KERNEL,
        &launch(&code, 64 << 10, 8, &[DEV_A]),
    );
    append(
        &w,
        semantic::LAUNCH_COOPERATIVE,
        &launch(&code, 0, 4, &[DEV_A]),
    );
    // Cluster {2,1,1}, an access policy window on DEV_A + 64, a completion event, and (one
    // variant) an id CUDA 13 does not define (kept verbatim).
    let mut ex = launch(&code, 64 << 10, 8, &[DEV_A]);
    attr(&mut ex, 4, &[0x0000_0001_0000_0002, 1]);
    attr(&mut ex, 1, &[DEV_A + 64, 4096]);
    let event = if v == Variant::UnknownEvent {
        0x9990
    } else {
        EVENT
    };
    attr(&mut ex, 12, &[event]);
    if v == Variant::NewerAttribute {
        attr(&mut ex, 77, &[5]);
    }
    append(&w, semantic::LAUNCH_KERNEL_EX, &ex);

    // Stream-ordered memory: the default pool, a created pool, allocations from both.
    append(
        &w,
        id::DeviceGetDefaultMemPool,
        &row(|p| {
            p.handle(1, DEFAULT_POOL).u64(2, 0);
        }),
    );
    append(
        &w,
        id::MemPoolSetAttribute,
        &row(|p| {
            p.handle(1, DEFAULT_POOL).u64(2, 4).u64(3, u64::MAX);
        }),
    );
    let mut props = [0u8; 88];
    props[0] = 1;
    props[8] = 1;
    props[16..24].fill(0x44); // the captured process's pointer: cleared by replay
    append(
        &w,
        id::MemPoolCreate,
        &row(|p| {
            p.handle(1, POOL);
            p.bytes(2, &props, false);
        }),
    );
    append(
        &w,
        id::MemPoolSetAttribute,
        &row(|p| {
            p.handle(1, POOL).u64(2, 2).u64(3, 1);
        }),
    );
    append(
        &w,
        id::MallocFromPoolAsync,
        &row(|p| {
            p.devptr(1, DEV_B)
                .u64(2, 4096)
                .handle(3, POOL)
                .handle(4, STREAM);
        }),
    );
    append(
        &w,
        id::DeviceSetMemPool,
        &row(|p| {
            p.u64(1, 0).handle(2, POOL);
        }),
    );
    append(
        &w,
        id::MallocAsync,
        &row(|p| {
            p.devptr(1, DEV_C).u64(2, 4096).handle(3, STREAM);
        }),
    );
    // Bytes through the two stream-ordered allocations and back.
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let blob = w.put_blob(&data).unwrap();
    for (dir, dst, src) in [
        (CopyDir::HostToDevice, DEV_B, 0x1000),
        (CopyDir::DeviceToDevice, DEV_C, DEV_B),
        (CopyDir::DeviceToHost, 0x2000, DEV_C),
    ] {
        let bytes = seeds::memcpy(dir, dst, src, 4096, blob);
        w.append(id::Memcpy, 0, 1, 0, &bytes).unwrap();
    }
    append(
        &w,
        id::MemPoolGetAttribute,
        &row(|p| {
            p.handle(1, POOL).u64(2, 7).u64(3, 4096);
        }),
    );
    append(
        &w,
        id::FreeAsync,
        &row(|p| {
            p.devptr(1, DEV_B).handle(2, STREAM);
        }),
    );
    append(
        &w,
        id::FreeAsync,
        &row(|p| {
            p.devptr(1, DEV_C).handle(2, STREAM);
        }),
    );
    append(
        &w,
        id::MemPoolTrimTo,
        &row(|p| {
            p.handle(1, POOL).u64(2, 0);
        }),
    );
    if v != Variant::LeavesPoolSet {
        append(
            &w,
            id::DeviceSetMemPool,
            &row(|p| {
                p.u64(1, 0).handle(2, DEFAULT_POOL);
            }),
        );
        append(
            &w,
            id::MemPoolDestroy,
            &row(|p| {
                p.handle(1, POOL);
            }),
        );
    }
    w.finish().unwrap();
}

/// A process that allocates from the device's current pool on a new stream, and copies
/// through the allocation.
fn write_malloc_async(root: &Path) {
    let w = seeds::writer(root, Compression::None);
    append(
        &w,
        id::StreamCreate,
        &row(|p| {
            p.handle(1, STREAM);
        }),
    );
    append(
        &w,
        id::MallocAsync,
        &row(|p| {
            p.devptr(1, DEV_C).u64(2, 4096).handle(3, STREAM);
        }),
    );
    let blob = w.put_blob(&[0x5c; 4096]).unwrap();
    for (dir, dst, src) in [
        (CopyDir::HostToDevice, DEV_C, 0x1000),
        (CopyDir::DeviceToHost, 0x2000, DEV_C),
    ] {
        let bytes = seeds::memcpy(dir, dst, src, 4096, blob);
        w.append(id::Memcpy, 0, 1, 0, &bytes).unwrap();
    }
    append(
        &w,
        id::FreeAsync,
        &row(|p| {
            p.devptr(1, DEV_C).handle(2, STREAM);
        }),
    );
    w.finish().unwrap();
}

/// Replays the archive of `v`: exit code and the --json result.
#[track_caller]
fn replay(v: Variant) -> Option<(Option<i32>, serde_json::Value)> {
    replay_with(v, &[])
}

#[track_caller]
fn replay_with(v: Variant, args: &[&str]) -> Option<(Option<i32>, serde_json::Value)> {
    let so = stand_in::library()?;
    let d = tempfile::tempdir().unwrap();
    write(d.path(), v);
    let json = d.path().join("result.json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(d.path())
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .output()
        .unwrap();
    let r = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    Some((o.status.code(), r))
}

fn failures(r: &serde_json::Value) -> Vec<String> {
    r["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                f["api"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn settings_attributed_launches_and_pools_replay() {
    let Some((code, r)) = replay(Variant::Whole) else {
        return;
    };
    assert_eq!(code, Some(0), "{:?}", failures(&r));
    assert_eq!(r["verdict"], "PASS");
    assert_eq!(r["counts"]["kernels_launched"], 3);
    assert_eq!(r["counts"]["d2h_pass"], 1, "{r}");
}

/// `--kernel-filter`: a matching kernel launches as always; one left out is counted, and
/// every D2H check after it is skipped, never passed (here: nothing is verified).
#[test]
fn a_kernel_filter_launches_only_matching_kernels_and_passes_nothing_after_one_left_out() {
    let Some((code, r)) = replay_with(Variant::Whole, &["--kernel-filter", "k*"]) else {
        return;
    };
    assert_eq!(code, Some(0), "{:?}", failures(&r));
    assert_eq!(r["counts"]["kernels_launched"], 3);
    assert!(r["counts"].get("kernels_filtered").is_none(), "{r}");
    let Some((code, r)) = replay_with(Variant::Whole, &["--kernel-filter", "other?"]) else {
        return;
    };
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["counts"]["kernels_launched"], 0);
    assert_eq!(r["counts"]["kernels_filtered"], 3);
    assert_eq!(r["counts"]["d2h_pass"], 0);
    assert_eq!(r["counts"]["d2h_after_filtered"], 1, "{r}");
    assert_eq!(r["counts"]["d2h_skipped"], 1, "{r}");
}

/// `--timing`: every launch timed by events around it, by name; the verdict unchanged.
#[test]
fn timing_reports_each_kernel_s_launches() {
    let Some((code, r)) = replay_with(Variant::Whole, &["--timing"]) else {
        return;
    };
    assert_eq!(code, Some(0), "{:?}", failures(&r));
    let times = r["kernel_times"].as_array().unwrap();
    assert_eq!(times.len(), 1, "{r}");
    assert_eq!(times[0]["name"], "k");
    assert_eq!(times[0]["launches"], 3);
    assert!(times[0]["max_us"].as_u64().unwrap() <= times[0]["total_us"].as_u64().unwrap());
    // Without the flag, nothing is timed.
    let Some((_, r)) = replay(Variant::Whole) else {
        return;
    };
    assert!(r.get("kernel_times").is_none(), "{r}");
}

#[test]
fn a_launch_above_48_kib_fails_without_its_function_attribute() {
    let Some((code, r)) = replay(Variant::NoFuncAttribute) else {
        return;
    };
    assert_eq!(code, Some(1));
    assert_eq!(
        failures(&r),
        ["LaunchKernel: cuLaunchKernel of k returned 1, capture returned 0"]
    );
}

#[test]
fn a_launch_attribute_replay_cannot_honour_fails_naming_it() {
    let Some((code, r)) = replay(Variant::UnknownEvent) else {
        return;
    };
    assert_eq!(code, Some(1));
    assert_eq!(
        failures(&r),
        ["LaunchKernelEx: cannot honour launch attribute LaunchCompletionEvent: event 0x9990 was never created in this capture"]
    );
}

/// An attribute id CUDA 13 does not define reaches the runtime verbatim (named by its
/// number): the stand-in, a CUDA 13 runtime, refuses it as an invalid value, and replay
/// names the launch and its attributes.
#[test]
fn an_attribute_id_replay_does_not_know_is_passed_verbatim() {
    let Some((code, r)) = replay(Variant::NewerAttribute) else {
        return;
    };
    assert_eq!(code, Some(1));
    assert_eq!(
        failures(&r),
        ["LaunchKernelEx: cuLaunchKernelEx of k with launch attributes [ClusterDimension, AccessPolicyWindow, LaunchCompletionEvent, attribute 77] returned 1, capture returned 0"]
    );
}

/// Two archives in one replay process (as `--serve` replays every case of a worker): the
/// first leaves its own pool as the device's current pool; replay gives the device its
/// default pool back before destroying that pool, so the second allocates from a live one.
#[test]
fn the_next_archive_allocates_from_a_live_pool() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(a.path(), Variant::LeavesPoolSet);
    write_malloc_async(b.path());
    let json = a.path().join("result.json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(a.path())
        .arg(b.path())
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let results = r.as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        assert_eq!(r["verdict"], "PASS", "{:?}", failures(r));
    }
    assert_eq!(o.status.code(), Some(0));
}
