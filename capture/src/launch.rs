//! Kernel launches: the launch shims (`cudaLaunchKernel`, `__cudaLaunchKernel`,
//! `cudaLaunchKernelExC`, `hipLaunchKernel`) and the launch record every launch path
//! shares, module launches included.
//!
//! A launch record is self-contained: the kernel's mangled name, the hash of the code
//! object that holds it, grid, block, shared memory, stream, and per parameter its
//! offset, size, bytes and the offsets of words that point into live allocations. What
//! a launch needs about its kernel is resolved once per kernel per thread
//! ([`KernelInfo`]): a launch then takes no global lock and copies no parameter list.
//!
//! `cudaLaunchKernelExC` with launch attributes is a `LaunchKernelEx` record: the launch
//! record and each attribute's id and 64-byte value verbatim, in the program's order
//! (replay hands them to `cuLaunchKernelEx`); without attributes it is a plain launch.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::os::raw::{c_int, c_uint, c_void};
use std::sync::Arc;

use hrr_archive::api::launch_config::{self, RecordedAttr};
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::alloc::Space;
use crate::ffi::{bytes_at, Dim3};
use crate::graph_io;
use crate::pinned::snapshot_pinned;
use crate::real::NO_REAL_FUNCTION;
use crate::registry::{KernelRegistry, Layout};
use crate::state::{self, guarded, Capture};

/// What a launch record needs about its kernel besides the arguments.
#[derive(Clone)]
pub struct KernelInfo {
    kernel: u64,
    stub: u64,
    /// Parameter layout; None when unavailable.
    params: Option<Arc<[(u64, u64)]>>,
    /// The record's fixed fields (name, code object), encoded once; None when the stub
    /// was never registered.
    prefix: Option<Arc<PayloadWriter>>,
}

impl KernelInfo {
    pub fn new(reg: &KernelRegistry, kernel: u64, stub: u64, params: Option<Layout>) -> Self {
        KernelInfo {
            kernel,
            stub,
            params: params.map(Arc::from),
            prefix: reg.launch_prefix(stub),
        }
    }
}

/// What a launch path resolves from its first argument (a kernel handle or host stub).
pub struct Resolved {
    pub kernel: u64,
    pub stub: u64,
    pub layout: Option<Layout>,
}

type LaunchCache = (u64, HashMap<(u16, u64), KernelInfo, AddrHash>);

/// The launch cache's hasher: its keys are an API id and an address the program chose,
/// not input an attacker picks to collide, so one multiply-fold replaces SipHash (a
/// measurable share of a launch's capture cost).
#[derive(Clone, Copy, Default)]
pub struct AddrHash;

impl std::hash::BuildHasher for AddrHash {
    type Hasher = AddrHasher;
    fn build_hasher(&self) -> AddrHasher {
        AddrHasher(0)
    }
}

/// Folds each written word into the state with a 64-bit odd multiplier.
pub struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

thread_local! {
    /// (registry generation, (launch API id, first launch argument) -> kernel info).
    static LAUNCH_CACHE: RefCell<LaunchCache> = RefCell::new((0, HashMap::default()));
    /// The payload buffer of this thread's launch records, kept between launches.
    static LAUNCH_PAYLOAD: RefCell<PayloadWriter> = RefCell::new(PayloadWriter::with_capacity(512));
}

/// The kernel info for launch API `id` called with `first`, from this thread's cache or
/// resolved by `resolve`. Only complete infos are cached: a stub registered later is then
/// still found.
pub fn kernel_info_cached(
    reg: &KernelRegistry,
    id: u16,
    first: u64,
    resolve: impl FnOnce(&KernelRegistry, u64) -> Resolved,
) -> KernelInfo {
    with_kernel_info(reg, id, first, resolve, KernelInfo::clone)
}

