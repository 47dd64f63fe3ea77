//! Calling the real function behind a shim: one typed way for every shim.
//!
//! A [`Real<F>`] names a symbol and its C type `F` (an `unsafe extern "C" fn`). It finds
//! the symbol once, with `dlsym(RTLD_NEXT)` (or in the loaded CUDA driver), caches the
//! address, and hands it out as an `Option<F>`: the null check happens here, once, and
//! no shim transmutes a pointer of its own. The `real!` macro declares one per use site:
//! `real!(cuModuleLoadData: unsafe extern "C" fn(*mut CUmodule, *const c_void) -> c_int)`.
//!
//! RTLD_NEXT finds the next definition after this library in lookup order: the
//! program's libcudart.so or libamdhip64.so. An unversioned shim satisfies the
//! program's versioned references (hipMalloc@hip_4.2), and dlsym returns the default
//! version of the real symbol, so both Debian's HIP 5.2 and current ROCm bind.
//!
//! When no later object defines the symbol (no runtime loaded after this library, or a
//! runtime too old to have it), a shim calls nothing, says so once on stderr, and
//! returns [`NoReal::VALUE`]: [`NO_REAL_FUNCTION`] for a function returning an error code,
//! a null handle for a registration returning one, nothing for a void function. A symbol
//! that is missing is looked up again on its next use (a runtime loaded later is found).

use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use hrr_archive::api::sigs;
use hrr_archive::api::Vendor;

/// What a shim returning an error code returns when its real function is missing. No
/// CUDA or HIP error code has this value, so the program sees a failure it can report.
pub const NO_REAL_FUNCTION: c_int = 999;

/// What a shim returns, by its C return type, when its real function is missing.
pub trait NoReal {
    const VALUE: Self;
}

impl NoReal for c_int {
    const VALUE: c_int = NO_REAL_FUNCTION;
}

impl NoReal for () {
    const VALUE: () = ();
}

impl<T> NoReal for *mut T {
    const VALUE: *mut T = std::ptr::null_mut();
}

/// Where a symbol is looked up.
#[derive(Clone, Copy)]
enum Lookup {
    /// The next object after this library (the program's runtime).
    Next,
    /// The CUDA driver (libcuda.so.1), once the runtime has loaded it; never loaded here.
    CudaDriver,
}

/// `name` in the already-loaded libcuda.so.1, or null (never loads it).
fn driver_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: RTLD_NOLOAD never loads anything; the names are NUL-terminated.
    unsafe {
        let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if h.is_null() {
            return std::ptr::null_mut();
        }
        libc::dlsym(h, name.as_ptr())
    }
}

/// The real function of one symbol, of C type `F`, resolved on first use and cached.
pub struct Real<F> {
    name: &'static CStr,
    lookup: Lookup,
    ptr: AtomicPtr<c_void>,
    warned: AtomicBool,
    _type: PhantomData<F>,
}

impl<F: Copy> Real<F> {
    const fn with(name: &'static CStr, lookup: Lookup) -> Self {
        assert!(
            std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>(),
            "a real function's type is a function pointer"
        );
        Real {
            name,
            lookup,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
            warned: AtomicBool::new(false),
            _type: PhantomData,
        }
    }

    /// The symbol `name` in the next object after this library.
    ///
    /// # Safety
    /// `F` must be the `unsafe extern "C" fn` type of the C declaration of `name`.
    pub const unsafe fn new(name: &'static CStr) -> Self {
        Self::with(name, Lookup::Next)
    }

    /// The symbol `name` in the already-loaded CUDA driver (libcuda.so.1), which the CUDA
    /// runtime loads before any kernel can be launched.
    ///
    /// # Safety
    /// As [`Real::new`].
    pub const unsafe fn in_cuda_driver(name: &'static CStr) -> Self {
        Self::with(name, Lookup::CudaDriver)
    }

