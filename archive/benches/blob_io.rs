//! Blob I/O strategies for large buffers (`cargo bench -p hrr-archive --bench blob_io --
//! [DIR] [MIB]`): how fast a gigabyte reaches the page cache and comes back, written by
//! one thread, by several threads into one file (serialised by the kernel's inode lock),
//! through a shared mapping by several threads (what `write_atomic_parts` does for large
//! blobs), and read into fresh and into reused memory. DIR defaults to a temporary
//! directory ("-" for it, to give MIB alone); results go into bench/RESULTS.md
//! (docs/benchmarks.md).

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use hrr_archive::blob;
use hrr_archive::ContentHash;

fn gbps(bytes: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    bytes as f64 / t.elapsed().as_secs_f64() / 1e9
}

fn fresh(dir: &Path, name: &str) -> fs::File {
    let p = dir.join(name);
    let _ = fs::remove_file(&p);
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(p)
        .unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--") && !a.is_empty())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = args
        .first()
        .filter(|d| *d != "-")
        .map(|d| Path::new(d).to_path_buf())
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let work = tempfile::tempdir_in(&dir).unwrap();
    let dir = work.path();
    let mib: usize = args.get(1).and_then(|m| m.parse().ok()).unwrap_or(1024);
    let n = mib << 20;
    let data: Vec<u8> = (0..n)
        .map(|i| (i as u64).wrapping_mul(0x9E37_79B9) as u8)
        .collect();
    println!(
        "blob_io: {mib} MiB in {} ({} threads available)",
        dir.display(),
        std::thread::available_parallelism().map_or(1, |t| t.get())
    );
    let row = |what: &str, v: f64| println!("  {what:<58} {v:6.2} GB/s");

    row(
        "XXH3-128, one thread",
        gbps(n, || {
            std::hint::black_box(xxhash_rust::xxh3::xxh3_128(&data));
        }),
    );
    row(
        "content hash (a tree of 16 MiB leaves from 64 MiB)",
        gbps(n, || {
            std::hint::black_box(ContentHash::of(&data));
        }),
    );
    let mut reused = vec![0u8; n];
    reused.fill(1);
    row(
        "memcpy into touched memory (1 thread)",
        gbps(n, || reused.copy_from_slice(&data)),
    );
    let f = fresh(dir, "one");
    row(
        "pwrite, 1 thread",
        gbps(n, || f.write_all_at(&data, 0).unwrap()),
    );
    let f = fresh(dir, "par");
    row(
        "pwrite, 8 threads, one file (write_all_at_parallel)",
        gbps(n, || blob::write_all_at_parallel(&f, &data, 0).unwrap()),
    );
    for threads in [8, 16] {
        let f = fresh(dir, &format!("map{threads}"));
        row(
            &format!("fallocate + mmap, {threads} threads (write_mapped_with)"),
            gbps(n, || {
                assert!(blob::write_mapped_with(&f, &[&data], threads).unwrap())
            }),
        );
    }
    println!(
        "  (write_atomic_parts maps with {} threads here)",
        blob::mapped_write_threads()
    );
    row(
        "write_atomic_parts (the capture path: temp file, rename)",
        gbps(n, || {
            blob::write_atomic_parts(&dir.join("atomic"), &[&data], false).unwrap()
        }),
    );
    let f = fs::File::open(dir.join("map8")).unwrap();
    row(
        "pread, 8 threads, into reused memory",
        gbps(n, || {
            blob::read_exact_at_parallel(&f, &mut reused, 0).unwrap()
        }),
    );
    row(
        "pread, 8 threads, into fresh memory",
        gbps(n, || {
            let mut v = vec![0u8; n];
            blob::read_exact_at_parallel(&f, &mut v, 0).unwrap();
            std::hint::black_box(&v);
        }),
    );
    assert!(reused == data, "read back differs from what was written");
}
