//! Large buffers written and read by several threads at once: positioned writes and
//! reads split into chunks, and a new file written through a shared mapping (buffered
//! writes to one file are serialised by the kernel).

use std::fs;

/// Buffers at least this large are written and read by several threads at once: one
/// thread copying into or out of the page cache manages 1-3 GB/s, far below memory
/// bandwidth, and a gigabyte copy would otherwise stall the program for a second.
/// Files this large are written through a mapping (`write_mapped_parallel`).
pub const PARALLEL_IO_BYTES: usize = 64 << 20;
const IO_THREADS: usize = 8;

fn chunks_of(len: usize) -> usize {
    if len < PARALLEL_IO_BYTES {
        return 1;
    }
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    cores.clamp(1, IO_THREADS).min(len / (8 << 20)).max(1)
}

/// `write_all_at` of `data` at `offset`, split over threads for large buffers.
pub fn write_all_at_parallel(f: &fs::File, data: &[u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let n = chunks_of(data.len());
    if n == 1 {
        return f.write_all_at(data, offset);
    }
    let step = data.len().div_ceil(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = data
            .chunks(step)
            .enumerate()
            .map(|(i, chunk)| s.spawn(move || f.write_all_at(chunk, offset + (i * step) as u64)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(std::io::Error::other("writer thread panicked")))
        })
    })
}

/// Writes `parts` one after another from offset 0 of the empty file `f` through a shared
/// mapping, several threads copying at once. Buffered writes to one file are serialised
/// by the kernel (one writer at a time holds the inode's lock), so `write_all_at_parallel`
/// cannot go faster than one thread; stores through a mapping take no such lock.
///
/// The blocks are reserved first (`posix_fallocate`): a full disk is then an error here,
/// never a SIGBUS from a page fault in the copy. Returns Ok(false), having written
/// nothing, where the file system cannot reserve blocks or map the file; the caller
/// falls back to `write_all_at_parallel`.
pub fn write_mapped_parallel(f: &fs::File, parts: &[&[u8]]) -> std::io::Result<bool> {
    write_mapped_with(f, parts, mapped_write_threads())
}

/// Threads for a mapped write: one per core, at least 8 and at most 16. Each new
/// page-cache page is allocated and filled by the thread that faults it, and a fault
/// blocks: on 2 cores 8 threads wrote 3.0 GB/s where 1 wrote 0.6 (`blob_io` bench).
pub fn mapped_write_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(8, 16)
}

/// `write_mapped_parallel` with an explicit thread count (the `blob_io` benchmark).
pub fn write_mapped_with(f: &fs::File, parts: &[&[u8]], threads: usize) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if len == 0 {
        return Ok(false);
    }
    let fd = f.as_raw_fd();
    // SAFETY: posix_fallocate on a file descriptor we own; no memory is passed.
    match unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) } {
        0 => {}
        libc::EOPNOTSUPP | libc::EINVAL => return Ok(false),
        e => return Err(std::io::Error::from_raw_os_error(e)),
    }
    // SAFETY: a fresh shared mapping of the file's first `len` bytes, which exist (they
    // were just allocated); nothing else maps or truncates this temporary file.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Ok(false);
    }
    // SAFETY: the mapping is `len` writable bytes, ours until the munmap below.
    let dest = unsafe { std::slice::from_raw_parts_mut(map.cast::<u8>(), len) };
    let mut rest = &mut dest[..];
    let threads = threads.max(1);
    std::thread::scope(|s| {
        for part in parts {
            let (here, after) = rest.split_at_mut(part.len());
            rest = after;
            let step = part.len().div_ceil(threads).max(1 << 20);
            for (d, src) in here.chunks_mut(step).zip(part.chunks(step)) {
                s.spawn(move || d.copy_from_slice(src));
            }
        }
    });
    // SAFETY: unmapping the mapping made above; `dest` is not used after this.
    unsafe { libc::munmap(map, len) };
    Ok(true)
}

/// Fills `buf` from `offset`, split over threads for large buffers.
pub fn read_exact_at_parallel(f: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let n = chunks_of(buf.len());
    if n == 1 {
        return f.read_exact_at(buf, offset);
    }
    let step = buf.len().div_ceil(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = buf
            .chunks_mut(step)
            .enumerate()
            .map(|(i, chunk)| s.spawn(move || f.read_exact_at(chunk, offset + (i * step) as u64)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(std::io::Error::other("reader thread panicked")))
        })
    })
}
