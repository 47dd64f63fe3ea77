//! 3D allocations and peer copies, recorded as the rows they equal. `cudaMalloc3D` /
//! `hipMalloc3D` allocate `pitch × height × depth` bytes with the pitch `MallocPitch` gives
//! for the same width: recorded as `MallocPitch` of width by height × depth (the pitched
//! pointer's first two words are its address and pitch, the row's two outputs; replay
//! requires the pitch it gets to be the captured one). `cudaMemcpy3DPeer[Async]` within
//! one device is a device-to-device 3D copy of the same box: recorded as `Memcpy3D[Async]`
//! with the peer struct's sides and kind `cudaMemcpyDeviceToDevice`; the driver's
//! `cuMemcpy3DPeer[Async]` (what nvcc's static runtime makes of them) within one context
//! as `cuMemcpy3D[Async]_v2`, whose struct is the peer one with the two context words
//! reserved (zero). A peer copy between two devices or contexts is recorded unreplayable
//! by name (replay runs on one device).

use std::os::raw::{c_int, c_void};

use hrr_archive::api::{self, memcpy3d, Vendor};

use crate::generic::capture_row;
use crate::real::NO_REAL_FUNCTION;

/// `cudaExtent` / `hipExtent`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// Layout of `cudaMemcpy3DPeerParms` (168 bytes on x86-64): the 3D struct's sides with a
/// device after each, then the extent.
mod peer {
    pub const SRC: usize = 0; // srcArray, srcPos, srcPtr: 64 bytes, as cudaMemcpy3DParms's
    pub const SRC_DEVICE: usize = 64;
    pub const DST: usize = 72; // dstArray, dstPos, dstPtr
    pub const DST_DEVICE: usize = 136;
    pub const EXTENT: usize = 144;
    pub const SIZE: usize = 168;
}

/// Offsets of `CUDA_MEMCPY3D_PEER`'s context words, which are `CUDA_MEMCPY3D`'s reserved
/// ones (the two structs are otherwise the same 200 bytes).
mod drv_peer {
    pub const SRC_CONTEXT: usize = 64;
    pub const DST_CONTEXT: usize = 152;
    pub const SIZE: usize = 200;
}

/// `cudaMemcpyDeviceToDevice`.
const DEVICE_TO_DEVICE: u32 = 3;

const BETWEEN_DEVICES: &str = "copies a 3D box between two devices or contexts, which replay (on one device) does not re-create";

fn malloc3d(vendor: Vendor, out: *mut c_void, e: Extent, call: impl FnOnce() -> c_int) -> c_int {
    let Some(desc) = api::desc(api::id::MallocPitch) else {
        return call();
    };
    // The pitch is the pitched pointer's second word; a null out stays null (the call fails).
    let pitch = if out.is_null() { 0 } else { out as u64 + 8 };
    let rows = e.height.saturating_mul(e.depth) as u64;
    capture_row(
        desc,
        vendor,
        &[out as u64, pitch, e.width as u64, rows],
        call,
    )
}

/// The `cudaMemcpy3DParms` a peer copy within one device is: its sides, its extent, kind
/// device to device. None: a null struct, or two devices.
///
/// # Safety
/// `p` is null or points at a `cudaMemcpy3DPeerParms` the program passed.
unsafe fn as_device_copy(p: *const u8) -> Option<[u8; memcpy3d::SIZE]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's struct, 168 bytes, read once.
    let raw = unsafe { std::slice::from_raw_parts(p, peer::SIZE) };
    let device = |at: usize| i32::from_le_bytes(raw[at..at + 4].try_into().unwrap_or([0; 4]));
    if device(peer::SRC_DEVICE) != device(peer::DST_DEVICE) {
        return None;
    }
    let mut parms = [0u8; memcpy3d::SIZE];
    parms[memcpy3d::SRC_ARRAY..memcpy3d::DST_ARRAY]
        .copy_from_slice(&raw[peer::SRC..peer::SRC + 64]);
    parms[memcpy3d::DST_ARRAY..memcpy3d::EXTENT].copy_from_slice(&raw[peer::DST..peer::DST + 64]);
    parms[memcpy3d::EXTENT..memcpy3d::KIND].copy_from_slice(&raw[peer::EXTENT..peer::EXTENT + 24]);
    parms[memcpy3d::KIND..memcpy3d::KIND + 4].copy_from_slice(&DEVICE_TO_DEVICE.to_le_bytes());
    Some(parms)
}

