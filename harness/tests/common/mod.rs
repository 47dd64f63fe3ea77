//! What several harness test files share: writing a file tree, a process's output as
//! text, the workspace root. (Whether a tool is installed: `hrr_testkit`.)
#![allow(dead_code)] // each test file uses some of these

use std::path::{Path, PathBuf};
use std::process::Output;

/// Writes `text` at `root/rel`, creating the directories on the way.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Standard output then standard error, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Standard output and standard error apart, asserting `secret` appears in neither.
pub fn streams_without(o: &Output, secret: &str) -> (String, String) {
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        !out.contains(secret) && !err.contains(secret),
        "the token was printed"
    );
    (out, err)
}

/// The workspace root (the harness crate's parent).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The debug capture library and replay binary `cargo test --workspace` builds beside
/// this test's harness binary (`harness`: `env!("CARGO_BIN_EXE_hrr-harness")`), checked
/// present and fresh (`hrr_testkit::built`): tests build nothing themselves.
/// `--tools` wants one directory holding both, and `cargo test` may leave the library in
/// `deps/`: the directory returned holds links to the two, one directory per test binary
/// (made once per process), so parallel test binaries never race on it.
pub fn built_capture_and_replay(harness: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use hrr_testkit::built::{built, CAPTURE, REPLAY};
        let beside = Path::new(harness);
        let replay = built(&REPLAY, beside);
        let so = built(&CAPTURE, beside);
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_string_lossy().into_owned();
        let dir = beside.parent().unwrap().join("hrr-test-tools").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (link, target) in [("hrr-replay", &replay), ("libhrr_capture.so", &so)] {
            let l = dir.join(link);
            let _ = std::fs::remove_file(&l);
            std::os::unix::fs::symlink(target, &l).unwrap();
        }
        dir
    })
    .clone()
}
