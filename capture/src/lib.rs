//! libhrr_capture.so: loaded with LD_PRELOAD into an unmodified CUDA or HIP program, it
//! interposes the runtime's exported functions and records each call into an archive.
//!
//! Module map: `state` (the process-wide capture: env, writer, fork, exit notice),
//! `crash` (buffered events flushed on a fatal signal),
//! `real` (finding the real function behind each shim), `alloc` (live device and pinned
//! host allocations), `generic` (recording a table row by its parameter kinds), `shims`
//! (the extern "C" functions generated from the API table), `kernels` (registration
//! and launches, hand-written because their meaning is not in their parameter types).
//!
//! Invariants: the program always gets the real function's return value; a Rust panic
//! never crosses a shim (it turns capture off and marks the archive incomplete); a shim
//! reached from inside capture (our own calls into the runtime) goes straight through.

/// The real function behind a shim, found once with dlsym(RTLD_NEXT) and cached.
macro_rules! real {
    ($name:literal) => {{
        static R: RealFn = $crate::real::RealFn::new(
            match ::std::ffi::CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()) {
                Ok(c) => c,
                Err(_) => panic!("bad name"),
            },
        );
        R.get()
    }};
    (@ident $name:ident) => {{
        static R: RealFn = $crate::real::RealFn::new(
            match ::std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes())
            {
                Ok(c) => c,
                Err(_) => panic!("bad name"),
            },
        );
        R.get()
    }};
}

pub mod alloc;
pub mod crash;
pub mod generic;
pub mod kernels;
pub mod real;
pub mod shims;
pub mod state;
pub mod symbols;
pub mod unreplayable;
