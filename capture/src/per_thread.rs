//! The CUDA runtime's per-thread default stream entry points (`_ptsz`, `_ptds`: what a
//! program built with `--default-stream per-thread` calls): each recorded as its base call
//! (`hrr_archive::api::per_thread`), with a stream 0 written as `cudaStreamPerThread`, the
//! stream it means there; the real call gets the program's own arguments. Table rows'
//! aliases are generated from the API table; the launches' are written here.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::per_thread::STREAM_PER_THREAD;
use hrr_archive::api::{semantic, ApiDesc, FfiArg, ParamKind, Vendor};

use crate::ffi::Dim3;
use crate::launch::{launch_by, resolve_cuda_kernel, resolve_cuda_stub, LaunchFn, LaunchShape};
use crate::real::NO_REAL_FUNCTION;

/// A per-thread call's stream as recorded: 0 is this thread's default stream.
pub(crate) fn per_thread(stream: u64) -> u64 {
    if stream == 0 {
        STREAM_PER_THREAD
    } else {
        stream
    }
}

/// The recorded arguments of a per-thread call of `desc`: each stream parameter mapped.
pub fn recorded_args(desc: &ApiDesc, args: &mut [u64]) {
    for (i, p) in desc.params.iter().enumerate() {
        if p.kind == ParamKind::Stream {
            args[i] = per_thread(args[i]);
        }
    }
}

