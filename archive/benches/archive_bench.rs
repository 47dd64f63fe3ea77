//! Archive benchmarks (`cargo bench -p hrr-archive`): event append rate on 1 and 8 threads,
//! blob hashing (XXH3-128, the one we use, against BLAKE3) and blob writing for 4 KiB,
//! 1 MiB and 256 MiB buffers. Results go into bench/RESULTS.md (docs/benchmarks.md).

use std::sync::Arc;
use std::time::{Duration, Instant};

use hrr_archive::blob::Compression;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::{CaptureSettings, ContentHash, ProcessWriter};

fn settings() -> CaptureSettings {
    CaptureSettings {
        compression: Compression::None,
        flush_interval: Duration::from_millis(250),
        buffer_bytes: 1 << 20,
        reserve: ReservePolicy::Bytes(0),
        fsync: true,
        fsync_blobs: true,
        code_store: None,
    }
}

fn append_rate(threads: usize, per_thread: u64, buffer_bytes: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let w = ProcessWriter::create(
        dir.path(),
        CaptureSettings {
            buffer_bytes,
            ..settings()
        },
        1,
    )
    .unwrap();
    // Capture always runs the flusher thread; so does the benchmark.
    w.start_flusher();
    // A small event as capture writes for a cudaMemsetAsync: three fields, 48 payload bytes.
    let mut p = PayloadWriter::new();
    p.devptr(1, 0x7f00_0000_0000).u64(2, 0).u64(3, 4096);
    let payload = Arc::new(p.finish());
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (w, payload) = (w.clone(), payload.clone());
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    w.append(7, 0, t as u32, 0, &payload);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    w.finish().unwrap();
    (threads as u64 * per_thread) as f64 / start.elapsed().as_secs_f64()
}

fn gbps(bytes: usize, iters: usize, f: impl Fn()) -> f64 {
    f(); // warm
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    (bytes * iters) as f64 / start.elapsed().as_secs_f64() / 1e9
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    println!(
        "machine: {cpu}, {} cores",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    for threads in [1usize, 8] {
        for buf in [1usize << 20, 1 << 30] {
            let rate = append_rate(threads, 4_000_000 / threads as u64, buf);
            println!(
                "event append, {threads} thread(s), {} KiB buffer: {:.2} M events/s",
                buf >> 10,
                rate / 1e6
            );
        }
    }
    for (label, size, iters) in [
        ("4 KiB", 4usize << 10, 200_000),
        ("1 MiB", 1 << 20, 1_000),
        ("256 MiB", 256 << 20, 4),
    ] {
        let buf: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
        let xx = gbps(size, iters, || {
            std::hint::black_box(ContentHash::of(std::hint::black_box(&buf)));
        });
        let b3 = gbps(size, iters, || {
            std::hint::black_box(blake3::hash(std::hint::black_box(&buf)));
        });
        let dir = tempfile::tempdir().unwrap();
        let w = ProcessWriter::create(
            dir.path(),
            CaptureSettings {
                fsync: false,
                fsync_blobs: false,
                code_store: None,
                ..settings()
            },
            1,
        )
        .unwrap();
        let n_write = (iters / 10).clamp(2, 2_000);
        let mut variant = buf.clone();
        let start = Instant::now();
        for i in 0..n_write {
            variant[0] = i as u8;
            variant[1] = (i >> 8) as u8;
            w.put_blob(&variant).unwrap();
        }
        let write = (size * n_write) as f64 / start.elapsed().as_secs_f64() / 1e9;
        let start = Instant::now();
        for _ in 0..n_write {
            w.put_blob(&variant).unwrap();
        }
        let dedup = (size * n_write) as f64 / start.elapsed().as_secs_f64() / 1e9;
        println!(
            "blob {label}: hash XXH3-128 (ours) {xx:.2} GB/s, BLAKE3 {b3:.2} GB/s; put_blob new {write:.2} GB/s, duplicate {dedup:.2} GB/s"
        );
    }
}
