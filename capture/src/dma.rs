//! Managed memory read by the copy engine, for launch snapshots (`pinned`): a page-locked
//! staging buffer and one capture-private non-blocking stream per CUDA context (per HIP
//! device), made on first use and kept for the process.
//!
//! Why not the host: a host read of managed memory the GPU holds migrates its pages to the
//! host, and the kernel launched next migrates them back. On the H200 a 256 MiB managed
//! buffer a kernel had just written cost 74 ms per launch read through the host and 21 ms
//! read by copy into page-locked memory (`bench/RESULTS.md`, 2026-12-04). A copy leaves
//! the pages where the program put them, and its stream is non-blocking, so it waits for
//! none of the program's streams; it is issued in relaxed capture mode
//! (`capturing::relaxed`), so a stream capture elsewhere in the program is not disturbed.
//!
//! The lock is only ever tried: a thread that finds it taken (another launch snapshotting,
//! or a child forked while it was held) reads through the host instead, as does every
//! read when a function is missing (no CUDA driver or HIP runtime loaded) or a copy fails.
//! Capture's own calls go to the real functions, never through a shim: nothing is
//! recorded.

use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use hrr_archive::api::{sigs, Vendor};

use crate::capturing;

/// The most bytes staged at once: four snapshot pieces (a piece is a hash-tree leaf).
pub const STAGING_BYTES: usize = 4 * hrr_archive::hash::TREE_LEAF_BYTES;

/// `CU_STREAM_NON_BLOCKING`, `hipStreamNonBlocking`.
const NON_BLOCKING: c_uint = 1;
/// `CU_MEMHOSTALLOC_PORTABLE`, `hipHostMallocPortable`: usable from every context.
const PORTABLE: c_uint = 1;
/// `hipMemcpyDeviceToHost`.
const HIP_D2H: c_int = 2;

/// The staging buffer and the streams made so far.
struct Staging {
    at: usize,
    len: usize,
    /// (context or device, stream).
    streams: Vec<(u64, usize)>,
}

static STAGING: Mutex<Option<Staging>> = Mutex::new(None);
/// Set when the staging buffer could not be allocated: every read goes through the host.
static OFF: AtomicBool = AtomicBool::new(false);

/// The runtime whose copy path is loaded: CUDA's driver (a shared runtime, nvcc's static
/// runtime and driver-API programs all load it), else HIP's runtime.
fn vendor() -> Option<Vendor> {
    if real!(driver cuMemcpyDtoHAsync_v2: sigs::DtoHAsync)
        .get()
        .is_some()
    {
        Some(Vendor::Cuda)
    } else if real!(hipMemcpyAsync: sigs::MemcpyAsync).get().is_some() {
        Some(Vendor::Hip)
    } else {
        None
    }
}

/// Where streams are kept apart: the calling thread's current CUDA context, or its HIP
/// device. None when there is none.
fn stream_key(vendor: Vendor) -> Option<u64> {
    match vendor {
        Vendor::Cuda => {
            let f = real!(driver cuCtxGetCurrent: sigs::CtxGetCurrent).get()?;
            let mut ctx: *mut c_void = std::ptr::null_mut();
            // SAFETY: a valid out pointer.
            (unsafe { f(&mut ctx) } == 0 && !ctx.is_null()).then_some(ctx as u64)
        }
        Vendor::Hip => {
            let f = real!(hipGetDevice: sigs::IntOut).get()?;
            let mut device: c_int = 0;
            // SAFETY: a valid out pointer.
            (unsafe { f(&mut device) } == 0).then_some(device as u64)
        }
    }
}

fn alloc_staging(vendor: Vendor, len: usize) -> Option<usize> {
    let f = match vendor {
        Vendor::Cuda => real!(driver cuMemHostAlloc: sigs::HostAllocFlags).get()?,
        Vendor::Hip => real!(hipHostMalloc: sigs::HostAllocFlags).get()?,
    };
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out pointer; the memory is capture's for the process's life.
    (unsafe { f(&mut p, len, PORTABLE) } == 0 && !p.is_null()).then_some(p as usize)
}

