//! A launch record's payload: the shape, each argument with the words that point into
//! live allocations or hold live objects, the snapshot of the pinned, mapped and managed
//! memory they reach (built before the real call), and the record written after it with
//! the reached allocations noted for outputs and for a capturing stream's graph.

use std::cell::RefCell;
use std::os::raw::{c_int, c_void};

use hrr_archive::api::{fid, Vendor};
use hrr_archive::payload::PayloadWriter;

use super::kernel_info::{layout_gap_reason, KernelInfo};
use crate::alloc::Space;
use crate::ffi::{bytes_at, Dim3};
use crate::graph_io;
use crate::pinned::snapshot_pinned;
use crate::state::Capture;

thread_local! {
    /// The payload buffer of this thread's launch records, kept between launches.
    static LAUNCH_PAYLOAD: RefCell<PayloadWriter> = RefCell::new(PayloadWriter::with_capacity(512));
}

/// Grid, block, shared memory and stream of one launch.
#[derive(Clone, Copy)]
pub struct LaunchShape {
    pub grid: Dim3,
    pub block: Dim3,
    pub shmem: usize,
    pub stream: u64,
}

impl LaunchShape {
    /// The shape of a launch given as the module API gives it: grid and block as x, y,
    /// z counts.
    pub fn from_xyz(grid: [u32; 3], block: [u32; 3], shmem: usize, stream: u64) -> Self {
        let dim = |[x, y, z]: [u32; 3]| Dim3 { x, y, z };
        LaunchShape {
            grid: dim(grid),
            block: dim(block),
            shmem,
            stream,
        }
    }
}

/// The offsets of an argument's words that point into live allocations, kept on the
/// stack for the common few.
struct PointerWords {
    inline: [u64; 16],
    found: usize,
    spilled: Vec<u64>,
}

impl PointerWords {
    #[inline]
    fn new() -> Self {
        PointerWords {
            inline: [0; 16],
            found: 0,
            spilled: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, at: u64) {
        if self.found < self.inline.len() {
            self.inline[self.found] = at;
        } else {
            if self.spilled.is_empty() {
                self.spilled.extend_from_slice(&self.inline);
            }
            self.spilled.push(at);
        }
        self.found += 1;
    }

    #[inline]
    fn as_slice(&self) -> &[u64] {
        if self.found > self.inline.len() {
            &self.spilled
        } else {
            &self.inline[..self.found]
        }
    }
}

/// Scans an argument's 8-byte words (also inside by-value structs): the offsets of those
/// that point into an allocation `lookup` knows go into `words` (filled in place: it
/// lives on the caller's stack), and each host-readable allocation a kernel reads and
/// writes directly (pinned, mapped through a device alias, managed) pointed into, once,
/// into `pinned`, by its host start.
#[inline]
fn scan_pointer_words(
    bytes: &[u8],
    lookup: impl Fn(u64) -> Option<(u64, u64, Space)>,
    words: &mut PointerWords,
    pinned: &mut Vec<(u64, u64)>,
) {
    for (w, word) in bytes.chunks_exact(8).enumerate() {
        let v = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        if let Some((start, len, space)) = lookup(v) {
            words.push((w * 8) as u64);
            let host = match space {
                Space::Device => continue,
                Space::PinnedHost | Space::Managed => start,
                Space::MappedAlias { host } => host,
            };
            if !pinned.iter().any(|(s, _)| *s == host) {
                pinned.push((host, len));
            }
        }
    }
}

/// The runtime a launch API belongs to, by its name (`hip*`, else CUDA's runtime or
/// driver).
fn vendor_of(api: &str) -> Vendor {
    if api.starts_with("hip") {
        Vendor::Hip
    } else {
        Vendor::Cuda
    }
}

/// The record of a launch whose payload `launch_payload` built before the real call:
/// written with the call's result, the reached allocations noted for outputs and for a
/// capturing stream's graph.
pub fn record_launch_built(
    cap: &Capture,
    id: u16,
    api: &str,
    shape: LaunchShape,
    ret: c_int,
    built: LaunchPayload,
    extra: &dyn Fn(&mut PayloadWriter),
) {
    let (pinned, seq) = record_built(cap, id, api, ret, built, extra);
    // A kernel captured into a graph reads them at each launch of the graph.
    // (Asked only of a launch that succeeded: a query of capture's after a failed one
    // would clear the program's error where HIP sets the last error at every call.)
    let captured = ret == 0
        && !pinned.is_empty()
        && graph_io::note_kernel_pinned(vendor_of(api), shape.stream, &pinned);
    if ret == 0 && !captured {
        // Kernels' outputs there are recorded at the synchronisation completing them. A
        // captured kernel does not run now: the graph's launches note what they reach
        // (noted here, it stayed "in flight" until the stream's next synchronisation,
        // and the graph's first launch after it took no snapshot of the host's input).
        crate::mapped::note_launch(api, shape.stream, seq, &pinned);
    }
}

/// A launch record built and written at once, without noting anything for outputs or
/// the stream's graph (a graph kernel node's record: the node runs at its graph's
/// launches, which snapshot its inputs then): the pinned and managed allocations the
/// arguments point into are returned (the caller gives them to its graph), with the
/// record's sequence id.
///
/// # Safety
/// As [`launch_payload`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn record_launch_body(
    cap: &Capture,
    id: u16,
    api: &str,
    info: &KernelInfo,
    shape: LaunchShape,
    args: *mut *mut c_void,
    ret: c_int,
    extra: &dyn Fn(&mut PayloadWriter),
) -> (Vec<(u64, u64)>, Option<u64>) {
    // SAFETY: the caller's contract.
    let built = unsafe { launch_payload(cap, info, shape, args) };
    record_built(cap, id, api, ret, built, extra)
}

