//! The kinds of device resource a replay owns until the program releases them, and how
//! each is released at the end (the row, its arguments, the order).

use hrr_archive::api;

/// A device resource a replay owns until the program's own call releases it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resource {
    DeviceMemory,
    PinnedHostMemory,
    Stream,
    Event,
    /// A context the program created (`cuCtxCreate`, `hipCtxCreate`).
    Context,
    MemPool,
    Graph,
    GraphExec,
    Array,
    MipmappedArray,
    /// Physical memory (`cuMemCreate`, `hipMemCreate`).
    MemHandle,
    /// A reserved range of addresses, of `size` bytes (`cuMemAddressReserve`).
    AddressRange {
        size: u64,
    },
}

impl Resource {
    /// The API table row that releases it.
    pub(super) fn release_row(self) -> u16 {
        match self {
            Resource::DeviceMemory => api::id::Free,
            Resource::PinnedHostMemory => api::id::FreeHost,
            Resource::Stream => api::id::StreamDestroy,
            Resource::Event => api::id::EventDestroy,
            Resource::Context => api::id::CtxDestroy,
            Resource::MemPool => api::id::MemPoolDestroy,
            Resource::Graph => api::id::GraphDestroy,
            Resource::GraphExec => api::id::GraphExecDestroy,
            Resource::Array => api::id::FreeArray,
            Resource::MipmappedArray => api::id::FreeMipmappedArray,
            Resource::MemHandle => api::id::MemRelease,
            Resource::AddressRange { .. } => api::id::MemAddressFree,
        }
    }

    /// The release row's arguments for the handle or address `at`.
    pub(super) fn release_args(self, at: u64) -> Vec<u64> {
        match self {
            Resource::AddressRange { size } => vec![at, size],
            _ => vec![at],
        }
    }

    /// When it is released at the end: address ranges after the memory mapped into them
    /// was unmapped and released, contexts last (what was made in one is released while
    /// it still exists).
    pub(super) fn release_order(self) -> u8 {
        match self {
            Resource::AddressRange { .. } => 1,
            Resource::Context => 2,
            _ => 0,
        }
    }
}