    #[inline]
    fn address(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        let p = match self.lookup {
            // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name; it only reads them.
            Lookup::Next => unsafe {
                let p = libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr());
                // A driver symbol of a libcuda.so.1 loaded privately (by the runtime).
                if p.is_null() && hrr_archive::api::driver::is_driver_symbol(self.name()) {
                    driver_symbol(self.name)
                } else {
                    p
                }
            },
            // SAFETY: RTLD_NOLOAD never loads anything; the names are NUL-terminated.
            Lookup::CudaDriver => driver_symbol(self.name),
        };
        self.ptr.store(p, Ordering::Release);
        p
    }

    /// The real function, or None when no object defines it (yet).
    #[inline]
    pub fn get(&self) -> Option<F> {
        let p = self.address();
        if p.is_null() {
            return None;
        }
        // SAFETY: `new`'s contract: F is the function-pointer type of this very symbol
        // (its size is a pointer's, checked when the static was built), and `p` is that
        // symbol's non-null address.
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
    }

    /// For a shim: the real function, or None after saying once on stderr that there is
    /// none (the shim then returns [`NoReal::VALUE`]).
    #[inline]
    pub fn for_shim(&self) -> Option<F> {
        let f = self.get();
        if f.is_none() && !self.warned.swap(true, Ordering::Relaxed) {
            crate::say::say(&format!("{} has no real definition after libhrr_capture.so: the call does nothing and fails ({NO_REAL_FUNCTION} where it returns an error code)",
                self.name()));
        }
        f
    }

    pub fn name(&self) -> &'static str {
        self.name.to_str().unwrap_or("?")
    }
}

/// `real!(symbol: C type)`: a `&'static Real<C type>` for `symbol`, declared where it is
/// used; `real!(driver symbol: C type)` looks it up in the CUDA driver. The type written
/// must be the symbol's C declaration: that is the one promise a use site makes.
macro_rules! real {
    (driver $name:ident : $ty:ty) => {
        real!(@make in_cuda_driver, $name, $ty)
    };
    ($name:ident : $ty:ty) => {
        real!(@make new, $name, $ty)
    };
    (@make $ctor:ident, $name:ident, $ty:ty) => {{
        // SAFETY: the use site writes the symbol's C type (the macro's contract).
        static REAL: $crate::real::Real<$ty> = unsafe {
            $crate::real::Real::$ctor(
                match ::std::ffi::CStr::from_bytes_with_nul(
                    concat!(stringify!($name), "\0").as_bytes(),
                ) {
                    Ok(c) => c,
                    Err(_) => panic!("a symbol name with a NUL"),
                },
            )
        };
        &REAL
    }};
}

/// Waits for `stream` with the real runtime (never through our shim, so nothing is
/// recorded); the runtime's result, or [`NO_REAL_FUNCTION`]. A CUDA program without a
/// shared runtime (nvcc's static runtime, a driver-API program) is waited for through the
/// driver: its streams are the driver's.
pub fn stream_synchronize(vendor: Vendor, stream: u64) -> c_int {
    let real = match vendor {
        Vendor::Cuda => real!(cudaStreamSynchronize: sigs::PtrArg),
        Vendor::Hip => real!(hipStreamSynchronize: sigs::PtrArg),
    };
    match (real.get(), vendor) {
        // SAFETY: a stream handle the program passed to the copy being recorded.
        (Some(f), _) => unsafe { f(stream as usize as *mut c_void) },
        (None, Vendor::Cuda) => driver_stream_synchronize(stream),
        (None, Vendor::Hip) => NO_REAL_FUNCTION,
    }
}

/// Waits for `stream` with the CUDA driver's `cuStreamSynchronize` (a driver API copy's
/// stream, in a program that may hold no runtime); nothing is recorded.
pub fn driver_stream_synchronize(stream: u64) -> c_int {
    match real!(driver cuStreamSynchronize: sigs::PtrArg).get() {
        // SAFETY: a stream handle the program passed to the copy being recorded.
        Some(f) => unsafe { f(stream as usize as *mut c_void) },
        None => NO_REAL_FUNCTION,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_symbol_is_none_and_each_return_type_has_its_result() {
        let missing = real!(hrr_no_such_symbol_anywhere: unsafe extern "C" fn() -> c_int);
        assert!(missing.get().is_none());
        assert!(missing.for_shim().is_none());
        assert_eq!(missing.name(), "hrr_no_such_symbol_anywhere");
        assert_eq!(<c_int as NoReal>::VALUE, NO_REAL_FUNCTION);
        assert!(<*mut *mut c_void as NoReal>::VALUE.is_null());
    }

    #[test]
    fn a_present_symbol_is_called_through_its_type() {
        // The test binary links libc after nothing that defines strlen: RTLD_NEXT from
        // here finds libc's.
        let strlen = real!(strlen: unsafe extern "C" fn(*const std::ffi::c_char) -> usize);
        let f = strlen.get().expect("libc's strlen");
        // SAFETY: a NUL-terminated string.
        assert_eq!(unsafe { f(c"four".as_ptr()) }, 4);
    }
}