/// A launch record's payload, built from the program's arguments before the real call
/// (`launch_payload`), written after it (`record_built`).
pub struct LaunchPayload {
    p: PayloadWriter,
    /// Pinned, mapped and managed allocations the arguments reach (host start, size).
    pinned: Vec<(u64, u64)>,
    incomplete: Option<String>,
    /// The kernel's layout was missing or empty when the payload was built: before a
    /// launch the driver may not describe a kernel yet (`cuda_param_layout`).
    pub(super) layout_unsure: bool,
}

/// Builds a launch's payload: kernel, shape, arguments with their pointer and object
/// words, and the snapshot of the pinned, mapped and managed memory they reach. Called
/// before the launch is issued, so the snapshot holds the bytes the kernel will read,
/// never bytes it has already written.
///
/// # Safety
/// `args` must be the launch's argument pointers, one per parameter of `info`'s layout,
/// each pointing at that parameter's value (the launch ABI).
pub unsafe fn launch_payload(
    cap: &Capture,
    info: &KernelInfo,
    shape: LaunchShape,
    args: *mut *mut c_void,
) -> LaunchPayload {
    let mut noted: Vec<(u64, u64)> = Vec::new();
    // This thread's payload buffer from its last launch, reused: no allocation per launch.
    let mut p = LAUNCH_PAYLOAD
        .try_with(|b| std::mem::take(&mut *b.borrow_mut()))
        .unwrap_or_default();
    p.clear();
    p.handle(fid::KERNEL, info.kernel)
        .u64(fid::HOST_STUB, info.stub);
    let mut incomplete: Option<String> = None;
    match &info.prefix {
        Some(pre) => {
            p.extend_encoded(pre);
        }
        None => incomplete = Some(format!("kernel stub {:#x} was never registered", info.stub)),
    }
    p.u64_array(fid::GRID, &shape.grid.to_u64s());
    p.u64_array(fid::BLOCK, &shape.block.to_u64s());
    p.u64(fid::SHARED_MEM, shape.shmem as u64)
        .handle(fid::STREAM, shape.stream);
    match info.params.as_deref() {
        Some(list) if !args.is_null() || list.is_empty() => {
            // Pinned host allocations the arguments point into: snapshotted below.
            let mut pinned: Vec<(u64, u64)> = Vec::new();
            for (i, (off, size)) in list.iter().enumerate() {
                // SAFETY: the caller's contract: args[i] points at parameter i's value of
                // `size` bytes.
                let bytes = unsafe { bytes_at(*args.add(i) as *const u8, *size as usize) };
                let mut words = PointerWords::new();
                scan_pointer_words(bytes, |v| cap.allocs.lookup(v), &mut words, &mut pinned);
                let objects = cap.objects.object_words(bytes);
                p.argument(
                    fid::ARG,
                    (fid::ARG_OFFSET, *off),
                    (fid::ARG_SIZE, *size),
                    (fid::ARG_BYTES, bytes),
                    [
                        (fid::ARG_POINTER_WORDS, words.as_slice()),
                        (fid::ARG_OBJECT_WORDS, &objects),
                    ],
                );
            }
            // A host function queued before may still write what the kernel reads.
            let unknown = !pinned.is_empty() && crate::host_fns::pending();
            if let Err(why) = snapshot_pinned(cap, crate::mapped::in_flight, &mut p, &pinned) {
                incomplete = Some(why.to_string());
            } else if unknown {
                incomplete = Some(crate::host_fns::PENDING_SNAPSHOT.to_string());
            }
            noted = pinned;
        }
        _ => incomplete = Some(layout_gap_reason()),
    }
    LaunchPayload {
        p,
        pinned: noted,
        incomplete,
        layout_unsure: info.params.as_ref().is_none_or(|l| l.is_empty()),
    }
}

/// Writes a launch record built by `launch_payload` with the call's result and
/// `extra`'s fields; returns the reached allocations and the record's sequence id.
fn record_built(
    cap: &Capture,
    id: u16,
    api: &str,
    ret: c_int,
    built: LaunchPayload,
    extra: &dyn Fn(&mut PayloadWriter),
) -> (Vec<(u64, u64)>, Option<u64>) {
    let LaunchPayload {
        mut p,
        pinned,
        incomplete,
        ..
    } = built;
    extra(&mut p);
    let seq = cap.record(id, ret, &p, incomplete.as_deref(), api);
    let _ = LAUNCH_PAYLOAD.try_with(|b| *b.borrow_mut() = p);
    (pinned, seq)
}

#[cfg(test)]
mod tests;