macro_rules! per_thread_shim {
    ($alias:ident, $id:literal; $($p:ident : $t:ty),*) => {
        #[no_mangle]
        #[allow(non_snake_case)]
        /// # Safety
        /// Called by the program in place of the runtime function of the same name.
        pub unsafe extern "C" fn $alias($($p: $t),*) -> c_int {
            // The base row declares the C signature, which the alias shares.
            let Some(f) = real!($alias: unsafe extern "C" fn($($t),*) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let Some(desc) = hrr_archive::api::desc($id) else {
                // SAFETY: the program's own arguments, passed on unchanged.
                return unsafe { f($($p),*) };
            };
            let raw = [$(FfiArg::to_u64($p)),*];
            let mut args = raw;
            recorded_args(desc, &mut args);
            crate::generic::capture_row_passing(desc, Vendor::Cuda, &args, &raw, |a| {
                #[allow(unused_mut, unused_variables)] // a row without parameters
                let mut a = a.iter().copied();
                // SAFETY: the program's own arguments, passed on unchanged (a host
                // function wrapped: capture's trampoline, which calls the program's).
                unsafe { f($(<$t as FfiArg>::from_u64(a.next().unwrap_or(0))),*) }
            })
        }
    };
}

/// The per-thread alias of a table row's CUDA symbol, where the runtime has one (the list
/// `api::per_thread::TABLE_ALIASES` names; `tests/shims_exported.rs` checks both agree).
macro_rules! per_thread_for {
    (cudaMemcpy, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy_ptds, $id; $($a)*); };
    (cudaMemcpyAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpyAsync_ptsz, $id; $($a)*); };
    (cudaMemset, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemset_ptds, $id; $($a)*); };
    (cudaMemsetAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemsetAsync_ptsz, $id; $($a)*); };
    (cudaMemcpy2D, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2D_ptds, $id; $($a)*); };
    (cudaMemcpy2DAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2DAsync_ptsz, $id; $($a)*); };
    (cudaMemset2D, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemset2D_ptds, $id; $($a)*); };
    (cudaMemset2DAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemset2DAsync_ptsz, $id; $($a)*); };
    (cudaMemcpy3D, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy3D_ptds, $id; $($a)*); };
    (cudaMemcpy3DAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy3DAsync_ptsz, $id; $($a)*); };
    (cudaStreamSynchronize, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamSynchronize_ptsz, $id; $($a)*); };
    (cudaStreamQuery, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamQuery_ptsz, $id; $($a)*); };
    (cudaStreamWaitEvent, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamWaitEvent_ptsz, $id; $($a)*); };
    (cudaEventRecord, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaEventRecord_ptsz, $id; $($a)*); };
    (cudaMallocAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMallocAsync_ptsz, $id; $($a)*); };
    (cudaFreeAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaFreeAsync_ptsz, $id; $($a)*); };
    (cudaMallocFromPoolAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMallocFromPoolAsync_ptsz, $id; $($a)*); };
    (cudaStreamBeginCapture, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamBeginCapture_ptsz, $id; $($a)*); };
    (cudaStreamEndCapture, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamEndCapture_ptsz, $id; $($a)*); };
    (cudaStreamIsCapturing, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamIsCapturing_ptsz, $id; $($a)*); };
    (cuStreamGetCaptureInfo_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamGetCaptureInfo_v2_ptsz, $id; $($a)*); };
    (cuMemPrefetchAsync_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemPrefetchAsync_v2_ptsz, $id; $($a)*); };
    (cuStreamAttachMemAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamAttachMemAsync_ptsz, $id; $($a)*); };
    (cuMemAllocAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemAllocAsync_ptsz, $id; $($a)*); };
    (cuMemFreeAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemFreeAsync_ptsz, $id; $($a)*); };
    (cuMemAllocFromPoolAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemAllocFromPoolAsync_ptsz, $id; $($a)*); };
    (cuMemcpyHtoD_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyHtoD_v2_ptds, $id; $($a)*); };
    (cuMemcpyDtoH_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyDtoH_v2_ptds, $id; $($a)*); };
    (cuMemcpyDtoD_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyDtoD_v2_ptds, $id; $($a)*); };
    (cuMemcpyHtoDAsync_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyHtoDAsync_v2_ptsz, $id; $($a)*); };
    (cuMemcpyDtoHAsync_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyDtoHAsync_v2_ptsz, $id; $($a)*); };
    (cuMemcpyDtoDAsync_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyDtoDAsync_v2_ptsz, $id; $($a)*); };
    (cuMemcpy2D_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpy2D_v2_ptds, $id; $($a)*); };
    (cuMemcpy2DAsync_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpy2DAsync_v2_ptsz, $id; $($a)*); };
    (cuMemcpy3D_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpy3D_v2_ptds, $id; $($a)*); };
    (cuMemcpy3DAsync_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpy3DAsync_v2_ptsz, $id; $($a)*); };
    (cuMemcpy, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpy_ptds, $id; $($a)*); };
    (cuMemcpyAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyAsync_ptsz, $id; $($a)*); };
    (cuMemcpy2DUnaligned_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpy2DUnaligned_v2_ptds, $id; $($a)*); };
    (cuMemcpyPeer, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyPeer_ptds, $id; $($a)*); };
    (cuMemcpyPeerAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemcpyPeerAsync_ptsz, $id; $($a)*); };
    (cuMemsetD8_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD8_v2_ptds, $id; $($a)*); };
    (cuMemsetD16_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD16_v2_ptds, $id; $($a)*); };
    (cuMemsetD32_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD32_v2_ptds, $id; $($a)*); };
    (cuMemsetD8Async, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD8Async_ptsz, $id; $($a)*); };
    (cuMemsetD16Async, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD16Async_ptsz, $id; $($a)*); };
    (cuMemsetD32Async, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD32Async_ptsz, $id; $($a)*); };
    (cuMemsetD2D8_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD2D8_v2_ptds, $id; $($a)*); };
    (cuMemsetD2D16_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD2D16_v2_ptds, $id; $($a)*); };
    (cuMemsetD2D32_v2, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD2D32_v2_ptds, $id; $($a)*); };
    (cuMemsetD2D8Async, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD2D8Async_ptsz, $id; $($a)*); };
    (cuMemsetD2D16Async, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD2D16Async_ptsz, $id; $($a)*); };
    (cuMemsetD2D32Async, $id:literal; $($a:tt)*) => { per_thread_shim!(cuMemsetD2D32Async_ptsz, $id; $($a)*); };
    (cuStreamSynchronize, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamSynchronize_ptsz, $id; $($a)*); };
    (cuStreamWaitEvent, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamWaitEvent_ptsz, $id; $($a)*); };
    (cuStreamQuery, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamQuery_ptsz, $id; $($a)*); };
    (cuEventRecord, $id:literal; $($a:tt)*) => { per_thread_shim!(cuEventRecord_ptsz, $id; $($a)*); };
    (cudaMemPrefetchAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemPrefetchAsync_ptsz, $id; $($a)*); };
    (cudaMemcpy2DArrayToArray, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2DArrayToArray_ptds, $id; $($a)*); };
    (cudaMemcpy2DFromArrayAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2DFromArrayAsync_ptsz, $id; $($a)*); };
    (cudaMemcpy2DFromArray, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2DFromArray_ptds, $id; $($a)*); };
    (cudaMemcpy2DToArrayAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2DToArrayAsync_ptsz, $id; $($a)*); };
    (cudaMemcpy2DToArray, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpy2DToArray_ptds, $id; $($a)*); };
    (cudaMemcpyFromArray, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpyFromArray_ptds, $id; $($a)*); };
    (cudaMemcpyToArray, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpyToArray_ptds, $id; $($a)*); };
    (cudaStreamAttachMemAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamAttachMemAsync_ptsz, $id; $($a)*); };
    (cudaStreamBeginCaptureToGraph, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamBeginCaptureToGraph_ptsz, $id; $($a)*); };
    (cudaStreamGetCaptureInfo, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamGetCaptureInfo_ptsz, $id; $($a)*); };
    (cudaStreamUpdateCaptureDependencies, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamUpdateCaptureDependencies_ptsz, $id; $($a)*); };
    (cudaLaunchHostFunc, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaLaunchHostFunc_ptsz, $id; $($a)*); };
    (cudaStreamAddCallback, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamAddCallback_ptsz, $id; $($a)*); };
    (cudaStreamCopyAttributes, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamCopyAttributes_ptsz, $id; $($a)*); };
    (cudaStreamSetAttribute, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaStreamSetAttribute_ptsz, $id; $($a)*); };
    (cudaGraphUpload, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaGraphUpload_ptsz, $id; $($a)*); };
    (cuStreamCopyAttributes, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamCopyAttributes_ptsz, $id; $($a)*); };
    (cuStreamSetAttribute, $id:literal; $($a:tt)*) => { per_thread_shim!(cuStreamSetAttribute_ptsz, $id; $($a)*); };
    (cuGraphUpload, $id:literal; $($a:tt)*) => { per_thread_shim!(cuGraphUpload_ptsz, $id; $($a)*); };
    (cudaMemcpyFromArrayAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpyFromArrayAsync_ptsz, $id; $($a)*); };
    (cudaMemcpyToArrayAsync, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpyToArrayAsync_ptsz, $id; $($a)*); };
    (cudaMemcpyArrayToArray, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaMemcpyArrayToArray_ptds, $id; $($a)*); };
    (cudaEventRecordWithFlags, $id:literal; $($a:tt)*) => { per_thread_shim!(cudaEventRecordWithFlags_ptsz, $id; $($a)*); };
    (cuEventRecordWithFlags, $id:literal; $($a:tt)*) => { per_thread_shim!(cuEventRecordWithFlags_ptsz, $id; $($a)*); };
    ($other:ident, $id:literal; $($a:tt)*) => {};
}

