//! The generic graph-node calls, recorded as the typed calls they equal:
//! `cudaGraphAddNode`, `cudaGraphNodeSetParams`, `cudaGraphExecNodeSetParams`, and the
//! driver's `cuGraphAddNode` (without edge data), `cuGraphAddNode_v2`/`_v3`,
//! `cuGraphNodeSetParams[_v2]`, `cuGraphExecNodeSetParams` (what nvcc's static runtime
//! makes of the runtime's).
//!
//! The node struct (`api::node_params`) names a type and its struct: a kernel node is
//! recorded as `kernel_node` records the typed kernel-node calls; a copy, memset, host,
//! child-graph, empty, event, allocation or free node as its typed row
//! (`cudaGraphAddMemcpyNode`, `cudaGraphMemsetNodeSetParams`, ...), the driver's copy
//! struct read into the runtime's (`driver_graph`). The real call is the program's own,
//! with its own struct (an allocation node's address is written there), except that a
//! host node gets capture's trampoline in place of its function (`host_fns`), in a copy of
//! the struct. What the typed calls cannot say is recorded unreplayable, by name: an
//! execution context, a type capture does not model (conditional, external semaphores,
//! batched memory operations), edges other than full dependencies, and updates of types
//! the typed calls cannot update.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::node_params::{self, Api, Node};
use hrr_archive::api::{self, id, Vendor};

use crate::driver_graph::{record_as, runtime_parms, ARRAY_NODE};
use crate::ffi::{bytes_at, read_at};
use crate::kernel_node;
use crate::real::NO_REAL_FUNCTION;
use crate::unreplayable;

const NO_PARAMS: &str = "passed no node parameters";
const NO_UPDATE: &str = "updates a child graph, empty, memory allocation or free node through the generic call, which no typed call does";
const EDGES: &str = "adds a node with edges other than full dependencies (programmatic or port edges), which capture does not model";

/// Which generic call is made.
#[derive(Clone, Copy)]
enum Call {
    Add {
        out: *mut *mut c_void,
        graph: u64,
        deps: u64,
        count: usize,
    },
    Set {
        node: u64,
    },
    ExecSet {
        exec: u64,
        node: u64,
    },
}

impl Call {
    /// The typed call's leading arguments.
    fn prefix(self) -> Vec<u64> {
        match self {
            Call::Add {
                out,
                graph,
                deps,
                count,
            } => vec![out as u64, graph, deps, count as u64],
            Call::Set { node } => vec![node],
            Call::ExecSet { exec, node } => vec![exec, node],
        }
    }

    /// The raw arguments an unreplayable record keeps: an add's graph second, which
    /// replay then refuses to instantiate (as for any node it cannot rebuild).
    fn raw(self) -> Vec<usize> {
        match self {
            Call::Add { out, graph, .. } => vec![out as usize, graph as usize],
            Call::Set { node } => vec![node as usize],
            Call::ExecSet { exec, node } => vec![exec as usize, node as usize],
        }
    }

    fn kernel(self, node: u64) -> (kernel_node::Call, u64) {
        match self {
            Call::Add {
                graph, deps, count, ..
            } => (kernel_node::Call::Add { graph, deps, count }, node),
            Call::Set { node } => (kernel_node::Call::Set { node }, node),
            Call::ExecSet { exec, node } => (kernel_node::Call::ExecSet { exec }, node),
        }
    }
}

