//! The generic graph-node struct (`cudaGraphNodeParams`, the driver's `CUgraphNodeParams`:
//! 256 bytes, a node type, then the type's struct in a union at byte 16) and what it
//! describes as the typed call it equals (pure: `decode`). Capture records
//! `cudaGraphAddNode` and the generic `SetParams` calls as those typed calls
//! (`capture/src/graph_nodes.rs`); the runtime's and the driver's unions differ only in
//! the kernel and copy members, and in the execution contexts the runtime's may name.

/// The struct's size on x86-64.
pub const SIZE: usize = 256;
/// The union's offset: after the type and three reserved ints.
pub const UNION: usize = 16;
/// Bytes of `cudaGraphEdgeData` / `CUgraphEdgeData` (ports, type, reserved).
pub const EDGE_SIZE: usize = 8;

/// Whose struct a call passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Runtime,
    Driver,
}

/// Offsets inside the union members, from the headers of CUDA 13.
mod at {
    /// `cudaKernelNodeParamsV2`: its execution context, then `functionType`.
    pub const KERNEL_CTX: usize = 56;
    pub const KERNEL_FUNCTION_TYPE: usize = 64;
    /// `cudaMemcpyNodeParams` / `CUDA_MEMCPY_NODE_PARAMS`: flags, reserved, context, then
    /// the copy struct.
    pub const MEMCPY_CTX: usize = 8;
    pub const MEMCPY_PARMS: usize = 16;
    /// `cudaMemsetParamsV2`: after `cudaMemsetParams`'s 40 bytes.
    pub const MEMSET_CTX: usize = 40;
    /// `cudaHostNodeParamsV2`: function, data, sync mode, context.
    pub const HOST_CTX: usize = 24;
    /// `cudaEventRecordNodeParams`: event, context.
    pub const EVENT_RECORD_CTX: usize = 8;
    /// `cudaChildGraphNodeParams` / `CUDA_CHILD_GRAPH_NODE_PARAMS`: graph, ownership.
    pub const CHILD_OWNERSHIP: usize = 8;
}

const MOVED_CHILD: &str = "adds a child graph node that takes its graph over (ownership move), which capture records only as a clone";

/// What a node struct describes: the typed call it equals, with offsets (from the
/// struct's start) of the member the typed call takes by pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// A kernel node's struct at `at`: the runtime's (`cudaKernelNodeParams` and its
    /// prefix-equal V2) or, for the driver and a runtime V2 naming a `cudaKernel_t` or
    /// `cudaFunction_t` (`by_handle`), one whose kernel is a driver handle.
    Kernel {
        at: usize,
        by_handle: bool,
    },
    /// A copy node's copy struct at `at`: `cudaMemcpy3DParms` (runtime) or
    /// `CUDA_MEMCPY3D` (driver).
    Memcpy {
        at: usize,
    },
    /// A memset node's `cudaMemsetParams` (the V2's prefix) at `at`.
    Memset {
        at: usize,
    },
    /// A host node's function and data at `at` (`cudaHostNodeParams`'s 16 bytes).
    Host {
        at: usize,
    },
    /// A child graph node.
    Child {
        graph: u64,
    },
    Empty,
    EventWait {
        event: u64,
    },
    EventRecord {
        event: u64,
    },
    /// A memory allocation node's `cudaMemAllocNodeParams` at `at` (its `dptr` written by
    /// the call).
    MemAlloc {
        at: usize,
    },
    MemFree {
        dptr: u64,
    },
}

/// Why a type's node in an execution context is not recorded as a typed call.
macro_rules! in_context {
    ($t:literal) => {
        concat!(
            "describes a ",
            $t,
            " node to run in an execution context, which capture does not model"
        )
    };
}

/// Why a type is not recorded as a typed call.
fn unmodelled(t: u32) -> &'static str {
    match t {
        8 => "describes an external semaphore signal node, which capture does not model",
        9 => "describes an external semaphore wait node, which capture does not model",
        12 => "describes a batch memory operation node, which capture does not model",
        13 => "describes a conditional node, which capture does not model",
        14 => "describes a batched copy node, which capture does not model",
        _ => "describes a node of a type capture does not know",
    }
}

fn word(raw: &[u8], at: usize) -> u64 {
    raw.get(at..at + 8)
        .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
}

fn u32_at(raw: &[u8], at: usize) -> u32 {
    raw.get(at..at + 4)
        .map_or(0, |w| u32::from_le_bytes(w.try_into().unwrap_or([0; 4])))
}

