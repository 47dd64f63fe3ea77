//! What one generic call's encoded arguments point at (out slots, staged copies, encoded
//! parameter structs, a node's host side), kept alive until its results are read.

use std::collections::HashMap;

use super::deferred::Staged;

/// The words of one out slot (a struct, a value, a list of handles the call writes).
pub(super) const OUT_SLOT_WORDS: usize = 2048;

/// What the encoded arguments point at, kept alive until the call's results are read.
#[derive(Default)]
pub(super) struct CallBuffers<'a> {
    /// The event's sequence id.
    pub(super) seq: u64,
    /// The call failed at capture: a D2H copy of it wrote no result there, so its
    /// destination is a scratch buffer and nothing is compared (a faulted program's copy).
    pub(super) failed_at_capture: bool,
    /// A scratch destination's bytes.
    pub(super) scratch: Vec<u8>,
    /// A D2H copy whose output is compared when its `CopyOutput` record arrives.
    pub(super) deferred: Option<Staged<'a>>,
    /// The row has a stream (its copy may still run after the call returns).
    pub(super) streamed: bool,
    /// Out parameters' slots, and which parameter each belongs to. A slot is larger than
    /// any runtime's struct a row fills (ROCm 6+'s `hipDeviceProp_tR0600` included).
    pub(super) slots: Vec<Box<[u64; OUT_SLOT_WORDS]>>,
    pub(super) slot_of: HashMap<usize, usize>,
    /// Encoded 3D copy parameters.
    pub(super) keep: Vec<Vec<u8>>,
    /// A D2H copy's (result length, expected length), both in the staging buffers.
    pub(super) d2h: Option<(usize, usize)>,
    /// The copy reads a page-locked source after an asynchronous call returns.
    pub(super) source_in_flight: bool,
    /// The stand-in buffer being registered.
    pub(super) registering: Option<u64>,
    /// A memory allocation node's parameters as passed (the runtime writes the address
    /// at `mem_alloc_node::DPTR`), and its access descriptors.
    pub(super) alloc_node: Option<(Vec<u8>, Vec<u8>)>,
    /// The call is captured into a graph as the node of this sequence id: its host side
    /// is the node's buffer, and nothing runs until the graph is launched (`graphs`).
    pub(super) node: Option<u64>,
}

/// No runtime's struct outgrows an out slot (`CallBuffers::slots`).
const _: () = assert!(
    OUT_SLOT_WORDS * 8 >= hrr_archive::api::hip_abi::layout::DEVICE_PROP_R0600
        && OUT_SLOT_WORDS * 8 >= hrr_archive::api::hip_abi::layout::DEVICE_PROP_R0000
);
