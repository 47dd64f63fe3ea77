//! The extern "C" shims, generated from the API table: one per vendor symbol of each
//! row. Each resolves its real function, then hands its arguments to `generic`.

use std::ffi::CStr;
use std::os::raw::c_int;

use hrr_archive::api::{FfiArg, Vendor};

use crate::real::RealFn;

/// Error returned when the real function cannot be found (no runtime loaded).
const NO_REAL_FUNCTION: c_int = 999;

macro_rules! cstr {
    ($s:expr) => {
        match CStr::from_bytes_with_nul(concat!($s, "\0").as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("symbol name with a NUL"),
        }
    };
}

pub static REAL_CUDA_STREAM_SYNCHRONIZE: RealFn = RealFn::new(cstr!("cudaStreamSynchronize"));
pub static REAL_HIP_STREAM_SYNCHRONIZE: RealFn = RealFn::new(cstr!("hipStreamSynchronize"));

macro_rules! shim_for {
    (none, $vendor:ident, $id:literal; $($p:ident : $t:ty),*) => {};
    ($sym:ident, $vendor:ident, $id:literal; $($p:ident : $t:ty),*) => {
        #[no_mangle]
        #[allow(non_snake_case)]
        /// # Safety
        /// Called by the program in place of the runtime function of the same name.
        pub unsafe extern "C" fn $sym($($p: $t),*) -> c_int {
            static REAL: RealFn = RealFn::new(cstr!(stringify!($sym)));
            let real = REAL.get();
            if real.is_null() {
                eprintln!("hrr-capture: {} has no real definition after libhrr_capture.so", stringify!($sym));
                return NO_REAL_FUNCTION;
            }
            // SAFETY: `real` is the runtime's definition of this very symbol, whose C
            // signature the table row declares.
            let f: unsafe extern "C" fn($($t),*) -> c_int = unsafe { std::mem::transmute(real) };
            let Some(desc) = hrr_archive::api::desc($id) else {
                // SAFETY: as above.
                return unsafe { f($($p),*) };
            };
            crate::generic::capture_row(desc, Vendor::$vendor, &[$(FfiArg::to_u64($p)),*], || {
                // SAFETY: the program's own arguments, passed on unchanged.
                unsafe { f($($p),*) }
            })
        }
    };
}

macro_rules! define_shims {
    ($( ($id:literal, $name:ident, $cuda:ident, $hip:ident, $ret:ident; $( $p:ident : $t:ty => $k:ident $( ( $($ka:ident),+ ) )? ),* ) ),* $(,)?) => {
        $(
            shim_for!($cuda, Cuda, $id; $($p: $t),*);
            shim_for!($hip, Hip, $id; $($p: $t),*);
        )*
        /// Every symbol this library exports from the table (tests check the .so).
        pub const TABLE_SYMBOLS: &[&str] = &[ $( stringify!($cuda), stringify!($hip) ),* ];
    };
}

hrr_archive::hrr_api_table!(define_shims);
