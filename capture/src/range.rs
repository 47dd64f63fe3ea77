//! Range capture (`HRR_CAPTURE_RANGE=profiler[:N]`, issue 23): one step of a long program
//! recorded so that it replays alone. Before the N-th range between a profiler start
//! (`cudaProfilerStart`, `cuProfilerStart`, `hipProfilerStart`) and its stop, capture keeps
//! the calls that build state and leaves out the work (`api::work`: copies, memsets,
//! launches, synchronisations), except while a stream captures into a graph. At the
//! range's start it synchronises the device and snapshots every live device and managed
//! allocation (`RangeRestore` records of 1 MiB pieces; the blob store keeps a repeated
//! piece once); replay writes them into its own allocations and then replays the range
//! with every check as usual. After the stop nothing more is recorded but the outputs of
//! the range's own asynchronous copies. The snapshot's size and time are in the
//! `RangeMark` record and on stderr at exit.
//!
//! An allocation the snapshot cannot read (a virtual memory reservation whose start is
//! not one mapping) is an incomplete `RangeRestore`: replay refuses it by name. A range
//! that never starts, or starts inside a stream capture (no synchronisation allowed), is
//! noted as unreplayable: replay refuses the archive, never passes it with nothing
//! checked.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::Ordering;
use std::time::Instant;

use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::alloc::Space;
use crate::range_gate::{
    trigger, wants_profiler, AFTER, BEFORE, INSIDE, OPEN_CAPTURES, PHASE, SNAPSHOT_ALLOCATIONS,
    SNAPSHOT_BYTES, SNAPSHOT_NS, STARTS, WANTED,
};
use crate::real::NO_REAL_FUNCTION;
use crate::state::{self, guarded, Capture};

/// The bytes read and stored at once while snapshotting: small enough that the unused
/// (zero) stretches of a large allocator segment are stored as one blob, read once each.
const PIECE: u64 = 1 << 20;

/// `cudaProfilerStart` and the rest: the real call, then the range's start or end.
fn profiler(vendor: Vendor, api: &'static str, f: sigs::NoArgs, start: bool) -> c_int {
    // SAFETY: no arguments.
    let ret = unsafe { f() };
    if wants_profiler() && !state::in_shim() {
        if start {
            let _ = range_start(vendor, api);
        } else {
            range_stop(vendor, api);
        }
    }
    ret
}

/// A start of the trigger's kind (a profiler start, a push or start of the NVTX range
/// asked for): counted, and when it is the occurrence asked for, the range starts here
/// (true: the caller's matching stop ends it).
pub(crate) fn range_start(vendor: Vendor, api: &'static str) -> bool {
    if PHASE.load(Ordering::SeqCst) != BEFORE {
        return false;
    }
    let n = STARTS.fetch_add(1, Ordering::SeqCst) + 1;
    if n != WANTED.load(Ordering::SeqCst) {
        return false;
    }
    let Some((cap, _g)) = state::enter(vendor) else {
        return false;
    };
    if OPEN_CAPTURES.load(Ordering::SeqCst) > 0 {
        let why = format!(
            "range {}:{n} started while a stream captured into a graph, where the device may not be synchronised: no snapshot was taken",
            trigger()
        );
        cap.writer().note_unreplayable(api, &why);
        state::note(&format!("warning: {why}"));
        PHASE.store(AFTER, Ordering::SeqCst);
        return false;
    }
    let t0 = Instant::now();
    guarded(api, || snapshot(cap, vendor, n, t0));
    PHASE.store(INSIDE, Ordering::SeqCst);
    true
}

/// The stop of the range that started (its profiler stop, or the pop or end matching
/// the NVTX push or start).
pub(crate) fn range_stop(vendor: Vendor, api: &'static str) {
    if PHASE.load(Ordering::SeqCst) != INSIDE {
        return;
    }
    if let Some((cap, _g)) = state::enter(vendor) {
        guarded(api, || {
            let mut p = PayloadWriter::new();
            p.str(fid::NAME, &trigger())
                .u64(fid::RANGE_OCCURRENCE, WANTED.load(Ordering::SeqCst) as u64)
                .u64(fid::RANGE_END, 1);
            cap.record(semantic::RANGE_MARK, 0, &p, None, api);
        });
    }
    PHASE.store(AFTER, Ordering::SeqCst);
}

/// Synchronises the device through the real runtime (or driver); false if it failed.
fn device_sync(vendor: Vendor) -> bool {
    let f = match vendor {
        Vendor::Cuda => real!(cudaDeviceSynchronize: sigs::NoArgs)
            .get()
            .or_else(|| real!(cuCtxSynchronize: sigs::NoArgs).get()),
        Vendor::Hip => real!(hipDeviceSynchronize: sigs::NoArgs).get(),
    };
    // SAFETY: no arguments.
    f.is_some_and(|f| unsafe { f() } == 0)
}

/// Why an allocation cannot be read whole, if the runtime says so (a virtual memory
/// reservation: its start unmapped, or several mappings in it). Runtimes without the
/// query (stand-ins) are taken at their word.
fn not_one_mapping(vendor: Vendor, start: u64, size: u64) -> Option<String> {
    let mut base: u64 = 0;
    let mut len: usize = 0;
    let ret = match vendor {
        Vendor::Cuda => {
            let f = real!(cuMemGetAddressRange_v2: unsafe extern "C" fn(*mut u64, *mut usize, u64) -> c_int)
                .get()?;
            // SAFETY: valid out pointers; the query only reads the driver's tables.
            unsafe { f(&mut base, &mut len, start) }
        }
        Vendor::Hip => {
            let f = real!(hipMemGetAddressRange: unsafe extern "C" fn(*mut u64, *mut usize, *mut c_void) -> c_int)
                .get()?;
            // SAFETY: as above (HIP's base out parameter is a pointer-sized word).
            unsafe { f(&mut base, &mut len, start as usize as *mut c_void) }
        }
    };
    if ret != 0 {
        return Some(format!(
            "no memory is mapped at {start:#x} (a virtual memory reservation): its bytes were not read"
        ));
    }
    let end = base.saturating_add(len as u64);
    (base > start || start.saturating_add(size) > end).then(|| {
        format!("{size} bytes at {start:#x} span more than one mapping (a virtual memory reservation): their bytes were not read")
    })
}

