//! Sticky errors: what a GPU runtime returns, from the failing call on, once a kernel
//! faulted (an illegal address or instruction, a device-side assert, a launch failure).
//! The CUDA runtime's, the CUDA driver's and HIP's numbers are the same for these; each
//! entry gives the CUDA runtime's name and HIP's where HIP has one. A capture whose calls
//! returned one of these is the archive of a failing program: replay reproduces it.

use super::Vendor;

/// `(code, CUDA name, HIP name)`.
pub const STICKY: &[(i32, &str, Option<&str>)] = &[
    (
        700,
        "cudaErrorIllegalAddress",
        Some("hipErrorIllegalAddress"),
    ),
    (702, "cudaErrorLaunchTimeout", Some("hipErrorLaunchTimeOut")),
    (710, "cudaErrorAssert", Some("hipErrorAssert")),
    (714, "cudaErrorHardwareStackError", None),
    (715, "cudaErrorIllegalInstruction", None),
    (716, "cudaErrorMisalignedAddress", None),
    (717, "cudaErrorInvalidAddressSpace", None),
    (718, "cudaErrorInvalidPc", None),
    (719, "cudaErrorLaunchFailure", Some("hipErrorLaunchFailure")),
];

/// Whether `code` is a sticky error of `vendor`'s runtime.
pub fn is_sticky(code: i32, vendor: Vendor) -> bool {
    name(code, vendor).is_some()
}

/// The runtime's name of sticky error `code`, if it is one.
pub fn name(code: i32, vendor: Vendor) -> Option<&'static str> {
    STICKY
        .iter()
        .find(|(c, _, _)| *c == code)
        .and_then(|(_, cuda, hip)| match vendor {
            Vendor::Cuda => Some(*cuda),
            Vendor::Hip => *hip,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_s_faults_are_sticky_under_their_names() {
        assert_eq!(name(715, Vendor::Cuda), Some("cudaErrorIllegalInstruction"));
        assert_eq!(name(700, Vendor::Hip), Some("hipErrorIllegalAddress"));
        for c in [700, 710, 715, 719] {
            assert!(is_sticky(c, Vendor::Cuda), "{c}");
        }
        // Errors that leave the context usable are not.
        for c in [0, 1, 2, 600, 701, 720] {
            assert!(!is_sticky(c, Vendor::Cuda), "{c}");
        }
        assert!(!is_sticky(715, Vendor::Hip));
    }
}
