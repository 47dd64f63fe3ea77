//! Graph kernel nodes: `cudaGraphAddKernelNode` / `hipGraphAddKernelNode` and the
//! kernel-node parameter updates (`cuda/hipGraph[Exec]KernelNodeSetParams`), and the
//! driver's forms (`cuGraphAddKernelNode_v2`, `cuGraph[Exec]KernelNodeSetParams_v2`,
//! what nvcc's static runtime calls), the kernel named by its `CUfunction` or `CUkernel`.
//!
//! Each is one record: the launch record a launch of the same kernel writes (kernel named
//! as launches name it, grid, block, shared memory, arguments by the kernel's parameter
//! layout with pointer words marked, pinned snapshots) and `fid::KERNEL_NODE`: the graph,
//! the dependencies and the node (an add), the node (an update), the executable graph and
//! the node (an exec update). The pinned allocations the arguments point into join the
//! graph's host side (`graph_io`), snapshotted at each graph launch. A node whose
//! arguments come through `extra` is recorded as unreplayable, by name.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};

use hrr_archive::api::kernel_node::{driver_v2, params_size, NodeParams};
use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::sync::{ForkLock, Mutex};

use crate::ffi::{bytes_at, read_at, Dim3};
use crate::graph_io;
use crate::launch::{
    kernel_info_cached, record_launch_body, resolve_cuda_function, resolve_cuda_stub,
    resolve_hip_stub, LaunchShape,
};
use crate::real::NO_REAL_FUNCTION;
use crate::registry::KernelRegistry;
use crate::state::{self, guarded};
use crate::unreplayable;

const EXTRA: &str = "passes a kernel node's arguments through `extra`, which capture does not decode: replay could not rebuild the node";

/// Kernel nodes of explicit graphs, by node handle: the graph each was added to (an
/// update's pinned memory goes to that graph). A leaf lock.
static NODE_GRAPH: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

/// Which parameter struct a call passes, and so how its kernel is named.
#[derive(Clone, Copy)]
pub(crate) enum Form {
    /// The runtime's (`cudaKernelNodeParams`, `hipKernelNodeParams`): a host stub.
    Runtime,
    /// The runtime's `cudaKernelNodeParamsV2` naming its kernel by a `cudaKernel_t` or
    /// `cudaFunction_t` (`functionType`; `graph_nodes`): the driver's handles.
    RuntimeByHandle,
    /// The driver's `CUDA_KERNEL_NODE_PARAMS` v2 (what nvcc's static runtime passes): a
    /// `CUkernel` when `kern` is set, else a `CUfunction`.
    Driver,
}

/// Which call a record is for.
#[derive(Clone, Copy)]
pub(crate) enum Call {
    Add { graph: u64, deps: u64, count: usize },
    Set { node: u64 },
    ExecSet { exec: u64 },
}

impl Call {
    fn kind(self) -> u16 {
        match self {
            Call::Add { .. } => semantic::GRAPH_KERNEL_NODE,
            Call::Set { .. } => semantic::GRAPH_KERNEL_NODE_SET_PARAMS,
            Call::ExecSet { .. } => semantic::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS,
        }
    }
}