/// `f` applied to the kernel info `kernel_info_cached` would return, borrowed from this
/// thread's cache when it is there: a launch then copies nothing and touches no shared
/// reference count (threads launching one kernel would contend on its `Arc`s).
pub fn with_kernel_info<R>(
    reg: &KernelRegistry,
    id: u16,
    first: u64,
    resolve: impl FnOnce(&KernelRegistry, u64) -> Resolved,
    f: impl FnOnce(&KernelInfo) -> R,
) -> R {
    let generation = reg.generation();
    let mut f = Some(f);
    let hit = LAUNCH_CACHE
        .try_with(|c| {
            // Never re-entered (the shim guard keeps a launch's own work out of capture);
            // if it were, the info is resolved afresh below.
            let mut c = c.try_borrow_mut().ok()?;
            if c.0 != generation {
                *c = (generation, HashMap::default());
            }
            let info = c.1.get(&(id, first))?;
            f.take().map(|f| f(info))
        })
        .ok()
        .flatten();
    if let Some(r) = hit {
        return r;
    }
    let r = resolve(reg, first);
    let info = KernelInfo::new(reg, r.kernel, r.stub, r.layout);
    if info.params.as_ref().is_some_and(|l| !l.is_empty()) && info.prefix.is_some() {
        let _ = LAUNCH_CACHE.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                if c.0 == generation {
                    c.1.insert((id, first), info.clone());
                }
            }
        });
    }
    match f.take() {
        Some(f) => f(&info),
        // `f` is taken only on a cache hit, which returned above.
        None => unreachable!("the launch cache used its closure and returned nothing"),
    }
}

/// C type of `cuFuncGetParamInfo` / `cuKernelGetParamInfo` (CUDA 12.4+):
/// `CUresult (CUfunction|CUkernel, size_t index, size_t* offset, size_t* size)`.
type ParamInfoFn = unsafe extern "C" fn(*mut c_void, usize, *mut usize, *mut usize) -> c_int;

/// Which kind of CUDA handle a layout is asked for.
#[derive(Clone, Copy)]
pub enum CudaHandle {
    /// A `CUfunction` (a module function, or the function behind a host stub).
    Function,
    /// A `cudaKernel_t` / `CUkernel`.
    Kernel,
}

impl CudaHandle {
    /// The driver query that describes this kind of handle.
    fn query(self) -> &'static str {
        match self {
            CudaHandle::Function => "cuFuncGetParamInfo",
            CudaHandle::Kernel => "cuKernelGetParamInfo",
        }
    }
}

/// CUDA_ERROR_INVALID_VALUE: what the driver answers for an index past the last
/// parameter.
const CUDA_ERROR_INVALID_VALUE: c_int = 1;

/// The parameter layout of a CUDA kernel from the driver (cached per handle). Only an
/// index past the last parameter ends the list: any other error (a function the driver
/// cannot describe yet) is no layout. An empty layout is never cached: on the H200 a
/// kernel first launched on another stream while a stream captured in global mode was
/// described with no parameters before its launch, and with its three after.
pub fn cuda_param_layout(reg: &KernelRegistry, handle: u64, of: CudaHandle) -> Option<Layout> {
    if let Some(v) = reg.cached_layout(handle) {
        return Some(v);
    }
    let real = match of {
        CudaHandle::Kernel => real!(driver cuKernelGetParamInfo: ParamInfoFn),
        CudaHandle::Function => real!(driver cuFuncGetParamInfo: ParamInfoFn),
    };
    let _ = LAYOUT_GAP.try_with(|g| g.set(None));
    let Some(f) = real.get() else {
        note_gap(of.query(), None);
        return None;
    };
    let out = layout_from(|i| {
        let (mut off, mut size) = (0usize, 0usize);
        // SAFETY: valid out pointers; the handle came from the runtime.
        let r = unsafe { f(handle as usize as *mut c_void, i, &mut off, &mut size) };
        (r, off as u64, size as u64)
    });
    let out = match out {
        Ok(l) => l,
        Err(code) => {
            note_gap(of.query(), Some(code));
            return None;
        }
    };
    if !out.is_empty() {
        reg.cache_layout(handle, out.clone());
    }
    Some(out)
}

