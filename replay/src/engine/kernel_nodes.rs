//! Graph kernel nodes at replay: `GRAPH_KERNEL_NODE` and the kernel-node parameter
//! updates, rebuilt with replay's own function for the kernel (the one its launches use)
//! and the launch record's arguments (pointer words translated, pinned snapshots
//! restored), through the driver's `cuGraphAddKernelNode` / `cuGraph[Exec]KernelNode
//! SetParams` (the v1 `CUDA_KERNEL_NODE_PARAMS`, which is `cudaKernelNodeParams`'s
//! layout) or HIP's `hipGraph*KernelNode*` with a module function. The node's graph and
//! dependencies map like any graph handle; the new node's handle is mapped to the
//! captured one. The runtime copies the arguments when the call returns.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::kernel_node::NodeParams;
use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::ctx::Ctx;
use super::error::{EvResult, EventError};

/// The call that replays one kernel-node record, by record kind and vendor.
pub(super) fn replay_call(kind: u16, vendor: Vendor) -> Option<&'static str> {
    Some(match (kind, vendor) {
        (semantic::GRAPH_KERNEL_NODE, Vendor::Cuda) => "cuGraphAddKernelNode",
        (semantic::GRAPH_KERNEL_NODE, Vendor::Hip) => "hipGraphAddKernelNode",
        (semantic::GRAPH_KERNEL_NODE_SET_PARAMS, Vendor::Cuda) => "cuGraphKernelNodeSetParams",
        (semantic::GRAPH_KERNEL_NODE_SET_PARAMS, Vendor::Hip) => "hipGraphKernelNodeSetParams",
        (semantic::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, Vendor::Cuda) => {
            "cuGraphExecKernelNodeSetParams"
        }
        (semantic::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, Vendor::Hip) => {
            "hipGraphExecKernelNodeSetParams"
        }
        _ => return None,
    })
}

/// A node call's result against capture's: error numbers differ between the runtime
/// and the driver, so success and failure are compared.
fn outcome(captured: c_int, replayed: c_int) -> Option<bool> {
    match (captured == 0, replayed == 0) {
        (true, true) => Some(true),
        (false, false) => Some(false),
        _ => None,
    }
}

impl Ctx<'_> {
    pub(super) fn replay_kernel_node(&mut self, ev: &Event) -> EvResult {
        let kind = ev.header.api_id;
        let Some(call) = replay_call(kind, self.rt.vendor) else {
            return Err(EventError::Inconsistent(format!(
                "record kind {kind} is no kernel node call"
            )));
        };
        let p = Payload::parse(&ev.payload)?;
        let node = p
            .get(fid::KERNEL_NODE)
            .ok_or_else(|| {
                EventError::Inconsistent("kernel node record without its node field".into())
            })?
            .as_nested()?;
        let captured_node = node.handle(fid::KN_NODE, "node")?;
        let mut l = self.prepare_launch(&p)?;
        let params = NodeParams {
            func: l.func,
            grid: l.grid,
            block: l.block,
            shmem: l.shmem,
            kernel_params: l.params.as_mut_ptr() as u64,
            extra: 0,
        }
        .encode(self.rt.vendor);
        let pp = params.as_ptr() as *const c_void;
        let mut out: *mut c_void = std::ptr::null_mut();
        let r = match kind {
            semantic::GRAPH_KERNEL_NODE => {
                let graph = self.handle(node.handle(fid::KN_GRAPH, "graph")?)?;
                let deps: Vec<u64> = match node.get(fid::KN_DEPS) {
                    Some(d) if !d.is_null() => d
                        .as_u64_array()?
                        .into_iter()
                        .map(|n| self.handle(n))
                        .collect::<Result<_, _>>()?,
                    _ => Vec::new(),
                };
                // SAFETY: cuGraphAddKernelNode (v1) / hipGraphAddKernelNode have this C type.
                let f = unsafe { self.rt.typed::<sigs::GraphAddKernelNode>(call) }?;
                // SAFETY: `params` is the vendor's struct, its kernelParams pointing into
                // `l`'s live argument block; `deps` are replay's nodes.
                unsafe {
                    f(
                        &mut out,
                        graph as usize as *mut c_void,
                        if deps.is_empty() {
                            std::ptr::null()
                        } else {
                            deps.as_ptr().cast()
                        },
                        deps.len(),
                        pp,
                    )
                }
            }
            semantic::GRAPH_KERNEL_NODE_SET_PARAMS => {
                let n = self.handle(captured_node)?;
                // SAFETY: cuGraphKernelNodeSetParams (v1) / hipGraphKernelNodeSetParams
                // have this C type.
                let f = unsafe { self.rt.typed::<sigs::GraphKernelNodeSetParams>(call) }?;
                // SAFETY: as above.
                unsafe { f(n as usize as *mut c_void, pp) }
            }
            _ => {
                let exec = self.handle(node.handle(fid::KN_EXEC, "executable graph")?)?;
                let n = self.handle(captured_node)?;
                // SAFETY: cuGraphExecKernelNodeSetParams (v1) /
                // hipGraphExecKernelNodeSetParams have this C type.
                let f = unsafe { self.rt.typed::<sigs::GraphExecKernelNodeSetParams>(call) }?;
                // SAFETY: as above.
                unsafe { f(exec as usize as *mut c_void, n as usize as *mut c_void, pp) }
            }
        };
        match outcome(ev.header.ret, r) {
            Some(true) => {
                if kind == semantic::GRAPH_KERNEL_NODE {
                    // A node belongs to its graph: mapped, never released on its own.
                    self.tr.handles.insert(captured_node, out as u64);
                }
                Ok(())
            }
            Some(false) => {
                self.checks.counts.failed_as_captured += 1;
                Ok(())
            }
            None => Err(EventError::LaunchReturnCode {
                call,
                kernel: l.name,
                got: r,
                want: ev.header.ret,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_kind_has_its_call_per_vendor() {
        use semantic::*;
        assert_eq!(
            replay_call(GRAPH_KERNEL_NODE, Vendor::Cuda),
            Some("cuGraphAddKernelNode")
        );
        assert_eq!(
            replay_call(GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, Vendor::Hip),
            Some("hipGraphExecKernelNodeSetParams")
        );
        assert_eq!(
            replay_call(GRAPH_KERNEL_NODE_SET_PARAMS, Vendor::Cuda),
            Some("cuGraphKernelNodeSetParams")
        );
        assert_eq!(replay_call(GRAPH_LAUNCH, Vendor::Cuda), None);
    }

    #[test]
    fn success_and_failure_are_compared_not_error_numbers() {
        assert_eq!(outcome(0, 0), Some(true));
        assert_eq!(outcome(1, 400), Some(false));
        assert_eq!(outcome(0, 1), None);
        assert_eq!(outcome(700, 0), None);
    }
}
