//! Calls replay cannot reproduce: multi-device cooperative launches; and any shim's call
//! it cannot model (a reason given by the caller). Each is passed through unchanged, recorded as an `UNREPLAYABLE` event with its name, reason and raw
//! arguments, listed in the manifest, and warned about once on stderr; replay refuses it
//! by name.

use std::collections::HashSet;
use std::os::raw::c_int;

use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::sync::{ForkLock, Mutex};
use hrr_archive::writer::current_tid;

use crate::real::NO_REAL_FUNCTION;
use crate::state::{self, guarded};

const MULTI_DEVICE: &str =
    "launches one cooperative kernel on several devices at once, which replay does not re-create";

static WARNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

pub fn record(vendor: Vendor, api: &'static str, reason: &'static str, ret: c_int, args: &[usize]) {
    let Some((cap, _guard)) = state::enter(vendor) else {
        return;
    };
    let _ = guarded(api, || {
        let w = cap.writer();
        let mut p = PayloadWriter::new();
        p.str(fid::API_NAME, api).str(fid::REASON, reason);
        for (i, a) in args.iter().enumerate() {
            p.handle(1 + i as u16, *a as u64);
        }
        w.append(semantic::UNREPLAYABLE, 0, current_tid(), ret, p.as_bytes());
        w.note_unreplayable(api, reason);
        let first = WARNED.lock().get_or_insert_with(HashSet::new).insert(api);
        if first {
            crate::say::say(&format!(
                "warning: {api} {reason}: recorded as unreplayable; hrr-replay will refuse it"
            ));
        }
    });
}

/// Defines a pass-through shim of pointer-sized and integer arguments (all passed in
/// registers on x86-64, so forwarding them as usize is exact).
macro_rules! unreplayable_shim {
    ($name:ident, $vendor:expr, $reason:expr, $($arg:ident),+) => {
        /// # Safety
        /// Called by the program with the runtime function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: usize),+) -> c_int {
            // The runtime's function takes these register arguments and returns an error
            // code. Missing (an older HIP), the program could not have linked against it
            // either, so that is never reached in practice.
            let real = real!($name: unsafe extern "C" fn($(unreplayable_shim!(@usize $arg)),+) -> c_int);
            let Some(f) = real.for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, forwarded unchanged.
            let ret = unsafe { f($($arg),+) };
            record($vendor, stringify!($name), $reason, ret, &[$($arg),+]);
            ret
        }
    };
    (@usize $arg:ident) => { usize };
}

unreplayable_shim!(
    hipLaunchCooperativeKernelMultiDevice,
    Vendor::Hip,
    MULTI_DEVICE,
    launch_params,
    num_devices,
    flags
);

/// The lock of `WARNED`, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&WARNED]
}
