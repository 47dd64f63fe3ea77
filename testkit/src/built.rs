//! What other workspace packages build and a test runs (the capture library, replay):
//! tests share what `cargo test --workspace` built and build nothing themselves. An
//! artifact missing, or older than a source it is built from, fails the test naming the
//! command that builds it (`./test.sh` runs that before `cargo test -p PACKAGE`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::tools::workspace;

/// A workspace artifact: its file name, the package that builds it, and the sources
/// (workspace-relative files or directories) it is built from.
pub struct Artifact {
    pub file: &'static str,
    pub package: &'static str,
    pub sources: &'static [&'static str],
}

/// libhrr_capture.so.
pub const CAPTURE: Artifact = Artifact {
    file: "libhrr_capture.so",
    package: "hrr-capture",
    sources: &[
        "capture/src",
        "capture/build.rs",
        "archive/src",
        "format/src",
        "registry/src",
        "contract/src",
    ],
};

/// hrr-replay.
pub const REPLAY: Artifact = Artifact {
    file: "hrr-replay",
    package: "hrr-replay",
    sources: &[
        "replay/src",
        "archive/src",
        "format/src",
        "registry/src",
        "contract/src",
    ],
};

/// The newest modification time of `p`, a file or every file under a directory.
fn newest(p: &Path) -> Option<SystemTime> {
    let m = std::fs::metadata(p).ok()?;
    if !m.is_dir() {
        return m.modified().ok();
    }
    let mut newest = None;
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else if let Ok(t) = m.modified() {
                newest = newest.max(Some(t));
            }
        }
    }
    newest
}

/// Why `path` cannot be used as `a` (missing, or older than its newest source), or None.
pub fn stale(a: &Artifact, path: &Path, root: &Path) -> Option<String> {
    let Ok(built) = std::fs::metadata(path).and_then(|m| m.modified()) else {
        return Some(format!("{} is missing", path.display()));
    };
    let sources = a.sources.iter().filter_map(|s| newest(&root.join(s))).max();
    match sources {
        Some(s) if built < s => Some(format!(
            "{} is older than its sources ({})",
            path.display(),
            a.sources.join(", ")
        )),
        _ => None,
    }
}

/// `a` as built in the target directory that holds `beside` (a binary or test executable
/// of the same build): the newest copy in `beside`'s directory, the one above it (a
/// test's `deps/`), or either's `deps/` (`cargo test` leaves a library it builds there,
/// copied up only by `cargo build`). Panics, naming the command that builds it, where it
/// is missing or stale.
#[track_caller]
pub fn built(a: &Artifact, beside: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = beside
        .ancestors()
        .skip(1)
        .take(2)
        .map(Path::to_path_buf)
        .collect();
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let found = dirs
        .iter()
        .flat_map(|d| [d.join(a.file), d.join("deps").join(a.file)])
        .filter_map(|p| mtime(&p).map(|t| (t, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p);
    let path = found.unwrap_or_else(|| dirs[0].join(a.file));
    if let Some(why) = stale(a, &path, &workspace()) {
        panic!(
            "{why}: build it first with `cargo build -p {}`{} (`cargo test --workspace` and ./test.sh do); tests build nothing themselves",
            a.package,
            if dirs[0].ends_with("release") || dirs.iter().any(|d| d.ends_with("release")) {
                " --release"
            } else {
                ""
            }
        );
    }
    path
}
