//! Resolving the real function behind a shim: `dlsym(RTLD_NEXT, name)`, cached.
//!
//! RTLD_NEXT finds the next definition after this library in lookup order: the
//! program's libcudart.so or libamdhip64.so. An unversioned shim satisfies the
//! program's versioned references (hipMalloc@hip_4.2), and dlsym returns the default
//! version of the real symbol, so both Debian's HIP 5.2 and current ROCm bind.

use std::ffi::CStr;
use std::os::raw::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A lazily resolved function pointer for one symbol.
pub struct RealFn {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl RealFn {
    pub const fn new(name: &'static CStr) -> Self {
        RealFn {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The real function's address, or null when no later object defines it.
    pub fn get(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name; it only reads them.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        self.ptr.store(p, Ordering::Release);
        p
    }

    pub fn name(&self) -> &'static str {
        self.name.to_str().unwrap_or("?")
    }
}

/// Looks a symbol up in the already-loaded CUDA driver (libcuda.so.1), which the CUDA
/// runtime loads before any kernel can be launched.
pub fn cuda_driver_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: RTLD_NOLOAD never loads anything; the name is NUL-terminated.
    unsafe {
        let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if h.is_null() {
            return std::ptr::null_mut();
        }
        libc::dlsym(h, name.as_ptr())
    }
}
