//! Shared by capture's integration tests: the built libhrr_capture.so, and the
//! repository's stand-in HIP runtime (standin/) built for a test.
#![allow(dead_code)] // each test file uses some of these

use std::path::{Path, PathBuf};
use std::process::Command;

/// The built cdylib: in the test's deps directory (cargo test) or one above it (cargo
/// build), present and fresh (`hrr_testkit::built`; tests build nothing themselves).
pub fn capture_so() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    hrr_testkit::built::built(&hrr_testkit::built::CAPTURE, &exe)
}

/// Runs cc with `args`, failing the test with its output when it fails.
pub fn cc(args: &[String]) {
    let o = Command::new("cc").args(args).output().expect("cc");
    assert!(
        o.status.success(),
        "cc {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Builds the stand-in HIP runtime (standin/, against HIP's headers) into
/// `dir/libamdhip64.so.5`, and `program` (a file under tests/stand_in/) against it into
/// `dir/program`, with `extra` appended to the program's command line; the program's path.
pub fn build_hip_program(dir: &Path, program: &str, extra: &[String]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut args: Vec<String> = ["-O1", "-g", "-fPIC", "-shared", "-D__HIP_PLATFORM_AMD__"]
        .map(String::from)
        .to_vec();
    args.push("-Wl,-soname,libamdhip64.so.5".into());
    args.push("-o".into());
    args.push(dir.join("libamdhip64.so.5").display().to_string());
    // The list the harness builds it from (standin/sources.txt), read now.
    let (_, files) = hrr_testkit::standin::sources("amd");
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.push("-lpthread".into());
    cc(&args);
    let exe = dir.join("program");
    let mut args: Vec<String> = vec![
        "-O1".into(),
        "-o".into(),
        exe.display().to_string(),
        root.join("capture/tests/stand_in")
            .join(program)
            .display()
            .to_string(),
        format!("-L{}", dir.display()),
        "-l:libamdhip64.so.5".into(),
        format!("-Wl,-rpath,{}", dir.display()),
    ];
    args.extend_from_slice(extra);
    cc(&args);
    exe
}
