//! Host functions the program queues (`cudaLaunchHostFunc`, `cudaStreamAddCallback`, their
//! HIP and driver forms) and graphs that run host nodes: which may still run. A host
//! function may write host memory that a copy or a kernel queued after it reads, after
//! capture read it; so while one may still run, a record whose host bytes capture read
//! now is left incomplete with the reason named (replay refuses it by name), never
//! recorded with bytes that may be wrong. An asynchronous copy from pageable memory is
//! the exception: the runtime stages its source at the call, as capture reads it.
//!
//! A stream host function is handed to the runtime wrapped: capture's trampoline calls the
//! program's function with its data, then counts it done. In a capturing stream it becomes
//! a graph node and is passed on unwrapped (`graph_io` notes that the graph runs host
//! code); a graph launch that runs host nodes counts as pending until a marker capture
//! queues after it on the same stream has run.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use hrr_archive::api::{id, sigs, ApiDesc, Vendor};

use crate::capturing::{stream_capture, StreamCapture};
use crate::graph_io::{self, NodeIo, NodeOf};

/// Host functions queued and not yet run (stream ones, and graph launches with host nodes).
static PENDING: AtomicU64 = AtomicU64::new(0);
/// A host function capture could not follow (its stream's capture state unknown): from
/// then on one may always be pending.
static UNTRACKED: AtomicBool = AtomicBool::new(false);

/// Why a copy's host source was not recorded.
pub const PENDING_SOURCE: &str = "reads host memory while a host function the program queued earlier may still run and write it: the bytes the copy will read are not known when it is issued";
/// Why a launch's snapshot of host-visible memory was not recorded.
pub const PENDING_SNAPSHOT: &str = "reads pinned or managed memory while a host function the program queued earlier may still run and write it: the bytes the kernel will read are not known when it is launched";
/// Why a graph launch's host inputs were not recorded.
pub const HOST_NODE_INPUTS: &str = "runs a graph that holds host nodes and reads host memory at launch: a host node may write it before the graph's copy or kernel reads it";

/// Whether a host function may still run.
pub fn pending() -> bool {
    PENDING.load(Ordering::SeqCst) > 0 || UNTRACKED.load(Ordering::Relaxed)
}

/// In a forked child: the parent's host functions run in the parent.
pub fn fork_child_forget() {
    PENDING.store(0, Ordering::SeqCst);
}

fn done() {
    let _ = PENDING.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
}

/// The program's host function or callback and its data, boxed for one call.
struct Call {
    func: u64,
    data: u64,
}

extern "C" fn run_host_fn(ctx: *mut c_void) {
    // SAFETY: `ctx` is the box `wrap` made for this one call, which the runtime runs once.
    let c = unsafe { Box::from_raw(ctx.cast::<Call>()) };
    // SAFETY: the program's host function, given to the runtime to call with this data.
    unsafe { std::mem::transmute::<u64, sigs::HostFn>(c.func)(c.data as *mut c_void) };
    done();
}

extern "C" fn run_callback(stream: *mut c_void, status: c_int, ctx: *mut c_void) {
    // SAFETY: as `run_host_fn`.
    let c = unsafe { Box::from_raw(ctx.cast::<Call>()) };
    // SAFETY: the program's stream callback, given to the runtime to call with this data.
    let f = unsafe { std::mem::transmute::<u64, sigs::StreamCallback>(c.func) };
    // SAFETY: called as the runtime calls it, with the program's data.
    unsafe { f(stream, status, c.data as *mut c_void) };
    done();
}

extern "C" fn marker(_ctx: *mut c_void) {
    done();
}

/// The arguments a host-function call passes on in place of the program's.
pub struct Wrapped {
    args: Vec<u64>,
    ctx: *mut Call,
}

impl Wrapped {
    pub fn args(&self) -> &[u64] {
        &self.args
    }
    /// After the real call: a refused one will never run its trampoline.
    pub fn settle(self, ret: c_int) {
        if ret != 0 {
            done();
            // SAFETY: the runtime refused the call, so nothing else holds the box.
            drop(unsafe { Box::from_raw(self.ctx) });
        }
    }
}

/// For a stream host function on a stream not capturing: the arguments with capture's
/// trampoline and a box of the program's function and data in place of `raw`'s (what
/// the program passed). `recorded` holds the same arguments as recorded (a per-thread
/// null stream written as the stream it means). None for every other call, which passes
/// `raw` on; a host function captured into a graph is noted as the graph's host node.
pub fn wrap(desc: &ApiDesc, vendor: Vendor, recorded: &[u64], raw: &[u64]) -> Option<Wrapped> {
    let (host_fn, callback): (sigs::HostFn, sigs::StreamCallback) = (run_host_fn, run_callback);
    let trampoline = match desc.id {
        id::LaunchHostFunc | id::LaunchHostFuncV2 => host_fn as usize as u64,
        id::StreamAddCallback => callback as usize as u64,
        _ => return None,
    };
    let (func, data) = (1, 2);
    if raw.len() <= data || raw[func] == 0 {
        return None;
    }
    match stream_capture(vendor, recorded[0]) {
        StreamCapture::Idle => {}
        StreamCapture::Active { id } => {
            graph_io::add_nodes(NodeOf::Capture(id), [NodeIo::Host]);
            return None;
        }
        StreamCapture::Invalidated => return None,
        StreamCapture::Unknown(_) => {
            UNTRACKED.store(true, Ordering::Relaxed);
            return None;
        }
    }
    let ctx = Box::into_raw(Box::new(Call {
        func: raw[func],
        data: raw[data],
    }));
    PENDING.fetch_add(1, Ordering::SeqCst);
    let mut args = raw.to_vec();
    args[func] = trampoline;
    args[data] = ctx as u64;
    Some(Wrapped { args, ctx })
}

/// After a row's call: a host node added to an explicit graph is noted as the graph's.
pub fn after_row(desc: &ApiDesc, args: &[u64], ret: c_int) {
    if desc.id == id::GraphAddHostNode && ret == 0 {
        graph_io::add_nodes(NodeOf::Graph(args[1]), [NodeIo::Host]);
    }
}

/// The real function that queues a host function of capture's own on a program's stream:
/// the CUDA driver's (any CUDA program's streams are its), or HIP's.
pub fn launcher(vendor: Vendor) -> Option<sigs::LaunchHostFunc> {
    match vendor {
        Vendor::Cuda => real!(driver cuLaunchHostFunc: sigs::LaunchHostFunc).get(),
        Vendor::Hip => real!(hipLaunchHostFunc: sigs::LaunchHostFunc).get(),
    }
}

/// A graph that runs host nodes was launched on `stream` (not capturing): pending until a
/// marker queued after it has run (none queued: pending for good).
pub fn graph_launched(vendor: Vendor, stream: u64) {
    let Some(f) = launcher(vendor) else {
        UNTRACKED.store(true, Ordering::Relaxed);
        return;
    };
    PENDING.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the program's stream, which it just launched on; the marker takes no data.
    let r = crate::capturing::relaxed(vendor, || unsafe {
        f(stream as *mut c_void, marker, std::ptr::null_mut())
    });
    if r != 0 {
        done();
        UNTRACKED.store(true, Ordering::Relaxed);
    }
}

/// Why a copy's host source read now may not be the bytes it reads: a host function may
/// still run, unless the runtime stages the source at the call (an asynchronous copy
/// from pageable memory).
pub fn source_unknown(asynchronous: bool, pageable: bool) -> Option<&'static str> {
    (pending() && !(asynchronous && pageable)).then_some(PENDING_SOURCE)
}

#[cfg(test)]
mod tests;