thread_local! {
    /// Why this thread's last CUDA layout query gave none: the query, and the driver's
    /// answer (None: the driver has no such function). Read by the launch record it
    /// leaves incomplete, so the record names the cause.
    static LAYOUT_GAP: Cell<Option<(&'static str, Option<c_int>)>> = const { Cell::new(None) };
}

fn note_gap(query: &'static str, code: Option<c_int>) {
    let _ = LAYOUT_GAP.try_with(|g| g.set(Some((query, code))));
}

/// Why a CUDA kernel's arguments could not be recorded, naming the driver's answer when
/// this thread's last layout query had one.
fn layout_gap_reason() -> String {
    let gap = LAYOUT_GAP.try_with(|g| g.take()).ok().flatten();
    match gap {
        Some((q, Some(code))) => format!(
            "kernel parameter layout unavailable ({q} returned {code}): arguments not recorded"
        ),
        Some((q, None)) => {
            format!("kernel parameter layout unavailable (the driver has no {q}): arguments not recorded")
        }
        None => "kernel parameter layout unavailable: arguments not recorded".into(),
    }
}

/// A layout from the driver's answers for indexes 0, 1, ... (result, offset, size):
/// parameters until CUDA_ERROR_INVALID_VALUE; any other error is returned.
fn layout_from(mut ask: impl FnMut(usize) -> (c_int, u64, u64)) -> Result<Layout, c_int> {
    let mut out = Vec::new();
    for i in 0..4096usize {
        match ask(i) {
            (0, off, size) => out.push((off, size)),
            (CUDA_ERROR_INVALID_VALUE, _, _) => return Ok(out),
            (code, _, _) => return Err(code),
        }
    }
    // An answer that never ends: CUDA_ERROR_INVALID_VALUE is never reached.
    Err(CUDA_ERROR_INVALID_VALUE)
}

/// CUDA, launch by host stub: the driver function behind the stub, for its layout.
pub fn resolve_cuda_stub(reg: &KernelRegistry, stub: u64) -> Resolved {
    let get =
        real!(cudaGetFuncBySymbol: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int);
    let mut function: *mut c_void = std::ptr::null_mut();
    let found = get.get().is_some_and(|g| {
        // SAFETY: cudaError_t cudaGetFuncBySymbol(cudaFunction_t*, const void* stub).
        unsafe { g(&mut function, stub as usize as *const c_void) == 0 }
    });
    let (kernel, layout) = if found {
        let f = function as u64;
        (f, cuda_param_layout(reg, f, CudaHandle::Function))
    } else {
        // Not a host stub: a kernel handle the program passed in its place
        // (`cudaGetKernel`'s, launched as its stub's kernel; or a library's, whose layout
        // `cudaLibraryGetKernel` asked the driver for).
        let bound = reg.stub_of_kernel(stub);
        if bound != 0 && bound != stub {
            let mut r = resolve_cuda_stub(reg, bound);
            r.kernel = stub;
            return r;
        }
        match reg.cached_layout(stub) {
            Some(l) => (stub, Some(l)),
            None => (0, None),
        }
    };
    Resolved {
        kernel,
        stub,
        layout,
    }
}

/// CUDA, launch by `cudaKernel_t` (the stub it came from was noted by `__cudaGetKernel`).
pub fn resolve_cuda_kernel(reg: &KernelRegistry, kernel: u64) -> Resolved {
    Resolved {
        kernel,
        stub: reg.stub_of_kernel(kernel),
        layout: cuda_param_layout(reg, kernel, CudaHandle::Kernel),
    }
}

/// CUDA, by driver handle (a `CUfunction`, or a `CUkernel` used as one): the handle is the
/// record's name key (module and library loads bound it), its layout the driver's.
pub fn resolve_cuda_function(reg: &KernelRegistry, f: u64) -> Resolved {
    Resolved {
        kernel: f,
        stub: f,
        layout: cuda_param_layout(reg, f, CudaHandle::Function)
            .or_else(|| cuda_param_layout(reg, f, CudaHandle::Kernel)),
    }
}

/// HIP, launch by host stub: the layout comes from the code object's metadata note.
pub fn resolve_hip_stub(reg: &KernelRegistry, stub: u64) -> Resolved {
    Resolved {
        kernel: 0,
        stub,
        layout: reg.hip_layout(stub),
    }
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
    if ret == 0 {
        // Kernels' outputs there are recorded at the synchronisation completing them.
        crate::mapped::note_launch(shape.stream, seq, &pinned);
    }
    if !pinned.is_empty() {
        // A kernel captured into a graph reads them at each launch of the graph.
        graph_io::note_kernel_pinned(vendor_of(api), shape.stream, &pinned);
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
    layout_unsure: bool,
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
                p.nested_with(fid::ARG, |a| {
                    a.u64(fid::ARG_OFFSET, *off).u64(fid::ARG_SIZE, *size);
                    a.bytes(fid::ARG_BYTES, bytes, false);
                    let mut words = PointerWords::new();
                    scan_pointer_words(bytes, |v| cap.allocs.lookup(v), &mut words, &mut pinned);
                    if !words.as_slice().is_empty() {
                        a.u64_array(fid::ARG_POINTER_WORDS, words.as_slice());
                    }
                    let objects = cap.objects.object_words(bytes);
                    if !objects.is_empty() {
                        a.u64_array(fid::ARG_OBJECT_WORDS, &objects);
                    }
                });
            }
            if let Err(why) = snapshot_pinned(cap, &mut p, &pinned) {
                incomplete = Some(why.to_string());
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

/// C type shared by `__cudaLaunchKernel`, `cudaLaunchKernel` and `hipLaunchKernel` (the
/// first parameter is a kernel handle or a host stub).
pub type LaunchFn =
    unsafe extern "C" fn(*const c_void, Dim3, Dim3, *mut *mut c_void, usize, *mut c_void) -> c_int;

/// The path every [`LaunchFn`] shim shares: call the real function exactly once (inside
/// the shim guard, so the runtime's own calls go straight through), then record the
/// launch, its kernel resolved from `first` by `resolve`. A per-thread default stream
/// form (`hipLaunchKernel_spt`) records its null stream as `hipStreamPerThread`.
///
/// # Safety
/// The arguments are the program's own, for the runtime's `f`.
#[allow(clippy::too_many_arguments)]
unsafe fn launch(
    f: LaunchFn,
    vendor: Vendor,
    id: u16,
    api: &str,
    first: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: *mut c_void,
    resolve: fn(&KernelRegistry, u64) -> Resolved,
    per_thread: bool,
) -> c_int {
    let shape = LaunchShape {
        grid,
        block,
        shmem,
        stream: match stream as u64 {
            0 if per_thread => hrr_archive::api::hip_abi::STREAM_PER_THREAD,
            s => s,
        },
    };
    // SAFETY: the program's own arguments, for the runtime's `f`.
    let call = || unsafe { f(first, grid, block, args, shmem, stream) };
    // SAFETY: `args` are the launch's argument pointers, which `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            vendor,
            id,
            api,
            first as u64,
            shape,
            args,
            resolve,
            &|_| {},
        )
    }
}

/// The launch path of every launch by stub or kernel handle: `call` makes the real call
/// exactly once (inside the shim guard, so the runtime's own calls go straight through),
/// then the launch is recorded as `id`, its kernel resolved from `first` by `resolve`,
/// `extra` adding the path's own fields.
///
/// # Safety
/// `args` must be the argument pointers `call` passes to the runtime.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch_by(
    call: impl FnOnce() -> c_int,
    vendor: Vendor,
    id: u16,
    api: &str,
    first: u64,
    shape: LaunchShape,
    args: *mut *mut c_void,
    resolve: fn(&KernelRegistry, u64) -> Resolved,
    extra: &dyn Fn(&mut PayloadWriter),
) -> c_int {
    let Some((cap, _g)) = state::enter(vendor) else {
        return call();
    };
    let build = || {
        with_kernel_info(&cap.kernels, id, first, resolve, |info| {
            // SAFETY: the program's argument pointers, which the runtime is about to read.
            unsafe { launch_payload(cap, info, shape, args) }
        })
    };
    around_launch(cap, id, api, shape, build, call, extra)
}

