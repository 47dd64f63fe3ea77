//! Streams capturing into a graph, and what capture may do on the program's behalf while
//! one is (issue 12): capture never changes what a program does.
//!
//! A call made into a capturing stream is not executed when it is made: it becomes a node
//! of the graph being built, and the stream may not be synchronised (that is illegal
//! during capture and invalidates the program's capture sequence). So before capture
//! waits for a stream to read a copy's host side, it asks the real runtime
//! (`cudaStreamGetCaptureInfo` / `hipStreamGetCaptureInfo`, never our shim) whether that
//! stream is capturing, and defers the copy to the graph if it is ([`read_plan`]). The
//! real query sees what begin/end shims alone cannot: a stream that joined a capture by
//! waiting on an event recorded in a capturing stream.
//!
//! Under `cudaStreamCaptureModeGlobal`, while any thread captures, other threads in global
//! mode may not make "potentially unsafe" calls (a stream synchronisation among them):
//! capture's own wait on a stream that is not capturing would fail and invalidate the
//! other thread's capture. Capture therefore makes its own calls in relaxed mode
//! ([`relaxed`]: `cudaThreadExchangeStreamCaptureMode` around the call, the thread's mode
//! restored after), which the runtime documents for exactly this.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::{Vendor, CAPTURE_INVALIDATED};

/// A stream's capture state, as the runtime reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCapture {
    /// Not capturing: its work runs when it is issued.
    Idle,
    /// Capturing into the graph of capture sequence `id` (unique in the process).
    Active { id: u64 },
    /// Its capture sequence was invalidated; it stays in capture until the program ends
    /// the sequence.
    Invalidated,
    /// The runtime would not say (the legacy stream while a blocking stream captures
    /// answers `cudaErrorStreamCaptureImplicit`): its code.
    Unknown(c_int),
}

/// `cudaStreamCaptureStatus` / `hipStreamCaptureStatus` values (the same in both).
const STATUS_NONE: c_int = 0;
const STATUS_ACTIVE: c_int = 1;
const STATUS_INVALIDATED: c_int = 2;

/// `cudaStreamCaptureModeRelaxed` / `hipStreamCaptureModeRelaxed`.
pub const MODE_RELAXED: c_int = 2;

/// The state a capture query's result and outputs describe.
pub fn from_query(ret: c_int, status: c_int, id: u64) -> StreamCapture {
    match (ret, status) {
        (0, STATUS_NONE) => StreamCapture::Idle,
        (0, STATUS_ACTIVE) => StreamCapture::Active { id },
        (0, STATUS_INVALIDATED) => StreamCapture::Invalidated,
        (0, other) => StreamCapture::Unknown(other),
        (err, _) => StreamCapture::Unknown(err),
    }
}

/// What capture does about the host side of a completed copy on a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadPlan {
    /// The stream runs its work now: wait for it and read, as for any copy.
    ReadNow,
    /// The copy is a node of capture sequence `id`'s graph (or, for
    /// [`CAPTURE_INVALIDATED`], of a sequence already invalidated): nothing is waited for
    /// or read now; each launch of the graph records the node's bytes.
    DeferToGraph { id: u64 },
    /// The copy is a node added to explicit graph `graph` (`cudaGraphAddMemcpyNode1D`):
    /// it runs at each launch of the graph, never now.
    GraphNode { graph: u64 },
    /// Capture may not wait for the stream and cannot tell why: the copy's result is not
    /// recorded (the record is incomplete), the program is left alone.
    Refuse(String),
}

/// Capture's rule for a copy on `stream` in state `state` (pure).
pub fn read_plan(state: StreamCapture, stream: u64) -> ReadPlan {
    match state {
        StreamCapture::Idle => ReadPlan::ReadNow,
        StreamCapture::Active { id } => ReadPlan::DeferToGraph { id },
        StreamCapture::Invalidated => ReadPlan::DeferToGraph {
            id: CAPTURE_INVALIDATED,
        },
        StreamCapture::Unknown(code) => ReadPlan::Refuse(format!(
            "the runtime would not say whether stream {stream:#x} is capturing into a graph ({code}): capture did not wait for it, so the copy's host bytes were not recorded"
        )),
    }
}

/// C type of CUDA 13's `cudaStreamGetCaptureInfo(stream, status*, id*, graph*, deps**,
/// edges**, count*)`. CUDA 12's three-parameter function of that name ignores the
/// trailing null arguments (System V passes them in registers).
type CudaCaptureInfoFn = unsafe extern "C" fn(
    *mut c_void,
    *mut c_int,
    *mut u64,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
) -> c_int;
/// C type of `hipStreamGetCaptureInfo(stream, status*, id*)`.
type HipCaptureInfoFn = unsafe extern "C" fn(*mut c_void, *mut c_int, *mut u64) -> c_int;

