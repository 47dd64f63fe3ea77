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