fn dim3(v: [u32; 3]) -> Dim3 {
    Dim3 {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

fn resolver(vendor: Vendor) -> fn(&KernelRegistry, u64) -> crate::launch::Resolved {
    match vendor {
        Vendor::Cuda => resolve_cuda_stub,
        Vendor::Hip => resolve_hip_stub,
    }
}

/// Records one kernel-node call after the real call returned `ret`; `node` is the node
/// handle (an add's output, read after the call).
///
/// # Safety
/// `params` must be the program's parameter struct of `vendor`, as the runtime has just
/// read it (its `kernelParams` one pointer per kernel parameter); for an add, `deps` must
/// hold `count` node handles when not null.
pub(crate) unsafe fn record(
    vendor: Vendor,
    form: Form,
    api: &'static str,
    call: Call,
    node: u64,
    params: *const c_void,
    ret: c_int,
) {
    if params.is_null() {
        // The runtime refused the call; nothing to rebuild.
        unreplayable::record(vendor, api, "passed no kernel node parameters", ret, &[]);
        return;
    }
    let size = match form {
        Form::Driver => driver_v2::SIZE,
        Form::Runtime | Form::RuntimeByHandle => params_size(vendor),
    };
    // SAFETY: the caller's contract: the struct the runtime has just read.
    let raw = unsafe { bytes_at(params as *const u8, size) };
    let Some(mut np) = NodeParams::decode(vendor, raw) else {
        return;
    };
    if let Form::Driver = form {
        np.func = driver_v2::kernel_handle(raw).unwrap_or(np.func);
    }
    if np.extra != 0 {
        // As the unreplayable record of any node: field 2 names an add's graph, which
        // replay then refuses to instantiate.
        let raw: Vec<usize> = match call {
            Call::Add { graph, .. } => vec![node as usize, graph as usize],
            Call::Set { .. } => vec![node as usize],
            Call::ExecSet { exec } => vec![exec as usize, node as usize],
        };
        unreplayable::record(vendor, api, EXTRA, ret, &raw);
        return;
    }
    let Some((cap, _g)) = state::enter(vendor) else {
        return;
    };
    guarded(api, || {
        let kind = call.kind();
        let info = match form {
            Form::Runtime => kernel_info_cached(&cap.kernels, kind, np.func, resolver(vendor)),
            Form::Driver | Form::RuntimeByHandle => {
                kernel_info_cached(&cap.kernels, kind, np.func, resolve_cuda_function)
            }
        };
        let shape = LaunchShape {
            grid: dim3(np.grid),
            block: dim3(np.block),
            shmem: np.shmem as usize,
            stream: 0,
        };
        let deps: Vec<u64> = match call {
            // SAFETY: the caller's contract: `count` handles at `deps`.
            Call::Add { deps, count, .. } if deps != 0 && count > 0 => unsafe {
                bytes_at(deps as *const u8, count * 8)
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                    .collect()
            },
            _ => Vec::new(),
        };
        let extra = |p: &mut PayloadWriter| {
            p.nested_with(fid::KERNEL_NODE, |n| {
                match call {
                    Call::Add { graph, .. } => {
                        n.handle(fid::KN_GRAPH, graph);
                        n.u64_array(fid::KN_DEPS, &deps);
                    }
                    Call::Set { .. } => {}
                    Call::ExecSet { exec, .. } => {
                        n.handle(fid::KN_EXEC, exec);
                    }
                }
                n.handle(fid::KN_NODE, node);
            });
        };
        let args = np.kernel_params as usize as *mut *mut c_void;
        // SAFETY: `kernelParams` holds one pointer per parameter of the kernel's layout,
        // which the runtime has just read.
        let (pinned, _) =
            unsafe { record_launch_body(cap, kind, api, &info, shape, args, ret, &extra) };
        if ret != 0 {
            return;
        }
        // The graph (or executable graph) that now runs these arguments.
        let graph = {
            let mut map = NODE_GRAPH.lock();
            let map = map.get_or_insert_with(HashMap::new);
            match call {
                Call::Add { graph, .. } => {
                    map.insert(node, graph);
                    Some(graph)
                }
                Call::Set { node } => map.get(&node).copied(),
                Call::ExecSet { exec, .. } => {
                    graph_io::add_exec_pinned(exec, &pinned);
                    None
                }
            }
        };
        if let Some(graph) = graph {
            graph_io::add_graph_pinned(graph, &pinned);
        }
    });
}

macro_rules! add_shim {
    ($name:ident, $vendor:expr, $form:expr) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            node: *mut *mut c_void,
            graph: *mut c_void,
            deps: *const *mut c_void,
            count: usize,
            params: *const c_void,
        ) -> c_int {
            let Some(f) = real!($name: sigs::GraphAddKernelNode).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, forwarded unchanged.
            let ret = unsafe { f(node, graph, deps, count, params) };
            // SAFETY: on success the runtime stored the node at `node`.
            let out = if ret == 0 && !node.is_null() {
                unsafe { read_at::<u64>(node as u64) }
            } else {
                0
            };
            let call = Call::Add {
                graph: graph as u64,
                deps: deps as u64,
                count,
            };
            // SAFETY: the struct and dependencies the runtime has just read.
            unsafe { record($vendor, $form, stringify!($name), call, out, params, ret) };
            ret
        }
    };
}

macro_rules! set_shim {
    ($name:ident, $vendor:expr, $form:expr) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(node: *mut c_void, params: *const c_void) -> c_int {
            let Some(f) = real!($name: sigs::GraphKernelNodeSetParams).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, forwarded unchanged.
            let ret = unsafe { f(node, params) };
            let call = Call::Set { node: node as u64 };
            // SAFETY: the struct the runtime has just read.
            unsafe { record($vendor, $form, stringify!($name), call, node as u64, params, ret) };
            ret
        }
    };
}

macro_rules! exec_set_shim {
    ($name:ident, $vendor:expr, $form:expr) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            exec: *mut c_void,
            node: *mut c_void,
            params: *const c_void,
        ) -> c_int {
            let Some(f) = real!($name: sigs::GraphExecKernelNodeSetParams).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, forwarded unchanged.
            let ret = unsafe { f(exec, node, params) };
            let call = Call::ExecSet { exec: exec as u64 };
            // SAFETY: the struct the runtime has just read.
            unsafe { record($vendor, $form, stringify!($name), call, node as u64, params, ret) };
            ret
        }
    };
}

add_shim!(cudaGraphAddKernelNode, Vendor::Cuda, Form::Runtime);
add_shim!(hipGraphAddKernelNode, Vendor::Hip, Form::Runtime);
set_shim!(cudaGraphKernelNodeSetParams, Vendor::Cuda, Form::Runtime);
set_shim!(hipGraphKernelNodeSetParams, Vendor::Hip, Form::Runtime);
exec_set_shim!(
    cudaGraphExecKernelNodeSetParams,
    Vendor::Cuda,
    Form::Runtime
);
exec_set_shim!(hipGraphExecKernelNodeSetParams, Vendor::Hip, Form::Runtime);
// The driver's forms: the same records, the kernel named by its handle. (The v1 names,
// which cuda.h renames, are reached only at CUDA 11's lookup versions: a lookup of one
// is named as unmodelled.)
add_shim!(cuGraphAddKernelNode_v2, Vendor::Cuda, Form::Driver);
set_shim!(cuGraphKernelNodeSetParams_v2, Vendor::Cuda, Form::Driver);
exec_set_shim!(
    cuGraphExecKernelNodeSetParams_v2,
    Vendor::Cuda,
    Form::Driver
);

/// The lock of `NODE_GRAPH`, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&NODE_GRAPH]
}