fn new_stream(vendor: Vendor) -> Option<usize> {
    let f = match vendor {
        Vendor::Cuda => real!(driver cuStreamCreate: sigs::StreamCreateFlags).get()?,
        Vendor::Hip => real!(hipStreamCreateWithFlags: sigs::StreamCreateFlags).get()?,
    };
    let mut s: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out pointer.
    (unsafe { f(&mut s, NON_BLOCKING) } == 0 && !s.is_null()).then_some(s as usize)
}

/// Copies `len` bytes at device address `addr` into `dst` on `stream` and waits for it.
fn copy(vendor: Vendor, dst: usize, addr: u64, len: usize, stream: usize) -> bool {
    let s = stream as *mut c_void;
    let d = dst as *mut c_void;
    let issued = match vendor {
        Vendor::Cuda => match real!(driver cuMemcpyDtoHAsync_v2: sigs::DtoHAsync).get() {
            // SAFETY: `dst` holds at least `len` bytes (the staging buffer); `addr`
            // starts `len` bytes of one live managed allocation (the caller's contract).
            Some(f) => unsafe { f(d, addr, len, s) },
            None => return false,
        },
        Vendor::Hip => match real!(hipMemcpyAsync: sigs::MemcpyAsync).get() {
            // SAFETY: as above.
            Some(f) => unsafe { f(d, addr as usize as *const c_void, len, HIP_D2H, s) },
            None => return false,
        },
    };
    let sync = match vendor {
        Vendor::Cuda => real!(driver cuStreamSynchronize: sigs::PtrArg).get(),
        Vendor::Hip => real!(hipStreamSynchronize: sigs::PtrArg).get(),
    };
    match (issued, sync) {
        // SAFETY: capture's own stream, made above.
        (0, Some(wait)) => unsafe { wait(s) == 0 },
        _ => false,
    }
}

/// Reads `len` bytes (at most [`STAGING_BYTES`]) of managed memory at `addr` by the
/// copy engine and hands them to `f`; None, with nothing read, when this thread cannot
/// (no copy path, the lock taken, a copy refused): the caller reads through the host.
///
/// # Safety
/// `[addr, addr + len)` lies inside one live managed allocation.
pub unsafe fn read<T>(addr: u64, len: usize, f: impl FnOnce(&[u8]) -> T) -> Option<T> {
    if len == 0 || len > STAGING_BYTES || OFF.load(Ordering::Relaxed) {
        return None;
    }
    let vendor = vendor()?;
    let mut guard = STAGING.try_lock().ok()?;
    capturing::relaxed(vendor, || {
        if guard.is_none() {
            match alloc_staging(vendor, STAGING_BYTES) {
                Some(at) => {
                    *guard = Some(Staging {
                        at,
                        len: STAGING_BYTES,
                        streams: Vec::new(),
                    })
                }
                None => {
                    OFF.store(true, Ordering::Relaxed);
                    return None;
                }
            }
        }
        let st = guard.as_mut()?;
        let key = stream_key(vendor)?;
        let stream = match st.streams.iter().find(|(k, _)| *k == key) {
            Some(&(_, s)) => s,
            None => {
                let s = new_stream(vendor)?;
                st.streams.push((key, s));
                s
            }
        };
        if !copy(vendor, st.at, addr, len, stream) {
            // A stream of a context since destroyed (its handle reused) fails here: made
            // again next time.
            st.streams.retain(|(k, _)| *k != key);
            return None;
        }
        debug_assert!(len <= st.len);
        // SAFETY: the staging buffer holds `len` bytes the copy just wrote, and the lock
        // keeps every other thread out of it until `f` returns.
        let bytes = unsafe { std::slice::from_raw_parts(st.at as *const u8, len) };
        Some(f(bytes))
    })
}