/// The node `raw` (a whole struct of `api`) describes, or why capture cannot record it as
/// a typed call (said by replay when it refuses the call).
pub fn decode(raw: &[u8], api: Api) -> Result<Node, &'static str> {
    let t = u32_at(raw, 0);
    let u = UNION;
    let runtime = api == Api::Runtime;
    let ctx = |off: usize| runtime && word(raw, u + off) != 0;
    let node = match t {
        0 if ctx(at::KERNEL_CTX) => return Err(in_context!("kernel")),
        0 => Node::Kernel {
            at: u,
            // cudaKernelFunctionTypeKernel (2) or ...Function (3).
            by_handle: !runtime || matches!(u32_at(raw, u + at::KERNEL_FUNCTION_TYPE), 2 | 3),
        },
        1 if ctx(at::MEMCPY_CTX) => return Err(in_context!("memcpy")),
        1 => Node::Memcpy {
            at: u + at::MEMCPY_PARMS,
        },
        2 if ctx(at::MEMSET_CTX) => return Err(in_context!("memset")),
        2 => Node::Memset { at: u },
        3 if ctx(at::HOST_CTX) => return Err(in_context!("host")),
        3 => Node::Host { at: u },
        // cudaGraphChildGraphOwnershipMove: the graph moves into the node, which
        // `cudaGraphAddChildGraphNode` (a clone) does not say, and a clone refuses a
        // graph with memory nodes a move accepts.
        4 if u32_at(raw, u + at::CHILD_OWNERSHIP) != 0 => return Err(MOVED_CHILD),
        4 => Node::Child {
            graph: word(raw, u),
        },
        5 => Node::Empty,
        6 => Node::EventWait {
            event: word(raw, u),
        },
        7 if ctx(at::EVENT_RECORD_CTX) => return Err(in_context!("event record")),
        7 => Node::EventRecord {
            event: word(raw, u),
        },
        10 => Node::MemAlloc { at: u },
        11 => Node::MemFree { dptr: word(raw, u) },
        t => return Err(unmodelled(t)),
    };
    Ok(node)
}

/// Whether `edges` (the bytes of the edge data a call passed, one entry per dependency)
/// are all default: zero, a full dependency with memory visibility, what the typed calls
/// without edge data make.
pub fn default_edges(edges: &[u8]) -> bool {
    edges.iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(t: u32, fill: &[(usize, u64)]) -> [u8; SIZE] {
        let mut raw = [0u8; SIZE];
        raw[..4].copy_from_slice(&t.to_le_bytes());
        for &(at, v) in fill {
            raw[UNION + at..UNION + at + 8].copy_from_slice(&v.to_le_bytes());
        }
        raw
    }

    #[test]
    fn each_modelled_type_is_its_typed_call() {
        let k = node(0, &[(0, 0x1234)]);
        assert_eq!(
            decode(&k, Api::Runtime),
            Ok(Node::Kernel {
                at: 16,
                by_handle: false
            })
        );
        assert_eq!(
            decode(&k, Api::Driver),
            Ok(Node::Kernel {
                at: 16,
                by_handle: true
            })
        );
        let by_kernel = node(0, &[(at::KERNEL_FUNCTION_TYPE, 2)]);
        assert!(matches!(
            decode(&by_kernel, Api::Runtime),
            Ok(Node::Kernel {
                by_handle: true,
                ..
            })
        ));
        assert_eq!(
            decode(&node(1, &[]), Api::Runtime),
            Ok(Node::Memcpy { at: 32 })
        );
        assert_eq!(
            decode(&node(2, &[]), Api::Driver),
            Ok(Node::Memset { at: 16 })
        );
        assert_eq!(
            decode(&node(3, &[]), Api::Runtime),
            Ok(Node::Host { at: 16 })
        );
        assert_eq!(
            decode(&node(4, &[(0, 7)]), Api::Runtime),
            Ok(Node::Child { graph: 7 })
        );
        assert_eq!(decode(&node(5, &[]), Api::Runtime), Ok(Node::Empty));
        assert_eq!(
            decode(&node(6, &[(0, 9)]), Api::Driver),
            Ok(Node::EventWait { event: 9 })
        );
        assert_eq!(
            decode(&node(7, &[(0, 9)]), Api::Runtime),
            Ok(Node::EventRecord { event: 9 })
        );
        assert_eq!(
            decode(&node(10, &[]), Api::Runtime),
            Ok(Node::MemAlloc { at: 16 })
        );
        assert_eq!(
            decode(&node(11, &[(0, 0xd00)]), Api::Runtime),
            Ok(Node::MemFree { dptr: 0xd00 })
        );
    }

    #[test]
    fn execution_contexts_and_unmodelled_types_are_named() {
        let e = decode(&node(0, &[(at::KERNEL_CTX, 5)]), Api::Runtime).unwrap_err();
        assert!(
            e.contains("kernel node to run in an execution context"),
            "{e}"
        );
        // The driver's context words are its own contexts (one, as the typed calls').
        assert!(decode(&node(1, &[(at::MEMCPY_CTX, 5)]), Api::Driver).is_ok());
        let e = decode(&node(13, &[]), Api::Runtime).unwrap_err();
        assert!(e.contains("a conditional node"), "{e}");
        let e = decode(&node(8, &[]), Api::Driver).unwrap_err();
        assert!(e.contains("external semaphore signal"), "{e}");
        let e = decode(&node(4, &[(0, 7), (at::CHILD_OWNERSHIP, 1)]), Api::Driver).unwrap_err();
        assert!(e.contains("ownership move"), "{e}");
        assert!(default_edges(&[0; 16]));
        assert!(!default_edges(&[0, 0, 1, 0, 0, 0, 0, 0]));
    }
}
