//! Graph copy nodes to and from `__device__` / `__constant__` variables
//! (`cudaGraphAddMemcpyNodeToSymbol`, `...FromSymbol`, the node and executable-graph
//! `SetParams...Symbol` updates; CUDA and HIP). As for a symbol copy (`symbols`), the
//! variable's address is recorded once, and the node is recorded through the matching
//! 1D copy-node row (`GraphAddMemcpyNode1D`, `GraphMemcpyNodeSetParams1D`,
//! `GraphExecMemcpyNodeSetParams1D`) with the variable's address plus the offset in
//! place of the symbol: the row's host side and graph outputs are captured as any copy
//! node's, and replay builds the same node over its own module's variable.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::{self, Vendor};

use crate::generic::capture_row;
use crate::real::NO_REAL_FUNCTION;
use crate::symbols::{resolve, unrecorded};

/// Records the call through `row`, its arguments made by `args` from the variable's
/// device address plus `offset`, calling the real function once through `call`; a
/// variable capture cannot resolve leaves the call unrecorded and noted.
fn node_row(
    vendor: Vendor,
    api_name: &'static str,
    symbol: *const c_void,
    offset: usize,
    row: u16,
    args: impl FnOnce(u64) -> Vec<u64>,
    call: impl FnOnce() -> c_int,
) -> c_int {
    let Some((dptr, desc)) = resolve(vendor, symbol, api_name).zip(api::desc(row)) else {
        unrecorded(api_name);
        return call();
    };
    let device = dptr.wrapping_add(offset as u64);
    capture_row(desc, vendor, &args(device), call)
}

macro_rules! symbol_node_shims {
    ($vendor:expr, $add_to:ident, $add_from:ident, $set_to:ident, $set_from:ident, $exec_to:ident, $exec_from:ident) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $add_to(
            node: *mut *mut c_void,
            graph: *mut c_void,
            deps: *const *mut c_void,
            ndeps: usize,
            symbol: *const c_void,
            src: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($add_to: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const *mut c_void, usize, *const c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(node, graph, deps, ndeps, symbol, src, count, offset, kind) };
            let args = |dst: u64| vec![node as u64, graph as u64, deps as u64, ndeps as u64, dst, src as u64, count as u64, kind as u64];
            node_row($vendor, stringify!($add_to), symbol, offset, api::id::GraphAddMemcpyNode1D, args, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $add_from(
            node: *mut *mut c_void,
            graph: *mut c_void,
            deps: *const *mut c_void,
            ndeps: usize,
            dst: *mut c_void,
            symbol: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($add_from: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const *mut c_void, usize, *mut c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(node, graph, deps, ndeps, dst, symbol, count, offset, kind) };
            let args = |src: u64| vec![node as u64, graph as u64, deps as u64, ndeps as u64, dst as u64, src, count as u64, kind as u64];
            node_row($vendor, stringify!($add_from), symbol, offset, api::id::GraphAddMemcpyNode1D, args, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $set_to(
            node: *mut c_void,
            symbol: *const c_void,
            src: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($set_to: unsafe extern "C" fn(*mut c_void, *const c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(node, symbol, src, count, offset, kind) };
            let args = |dst: u64| vec![node as u64, dst, src as u64, count as u64, kind as u64];
            node_row($vendor, stringify!($set_to), symbol, offset, api::id::GraphMemcpyNodeSetParams1D, args, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $set_from(
            node: *mut c_void,
            dst: *mut c_void,
            symbol: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($set_from: unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(node, dst, symbol, count, offset, kind) };
            let args = |src: u64| vec![node as u64, dst as u64, src, count as u64, kind as u64];
            node_row($vendor, stringify!($set_from), symbol, offset, api::id::GraphMemcpyNodeSetParams1D, args, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $exec_to(
            exec: *mut c_void,
            node: *mut c_void,
            symbol: *const c_void,
            src: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($exec_to: unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(exec, node, symbol, src, count, offset, kind) };
            let args = |dst: u64| vec![exec as u64, node as u64, dst, src as u64, count as u64, kind as u64];
            node_row($vendor, stringify!($exec_to), symbol, offset, api::id::GraphExecMemcpyNodeSetParams1D, args, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $exec_from(
            exec: *mut c_void,
            node: *mut c_void,
            dst: *mut c_void,
            symbol: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($exec_from: unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(exec, node, dst, symbol, count, offset, kind) };
            let args = |src: u64| vec![exec as u64, node as u64, dst as u64, src, count as u64, kind as u64];
            node_row($vendor, stringify!($exec_from), symbol, offset, api::id::GraphExecMemcpyNodeSetParams1D, args, call)
        }
    };
}

symbol_node_shims!(
    Vendor::Cuda,
    cudaGraphAddMemcpyNodeToSymbol,
    cudaGraphAddMemcpyNodeFromSymbol,
    cudaGraphMemcpyNodeSetParamsToSymbol,
    cudaGraphMemcpyNodeSetParamsFromSymbol,
    cudaGraphExecMemcpyNodeSetParamsToSymbol,
    cudaGraphExecMemcpyNodeSetParamsFromSymbol
);
symbol_node_shims!(
    Vendor::Hip,
    hipGraphAddMemcpyNodeToSymbol,
    hipGraphAddMemcpyNodeFromSymbol,
    hipGraphMemcpyNodeSetParamsToSymbol,
    hipGraphMemcpyNodeSetParamsFromSymbol,
    hipGraphExecMemcpyNodeSetParamsToSymbol,
    hipGraphExecMemcpyNodeSetParamsFromSymbol
);