/// The order every launch path records in: `build` makes the record's payload before
/// `call` makes the real call (so the snapshot of host-visible memory the kernel reads
/// is taken before the kernel can write it), and the record is written after, with the
/// call's result and `extra`'s fields. A payload built without the kernel's parameters
/// (the driver could not describe the kernel before its first launch) is built again
/// after a successful call, when it can: the arguments are recorded then, and only the
/// snapshot, if the arguments reach host-visible memory, is taken after the launch was
/// issued. A panic in either half is contained (`guarded`).
pub fn around_launch(
    cap: &Capture,
    id: u16,
    api: &str,
    shape: LaunchShape,
    build: impl Fn() -> LaunchPayload,
    call: impl FnOnce() -> c_int,
    extra: &dyn Fn(&mut PayloadWriter),
) -> c_int {
    // A launch outside a range capture's range: the snapshot holds its effect.
    if !crate::range_gate::keeps(id) {
        return call();
    }
    let built = guarded(api, &build);
    let ret = call();
    let built = match built {
        Some(b) if b.layout_unsure && ret == 0 => guarded(api, &build).or(Some(b)),
        other => other,
    };
    if let Some(built) = built {
        guarded(api, || {
            record_launch_built(cap, id, api, shape, ret, built, extra)
        });
    }
    ret
}

