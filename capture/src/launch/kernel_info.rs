//! What a launch needs about its kernel, resolved once per kernel per thread: the
//! per-thread kernel-info cache (`with_kernel_info`), the kernel behind a launch's
//! first argument (`resolve_*`), and CUDA parameter layouts from the driver
//! (`cuda_param_layout`, cached per handle; why one is missing kept for the record).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use hrr_archive::api::sigs;
use hrr_archive::payload::PayloadWriter;

use crate::registry::{KernelRegistry, Layout};

/// What a launch record needs about its kernel besides the arguments.
#[derive(Clone)]
pub struct KernelInfo {
    pub(super) kernel: u64,
    pub(super) stub: u64,
    /// Parameter layout; None when unavailable.
    pub(super) params: Option<Arc<[(u64, u64)]>>,
    /// The record's fixed fields (name, code object), encoded once; None when the stub
    /// was never registered.
    pub(super) prefix: Option<Arc<PayloadWriter>>,
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
        CudaHandle::Kernel => real!(driver cuKernelGetParamInfo: sigs::FuncGetParamInfo),
        CudaHandle::Function => real!(driver cuFuncGetParamInfo: sigs::FuncGetParamInfo),
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
pub(super) fn layout_gap_reason() -> String {
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

#[cfg(test)]
mod tests;