/// The typed row a node's call equals: (add, set, exec set), None where there is none.
fn rows(node: &Node) -> [Option<u16>; 3] {
    match node {
        Node::Memcpy { .. } => [
            Some(id::GraphAddMemcpyNode),
            Some(id::GraphMemcpyNodeSetParams),
            Some(id::GraphExecMemcpyNodeSetParams),
        ],
        Node::Memset { .. } => [
            Some(id::GraphAddMemsetNode),
            Some(id::GraphMemsetNodeSetParams),
            Some(id::GraphExecMemsetNodeSetParams),
        ],
        Node::Host { .. } => [
            Some(id::GraphAddHostNode),
            Some(id::GraphHostNodeSetParams),
            Some(id::GraphExecHostNodeSetParams),
        ],
        Node::Child { .. } => [
            Some(id::GraphAddChildGraphNode),
            None,
            Some(id::GraphExecChildGraphNodeSetParams),
        ],
        Node::Empty => [Some(id::GraphAddEmptyNode), None, None],
        Node::EventWait { .. } => [
            Some(id::GraphAddEventWaitNode),
            Some(id::GraphEventWaitNodeSetEvent),
            Some(id::GraphExecEventWaitNodeSetEvent),
        ],
        Node::EventRecord { .. } => [
            Some(id::GraphAddEventRecordNode),
            Some(id::GraphEventRecordNodeSetEvent),
            Some(id::GraphExecEventRecordNodeSetEvent),
        ],
        Node::MemAlloc { .. } => [Some(id::GraphAddMemAllocNode), None, None],
        Node::MemFree { .. } => [Some(id::GraphAddMemFreeNode), None, None],
        Node::Kernel { .. } => [None, None, None],
    }
}

/// Makes and records one generic call: `real` makes the program's call with the struct
/// it is given (the program's, or capture's copy for a host node).
///
/// # Safety
/// `params` is null or the program's node struct of `api` (256 bytes); an add's `edges`
/// are null or hold `count` entries, its `deps` `count` handles.
unsafe fn node_call(
    name: &'static str,
    api: Api,
    call: Call,
    params: *mut c_void,
    edges: *const c_void,
    real: impl Fn(*mut c_void) -> c_int,
) -> c_int {
    let refuse = |why: &'static str, ret: c_int| {
        unreplayable::record(Vendor::Cuda, name, why, ret, &call.raw());
        ret
    };
    if params.is_null() {
        return refuse(NO_PARAMS, real(params));
    }
    // SAFETY: the caller's contract: the program's 256-byte struct.
    let raw: Vec<u8> = unsafe { bytes_at(params as *const u8, node_params::SIZE) }.to_vec();
    if let Call::Add { count, .. } = call {
        if !edges.is_null() && count > 0 {
            // SAFETY: the caller's contract: `count` edge entries.
            let e = unsafe { bytes_at(edges as *const u8, count * node_params::EDGE_SIZE) };
            if !node_params::default_edges(e) {
                return refuse(EDGES, real(params));
            }
        }
    }
    let node = match node_params::decode(&raw, api) {
        Ok(n) => n,
        Err(why) => return refuse(why, real(params)),
    };
    let member = |at: usize| params as u64 + at as u64;
    if let Node::Kernel { at, by_handle } = node {
        let ret = real(params);
        let added = match call {
            // SAFETY: on success the runtime stored the node at `out`.
            Call::Add { out, .. } if ret == 0 && !out.is_null() => unsafe {
                read_at::<u64>(out as u64)
            },
            _ => 0,
        };
        let form = match (api, by_handle) {
            (Api::Driver, _) => kernel_node::Form::Driver,
            (Api::Runtime, true) => kernel_node::Form::RuntimeByHandle,
            (Api::Runtime, false) => kernel_node::Form::Runtime,
        };
        let (kcall, handle) = call.kernel(added);
        // SAFETY: the kernel member of the struct the runtime has just read.
        unsafe {
            kernel_node::record(
                Vendor::Cuda,
                form,
                name,
                kcall,
                handle,
                member(at) as *const c_void,
                ret,
            )
        };
        return ret;
    }
    let which = match call {
        Call::Add { .. } => 0,
        Call::Set { .. } => 1,
        Call::ExecSet { .. } => 2,
    };
    let Some(row) = rows(&node)[which] else {
        return refuse(NO_UPDATE, real(params));
    };
    let mut args = call.prefix();
    // A driver copy struct read into the runtime's: it lives to the function's end,
    // past the record.
    let mut converted = None;
    match node {
        Node::Memcpy { at } if api == Api::Driver => {
            // SAFETY: the copy member of the program's struct.
            match unsafe { runtime_parms(member(at) as *const c_void) } {
                Some(p) => {
                    let p = converted.insert(p);
                    args.push(p.as_ptr() as u64);
                }
                None => return refuse(ARRAY_NODE, real(params)),
            }
        }
        Node::Memcpy { at } | Node::Memset { at } | Node::Host { at } | Node::MemAlloc { at } => {
            args.push(member(at))
        }
        Node::Child { graph } => args.push(graph),
        Node::EventWait { event } | Node::EventRecord { event } => args.push(event),
        Node::MemFree { dptr } => args.push(dptr),
        Node::Empty | Node::Kernel { .. } => {}
    }
    let Some(desc) = api::desc(row) else {
        return real(params);
    };
    let ret = match node {
        Node::Host { at } => {
            let last = args.len() - 1;
            crate::generic::capture_row_passing(desc, Vendor::Cuda, &args, &args, |a| {
                if a[last] == args[last] {
                    return real(params);
                }
                // Capture's trampoline and data in a copy of the program's struct.
                let mut copy = raw.clone();
                // SAFETY: `host_fns::wrap`'s struct: the function and data words.
                let wrapped = unsafe { bytes_at(a[last] as *const u8, 16) };
                copy[at..at + 16].copy_from_slice(wrapped);
                real(copy.as_mut_ptr().cast())
            })
        }
        _ => record_as(row, &args, || real(params)),
    };
    ret
}

type AddFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    *const *mut c_void,
    *const c_void,
    usize,
    *mut c_void,
) -> c_int;
type AddNoEdgesFn = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    *const *mut c_void,
    usize,
    *mut c_void,
) -> c_int;
type SetFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type ExecSetFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void) -> c_int;

macro_rules! add_shim {
    ($name:ident, $api:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            out: *mut *mut c_void,
            graph: *mut c_void,
            deps: *const *mut c_void,
            edges: *const c_void,
            count: usize,
            params: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: AddFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let call = Call::Add {
                out,
                graph: graph as u64,
                deps: deps as u64,
                count,
            };
            // SAFETY: the program's own arguments, passed on unchanged (a host node's
            // function wrapped in a copy of its struct).
            unsafe {
                node_call(stringify!($name), $api, call, params, edges, |p| {
                    f(out, graph, deps, edges, count, p)
                })
            }
        }
    };
}

add_shim!(cudaGraphAddNode, Api::Runtime);
add_shim!(cuGraphAddNode_v2, Api::Driver);
add_shim!(cuGraphAddNode_v3, Api::Driver);

/// `cuGraphAddNode` as CUDA 12.2's headers bind it: no edge data.
///
/// # Safety
/// Called by the program with the driver function's own arguments.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddNode(
    out: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    count: usize,
    params: *mut c_void,
) -> c_int {
    let Some(f) = real!(cuGraphAddNode: AddNoEdgesFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    let call = Call::Add {
        out,
        graph: graph as u64,
        deps: deps as u64,
        count,
    };
    // SAFETY: the program's own arguments, passed on unchanged.
    unsafe {
        node_call(
            "cuGraphAddNode",
            Api::Driver,
            call,
            params,
            std::ptr::null(),
            |p| f(out, graph, deps, count, p),
        )
    }
}

macro_rules! set_shim {
    ($name:ident, $api:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(node: *mut c_void, params: *mut c_void) -> c_int {
            let Some(f) = real!($name: SetFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let call = Call::Set { node: node as u64 };
            // SAFETY: the program's own arguments, passed on unchanged.
            unsafe {
                node_call(stringify!($name), $api, call, params, std::ptr::null(), |p| {
                    f(node, p)
                })
            }
        }
    };
}

set_shim!(cudaGraphNodeSetParams, Api::Runtime);
set_shim!(cuGraphNodeSetParams, Api::Driver);
set_shim!(cuGraphNodeSetParams_v2, Api::Driver);

macro_rules! exec_set_shim {
    ($name:ident, $api:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            exec: *mut c_void,
            node: *mut c_void,
            params: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: ExecSetFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let call = Call::ExecSet {
                exec: exec as u64,
                node: node as u64,
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            unsafe {
                node_call(stringify!($name), $api, call, params, std::ptr::null(), |p| {
                    f(exec, node, p)
                })
            }
        }
    };
}

exec_set_shim!(cudaGraphExecNodeSetParams, Api::Runtime);
exec_set_shim!(cuGraphExecNodeSetParams, Api::Driver);