/// C type of the driver's `cuStreamGetCaptureInfo_v2(stream, status*, id*, graph*,
/// deps**, count*)` (the same status values and errors as the runtime's).
type DriverCaptureInfoFn = unsafe extern "C" fn(
    *mut c_void,
    *mut c_int,
    *mut u64,
    *mut c_void,
    *mut c_void,
    *mut c_void,
) -> c_int;

/// `stream`'s capture state, from the real runtime (nothing is recorded), or, for CUDA
/// without a shared runtime (nvcc's static runtime: the program asks the driver), from
/// the driver. Neither having the query means no stream capture: every stream is idle.
pub fn stream_capture(vendor: Vendor, stream: u64) -> StreamCapture {
    let (mut status, mut id) = (STATUS_NONE, 0u64);
    let s = stream as usize as *mut c_void;
    let null = std::ptr::null_mut();
    let ret = match vendor {
        Vendor::Cuda => match real!(cudaStreamGetCaptureInfo: CudaCaptureInfoFn).get() {
            // SAFETY: a stream handle the program just used, valid out pointers, and
            // null for the optional outputs.
            Some(f) => unsafe { f(s, &mut status, &mut id, null, null, null, null) },
            None => match real!(driver cuStreamGetCaptureInfo_v2: DriverCaptureInfoFn).get() {
                // SAFETY: as above.
                Some(f) => unsafe { f(s, &mut status, &mut id, null, null, null) },
                None => return StreamCapture::Idle,
            },
        },
        Vendor::Hip => match real!(hipStreamGetCaptureInfo: HipCaptureInfoFn).get() {
            // SAFETY: as above.
            Some(f) => unsafe { f(s, &mut status, &mut id) },
            None => return StreamCapture::Idle,
        },
    };
    from_query(ret, status, id)
}

/// C type of `cudaThreadExchangeStreamCaptureMode` / `hipThreadExchangeStreamCaptureMode`.
type ExchangeModeFn = unsafe extern "C" fn(*mut c_int) -> c_int;

/// Runs `f` (a call capture makes of its own, on a stream that is not capturing) with the
/// calling thread in relaxed capture mode, then restores the thread's mode (CUDA without
/// a shared runtime: the driver's `cuThreadExchangeStreamCaptureMode`). A runtime without
/// the exchange (no stream capture at all) runs `f` as it is.
pub fn relaxed<T>(vendor: Vendor, f: impl FnOnce() -> T) -> T {
    let exchange = match vendor {
        Vendor::Cuda => real!(cudaThreadExchangeStreamCaptureMode: ExchangeModeFn)
            .get()
            .or_else(|| real!(driver cuThreadExchangeStreamCaptureMode: ExchangeModeFn).get()),
        Vendor::Hip => real!(hipThreadExchangeStreamCaptureMode: ExchangeModeFn).get(),
    };
    let Some(x) = exchange else {
        return f();
    };
    let mut mode = MODE_RELAXED;
    // SAFETY: a valid pointer to a capture mode value.
    let swapped = unsafe { x(&mut mode) } == 0;
    let out = f();
    if swapped {
        // SAFETY: as above; `mode` now holds the thread's previous mode.
        unsafe { x(&mut mode) };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_decides_the_state() {
        assert_eq!(from_query(0, 0, 9), StreamCapture::Idle);
        assert_eq!(from_query(0, 1, 9), StreamCapture::Active { id: 9 });
        assert_eq!(from_query(0, 2, 9), StreamCapture::Invalidated);
        // cudaErrorStreamCaptureImplicit (906): the legacy stream while a blocking
        // stream captures.
        assert_eq!(from_query(906, 0, 0), StreamCapture::Unknown(906));
        assert_eq!(from_query(0, 7, 0), StreamCapture::Unknown(7));
    }

    #[test]
    fn a_capturing_stream_is_never_waited_for() {
        assert_eq!(read_plan(StreamCapture::Idle, 5), ReadPlan::ReadNow);
        assert_eq!(
            read_plan(StreamCapture::Active { id: 3 }, 5),
            ReadPlan::DeferToGraph { id: 3 }
        );
        assert_eq!(
            read_plan(StreamCapture::Invalidated, 5),
            ReadPlan::DeferToGraph {
                id: CAPTURE_INVALIDATED
            }
        );
        match read_plan(StreamCapture::Unknown(906), 0x10) {
            ReadPlan::Refuse(why) => assert!(why.contains("stream 0x10") && why.contains("906")),
            other => panic!("{other:?}"),
        }
    }
}
