//! Archives written by the archive writer as capture writes them, for the hostile-input
//! tests and the fuzzer: allocations, H2D and D2H copies with their blobs (raw or zstd),
//! a memset, a stream, 2D copies, kernel launches with arguments (a device pointer among
//! them) and their code object. Each replays to PASS against the stand-in runtime.

use std::path::Path;

use hrr_archive::api::{fid, id, semantic, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::blob::Compression;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::payload::BlobRef;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::{CaptureSettings, ProcessWriter};

/// A CUDA process archive under `root` whose blobs are stored with `compression`.
pub fn writer(root: &Path, compression: Compression) -> std::sync::Arc<ProcessWriter> {
    let w = ProcessWriter::create(
        root,
        CaptureSettings {
            compression,
            fsync: false,
            fsync_blobs: false,
            code_store: None,
            reserve: ReservePolicy::Bytes(0),
            ..Default::default()
        },
        1,
    )
    .unwrap();
    w.update_runtime(|r| r.vendor = "cuda".into());
    w
}

/// A 1D copy between `dst` and `src` of `count` bytes, `blob` its host side.
pub fn memcpy(dir: CopyDir, dst: u64, src: u64, count: u64, blob: BlobRef) -> Vec<u8> {
    let h2d = dir == CopyDir::HostToDevice;
    let mut p = PayloadWriter::new();
    p.devptr(1, dst)
        .devptr(2, src)
        .u64(3, count)
        .u64(4, dir as u64)
        .blob(BLOB_FIELD | if h2d { 2 } else { 1 }, blob)
        .u64(COPY_DIR_FIELD, dir as u64);
    p.finish()
}

/// `cudaMalloc` of `size` bytes that returned `dev` at capture.
pub fn malloc(dev: u64, size: u64) -> Vec<u8> {
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), dev)
        .u64(ApiDesc::field_id(1), size);
    p.finish()
}

/// Writes a varied archive under `root`: `rounds` rounds of upload, memset, launch,
/// download on two allocations, then a 2D round trip; blobs `compression`-stored.
pub fn rich_archive(root: &Path, compression: Compression, rounds: u32) {
    let w = writer(root, compression);
    let a = 0x7f00_0000_0000u64;
    let b = 0x7f00_0010_0000u64;
    // Much larger than what is copied into it (the stand-in's pages stay untouched), so
    // a copy count grown past its blob still fits the device side: only replay's own
    // buffer bounds it.
    w.append(id::Malloc, 0, 1, 0, &malloc(a, 64 << 20)).unwrap();
    w.append(id::Malloc, 0, 1, 0, &malloc(b, 4096)).unwrap();
    let mut p = PayloadWriter::new();
    p.handle(ApiDesc::field_id(0), 0x5500);
    w.append(id::StreamCreate, 0, 1, 0, p.as_bytes()).unwrap();
    // PTX defining each round's kernel: a pointer and the round (u32).
    let names: Vec<String> = (0..rounds).map(|r| format!("kernel_{r}")).collect();
    let kernels: Vec<(&str, &[usize])> = names.iter().map(|n| (n.as_str(), &[8, 4][..])).collect();
    let code = w
        .put_code_object(&crate::stand_in::ptx(&kernels, &[]))
        .unwrap();
    for round in 0..rounds {
        // Patterned (compressible) and varied bytes.
        let data: Vec<u8> = (0..8192u32)
            .map(|i| {
                if round % 2 == 0 {
                    (i / 64) as u8
                } else {
                    (i.wrapping_mul(2654435761) >> 13) as u8 ^ round as u8
                }
            })
            .collect();
        let up = w.put_blob(&data).unwrap();
        w.append(
            id::Memcpy,
            0,
            1,
            0,
            &memcpy(CopyDir::HostToDevice, a, 0x1000, 8192, up),
        )
        .unwrap();
        let mut p = PayloadWriter::new();
        p.devptr(1, b).u64(2, u64::from(round & 0xff)).u64(3, 4096);
        w.append(id::Memset, 0, 1, 0, p.as_bytes()).unwrap();
        let mut p = PayloadWriter::new();
        p.str(fid::NAME, &format!("kernel_{round}"))
            .str(fid::CODE_OBJECT, &code.to_hex())
            .u64_array(fid::GRID, &[4, 1, 1])
            .u64_array(fid::BLOCK, &[128, 1, 1])
            .u64(fid::SHARED_MEM, 0)
            .handle(fid::STREAM, 0x5500);
        p.nested_with(fid::ARG, |a_| {
            a_.bytes(fid::ARG_BYTES, &a.to_le_bytes(), false);
            a_.bytes(fid::ARG_POINTER_WORDS, &0u64.to_le_bytes(), false);
        });
        p.nested_with(fid::ARG, |a_| {
            a_.bytes(fid::ARG_BYTES, &round.to_le_bytes(), false);
        });
        w.append(semantic::LAUNCH_KERNEL, 0, 1, 0, p.as_bytes())
            .unwrap();
        let back = w.put_blob(&data[..4096]).unwrap();
        let mut p = PayloadWriter::new();
        p.devptr(1, 0x2000)
            .devptr(2, a)
            .u64(3, 4096)
            .u64(4, 2)
            .handle(5, 0x5500)
            .blob(BLOB_FIELD | 1, back)
            .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        w.append(id::MemcpyAsync, 0, 1, 0, p.as_bytes()).unwrap();
        let mut p = PayloadWriter::new();
        p.handle(1, 0x5500);
        w.append(id::StreamSynchronize, 0, 1, 0, p.as_bytes())
            .unwrap();
        let filled = w.put_blob(&[(round & 0xff) as u8; 4096]).unwrap();
        w.append(
            id::Memcpy,
            0,
            1,
            0,
            &memcpy(CopyDir::DeviceToHost, 0x3000, b, 4096, filled),
        )
        .unwrap();
    }
    // A 2D round trip: 16 rows of 32 bytes into b with a pitch of 64, and back.
    let rows: Vec<u8> = (0..512u32).map(|i| (i % 253) as u8).collect();
    let r = w.put_blob(&rows).unwrap();
    for dir in [CopyDir::HostToDevice, CopyDir::DeviceToHost] {
        let h2d = dir == CopyDir::HostToDevice;
        let (dst, src) = if h2d { (b, 0x4000) } else { (0x4000, b) };
        let (dpitch, spitch) = if h2d { (64, 32) } else { (32, 64) };
        let mut p = PayloadWriter::new();
        p.devptr(1, dst)
            .u64(2, dpitch)
            .devptr(3, src)
            .u64(4, spitch)
            .u64(5, 32)
            .u64(6, 16)
            .u64(7, dir as u64)
            .blob(BLOB_FIELD | if h2d { 3 } else { 1 }, r)
            .u64(COPY_DIR_FIELD, dir as u64);
        w.append(id::Memcpy2D, 0, 1, 0, p.as_bytes()).unwrap();
    }
    let mut p = PayloadWriter::new();
    p.devptr(1, a);
    w.append(id::Free, 0, 1, 0, p.as_bytes()).unwrap();
    w.finish().unwrap();
}
