//! The driver API's rows through the hrr-replay binary without a GPU: an archive of a
//! driver-API program (init, a context of its own, cuMemAlloc, H2D, a 32-bit memset, D2H
//! synchronous and on a stream, a 2D copy by CUDA_MEMCPY2D, get current, free, destroy),
//! written as capture writes it, replays to PASS against the stand-in runtime loaded as
//! both libcudart and libcuda (`HRR_REPLAY_LIBCUDA`); a one-byte edit of the driver D2H's
//! expected output fails exactly that check; and without a driver library the first
//! driver row fails naming libcuda.so.1 (driver rows are never looked up in the runtime).

#[allow(dead_code)]
#[path = "common/seeds.rs"]
mod seeds;
#[path = "common/stand_in.rs"]
mod stand_in;

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{drv_memcpy, id, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::blob::Compression;
use hrr_archive::payload::{FieldType, PayloadWriter};

const DEV: u64 = 0x7f00_0000_0000;
const CTX: u64 = 0xc000;
const STREAM: u64 = 0x5500;

/// Appends one event of row `id` with fields filled by `fill`; returns its seq.
fn event(w: &hrr_archive::ProcessWriter, id: u16, fill: impl FnOnce(&mut PayloadWriter)) -> u64 {
    let mut p = PayloadWriter::new();
    fill(&mut p);
    w.append(id, 0, 1, 0, p.as_bytes()).unwrap()
}

/// Writes the archive; returns the seq of the synchronous cuMemcpyDtoH_v2.
fn driver_archive(root: &Path) -> u64 {
    let w = seeds::writer(root, Compression::None);
    event(&w, id::Init, |p| {
        p.u64(1, 0);
    });
    event(&w, id::CtxCreate, |p| {
        p.handle(1, CTX)
            .null(2, FieldType::Bytes)
            .u64(3, 0)
            .u64(4, 0);
    });
    event(&w, id::MemAlloc, |p| {
        p.devptr(1, DEV).u64(2, 4096);
    });
    let data: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(37) % 251) as u8)
        .collect();
    let up = w.put_blob(&data).unwrap();
    event(&w, id::MemcpyHtoD, |p| {
        p.devptr(1, DEV)
            .devptr(2, 0x5000)
            .u64(3, 4096)
            .blob(BLOB_FIELD | 2, up);
        p.u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    });
    event(&w, id::MemsetD32, |p| {
        p.devptr(1, DEV + 16).u64(2, 0xdead_beef).u64(3, 4);
    });
    let mut device = data.clone();
    for i in 0..4 {
        device[16 + 4 * i..20 + 4 * i].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    }
    let all = w.put_blob(&device).unwrap();
    let d2h = event(&w, id::MemcpyDtoH, |p| {
        p.devptr(1, 0x6000)
            .devptr(2, DEV)
            .u64(3, 4096)
            .blob(BLOB_FIELD | 1, all);
        p.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    event(&w, id::CuStreamCreate, |p| {
        p.handle(1, STREAM).u64(2, 1);
    });
    let part = w.put_blob(&device[1024..1536]).unwrap();
    event(&w, id::MemcpyDtoHAsync, |p| {
        p.devptr(1, 0x6000)
            .devptr(2, DEV + 1024)
            .u64(3, 512)
            .handle(4, STREAM)
            .blob(BLOB_FIELD | 1, part);
        p.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    event(&w, id::CuStreamSynchronize, |p| {
        p.handle(1, STREAM);
    });
    // A 32 x 4 window from (16, 1) of the buffer seen with a pitch of 256, to a host
    // buffer of pitch 64 (recorded packed: 128 bytes).
    let l = drv_memcpy::Layout::Memcpy2D;
    let mut raw = vec![0u8; l.size()];
    for (i, v) in [
        (0, 16),
        (1, 1),
        (2, drv_memcpy::MEMORYTYPE_DEVICE),
        (4, DEV),
        (6, 256),
        (9, drv_memcpy::MEMORYTYPE_HOST),
        (10, 0x7000),
        (13, 64),
        (14, 32),
        (15, 4),
    ] {
        raw[i * 8..i * 8 + 8].copy_from_slice(&u64::to_le_bytes(v));
    }
    let window: Vec<u8> = (0..4)
        .flat_map(|r| device[(1 + r) * 256 + 16..(1 + r) * 256 + 48].to_vec())
        .collect();
    let rows = w.put_blob(&window).unwrap();
    event(&w, id::DrvMemcpy2D, |p| {
        p.bytes(1, &raw, false);
        p.blob(BLOB_FIELD | 1, rows);
        p.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    event(&w, id::CtxGetCurrent, |p| {
        p.handle(1, CTX);
    });
    event(&w, id::MemFree, |p| {
        p.devptr(1, DEV);
    });
    event(&w, id::CtxDestroy, |p| {
        p.handle(1, CTX);
    });
    w.finish().unwrap();
    d2h
}

#[track_caller]
fn replay(archive: &Path, libcuda: &Path, extra: &[&str]) -> Option<(i32, serde_json::Value)> {
    let so = stand_in::library()?;
    let json = archive.with_extension("json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(archive)
        .args(extra)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .env(
            "HRR_REPLAY_LIBCUDA",
            if libcuda.as_os_str().is_empty() {
                so
            } else {
                libcuda
            },
        )
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    Some((
        o.status.code().unwrap_or(-1),
        serde_json::from_str(&text).unwrap(),
    ))
}

#[test]
fn a_driver_api_archive_replays_through_the_driver_and_an_edit_is_caught() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let d2h = driver_archive(&a);
    let Some((code, r)) = replay(&a, Path::new(""), &[]) else {
        return;
    };
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 3, "{r}");
    assert_eq!(r["counts"]["d2h_fail"], 0, "{r}");
    assert_eq!(
        r["counts"]["events_replayed"], r["counts"]["events_total"],
        "{r}"
    );

    // One byte of the synchronous DtoH's expected output changed: that check fails, by
    // the driver symbol's name.
    let b = d.path().join("b");
    let cp = Command::new("cp")
        .arg("-r")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap();
    assert!(cp.success());
    let edit = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--edit-expected", "100", "--seq", &d2h.to_string()])
        .arg(&b)
        .output()
        .unwrap();
    assert!(
        edit.status.success(),
        "{}",
        String::from_utf8_lossy(&edit.stderr)
    );
    let (code, r) = replay(&b, Path::new(""), &["--continue-on-error"]).unwrap();
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["counts"]["d2h_fail"], 1, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 2, "{r}");
    let f = &r["failures"][0];
    assert_eq!(f["kind"], "d2h_mismatch", "{r}");
    assert_eq!(f["api"], "cuMemcpyDtoH_v2", "{r}");
    assert_eq!(f["seq"], d2h, "{r}");
    assert_eq!(f["first_differing_offset"], 100, "{r}");
}

#[test]
fn driver_rows_are_called_through_the_driver_library_only() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    driver_archive(&a);
    // The stand-in runtime defines every driver symbol too: were driver rows looked up
    // in the runtime, this would pass.
    let Some((code, r)) = replay(&a, Path::new("/nonexistent/libcuda.so.1"), &[]) else {
        return;
    };
    assert_ne!(code, 0, "{r}");
    let f = &r["failures"][0];
    assert_eq!(f["api"], "cuInit", "{r}");
    assert_eq!(f["seq"], 0, "{r}");
    assert_eq!(
        f["message"],
        "cuInit is a CUDA driver function and no driver library (/nonexistent/libcuda.so.1) could be loaded",
        "{r}"
    );
}

/// Two loads of one code object (as cuModuleLoad and cuModuleLoadData of the same image):
/// each is its own replay module with its own global, so a write to the first's global
/// is not seen in the second's (the control `driver_module_instances` removes this).
#[test]
fn each_module_load_is_its_own_instance_with_its_own_globals() {
    use hrr_archive::api::{fid, semantic};
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let w = seeds::writer(&a, Compression::None);
    let image = stand_in::ptx(&[], &[("vec_bias", 16)]);
    let co = w.put_code_object(&image).unwrap();
    for (module, global) in [(0x30u64, 0xa000u64), (0x40, 0xb000)] {
        event(&w, semantic::MODULE_LOAD, |p| {
            p.handle(fid::HANDLE, module)
                .str(fid::CODE_OBJECT, &co.to_hex())
                .u64(fid::SIZE, image.len() as u64);
        });
        event(&w, semantic::SYMBOL_ADDRESS, |p| {
            p.u64(fid::HOST_STUB, 0)
                .handle(fid::HANDLE, module)
                .str(fid::NAME, "vec_bias")
                .str(fid::CODE_OBJECT, &co.to_hex())
                .devptr(fid::DEVICE_ADDRESS, global)
                .u64(fid::SIZE, 16);
        });
    }
    let sevens = w.put_blob(&[0x77; 16]).unwrap();
    let zeros = w.put_blob(&[0; 16]).unwrap();
    event(&w, id::MemcpyHtoD, |p| {
        p.devptr(1, 0xa000)
            .devptr(2, 0x5000)
            .u64(3, 16)
            .blob(BLOB_FIELD | 2, sevens);
        p.u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    });
    for (global, want) in [(0xb000u64, zeros), (0xa000, sevens)] {
        event(&w, id::MemcpyDtoH, |p| {
            p.devptr(1, 0x6000)
                .devptr(2, global)
                .u64(3, 16)
                .blob(BLOB_FIELD | 1, want);
            p.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        });
    }
    event(&w, semantic::MODULE_UNLOAD, |p| {
        p.handle(fid::HANDLE, 0x40);
    });
    w.finish().unwrap();
    let Some((code, r)) = replay(&a, Path::new(""), &["--continue-on-error"]) else {
        return;
    };
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 2, "{r}");
}

/// nvcc's static runtime, as the H200 showed it: it makes the primary context current
/// (`cuCtxSetCurrent`) with a handle it retained through its private export table, before
/// any recorded call created it, then retains it publicly; at exit, after the driver began
/// tearing down, its release returns CUDA_ERROR_DEINITIALIZED (4). Replay maps the unknown
/// context to its own primary context and does not make the refused call.
#[test]
fn a_static_runtime_archive_replays_its_private_context_and_teardown() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("static");
    let w = seeds::writer(&a, Compression::None);
    const PRIMARY: u64 = 0x5650_f073_7220;
    event(&w, id::Init, |p| {
        p.u64(1, 0);
    });
    event(&w, id::CtxSetCurrent, |p| {
        p.handle(1, PRIMARY);
    });
    event(&w, id::DevicePrimaryCtxRetain, |p| {
        p.handle(1, PRIMARY).u64(2, 0);
    });
    event(&w, id::MemAlloc, |p| {
        p.devptr(1, DEV).u64(2, 256);
    });
    let data: Vec<u8> = (0..=255u8).collect();
    let up = w.put_blob(&data).unwrap();
    event(&w, id::MemcpyHtoD, |p| {
        p.devptr(1, DEV)
            .devptr(2, 0x5000)
            .u64(3, 256)
            .blob(BLOB_FIELD | 2, up);
        p.u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    });
    let back = w.put_blob(&data).unwrap();
    event(&w, id::MemcpyDtoH, |p| {
        p.devptr(1, 0x6000)
            .devptr(2, DEV)
            .u64(3, 256)
            .blob(BLOB_FIELD | 1, back);
        p.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    event(&w, id::MemFree, |p| {
        p.devptr(1, DEV);
    });
    let mut p = PayloadWriter::new();
    p.u64(1, 0);
    w.append(id::DevicePrimaryCtxReleaseV1, 0, 1, 4, p.as_bytes())
        .unwrap();
    w.finish().unwrap();
    let Some((code, r)) = replay(&a, Path::new(""), &[]) else {
        return;
    };
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 1, "{r}");
    assert_eq!(r["counts"]["failed_as_captured"], 1, "{r}");
}

/// Replay on libcuda alone (`HRR_REPLAY_CUDART=none`): an archive of driver records
/// replays with no CUDA runtime loaded, and one with a runtime record fails naming it.
#[test]
fn a_driver_archive_replays_on_libcuda_alone() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    driver_archive(&a);
    let run = |archive: &Path| {
        let json = archive.with_extension("json");
        let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
            .arg(archive)
            .arg("--json")
            .arg(&json)
            .env("HRR_REPLAY_CUDART", "none")
            .env("HRR_REPLAY_LIBCUDA", so)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (o.status.code().unwrap_or(-1), out, r)
    };
    let (code, out, r) = run(&a);
    assert_eq!(code, 0, "{out}{r}");
    assert!(out.contains("(no CUDA runtime)"), "{out}");
    assert_eq!(r["counts"]["d2h_pass"], 3, "{r}");
    assert_eq!(
        r["counts"]["events_replayed"], r["counts"]["events_total"],
        "{r}"
    );

    // A runtime record in the same archive: refused by name, not looked up elsewhere.
    let b = d.path().join("b");
    let w = seeds::writer(&b, Compression::None);
    event(&w, id::Malloc, |p| {
        p.devptr(1, DEV).u64(2, 64);
    });
    w.finish().unwrap();
    let (code, out, r) = run(&b);
    assert_eq!(code, 1, "{out}{r}");
    assert!(
        out.contains("cudaMalloc is a CUDA runtime function, and this replay runs on"),
        "{out}"
    );
}
