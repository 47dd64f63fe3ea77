//! Copies to and from `__device__` / `__constant__` variables (`cudaMemcpyToSymbol` and
//! friends, CUDA and HIP). The variable's device address comes from the real
//! `GetSymbolAddress`; it is recorded once (`SYMBOL_ADDRESS`: name, code object, address,
//! size) and entered in the allocation table, and the copy itself is recorded through the
//! generic Memcpy / MemcpyAsync row with that address, so its bytes are captured exactly
//! as any other copy's. Replay maps the address to the same variable in its own module.
//! A program asking for the address itself (`cudaGetSymbolAddress`, `hipGetSymbolAddress`)
//! gets the same record, so its later copies and launches through that address translate.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::{self, fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::alloc::Space;
use crate::generic::capture_row;
use crate::real::NO_REAL_FUNCTION;
use crate::state::{self, guarded};

/// C type of `cudaGetSymbolAddress` / `hipGetSymbolAddress(void** devPtr, const void*
/// symbol)`.
type GetSymbolAddressFn = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int;

/// The device address of a variable, from the real runtime (nothing recorded).
fn symbol_address(vendor: Vendor, symbol: *const c_void) -> Option<u64> {
    let real = match vendor {
        Vendor::Cuda => real!(cudaGetSymbolAddress: GetSymbolAddressFn),
        Vendor::Hip => real!(hipGetSymbolAddress: GetSymbolAddressFn),
    };
    let f = real.get()?;
    let mut dptr: *mut c_void = std::ptr::null_mut();
    // In relaxed capture mode: another thread's global capture must not forbid capture's
    // own lookup (`capturing`).
    // SAFETY: a valid out pointer, and the symbol the program passed to its copy.
    let r = crate::capturing::relaxed(vendor, || unsafe { f(&mut dptr, symbol) });
    (r == 0 && !dptr.is_null()).then_some(dptr as u64)
}

/// Resolves and (the first time) records a variable's address; None when it cannot be
/// resolved (the copy then goes through unrecorded and is noted in the manifest).
pub(crate) fn resolve(vendor: Vendor, symbol: *const c_void, api: &'static str) -> Option<u64> {
    let cap = state::current()?;
    let dptr = symbol_address(vendor, symbol)?;
    let var = cap.kernels.var_info(symbol as u64)?;
    if cap.kernels.first_symbol_use(symbol as u64) {
        cap.allocs.insert(dptr, var.size, Space::Device);
        let _g = state::enter(vendor);
        guarded(api, || {
            let mut p = PayloadWriter::new();
            p.u64(fid::HOST_STUB, symbol as u64)
                .str(fid::NAME, &var.name)
                .str(fid::CODE_OBJECT, &var.code_object.to_hex())
                .devptr(fid::DEVICE_ADDRESS, dptr)
                .u64(fid::SIZE, var.size);
            cap.record(semantic::SYMBOL_ADDRESS, 0, &p, None, api);
        });
    }
    Some(dptr)
}

/// The body of `cudaGetSymbolAddress` / `hipGetSymbolAddress`: the real call with the
/// program's arguments, then the variable's address recorded (once) as a symbol copy
/// records it; a variable capture cannot resolve is noted (replay refuses by name).
fn get_symbol_address(
    vendor: Vendor,
    api: &'static str,
    f: GetSymbolAddressFn,
    dev_ptr: *mut *mut c_void,
    symbol: *const c_void,
) -> c_int {
    // SAFETY: the program's own arguments, passed on unchanged.
    let ret = unsafe { f(dev_ptr, symbol) };
    // A runtime asking for an address inside its own call (HIP's symbol copies may) is
    // the outer call's business.
    if ret == 0 && !state::in_shim() && resolve(vendor, symbol, api).is_none() {
        if let Some(cap) = state::current() {
            cap.writer().note_unreplayable(
                api,
                "the variable was never registered: its device address cannot be mapped at replay",
            );
        }
    }
    ret
}

/// # Safety
/// Called by the program with the runtime function's own arguments.
#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(
    dev_ptr: *mut *mut c_void,
    symbol: *const c_void,
) -> c_int {
    let Some(f) = real!(cudaGetSymbolAddress: GetSymbolAddressFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    get_symbol_address(Vendor::Cuda, "cudaGetSymbolAddress", f, dev_ptr, symbol)
}

/// # Safety
/// Called by the program with the runtime function's own arguments.
#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolAddress(
    dev_ptr: *mut *mut c_void,
    symbol: *const c_void,
) -> c_int {
    let Some(f) = real!(hipGetSymbolAddress: GetSymbolAddressFn).for_shim() else {
        return NO_REAL_FUNCTION;
    };
    get_symbol_address(Vendor::Hip, "hipGetSymbolAddress", f, dev_ptr, symbol)
}

