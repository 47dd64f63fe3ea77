//! The exit codes of every `hrr-harness` command, in one enum, and the `--help` text that
//! lists them (made from the enum, so the help and the codes cannot drift apart).

use std::fmt::Write as _;

/// What an `hrr-harness` command ends with. `code()` is the process exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exit {
    /// Every case (or control) as the matrix expects.
    Ok,
    /// `run`, `report merge`: a case did something the matrix does not expect (a merge
    /// also: an expected family or shard sent no results); `build`, `run --compile-only`:
    /// a case or target failed to compile; `workflows check`: the workflows are out of date.
    Unexpected,
    /// Bad usage, a bad matrix, or a machine whose GPUs belong to another family.
    Usage,
    /// `control`: a guard case still passed without its fix.
    Missed,
    /// `control`: a guard case fails on the unmodified tree.
    BaselineFailed,
    /// `control`: the fix could not be removed, the tree did not build without it, or the
    /// harness could not run the control.
    Unviable,
    /// `control`: a guard case ran past its limit without the fix.
    Timeout,
    /// The infrastructure, not a case: the family's GPUs or compilers are missing here, or
    /// building the tools or a file step failed. No case result can be trusted.
    Infrastructure,
    /// Interrupted (Ctrl-C / SIGTERM); partial results were written.
    Interrupted,
}

impl Exit {
    pub const fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Unexpected => 1,
            Exit::Usage => 2,
            Exit::Missed => 3,
            Exit::BaselineFailed => 4,
            Exit::Unviable => 5,
            Exit::Timeout => 6,
            Exit::Infrastructure => 7,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

/// When several control failures apply, the first of these is the exit code.
pub const CONTROL_PRECEDENCE: [Exit; 4] = [
    Exit::BaselineFailed,
    Exit::Missed,
    Exit::Timeout,
    Exit::Unviable,
];

/// The codes every command but `control` ends with, as `--help` explains them.
const GENERAL: [(Exit, &str); 5] = [
    (
        Exit::Ok,
        "every case as the matrix expects (run --compile-only: every case compiled, none run on a GPU)",
    ),
    (
        Exit::Unexpected,
        "run, report merge: a case failed, crashed, timed out or passed unexpectedly, or (merge) an expected family/shard sent no results; build, run --compile-only: a case or target failed to compile; workflows check: the workflows are out of date",
    ),
    (
        Exit::Usage,
        "bad usage, an invalid matrix, or a machine whose GPUs belong to another family",
    ),
    (
        Exit::Infrastructure,
        "infrastructure: the family's GPUs or compilers are missing here (named), or building the tools or a file step failed",
    ),
    (Exit::Interrupted, "interrupted (partial results are written)"),
];

/// The codes of `hrr-harness control`.
const CONTROL: [(Exit, &str); 8] = [
    (
        Exit::Ok,
        "every control caught (each guard case failed without its fix)",
    ),
    (
        Exit::Usage,
        "bad usage or matrix (an unknown case in a Guarded-by trailer, an unknown control)",
    ),
    (
        Exit::Missed,
        "a control was missed: some guard case still passed without the fix",
    ),
    (
        Exit::BaselineFailed,
        "the baseline failed: a guard case fails on the unmodified tree",
    ),
    (
        Exit::Unviable,
        "a control was unviable (the fix could not be removed, or the tree did not build) or errored",
    ),
    (Exit::Timeout, "a guard case timed out without the fix"),
    (
        Exit::Infrastructure,
        "the unmodified tree did not build, or a report could not be written",
    ),
    (
        Exit::Interrupted,
        "interrupted (worktrees removed, outcomes so far written)",
    ),
];

fn table(rows: &[(Exit, &str)]) -> String {
    let mut s = String::from("Exit codes:\n");
    for (e, what) in rows {
        let _ = writeln!(s, "  {:<4} {what}", e.code());
    }
    s
}

fn codes(list: &[Exit]) -> String {
    list.iter()
        .map(|e| e.code().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `hrr-harness --help`'s exit-code section.
pub fn general_help() -> String {
    let own: Vec<Exit> = CONTROL
        .iter()
        .map(|(e, _)| *e)
        .filter(|e| !GENERAL.iter().any(|(g, _)| g == e))
        .collect();
    format!(
        "{}control (see `hrr-harness control --help`) has its own codes {}.",
        table(&GENERAL),
        codes(&own)
    )
}

/// `hrr-harness control --help`'s exit-code section.
pub fn control_help() -> String {
    format!(
        "{}When several apply, the first in this order wins: {}.",
        table(&CONTROL),
        codes(&CONTROL_PRECEDENCE)
    )
}

/// `report publish --help`'s exit codes (the verdict is the check run's, not the exit's).
pub fn publish_help() -> String {
    format!(
        "Exit codes:
  {:<4} published (the report's verdict is the check run's conclusion, not this code)
  {:<4} bad usage: GITHUB_TOKEN or GITHUB_REPOSITORY missing, a bad --head-sha or GITHUB_API_URL
  {:<4} an input refused (too large, not a regular file, malformed JUnit: nothing was posted), or GitHub refused a request",
        Exit::Ok.code(),
        Exit::Usage.code(),
        Exit::Infrastructure.code()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Exit; 9] = [
        Exit::Ok,
        Exit::Unexpected,
        Exit::Usage,
        Exit::Missed,
        Exit::BaselineFailed,
        Exit::Unviable,
        Exit::Timeout,
        Exit::Infrastructure,
        Exit::Interrupted,
    ];

    #[test]
    fn codes_are_distinct_and_the_documented_numbers() {
        let numbers: Vec<u8> = ALL.iter().map(|e| e.code()).collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5, 6, 7, 130]);
    }

    #[test]
    fn help_lists_each_code_once_per_table() {
        let control = control_help();
        for e in ALL {
            let line = format!("\n  {:<4} ", e.code());
            let want = usize::from(e != Exit::Unexpected);
            assert_eq!(control.matches(&line).count(), want, "{e:?} in {control}");
        }
        assert!(
            control.ends_with("this order wins: 4, 3, 6, 5."),
            "{control}"
        );
        let general = general_help();
        for e in [
            Exit::Ok,
            Exit::Unexpected,
            Exit::Usage,
            Exit::Infrastructure,
            Exit::Interrupted,
        ] {
            let line = format!("\n  {:<4} ", e.code());
            assert_eq!(general.matches(&line).count(), 1, "{e:?} in {general}");
        }
        assert!(
            general.ends_with("has its own codes 3, 4, 5, 6."),
            "{general}"
        );
    }
}
