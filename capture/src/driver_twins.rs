//! The driver functions recorded as their runtime twins (`api::driver::RUNTIME_TWINS`):
//! nvcc's static runtime captures streams, builds and instantiates graphs through
//! `cuStreamBeginCapture_v2`, `cuGraphCreate`, `cuGraphAddEmptyNode`, ...,
//! whose parameters and meaning are the runtime rows'. Each shim records the call as
//! that row (stream capture's bookkeeping in `graph_io` is keyed by row) and makes the
//! real driver call with the program's own arguments. The C types come from the runtime
//! row in the API table.

use std::os::raw::c_int;

use hrr_archive::api::{FfiArg, Vendor};

use crate::real::NO_REAL_FUNCTION;

macro_rules! twin_shim {
    ($twin:ident, $id:literal; $($p:ident : $t:ty),*) => {
        #[no_mangle]
        #[allow(non_snake_case)]
        /// # Safety
        /// Called by the program in place of the driver function of the same name.
        pub unsafe extern "C" fn $twin($($p: $t),*) -> c_int {
            let Some(f) = real!($twin: unsafe extern "C" fn($($t),*) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let Some(desc) = hrr_archive::api::desc($id) else {
                // SAFETY: the program's own arguments, passed on unchanged.
                return unsafe { f($($p),*) };
            };
            let args = [$(FfiArg::to_u64($p)),*];
            crate::generic::capture_row_passing(desc, Vendor::Cuda, &args, &args, |a| {
                #[allow(unused_mut, unused_variables)] // a row without parameters
                let mut a = a.iter().copied();
                // SAFETY: the program's own arguments, passed on unchanged (a host
                // function wrapped: capture's trampoline, which calls the program's).
                unsafe { f($(<$t as FfiArg>::from_u64(a.next().unwrap_or(0))),*) }
            })
        }
    };
}

/// The driver twin of a runtime row's CUDA symbol (the list `RUNTIME_TWINS` names;
/// `tests/shims_exported.rs` checks the library exports each).
macro_rules! twin_for {
    (cudaStreamBeginCapture, $id:literal; $($a:tt)*) => { twin_shim!(cuStreamBeginCapture_v2, $id; $($a)*); };
    (cudaStreamEndCapture, $id:literal; $($a:tt)*) => { twin_shim!(cuStreamEndCapture, $id; $($a)*); };
    (cudaStreamIsCapturing, $id:literal; $($a:tt)*) => { twin_shim!(cuStreamIsCapturing, $id; $($a)*); };
    (cudaGraphInstantiateWithFlags, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphInstantiateWithFlags, $id; $($a)*); };
    (cudaGraphExecDestroy, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphExecDestroy, $id; $($a)*); };
    (cudaGraphDestroy, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphDestroy, $id; $($a)*); };
    (cudaGraphCreate, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphCreate, $id; $($a)*); };
    (cudaGraphAddEmptyNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddEmptyNode, $id; $($a)*); };
    (cudaGraphAddChildGraphNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddChildGraphNode, $id; $($a)*); };
    (cudaGraphAddEventRecordNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddEventRecordNode, $id; $($a)*); };
    (cudaGraphAddEventWaitNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddEventWaitNode, $id; $($a)*); };
    (cudaGraphClone, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphClone, $id; $($a)*); };
    (cudaGraphAddMemAllocNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddMemAllocNode, $id; $($a)*); };
    (cudaGraphAddMemFreeNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddMemFreeNode, $id; $($a)*); };
    (cudaGraphMemsetNodeSetParams, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphMemsetNodeSetParams, $id; $($a)*); };
    (cudaGraphExecUpdate, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphExecUpdate_v2, $id; $($a)*); };
    (cudaGraphInstantiateWithParams, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphInstantiateWithParams, $id; $($a)*); };
    (cudaGraphAddDependencies, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddDependencies_v2, $id; $($a)*); };
    (cudaGraphRemoveDependencies, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphRemoveDependencies_v2, $id; $($a)*); };
    (cudaStreamBeginCaptureToGraph, $id:literal; $($a:tt)*) => { twin_shim!(cuStreamBeginCaptureToGraph, $id; $($a)*); };
    (cudaStreamUpdateCaptureDependencies, $id:literal; $($a:tt)*) => { twin_shim!(cuStreamUpdateCaptureDependencies_v2, $id; $($a)*); };
    (cudaGraphExecChildGraphNodeSetParams, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphExecChildGraphNodeSetParams, $id; $($a)*); };
    (cudaGraphChildGraphNodeGetGraph, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphChildGraphNodeGetGraph, $id; $($a)*); };
    (cudaGraphNodeGetContainingGraph, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphNodeGetContainingGraph, $id; $($a)*); };
    (cudaLaunchHostFunc, $id:literal; $($a:tt)*) => { twin_shim!(cuLaunchHostFunc, $id; $($a)*); };
    (cudaLaunchHostFunc_v2, $id:literal; $($a:tt)*) => { twin_shim!(cuLaunchHostFunc_v2, $id; $($a)*); };
    (cudaStreamAddCallback, $id:literal; $($a:tt)*) => { twin_shim!(cuStreamAddCallback, $id; $($a)*); };
    (cudaGraphAddHostNode, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphAddHostNode, $id; $($a)*); };
    (cudaGraphHostNodeSetParams, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphHostNodeSetParams, $id; $($a)*); };
    (cudaGraphExecHostNodeSetParams, $id:literal; $($a:tt)*) => { twin_shim!(cuGraphExecHostNodeSetParams, $id; $($a)*); };
    (cudaArrayGetPlane, $id:literal; $($a:tt)*) => { twin_shim!(cuArrayGetPlane, $id; $($a)*); };
    ($other:ident, $id:literal; $($a:tt)*) => {};
}

macro_rules! define_twins {
    ($( ($id:literal, $name:ident, $cuda:ident, $hip:ident, $ret:ident; $( $p:ident : $t:ty => $k:ident $( ( $($ka:ident),+ ) )? ),* ) ),* $(,)?) => {
        $( twin_for!($cuda, $id; $($p: $t),*); )*
    };
}

hrr_archive::hrr_api_table!(define_twins);