/// A [`LaunchFn`] shim: `$resolve` finds the kernel behind the first argument.
macro_rules! launch_shim {
    ($name:ident, $vendor:expr, $id:expr, $resolve:path) => {
        launch_shim!($name, $vendor, $id, $resolve, false);
    };
    ($name:ident, $vendor:expr, $id:expr, $resolve:path, $per_thread:expr) => {
        /// # Safety
        /// Called by compiler-generated launch stubs or the program, in place of the
        /// runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            first: *const c_void,
            grid: Dim3,
            block: Dim3,
            args: *mut *mut c_void,
            shmem: usize,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: LaunchFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, for the runtime's function.
            unsafe {
                launch(
                    f,
                    $vendor,
                    $id,
                    stringify!($name),
                    first,
                    grid,
                    block,
                    args,
                    shmem,
                    stream,
                    $resolve,
                    $per_thread,
                )
            }
        }
    };
}

// nvcc's launch stubs (CUDA 12.4+) launch by kernel handle; older ones and programs by stub.
launch_shim!(
    __cudaLaunchKernel,
    Vendor::Cuda,
    semantic::LAUNCH_KERNEL_BY_HANDLE,
    resolve_cuda_kernel
);
launch_shim!(
    cudaLaunchKernel,
    Vendor::Cuda,
    semantic::LAUNCH_KERNEL,
    resolve_cuda_stub
);
launch_shim!(
    hipLaunchKernel,
    Vendor::Hip,
    semantic::LAUNCH_KERNEL,
    resolve_hip_stub
);
// Programs built with -fgpu-default-stream=per-thread launch through the _spt form.
launch_shim!(
    hipLaunchKernel_spt,
    Vendor::Hip,
    semantic::LAUNCH_KERNEL,
    resolve_hip_stub,
    true
);

/// CUDA's `cudaLaunchConfig_t` (CUDA 11.8+).
#[repr(C)]
pub struct LaunchConfig {
    grid: Dim3,
    block: Dim3,
    shmem: usize,
    stream: *mut c_void,
    attrs: *mut c_void,
    num_attrs: c_uint,
}

/// # Safety
/// Called by the program (and by `cudaLaunchKernelEx`, the header template) in place of the
/// runtime's function.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernelExC(
    config: *const LaunchConfig,
    func: *const c_void,
    args: *mut *mut c_void,
) -> c_int {
    // cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**).
    let real = real!(cudaLaunchKernelExC: unsafe extern "C" fn(*const LaunchConfig, *const c_void, *mut *mut c_void) -> c_int);
    let Some(f) = real.for_shim() else {
        return NO_REAL_FUNCTION;
    };
    // SAFETY: the program's own arguments, for the runtime's function.
    let call = || unsafe { f(config, func, args) };
    if config.is_null() {
        return call();
    }
    // SAFETY: the configuration the runtime reads in full (read here before the call: the
    // program's memory, unchanged by it).
    let cfg = unsafe { &*config };
    // SAFETY: the runtime reads `num_attrs` attributes there.
    let attrs = unsafe { launch_attrs(cfg) };
    let id = if attrs.is_empty() {
        semantic::LAUNCH_KERNEL
    } else {
        semantic::LAUNCH_KERNEL_EX
    };
    let shape = LaunchShape {
        grid: cfg.grid,
        block: cfg.block,
        shmem: cfg.shmem,
        stream: cfg.stream as u64,
    };
    // SAFETY: `args` are the argument pointers `call` hands the runtime.
    unsafe {
        launch_by(
            call,
            Vendor::Cuda,
            id,
            "cudaLaunchKernelExC",
            func as u64,
            shape,
            args,
            resolve_cuda_stub,
            &|p| encode_launch_attrs(p, &attrs),
        )
    }
}

/// The launch attributes of a configuration, each as recorded (id and value verbatim).
///
/// # Safety
/// `cfg.attrs` must hold `cfg.num_attrs` attributes when it is not null (the runtime
/// reads them so).
unsafe fn launch_attrs(cfg: &LaunchConfig) -> Vec<RecordedAttr> {
    // SAFETY: the caller's contract.
    unsafe { attrs_at(cfg.attrs as u64, cfg.num_attrs) }
}

/// `n` launch attributes at `at` (the runtime's `cudaLaunchAttribute` and the driver's
/// `CUlaunchAttribute` share their layout and numbering), each as recorded.
///
/// # Safety
/// `at` must hold `n` attributes when it is not null (the runtime or driver has just read
/// them there).
pub unsafe fn attrs_at(at: u64, n: c_uint) -> Vec<RecordedAttr> {
    if at == 0 || n == 0 {
        return Vec::new();
    }
    let len = n as usize * launch_config::ATTR_SIZE;
    // SAFETY: the caller's contract.
    let raw = unsafe { bytes_at(at as *const u8, len) };
    raw.chunks_exact(launch_config::ATTR_SIZE)
        .filter_map(|c| c.try_into().ok())
        .map(RecordedAttr::decode)
        .collect()
}