pub(crate) fn unrecorded(api: &'static str) {
    if let Some(cap) = state::current() {
        cap.writer().note_unreplayable(
            api,
            "the variable's device address could not be resolved (cudaGetSymbolAddress failed or the variable was never registered): the copy was not recorded",
        );
    }
}

/// A symbol copy's arguments besides the symbol: the host side, the byte count and
/// offset into the variable, the kind, which way it goes, and its stream (None: the
/// synchronous API).
#[derive(Clone, Copy)]
struct SymbolCopy {
    host: u64,
    count: usize,
    offset: usize,
    kind: c_int,
    to_symbol: bool,
    stream: Option<u64>,
}

/// The body every symbol-copy shim shares: resolve (and first time record) the
/// variable's address, then record the copy through the Memcpy / MemcpyAsync row with
/// that address in place of the symbol, calling the real function once through `call`.
fn symbol_copy(
    vendor: Vendor,
    api_name: &'static str,
    symbol: *const c_void,
    how: SymbolCopy,
    call: impl FnOnce() -> c_int,
) -> c_int {
    let row = if how.stream.is_some() {
        api::id::MemcpyAsync
    } else {
        api::id::Memcpy
    };
    let Some((dptr, desc)) = resolve(vendor, symbol, api_name).zip(api::desc(row)) else {
        unrecorded(api_name);
        return call();
    };
    let device = dptr.wrapping_add(how.offset as u64);
    let (dst, src) = if how.to_symbol {
        (device, how.host)
    } else {
        (how.host, device)
    };
    let mut args = vec![dst, src, how.count as u64, how.kind as u64];
    args.extend(how.stream);
    capture_row(desc, vendor, &args, call)
}

macro_rules! symbol_shims {
    ($vendor:expr, $to:ident, $from:ident, $to_async:ident, $from_async:ident) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $to(
            symbol: *const c_void,
            src: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($to: unsafe extern "C" fn(*const c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(symbol, src, count, offset, kind) };
            let how = SymbolCopy { host: src as u64, count, offset, kind, to_symbol: true, stream: None };
            symbol_copy($vendor, stringify!($to), symbol, how, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $from(
            dst: *mut c_void,
            symbol: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
        ) -> c_int {
            let Some(f) = real!($from: unsafe extern "C" fn(*mut c_void, *const c_void, usize, usize, c_int) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(dst, symbol, count, offset, kind) };
            let how = SymbolCopy { host: dst as u64, count, offset, kind, to_symbol: false, stream: None };
            symbol_copy($vendor, stringify!($from), symbol, how, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $to_async(
            symbol: *const c_void,
            src: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($to_async: unsafe extern "C" fn(*const c_void, *const c_void, usize, usize, c_int, *mut c_void) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(symbol, src, count, offset, kind, stream) };
            let how = SymbolCopy { host: src as u64, count, offset, kind, to_symbol: true, stream: Some(stream as u64) };
            symbol_copy($vendor, stringify!($to_async), symbol, how, call)
        }

        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $from_async(
            dst: *mut c_void,
            symbol: *const c_void,
            count: usize,
            offset: usize,
            kind: c_int,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($from_async: unsafe extern "C" fn(*mut c_void, *const c_void, usize, usize, c_int, *mut c_void) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, passed on unchanged.
            let call = || unsafe { f(dst, symbol, count, offset, kind, stream) };
            let how = SymbolCopy { host: dst as u64, count, offset, kind, to_symbol: false, stream: Some(stream as u64) };
            symbol_copy($vendor, stringify!($from_async), symbol, how, call)
        }
    };
}

symbol_shims!(
    Vendor::Cuda,
    cudaMemcpyToSymbol,
    cudaMemcpyFromSymbol,
    cudaMemcpyToSymbolAsync,
    cudaMemcpyFromSymbolAsync
);
symbol_shims!(
    Vendor::Hip,
    hipMemcpyToSymbol,
    hipMemcpyFromSymbol,
    hipMemcpyToSymbolAsync,
    hipMemcpyFromSymbolAsync
);
