//! What a run leaves behind and shows while it goes: the progress bar on a terminal (plain
//! lines otherwise, and always in CI), `results.jsonl` appended as each case finishes, and
//! at the end `results.json`, `junit.xml` and `summary.md` (also appended to
//! `$GITHUB_STEP_SUMMARY` when set).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by commands whose whole work is their output (`matrix`, `run --list`): a reader
/// that closed the pipe (`| head`) then ends them quietly with exit 0, as cargo and
/// ripgrep do. Any other command goes on (its results are files; its exit code must stay
/// its verdict) and drops the lines nobody reads.
static OUTPUT_ONLY: AtomicBool = AtomicBool::new(false);

pub fn output_only() {
    OUTPUT_ONLY.store(true, Ordering::Relaxed);
}

/// One line on stdout, never a panic: `println!` panics (exit 101) when the reader has
/// gone (issue 25: `hrr-harness matrix list | head -1`).
pub fn out_line(args: std::fmt::Arguments<'_>) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|_| o.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe && OUTPUT_ONLY.load(Ordering::Relaxed) {
            std::process::exit(0);
        }
    }
}

/// `println!` through [`out_line`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::out_line(format_args!($($arg)*))
    };
}

use hrr_reports::{CaseResult, RunReport, Status};
use indicatif::{ProgressBar, ProgressStyle};

pub enum Progress {
    Bar(ProgressBar),
    Plain { total: usize, done: usize },
}

impl Progress {
    /// A bar only on an interactive terminal outside CI.
    pub fn new(total: usize, allow_bar: bool) -> Progress {
        let ci = std::env::var_os("CI").is_some() || std::env::var_os("GITHUB_ACTIONS").is_some();
        if allow_bar && !ci && std::io::stderr().is_terminal() {
            let pb = ProgressBar::new(total as u64);
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb.enable_steady_tick(std::time::Duration::from_millis(200));
            Progress::Bar(pb)
        } else {
            Progress::Plain { total, done: 0 }
        }
    }

    /// A case running long (`runner::heartbeat`): above the bar, or a plain line.
    pub fn slow(&self, line: &str) {
        match self {
            Progress::Bar(pb) => pb.println(line),
            Progress::Plain { .. } => crate::out!("{line}"),
        }
    }

    pub fn started(&mut self, case: &str) {
        if let Progress::Bar(pb) = self {
            pb.set_message(format!("running {case}"));
        }
    }

    pub fn finished(&mut self, r: &CaseResult) {
        let line = |done: usize, total: usize| {
            format!(
                "[{done:>3}/{total}] {:<15} {:<24} {:>7.1} s  {}",
                r.status.as_str().to_uppercase(),
                r.case,
                r.duration_s,
                r.message.lines().next().unwrap_or("")
            )
        };
        match self {
            Progress::Bar(pb) => {
                pb.inc(1);
                if r.status != Status::Pass {
                    pb.println(line(
                        pb.position() as usize,
                        pb.length().unwrap_or(0) as usize,
                    ));
                }
            }
            Progress::Plain { total, done } => {
                *done += 1;
                crate::out!("{}", line(*done, *total));
                let _ = std::io::stdout().flush();
            }
        }
    }

    pub fn finish(&self) {
        if let Progress::Bar(pb) = self {
            pb.finish_and_clear();
        }
    }
}

/// Appends one case's result as a JSON line (an interrupted run keeps what finished). A
/// link, FIFO or anything but a regular file at `path` (planted by a case: the output
/// directory is one cases can write) is never written through: opened `O_NOFOLLOW |
/// O_NONBLOCK` and checked, it is skipped with one warning.
pub fn append_jsonl(path: &Path, r: &CaseResult) {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(line) = serde_json::to_string(r) else {
        return;
    };
    let opened = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|f| match f.metadata()?.is_file() {
            true => Ok(f),
            false => Err(std::io::Error::other("not a regular file")),
        });
    match opened {
        Ok(mut f) => {
            let _ = writeln!(f, "{line}");
        }
        Err(e) => eprintln!(
            "hrr-harness: warning: {} not written ({e}): a link or special file is there",
            path.display()
        ),
    }
}

/// Writes results.json, junit.xml and summary.md into `dir`.
pub fn write_reports(dir: &Path, report: &RunReport, merged: bool) -> std::io::Result<String> {
    report.write_json(&dir.join("results.json"))?;
    hrr_reports::result::write_atomic(
        &dir.join("junit.xml"),
        hrr_reports::junit::render(&[report]).as_bytes(),
    )?;
    let md = if merged {
        hrr_reports::markdown::merged_summary(report)
    } else {
        hrr_reports::markdown::run_summary(report)
    };
    hrr_reports::result::write_atomic(&dir.join("summary.md"), md.as_bytes())?;
    append_step_summary(&md);
    Ok(md)
}

/// Appends Markdown to GitHub's step summary when running in Actions.
pub fn append_step_summary(md: &str) {
    if let Some(p) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            let _ = writeln!(f, "{md}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_planted_at_results_jsonl_is_not_appended_through() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep\n").unwrap();
        let jsonl = d.path().join("results.jsonl");
        std::os::unix::fs::symlink(&victim, &jsonl).unwrap();
        let r: CaseResult = serde_json::from_value(serde_json::json!({
            "case": "a", "family": "sm90", "shard": "1/1", "status": "pass",
            "duration_s": 0.0, "message": ""
        }))
        .unwrap_or_else(|e| panic!("a minimal CaseResult: {e}"));
        append_jsonl(&jsonl, &r);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
        // A real file is appended to.
        let real = d.path().join("real.jsonl");
        append_jsonl(&real, &r);
        append_jsonl(&real, &r);
        assert_eq!(std::fs::read_to_string(&real).unwrap().lines().count(), 2);
    }
}