macro_rules! define_per_thread {
    ($( ($id:literal, $name:ident, $cuda:ident, $hip:ident, $ret:ident; $( $p:ident : $t:ty => $k:ident $( ( $($ka:ident),+ ) )? ),* ) ),* $(,)?) => {
        $( per_thread_for!($cuda, $id; $($p: $t),*); )*
    };
}

hrr_archive::hrr_api_table!(define_per_thread);

/// A per-thread launch by stub or kernel handle: recorded as its base launch.
///
/// # Safety
/// The program's own arguments for the real function `f`.
#[allow(clippy::too_many_arguments)]
unsafe fn launch(
    f: LaunchFn,
    id: u16,
    api: &str,
    first: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
    resolve: fn(&crate::registry::KernelRegistry, u64) -> crate::launch::Resolved,
) -> c_int {
    let shape = LaunchShape {
        grid,
        block,
        shmem,
        stream: per_thread(stream as u64),
    };
    // SAFETY: the program's own arguments, for the runtime's function.
    let call = || unsafe { f(first, grid, block, args, shmem, stream) };
    // SAFETY: `args` are the argument pointers `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            Vendor::Cuda,
            id,
            api,
            first as u64,
            shape,
            args,
            resolve,
            &|_| {},
        )
    }
}

/// # Safety
/// Called by the program in place of the runtime's function.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel_ptsz(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
) -> c_int {
    let Some(f) = real!(cudaLaunchKernel_ptsz: LaunchFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    unsafe {
        launch(
            f,
            semantic::LAUNCH_KERNEL,
            "cudaLaunchKernel_ptsz",
            func,
            grid,
            block,
            args,
            shmem,
            stream,
            resolve_cuda_stub,
        )
    }
}

/// # Safety
/// Called by nvcc's launch stubs (CUDA 12.4+, per-thread default stream) in place of the
/// runtime's function.
#[no_mangle]
pub unsafe extern "C" fn __cudaLaunchKernel_ptsz(
    kernel: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
) -> c_int {
    let Some(f) = real!(__cudaLaunchKernel_ptsz: LaunchFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments.
    unsafe {
        launch(
            f,
            semantic::LAUNCH_KERNEL_BY_HANDLE,
            "__cudaLaunchKernel_ptsz",
            kernel,
            grid,
            block,
            args,
            shmem,
            stream,
            resolve_cuda_kernel,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_zero_is_the_threads_default_stream_and_others_stay() {
        let desc = hrr_archive::api::desc(hrr_archive::api::id::MemcpyAsync).unwrap();
        let mut args = [1, 2, 3, 1, 0];
        recorded_args(desc, &mut args);
        assert_eq!(args, [1, 2, 3, 1, STREAM_PER_THREAD]);
        let mut args = [1, 2, 3, 1, 0x5e];
        recorded_args(desc, &mut args);
        assert_eq!(args[4], 0x5e);
    }
}
