//! The driver's graph-building functions whose C types differ from their runtime twins'
//! (nvcc's static runtime builds explicit graphs through them): a trailing `CUcontext`
//! the runtime's function lacks (`cuGraphAddMemsetNode`, `cuGraphExecMemsetNodeSetParams`:
//! `CUDA_MEMSET_NODE_PARAMS` is `cudaMemsetParams` byte for byte), or the driver's copy
//! struct `CUDA_MEMCPY3D` where the runtime takes `cudaMemcpy3DParms`
//! (`cuGraphAddMemcpyNode`, `cuGraphMemcpyNodeSetParams`, `cuGraphExecMemcpyNodeSetParams`).
//!
//! Each records the runtime row (graph I/O's bookkeeping is keyed by row, and replay calls
//! the runtime's function) and makes the real driver call with the program's own
//! arguments. A copy struct is read into the runtime's (`api::drv_memcpy`); a node copying
//! to or from an array is recorded unreplayable, by name: the driver counts an array
//! position in bytes and the runtime in elements, which the struct alone cannot convert.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::drv_memcpy::Layout;
use hrr_archive::api::memcpy3d::Parms;
use hrr_archive::api::{id, Vendor};

use crate::ffi::{bytes_at, read_at};
use crate::real::NO_REAL_FUNCTION;
use crate::unreplayable;

pub(crate) const ARRAY_NODE: &str = "adds or sets a graph copy node with an array side through CUDA_MEMCPY3D, which capture does not convert to the runtime's struct (positions in bytes, not elements): replay could not rebuild the node";

/// Records `call` as runtime row `row` with `args`.
pub(crate) fn record_as(row: u16, args: &[u64], call: impl FnOnce() -> c_int) -> c_int {
    match hrr_archive::api::desc(row) {
        Some(desc) => crate::generic::capture_row(desc, Vendor::Cuda, args, call),
        None => call(),
    }
}

/// The runtime's `cudaMemcpy3DParms` for a `CUDA_MEMCPY3D` at `p`: None for a null
/// pointer or a side in an array. A single row (height and depth 1) gets a pitch of at
/// least its width and a height of at least 1, which the runtime checks and the driver's
/// one-dimensional structs (what `cudaGraphAddMemcpyNode1D` becomes) leave 0.
///
/// # Safety
/// `p` must be null or point at a readable `CUDA_MEMCPY3D`.
pub(crate) unsafe fn runtime_parms(
    p: *const c_void,
) -> Option<[u8; hrr_archive::api::memcpy3d::SIZE]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let raw = unsafe { bytes_at(p as *const u8, Layout::Memcpy3D.size()) };
    let parms = Layout::Memcpy3D.decode(raw)?;
    to_runtime(parms)
}

/// As [`runtime_parms`], from the decoded struct (pure).
fn to_runtime(mut parms: Parms) -> Option<[u8; hrr_archive::api::memcpy3d::SIZE]> {
    if parms.src_array != 0 || parms.dst_array != 0 {
        return None;
    }
    if parms.extent[1] <= 1 && parms.extent[2] <= 1 {
        for s in [&mut parms.src, &mut parms.dst] {
            s.pitch = s.pitch.max(parms.extent[0]);
            s.ysize = s.ysize.max(1);
        }
    }
    Some(parms.encode())
}

type AddMemsetFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    *const *mut c_void,
    usize,
    *const c_void,
    *mut c_void,
) -> c_int;

/// `cuGraphAddMemsetNode(node*, graph, deps, count, const CUDA_MEMSET_NODE_PARAMS*,
/// CUcontext)`: recorded as `cudaGraphAddMemsetNode`.
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemsetNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    count: usize,
    params: *const c_void,
    ctx: *mut c_void,
) -> c_int {
    let Some(f) = real!(cuGraphAddMemsetNode: AddMemsetFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let args = [
        node as u64,
        graph as u64,
        deps as u64,
        count as u64,
        params as u64,
    ];
    // SAFETY: the program's own arguments, passed on unchanged.
    record_as(id::GraphAddMemsetNode, &args, || unsafe {
        f(node, graph, deps, count, params, ctx)
    })
}

/// `cuGraphExecMemsetNodeSetParams(exec, node, const CUDA_MEMSET_NODE_PARAMS*,
/// CUcontext)`: recorded as `cudaGraphExecMemsetNodeSetParams`.
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuGraphExecMemsetNodeSetParams(
    exec: *mut c_void,
    node: *mut c_void,
    params: *const c_void,
    ctx: *mut c_void,
) -> c_int {
    type F = unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void, *mut c_void) -> c_int;
    let Some(f) = real!(cuGraphExecMemsetNodeSetParams: F).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let args = [exec as u64, node as u64, params as u64];
    // SAFETY: the program's own arguments, passed on unchanged.
    record_as(id::GraphExecMemsetNodeSetParams, &args, || unsafe {
        f(exec, node, params, ctx)
    })
}

