//! The runtime and device the program ran on, written into the manifest once a context
//! exists (after the first successful malloc). Asked of the real functions, so nothing
//! is recorded and no context is created early; CUDA and HIP share the body and differ
//! only in the functions asked.

use std::ffi::c_char;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use hrr_archive::api::sigs;
use hrr_archive::api::Vendor;

use crate::ffi::c_string;
use crate::real::Real;
use crate::state;

/// `(int* value, attribute, int device)`: cudaDeviceGetAttribute / hipDeviceGetAttribute.
type AttributeFn = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;
/// `(char* name, int len, int device)`: cuDeviceGetName / hipDeviceGetName.
type DeviceNameFn = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;

/// cudaDevAttrComputeCapabilityMajor and Minor.
const COMPUTE_CAPABILITY: (c_int, c_int) = (75, 76);

/// The real functions one vendor answers the questions with.
struct Queries {
    runtime_version: &'static Real<sigs::IntOut>,
    driver_version: &'static Real<sigs::IntOut>,
    device: &'static Real<sigs::IntOut>,
    attribute: &'static Real<AttributeFn>,
    device_name: &'static Real<DeviceNameFn>,
}

fn queries(vendor: Vendor) -> Queries {
    match vendor {
        Vendor::Cuda => Queries {
            runtime_version: real!(cudaRuntimeGetVersion: sigs::IntOut),
            driver_version: real!(cudaDriverGetVersion: sigs::IntOut),
            device: real!(cudaGetDevice: sigs::IntOut),
            attribute: real!(cudaDeviceGetAttribute: AttributeFn),
            device_name: real!(driver cuDeviceGetName: DeviceNameFn),
        },
        Vendor::Hip => Queries {
            runtime_version: real!(hipRuntimeGetVersion: sigs::IntOut),
            driver_version: real!(hipDriverGetVersion: sigs::IntOut),
            device: real!(hipGetDevice: sigs::IntOut),
            attribute: real!(hipDeviceGetAttribute: AttributeFn),
            device_name: real!(hipDeviceGetName: DeviceNameFn),
        },
    }
}

/// An `int (int*)` query's answer, None when it is missing or fails.
fn int_out(f: &Real<sigs::IntOut>) -> Option<i32> {
    let f = f.get()?;
    let mut v: c_int = 0;
    // SAFETY: a valid out pointer for the int the function writes.
    (unsafe { f(&mut v) } == 0).then_some(v)
}

/// The architecture name the manifest carries: `sm_XY` for CUDA from the compute
/// capability; HIP's is not asked here (empty).
fn arch_name(vendor: Vendor, capability: Option<(i32, i32)>) -> String {
    match (vendor, capability) {
        (Vendor::Cuda, Some((major, minor))) => format!("sm_{major}{minor}"),
        _ => String::new(),
    }
}

static RUNTIME_NOTED: AtomicBool = AtomicBool::new(false);

/// Writes runtime and device metadata into the manifest, the first time it is called.
pub fn note_runtime_once(vendor: Vendor) {
    if RUNTIME_NOTED.swap(true, Ordering::SeqCst) {
        return;
    }
    let Some(cap) = state::current() else { return };
    let q = queries(vendor);
    let runtime_version = int_out(q.runtime_version)
        .map(|v| v.to_string())
        .unwrap_or_default();
    let driver_version = int_out(q.driver_version)
        .map(|v| v.to_string())
        .unwrap_or_default();
    let device = int_out(q.device).unwrap_or(0);
    let attribute = |a: c_int| -> Option<i32> {
        let f = q.attribute.get()?;
        let mut v: c_int = 0;
        // SAFETY: a valid out pointer; the device ordinal the runtime just reported.
        (unsafe { f(&mut v, a, device) } == 0).then_some(v)
    };
    let capability = match vendor {
        Vendor::Cuda => attribute(COMPUTE_CAPABILITY.0).zip(attribute(COMPUTE_CAPABILITY.1)),
        Vendor::Hip => None,
    };
    let arch = arch_name(vendor, capability);
    let name = q
        .device_name
        .get()
        .and_then(|f| {
            let mut buf = [0 as c_char; 256];
            // SAFETY: a 256-byte buffer, of which the function may write 255 and a NUL.
            let ok = unsafe { f(buf.as_mut_ptr(), 255, device) } == 0;
            // SAFETY: zero-filled, and the function writes a NUL-terminated name.
            ok.then(|| unsafe { c_string(buf.as_ptr()) })
        })
        .unwrap_or_default();
    cap.writer().update_runtime(|r| {
        r.runtime_version = runtime_version;
        r.driver_version = driver_version;
        r.devices = vec![hrr_archive::manifest::DeviceInfo {
            index: device as u32,
            name,
            arch,
            total_memory: 0,
        }];
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_architecture_is_named_from_the_compute_capability() {
        assert_eq!(arch_name(Vendor::Cuda, Some((9, 0))), "sm_90");
        assert_eq!(arch_name(Vendor::Cuda, None), "");
        assert_eq!(arch_name(Vendor::Hip, Some((9, 0))), "");
    }
}