/// Reads `buf.len()` bytes of device memory at `addr` into `buf`.
fn read_device(vendor: Vendor, addr: u64, buf: &mut [u8]) -> Result<(), String> {
    type Memcpy = unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> c_int;
    type DtoH = unsafe extern "C" fn(*mut c_void, u64, usize) -> c_int;
    const D2H: c_int = 2;
    let dst = buf.as_mut_ptr().cast::<c_void>();
    let ret = match vendor {
        Vendor::Cuda => match real!(cudaMemcpy: Memcpy).get() {
            // SAFETY: `buf` holds `len` bytes; `addr` starts a live allocation that long.
            Some(f) => unsafe { f(dst, addr as usize as *const c_void, buf.len(), D2H) },
            None => match real!(cuMemcpyDtoH_v2: DtoH).get() {
                // SAFETY: as above.
                Some(f) => unsafe { f(dst, addr, buf.len()) },
                None => return Err("no device-to-host copy function was found".into()),
            },
        },
        Vendor::Hip => match real!(hipMemcpy: Memcpy).get() {
            // SAFETY: as above.
            Some(f) => unsafe { f(dst, addr as usize as *const c_void, buf.len(), D2H) },
            None => return Err("no device-to-host copy function was found".into()),
        },
    };
    match ret {
        0 => Ok(()),
        code => Err(format!(
            "the copy of {} bytes at {addr:#x} returned {code}",
            buf.len()
        )),
    }
}

/// The snapshot at the range's start: every live device and managed allocation, then
/// the mark with its cost.
fn snapshot(cap: &Capture, vendor: Vendor, n: u32, t0: Instant) {
    let synced = device_sync(vendor);
    let (mut bytes, mut allocations) = (0u64, 0u64);
    let mut buf: Vec<u8> = Vec::new();
    for (start, size, space) in cap.allocs.all() {
        if !matches!(space, Space::Device | Space::Managed) {
            continue;
        }
        allocations += 1;
        let mut why = match synced {
            true => None,
            false => Some("the device could not be synchronised before the snapshot".to_string()),
        };
        if why.is_none() && space == Space::Device {
            why = not_one_mapping(vendor, start, size);
        }
        if let Some(why) = why {
            let mut p = PayloadWriter::new();
            p.devptr(fid::DEVICE_ADDRESS, start).u64(fid::SIZE, size);
            cap.record(semantic::RANGE_RESTORE, 0, &p, Some(&why), "RangeRestore");
            continue;
        }
        let mut off = 0u64;
        while off < size {
            let len = (size - off).min(PIECE);
            buf.resize(len as usize, 0);
            let at = start + off;
            let read = match space {
                Space::Managed => {
                    // SAFETY: managed memory of the allocation table, host-readable after
                    // the synchronisation above.
                    buf.copy_from_slice(unsafe {
                        crate::ffi::bytes_at(at as usize as *const u8, len as usize)
                    });
                    Ok(())
                }
                _ => read_device(vendor, at, &mut buf),
            };
            let blob = read.and_then(|()| cap.writer().put_blob(&buf).map_err(|e| e.to_string()));
            let mut p = PayloadWriter::new();
            p.devptr(fid::DEVICE_ADDRESS, at).u64(fid::SIZE, len);
            match blob {
                Ok(r) => {
                    p.blob(fid::RANGE_BYTES, r);
                    cap.record(semantic::RANGE_RESTORE, 0, &p, None, "RangeRestore");
                    bytes += len;
                }
                Err(why) => {
                    cap.record(semantic::RANGE_RESTORE, 0, &p, Some(&why), "RangeRestore");
                }
            }
            off += len;
        }
    }
    let ns = t0.elapsed().as_nanos() as u64;
    let mut p = PayloadWriter::new();
    p.str(fid::NAME, &trigger())
        .u64(fid::RANGE_OCCURRENCE, n as u64)
        .u64(fid::RANGE_ALLOCATIONS, allocations)
        .u64(fid::SIZE, bytes)
        .u64(fid::RANGE_NS, ns);
    cap.record(semantic::RANGE_MARK, 0, &p, None, "RangeMark");
    SNAPSHOT_BYTES.store(bytes, Ordering::SeqCst);
    SNAPSHOT_ALLOCATIONS.store(allocations, Ordering::SeqCst);
    SNAPSHOT_NS.store(ns, Ordering::SeqCst);
}

macro_rules! profiler_shim {
    ($name:ident, $vendor:expr, $start:expr) => {
        /// # Safety
        /// Called by the program in place of the runtime's profiler marker.
        #[no_mangle]
        pub unsafe extern "C" fn $name() -> c_int {
            let Some(f) = real!($name: sigs::NoArgs).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            profiler($vendor, stringify!($name), f, $start)
        }
    };
}

profiler_shim!(cudaProfilerStart, Vendor::Cuda, true);
profiler_shim!(cudaProfilerStop, Vendor::Cuda, false);
profiler_shim!(cuProfilerStart, Vendor::Cuda, true);
profiler_shim!(cuProfilerStop, Vendor::Cuda, false);
profiler_shim!(hipProfilerStart, Vendor::Hip, true);
profiler_shim!(hipProfilerStop, Vendor::Hip, false);
