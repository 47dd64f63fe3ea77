//! Shared by capture's integration tests: the built libhrr_capture.so.

use std::path::PathBuf;
use std::process::Command;

/// The built cdylib: in the test's deps directory (cargo test) or one above it (cargo
/// build); built through cargo when neither has it.
pub fn capture_so() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let candidates = [
        deps.join("libhrr_capture.so"),
        deps.parent().unwrap().join("libhrr_capture.so"),
    ];
    if !candidates.iter().any(|c| c.is_file()) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let _ = Command::new(cargo)
            .args(["build", "-q", "-p", "hrr-capture"])
            .status();
    }
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .expect("libhrr_capture.so was not built")
}
