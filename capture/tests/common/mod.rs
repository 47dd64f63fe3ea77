//! Shared by capture's integration tests: the built libhrr_capture.so.

use std::path::PathBuf;

/// The built cdylib: in the test's deps directory (cargo test) or one above it (cargo
/// build), present and fresh (`hrr_testkit::built`; tests build nothing themselves).
pub fn capture_so() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    hrr_testkit::built::built(&hrr_testkit::built::CAPTURE, &exe)
}