/// `cuGraphAddMemcpyNode(node*, graph, deps, count, const CUDA_MEMCPY3D*, CUcontext)`:
/// recorded as `cudaGraphAddMemcpyNode` with the struct read into the runtime's.
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemcpyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    count: usize,
    copy: *const c_void,
    ctx: *mut c_void,
) -> c_int {
    let Some(f) = real!(cuGraphAddMemcpyNode: AddMemsetFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments, passed on unchanged.
    let call = || unsafe { f(node, graph, deps, count, copy, ctx) };
    // SAFETY: the program's struct, which the driver is about to read.
    match unsafe { runtime_parms(copy) } {
        Some(rt) => {
            let args = [
                node as u64,
                graph as u64,
                deps as u64,
                count as u64,
                rt.as_ptr() as u64,
            ];
            record_as(id::GraphAddMemcpyNode, &args, call)
        }
        None if copy.is_null() => call(),
        None => {
            let ret = call();
            // SAFETY: on success the driver stored the node at `node`.
            let out = match ret == 0 && !node.is_null() {
                true => unsafe { read_at::<u64>(node as u64) },
                false => 0,
            };
            let raw = [out as usize, graph as usize];
            unreplayable::record(Vendor::Cuda, "cuGraphAddMemcpyNode", ARRAY_NODE, ret, &raw);
            ret
        }
    }
}

/// `cuGraphMemcpyNodeSetParams(node, const CUDA_MEMCPY3D*)`: recorded as
/// `cudaGraphMemcpyNodeSetParams`.
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuGraphMemcpyNodeSetParams(
    node: *mut c_void,
    copy: *const c_void,
) -> c_int {
    type F = unsafe extern "C" fn(*mut c_void, *const c_void) -> c_int;
    let Some(f) = real!(cuGraphMemcpyNodeSetParams: F).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments, passed on unchanged.
    let call = || unsafe { f(node, copy) };
    // SAFETY: the program's struct, which the driver is about to read.
    match unsafe { runtime_parms(copy) } {
        Some(rt) => record_as(
            id::GraphMemcpyNodeSetParams,
            &[node as u64, rt.as_ptr() as u64],
            call,
        ),
        None if copy.is_null() => call(),
        None => {
            let ret = call();
            let raw = [node as usize];
            let api = "cuGraphMemcpyNodeSetParams";
            unreplayable::record(Vendor::Cuda, api, ARRAY_NODE, ret, &raw);
            ret
        }
    }
}

/// `cuGraphExecMemcpyNodeSetParams(exec, node, const CUDA_MEMCPY3D*, CUcontext)`:
/// recorded as `cudaGraphExecMemcpyNodeSetParams`.
///
/// # Safety
/// Called by the program in place of the driver's function.
#[no_mangle]
pub unsafe extern "C" fn cuGraphExecMemcpyNodeSetParams(
    exec: *mut c_void,
    node: *mut c_void,
    copy: *const c_void,
    ctx: *mut c_void,
) -> c_int {
    type F = unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void, *mut c_void) -> c_int;
    let Some(f) = real!(cuGraphExecMemcpyNodeSetParams: F).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments, passed on unchanged.
    let call = || unsafe { f(exec, node, copy, ctx) };
    // SAFETY: the program's struct, which the driver is about to read.
    match unsafe { runtime_parms(copy) } {
        Some(rt) => record_as(
            id::GraphExecMemcpyNodeSetParams,
            &[exec as u64, node as u64, rt.as_ptr() as u64],
            call,
        ),
        None if copy.is_null() => call(),
        None => {
            let ret = call();
            let raw = [exec as usize, node as usize];
            let api = "cuGraphExecMemcpyNodeSetParams";
            unreplayable::record(Vendor::Cuda, api, ARRAY_NODE, ret, &raw);
            ret
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::api::memcpy3d::Side;

    #[test]
    fn a_single_row_gets_a_pitch_and_height_the_runtime_accepts() {
        let side = |ptr| Side {
            ptr,
            ..Side::default()
        };
        let p = Parms {
            src: side(0x1000),
            dst: side(0x2000),
            extent: [256, 1, 1],
            kind: 1,
            ..Parms::default()
        };
        let rt = Parms::decode(&to_runtime(p).unwrap());
        assert_eq!((rt.src.pitch, rt.src.ysize), (256, 1));
        assert_eq!((rt.dst.pitch, rt.dst.ysize, rt.dst.ptr), (256, 1, 0x2000));
        // Several rows keep the program's pitch: the driver checked it.
        let p2 = Parms {
            extent: [256, 4, 1],
            src: Side {
                pitch: 512,
                ysize: 4,
                ..side(0x1000)
            },
            ..p
        };
        assert_eq!(Parms::decode(&to_runtime(p2).unwrap()).src.pitch, 512);
        // An array side is not converted.
        assert!(to_runtime(Parms { dst_array: 7, ..p }).is_none());
    }
}
