//! The stand-in CUDA runtime (`tests/stand_in/cuda.c`) built with cc, once per test
//! binary, for replaying archives without a GPU: replay loads it through
//! `HRR_REPLAY_CUDART`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The built library, or None where no C compiler is installed: the calling test skips
/// through `hrr_testkit` (which fails it under `CI=true` or `HRR_REQUIRE_ALL=1`). A
/// compiler that fails is the test's failure.
#[track_caller]
pub fn library() -> Option<&'static Path> {
    static BUILT: OnceLock<Result<(tempfile::TempDir, PathBuf), String>> = OnceLock::new();
    let cc = hrr_testkit::tool(&hrr_testkit::tools::CC)?;
    let built = BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let so = dir.path().join("libcudart.so.stand-in");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in/cuda.c");
        let o = Command::new(cc)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
            .arg(&so)
            .arg(&src)
            .output()
            .map_err(|e| e.to_string())?;
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).into_owned());
        }
        Ok((dir, so))
    });
    match built {
        Ok((_, so)) => Some(so.as_path()),
        Err(e) => panic!("the stand-in runtime did not build: {e}"),
    }
}
