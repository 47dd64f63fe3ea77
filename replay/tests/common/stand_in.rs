//! The stand-in CUDA runtime (`tests/stand_in/cuda.c`) built with cc, once per test
//! binary, for replaying archives without a GPU: replay loads it through
//! `HRR_REPLAY_CUDART`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The built library, or None where no C compiler is installed (the caller skips). Under
/// `CI=true` a missing compiler fails the test instead: CI installs one, so a skip there
/// would hide a broken setup.
pub fn library() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<(tempfile::TempDir, PathBuf)>> = OnceLock::new();
    let built = BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().ok()?;
            let so = dir.path().join("libcudart.so.stand-in");
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in/cuda.c");
            let ok = Command::new("cc")
                .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
                .arg(&so)
                .arg(&src)
                .status()
                .is_ok_and(|s| s.success());
            ok.then_some((dir, so))
        })
        .as_ref()
        .map(|(_, so)| so.as_path());
    assert!(
        built.is_some() || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true: the stand-in runtime could not be built (cc missing or failing)"
    );
    built
}