/// One nested field per launch attribute, in the program's order.
pub fn encode_launch_attrs(p: &mut PayloadWriter, attrs: &[RecordedAttr]) {
    for a in attrs {
        p.nested_with(fid::LAUNCH_ATTR, |n| {
            n.u64(fid::LAUNCH_ATTR_ID, a.id as u64);
            n.bytes(fid::LAUNCH_ATTR_VALUE, &a.value, false);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_index_past_the_last_parameter_ends_a_layout() {
        let answers = |codes: Vec<c_int>| {
            layout_from(|i| (codes.get(i).copied().unwrap_or(0), 8 * i as u64, 8))
        };
        assert_eq!(answers(vec![0, 0, 1]), Ok(vec![(0, 8), (8, 8)]));
        assert_eq!(answers(vec![1]), Ok(vec![]));
        // Any other error, first or later, is no layout (never "no parameters"), and is
        // kept for the record it leaves incomplete.
        assert_eq!(answers(vec![900]), Err(900));
        assert_eq!(answers(vec![0, 201]), Err(201));
        note_gap("cuFuncGetParamInfo", Some(900));
        assert!(layout_gap_reason().contains("(cuFuncGetParamInfo returned 900)"));
        assert!(!layout_gap_reason().contains("returned"), "read once");
        // An answer that never ends is no layout either.
        assert!(layout_from(|_| (0, 0, 4)).is_err());
    }

    fn words(vals: &[u64]) -> Vec<u8> {
        vals.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn pointer_words_are_found_inside_arguments_and_pinned_ranges_once() {
        // A by-value struct {dev ptr, int pair, pinned ptr, pinned ptr + 8} and a tail.
        let lookup = |v: u64| match v {
            0x1000..0x1100 => Some((0x1000, 0x100, Space::Device)),
            0x9000..0x9010 => Some((0x9000, 0x10, Space::PinnedHost)),
            _ => None,
        };
        let mut pinned = Vec::new();
        let mut bytes = words(&[0x1010, 7, 0x9000, 0x9008]);
        bytes.extend_from_slice(&[1, 2, 3]);
        let mut w = PointerWords::new();
        scan_pointer_words(&bytes, lookup, &mut w, &mut pinned);
        assert_eq!(w.as_slice(), &[0, 16, 24]);
        assert_eq!(pinned, vec![(0x9000, 0x10)]);
    }

    #[test]
    fn managed_memory_and_mapped_aliases_are_read_through_their_host_start() {
        // A managed allocation, and a device alias of pinned memory whose host start is
        // elsewhere (cudaHostGetDevicePointer returning another address).
        let lookup = |v: u64| match v {
            0x4000..0x4100 => Some((0x4000, 0x100, Space::Managed)),
            0x7000..0x7010 => Some((0x7000, 0x10, Space::MappedAlias { host: 0x9000 })),
            _ => None,
        };
        let mut reached = Vec::new();
        let mut w = PointerWords::new();
        scan_pointer_words(
            &words(&[0x4008, 0x7004, 0x4010]),
            lookup,
            &mut w,
            &mut reached,
        );
        assert_eq!(w.as_slice(), &[0, 8, 16]);
        assert_eq!(reached, vec![(0x4000, 0x100), (0x9000, 0x10)]);
    }

    #[test]
    fn more_pointer_words_than_the_stack_holds_spill_in_order() {
        let lookup = |v: u64| (v >= 0x1000).then_some((0x1000, 1 << 20, Space::Device));
        let vals: Vec<u64> = (0..20).map(|i| 0x1000 + i).collect();
        let mut pinned = Vec::new();
        let mut w = PointerWords::new();
        scan_pointer_words(&words(&vals), lookup, &mut w, &mut pinned);
        let expect: Vec<u64> = (0..20).map(|i| i * 8).collect();
        assert_eq!(w.as_slice(), &expect[..]);
        assert!(pinned.is_empty());
        let mut none = PointerWords::new();
        scan_pointer_words(&words(&[1, 2]), lookup, &mut none, &mut pinned);
        assert!(none.as_slice().is_empty());
    }
}
