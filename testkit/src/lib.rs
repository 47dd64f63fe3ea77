//! Test-only (a dev-dependency, never built into a tool): the one way a test does without
//! something it needs.
//!
//! - [`tool`] and [`tools`] find what a test runs or reads from outside the workspace
//!   ([`tools`](mod@tools) says where each may be and how to install it), or skip through
//!   [`skip`] naming what is missing.
//! - [`skip`]: a missing tool ([`Need::Tool`]) fails the test under `CI=true` or
//!   `HRR_REQUIRE_ALL=1`, where everything is installed and a skip would hide a broken
//!   setup. Elsewhere, and always for what the machine is ([`Need::Gpu`],
//!   [`Need::Machine`]), it writes `SKIPPED [kind] package test: reason (file:line)` to
//!   standard error (past libtest's capture, so it shows in the run) and appends the same
//!   line to the skip directory, which `./test.sh` lists after the run.
//!
//! - [`built`](mod@built): what other workspace packages build and a test runs (capture,
//!   replay), shared and never built by a test: missing or stale fails naming the command.
//! - [`standin`]: the repository's one stand-in runtime (`standin/`), built by a test
//!   from the file list `standin/sources.txt`.
//!
//! The skip directory is `HRR_TEST_SKIPS`, else `hrr-test-skips` in the target directory
//! the test binary was built in. Each test process appends to a file of its own, one line
//! per `write` (O_APPEND), so parallel tests and test binaries never mix their lines.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

pub mod built;
pub mod standin;
pub mod tools;
pub use tools::{find, Tool};

/// What a test did without.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// A program, library, header set or data set that `.ci/install` installs: missing, the
    /// test fails under `CI=true` or `HRR_REQUIRE_ALL=1`.
    Tool,
    /// A GPU, or the absence of one (a test of the no-GPU path on a machine with one): the
    /// machine decides, in CI too (CI has no GPU). Never a failure; always listed.
    Gpu,
    /// Anything else the machine allows or not (unprivileged user namespaces), or a run that
    /// declares the test not run (ci.yml on GitHub-hosted runners). Never a failure; always
    /// listed.
    Machine,
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Need::Tool => "tool",
            Need::Gpu => "gpu",
            Need::Machine => "machine",
        })
    }
}

/// Whether a missing tool fails the test: `CI=true` or `HRR_REQUIRE_ALL=1`.
pub fn strict() -> bool {
    strict_from(|k| std::env::var(k).ok())
}

fn strict_from(var: impl Fn(&str) -> Option<String>) -> bool {
    var("CI").is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
        || var("HRR_REQUIRE_ALL").as_deref() == Some("1")
}

/// The tool's path, or None after [`skip`] (which fails the test under [`strict`]) naming
/// it, where it was looked for and how to install it.
#[track_caller]
pub fn tool(t: &Tool) -> Option<PathBuf> {
    let [p] = tools([t])?;
    Some(p)
}

/// Every tool's path, or None after one [`skip`] naming each missing one.
#[track_caller]
pub fn tools<const N: usize>(ts: [&Tool; N]) -> Option<[PathBuf; N]> {
    let found = ts.map(find);
    let missing: Vec<String> = ts
        .iter()
        .zip(&found)
        .filter(|(_, p)| p.is_none())
        .map(|(t, _)| t.missing())
        .collect();
    if missing.is_empty() {
        return Some(found.map(Option::unwrap));
    }
    skip(Need::Tool, missing.join("; "));
    None
}

/// Records that the calling test (or the part of it `reason` names) did not run: a
/// failure for a [`Need::Tool`] under [`strict`]; otherwise printed and recorded.
#[track_caller]
pub fn skip(need: Need, reason: impl fmt::Display) {
    let at = std::panic::Location::caller();
    let s = Skip {
        need,
        package: std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "?".into()),
        test: current_test(),
        place: format!("{}:{}", at.file(), at.line()),
        reason: reason.to_string(),
    };
    s.settle(
        strict(),
        skip_dir().as_deref(),
        &process_file(),
        &mut std::io::stderr(),
    );
}

/// One skip, as recorded.
#[derive(Debug)]
struct Skip {
    need: Need,
    package: String,
    test: String,
    place: String,
    reason: String,
}

impl Skip {
    fn line(&self) -> String {
        let reason = self.reason.replace('\n', " ");
        format!(
            "SKIPPED [{}] {} {}: {reason} ({})",
            self.need, self.package, self.test, self.place
        )
    }

    /// Under `strict`, a missing tool fails the test (a panic naming it); otherwise the
    /// line goes to `err` (the process's standard error, one write: never interleaved
    /// with another test's) and, with a skip directory, to `file` in it.
    #[track_caller]
    fn settle(&self, strict: bool, dir: Option<&Path>, file: &str, err: &mut dyn Write) {
        if strict && self.need == Need::Tool {
            panic!(
                "{}: {} ({}). CI=true or HRR_REQUIRE_ALL=1: a test may not pass by skipping \
                 for want of a tool (.ci/install installs every one)",
                self.test, self.reason, self.place
            );
        }
        let line = self.line() + "\n";
        let _ = err.write_all(line.as_bytes());
        if let Some(dir) = dir {
            if let Err(e) = append(dir, file, &line) {
                let _ = writeln!(
                    err,
                    "hrr-testkit: the skip above is not in {}: {e}",
                    dir.display()
                );
            }
        }
    }
}

fn append(dir: &Path, file: &str, line: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(file))?
        .write_all(line.as_bytes())
}

/// libtest runs each test on a thread named after it.
fn current_test() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => "?".into(),
    }
}

/// Where skips are recorded: `HRR_TEST_SKIPS`, else `hrr-test-skips` in the target
/// directory holding this test binary (the first ancestor with cargo's CACHEDIR.TAG).
pub fn skip_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HRR_TEST_SKIPS").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .find(|d| d.join("CACHEDIR.TAG").is_file())
        .map(|d| d.join("hrr-test-skips"))
}

/// This process's file in the skip directory: package, test binary (without cargo's
/// hash) and process id.
fn process_file() -> String {
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "unknown".into());
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let binary = match binary.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => binary,
    };
    format!("{package}.{binary}.{}.txt", std::process::id())
}

#[cfg(test)]
mod tests;