/// The `CUDA_MEMCPY3D` a driver peer copy within one context is: the same struct with
/// the context words zero. None: a null struct, or two contexts.
///
/// # Safety
/// `p` is null or points at a `CUDA_MEMCPY3D_PEER` the program passed.
unsafe fn as_context_copy(p: *const u8) -> Option<Vec<u8>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's struct, 200 bytes, read once.
    let mut raw = unsafe { std::slice::from_raw_parts(p, drv_peer::SIZE) }.to_vec();
    let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap_or([0; 8]));
    if word(drv_peer::SRC_CONTEXT) != word(drv_peer::DST_CONTEXT) {
        return None;
    }
    for at in [drv_peer::SRC_CONTEXT, drv_peer::DST_CONTEXT] {
        raw[at..at + 8].fill(0);
    }
    Some(raw)
}

/// Records a peer copy as `row` (its first argument `same`, the equivalent struct, then
/// `rest`), or unreplayable between two devices (`same` None); the real call is made once.
fn peer_copy(
    api_name: &'static str,
    same: Option<&[u8]>,
    p: *const c_void,
    row: u16,
    rest: &[u64],
    call: impl FnOnce() -> c_int,
) -> c_int {
    match (same, api::desc(row)) {
        (Some(parms), Some(desc)) => {
            let mut args = vec![parms.as_ptr() as u64];
            args.extend_from_slice(rest);
            capture_row(desc, Vendor::Cuda, &args, call)
        }
        _ => {
            let ret = call();
            let mut raw = vec![p as usize];
            raw.extend(rest.iter().map(|&a| a as usize));
            crate::unreplayable::record(Vendor::Cuda, api_name, BETWEEN_DEVICES, ret, &raw);
            ret
        }
    }
}

macro_rules! malloc3d_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(out: *mut c_void, extent: Extent) -> c_int {
            let Some(f) = real!($name: unsafe extern "C" fn(*mut c_void, Extent) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            malloc3d($vendor, out, extent, || unsafe { f(out, extent) })
        }
    };
}

malloc3d_shim!(cudaMalloc3D, Vendor::Cuda);
malloc3d_shim!(hipMalloc3D, Vendor::Hip);

/// The peer-copy shims: a synchronous and an asynchronous form per API, each reading the
/// program's struct through `$same` into the equivalent one, recorded as `$row`.
macro_rules! peer_shims {
    ($sync:ident, $row:expr, $async_:ident, $async_row:expr, $same:ident) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own argument.
        #[no_mangle]
        pub unsafe extern "C" fn $sync(p: *const c_void) -> c_int {
            let Some(f) = real!($sync: unsafe extern "C" fn(*const c_void) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's struct (or null), as the runtime reads it.
            let same = unsafe { $same(p.cast()) };
            // SAFETY: the program's own argument, passed on unchanged.
            let call = || unsafe { f(p) };
            peer_copy(stringify!($sync), same.as_ref().map(|a| &a[..]), p, $row, &[], call)
        }

        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $async_(p: *const c_void, stream: *mut c_void) -> c_int {
            let Some(f) = real!($async_: unsafe extern "C" fn(*const c_void, *mut c_void) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's struct (or null), as the runtime reads it.
            let same = unsafe { $same(p.cast()) };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(p, stream) };
            let rest = [stream as u64];
            peer_copy(stringify!($async_), same.as_ref().map(|a| &a[..]), p, $async_row, &rest, call)
        }
    };
}

peer_shims!(
    cudaMemcpy3DPeer,
    api::id::Memcpy3D,
    cudaMemcpy3DPeerAsync,
    api::id::Memcpy3DAsync,
    as_device_copy
);
peer_shims!(
    cuMemcpy3DPeer,
    api::id::DrvMemcpy3D,
    cuMemcpy3DPeerAsync,
    api::id::DrvMemcpy3DAsync,
    as_context_copy
);
