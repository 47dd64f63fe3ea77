//! The extern "C" shims generated from the API table: one per vendor symbol of each
//! row. Each calls its real function through `real!` and hands its arguments to
//! `generic`.

use std::os::raw::c_int;

use hrr_archive::api::{FfiArg, Vendor};

use crate::real::NO_REAL_FUNCTION;

macro_rules! shim_for {
    (none, $vendor:ident, $id:literal; $($p:ident : $t:ty),*) => {};
    ($sym:ident, $vendor:ident, $id:literal; $($p:ident : $t:ty),*) => {
        #[no_mangle]
        #[allow(non_snake_case)]
        /// # Safety
        /// Called by the program in place of the runtime function of the same name.
        pub unsafe extern "C" fn $sym($($p: $t),*) -> c_int {
            // The table row declares the C signature.
            let Some(f) = real!($sym: unsafe extern "C" fn($($t),*) -> c_int).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            let Some(desc) = hrr_archive::api::desc($id) else {
                // SAFETY: the program's own arguments, passed on unchanged.
                return unsafe { f($($p),*) };
            };
            // A per-thread default stream form records its null stream as hipStreamPerThread.
            let raw = [$(FfiArg::to_u64($p)),*];
            let mut args = raw;
            hrr_archive::api::hip_abi::recorded_args(desc, &mut args);
            crate::generic::capture_row_passing(desc, Vendor::$vendor, &args, &raw, |a| {
                #[allow(unused_mut, unused_variables)] // a row without parameters
                let mut a = a.iter().copied();
                // SAFETY: the program's own arguments, passed on unchanged (a host
                // function wrapped: capture's trampoline, which calls the program's).
                unsafe { f($(<$t as FfiArg>::from_u64(a.next().unwrap_or(0))),*) }
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
    };
}

hrr_archive::hrr_api_table!(define_shims);
