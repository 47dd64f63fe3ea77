//! What replay runs where the program ran host code: nothing. A host function, stream
//! callback or host node is replayed as an ordering point (the stream or graph keeps it,
//! in order), with these functions in place of the program's: no other process can run
//! the program's own code, and what it wrote to host memory capture recorded where a copy
//! or a launch read it (or refused the read by name: capture's `host_fns`).

use std::os::raw::{c_int, c_void};

use hrr_archive::api::sigs;

/// Replay's host function (`cudaHostFn_t`): does nothing.
extern "C" fn nothing(_data: *mut c_void) {}

/// Replay's stream callback (`cudaStreamCallback_t`): does nothing.
extern "C" fn nothing_after(_stream: *mut c_void, _status: c_int, _data: *mut c_void) {}

/// The host function replay passes.
pub(super) fn host_fn() -> u64 {
    let f: sigs::HostFn = nothing;
    f as usize as u64
}

/// The stream callback replay passes.
pub(super) fn stream_callback() -> u64 {
    let f: sigs::StreamCallback = nothing_after;
    f as usize as u64
}

/// A host node's parameters as replay passes them: its function, null data.
pub(super) fn node_params() -> Vec<u8> {
    let mut b = host_fn().to_le_bytes().to_vec();
    b.extend_from_slice(&0u64.to_le_bytes());
    b
}
