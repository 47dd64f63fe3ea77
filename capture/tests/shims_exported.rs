//! Every API the table declares, and every hand-written shim, is exported by
//! libhrr_capture.so under each vendor's symbol name: loading the built library and
//! looking each name up proves a program's calls would reach capture.

use std::ffi::CString;

use hrr_archive::api::{API_TABLE, SEMANTIC_APIS};

/// Hand-written shims outside the table (registration and launches are in SEMANTIC_APIS).
const HAND_WRITTEN: &[&str] = &[
    "__cudaGetKernel",
    "cudaLaunchKernelExC",
    "cuModuleLoadDataEx",
    "hipExtModuleLaunchKernel",
    "cudaStreamAddCallback",
    "cudaLaunchHostFunc",
    "cudaIpcGetMemHandle",
    "cudaIpcGetEventHandle",
    "hipStreamAddCallback",
    "hipLaunchHostFunc",
    "hipIpcGetMemHandle",
    "hipIpcGetEventHandle",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemcpyToSymbolAsync",
    "cudaMemcpyFromSymbolAsync",
    "hipMemcpyToSymbol",
    "hipMemcpyFromSymbol",
    "hipMemcpyToSymbolAsync",
    "hipMemcpyFromSymbolAsync",
];

#[test]
fn every_declared_api_has_an_exported_shim() {
    // The cdylib sits in this test's deps directory (cargo test) or one above it (cargo
    // build); build it when neither has it.
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let candidates = [
        deps.join("libhrr_capture.so"),
        deps.parent().unwrap().join("libhrr_capture.so"),
    ];
    if !candidates.iter().any(|c| c.is_file()) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let _ = std::process::Command::new(cargo)
            .args(["build", "-q", "-p", "hrr-capture"])
            .status();
    }
    let so = candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .expect("libhrr_capture.so was not built");
    let path = CString::new(so.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: dlopen of our own library; with HRR_CAPTURE_OUTPUT unset its constructor
    // only turns capture off.
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
    assert!(!h.is_null(), "dlopen {}", so.display());
    let mut names: Vec<&str> = Vec::new();
    for d in API_TABLE {
        names.extend(d.cuda);
        names.extend(d.hip);
    }
    for (id, _, cuda, hip) in SEMANTIC_APIS {
        // SymbolAddress and Unreplayable are records, not intercepted symbols.
        if *id == hrr_archive::api::semantic::SYMBOL_ADDRESS {
            continue;
        }
        names.extend(
            cuda.iter().chain(hip.iter()).filter(|n| {
                !n.starts_with("__cudaUnregister") && !n.starts_with("__hipUnregister")
            }),
        );
    }
    names.extend(HAND_WRITTEN);
    assert!(names.len() > 90, "{} names", names.len());
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| {
            let c = CString::new(*n).unwrap();
            // SAFETY: dlsym on a live handle with a NUL-terminated name.
            unsafe { libc::dlsym(h, c.as_ptr()) }.is_null()
        })
        .collect();
    assert!(missing.is_empty(), "no shim exported for: {missing:?}");
}
