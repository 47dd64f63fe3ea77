//! JUnit XML as GitHub's and Jenkins' reporters read it (valid against junit-10.xsd):
//! one `<testsuite name="hrr-FAMILY[-shard-K-of-N]">` per family and shard, classname the
//! family, one `<testcase>` per case. Failures carry the failing check in `message` and
//! the replay summary in `system-out`; skips carry their reason; a flake passes with a
//! `<flakyFailure>` per failed attempt, as nextest writes it.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::result::{CaseResult, RunReport};
use crate::status::{RawOutcome, Status};

/// Escapes text for an attribute or element, dropping characters XML 1.0 forbids.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn secs(d: f64) -> String {
    format!("{:.3}", d.max(0.0))
}

/// Everything a person needs next to a failure: each attempt's checks and output.
fn details(c: &CaseResult) -> String {
    let mut s = String::new();
    for (i, a) in c.attempts.iter().enumerate() {
        let _ = writeln!(
            s,
            "attempt {} ({}, {:.1} s): {}",
            i + 1,
            match a.outcome {
                RawOutcome::Pass => "pass",
                RawOutcome::Fail => "fail",
                RawOutcome::Crash => "crash",
                RawOutcome::Timeout => "timeout",
            },
            a.duration_s,
            a.message
        );
        for ch in &a.checks {
            let _ = writeln!(
                s,
                "  [{}] {}: {}",
                if ch.passed { "pass" } else { "FAIL" },
                ch.name,
                ch.detail
            );
        }
    }
    if let Some(a) = &c.artifacts {
        let _ = writeln!(s, "archives and logs kept in {a}");
    }
    s
}

fn outputs(c: &CaseResult) -> String {
    let mut s = String::new();
    for (i, a) in c.attempts.iter().enumerate() {
        if !a.output.is_empty() {
            let _ = writeln!(s, "--- attempt {} ---\n{}", i + 1, a.output);
        }
    }
    s
}

fn testcase(out: &mut String, c: &CaseResult) {
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        escape(&c.case),
        escape(&c.family),
        secs(c.duration_s)
    );
    let body_open = |out: &mut String| out.push_str(">\n");
    let msg = escape(&c.message);
    match c.status {
        Status::Pass => {
            body_open(out);
        }
        Status::Fail | Status::Timeout | Status::UnexpectedPass => {
            body_open(out);
            let ty = match c.status {
                Status::Timeout => "timeout",
                Status::UnexpectedPass => "unexpected-pass",
                _ => "check",
            };
            let _ = writeln!(
                out,
                "      <failure type=\"{ty}\" message=\"{msg}\">{}</failure>",
                escape(&details(c))
            );
        }
        Status::Crash => {
            body_open(out);
            let _ = writeln!(
                out,
                "      <error type=\"crash\" message=\"{msg}\">{}</error>",
                escape(&details(c))
            );
        }
        Status::Skip => {
            body_open(out);
            let _ = writeln!(out, "      <skipped type=\"skip\" message=\"{msg}\"/>");
        }
        Status::ExpectedFail => {
            body_open(out);
            let _ = writeln!(
                out,
                "      <skipped type=\"expected-failure\" message=\"{msg}\"/>"
            );
        }
        Status::Flake => {
            body_open(out);
            for a in c.attempts.iter().filter(|a| a.outcome != RawOutcome::Pass) {
                let ty = match a.outcome {
                    RawOutcome::Timeout => "timeout",
                    RawOutcome::Crash => "crash",
                    _ => "check",
                };
                let _ = writeln!(
                    out,
                    "      <flakyFailure type=\"{ty}\" message=\"{}\"><system-out>{}</system-out></flakyFailure>",
                    escape(&a.message),
                    escape(&a.output)
                );
            }
        }
    }
    let so = outputs(c);
    if !so.is_empty() && c.status != Status::Flake {
        let _ = writeln!(out, "      <system-out>{}</system-out>", escape(&so));
    }
    out.push_str("    </testcase>\n");
}

/// One JUnit document for any number of reports: a testsuite per (family, shard).
pub fn render(reports: &[&RunReport]) -> String {
    let mut suites: BTreeMap<String, (Vec<&CaseResult>, &RunReport)> = BTreeMap::new();
    for r in reports {
        for c in &r.cases {
            let name = RunReport::suite_name(&c.family, &c.shard);
            suites
                .entry(name)
                .or_insert_with(|| (Vec::new(), r))
                .0
                .push(c);
        }
    }
    let count =
        |cs: &[&CaseResult], f: &dyn Fn(Status) -> bool| cs.iter().filter(|c| f(c.status)).count();
    let all: Vec<&CaseResult> = suites
        .values()
        .flat_map(|(c, _)| c.iter().copied())
        .collect();
    let total_time: f64 = all.iter().map(|c| c.duration_s).sum();
    let is_failure =
        |s: Status| matches!(s, Status::Fail | Status::Timeout | Status::UnexpectedPass);
    let is_error = |s: Status| s == Status::Crash;
    let is_skip = |s: Status| matches!(s, Status::Skip | Status::ExpectedFail);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"hrr-harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
        all.len(),
        count(&all, &is_failure),
        count(&all, &is_error),
        secs(total_time)
    );
    for (name, (cases, report)) in &suites {
        let time: f64 = cases.iter().map(|c| c.duration_s).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\" timestamp=\"{}\" hostname=\"{}\">",
            escape(name),
            cases.len(),
            count(cases, &is_failure),
            count(cases, &is_error),
            count(cases, &is_skip),
            secs(time),
            iso8601(report.started_unix),
            escape(&report.hostname)
        );
        out.push_str("    <properties>\n");
        let mut props = vec![
            ("family", cases[0].family.clone()),
            ("shard", cases[0].shard.clone()),
            ("tool_version", report.tool_version.clone()),
            ("source_revision", report.source_revision.clone()),
        ];
        for g in &report.gpus {
            props.push(("gpu", g.clone()));
        }
        for (k, v) in props {
            let _ = writeln!(
                out,
                "      <property name=\"{k}\" value=\"{}\"/>",
                escape(&v)
            );
        }
        out.push_str("    </properties>\n");
        for c in cases {
            testcase(&mut out, c);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// `YYYY-MM-DDTHH:MM:SS` (UTC) from Unix seconds, without a date crate.
pub fn iso8601(unix: u64) -> String {
    let days = unix / 86_400;
    let rem = unix % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_dates() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\\x01"
        );
        assert_eq!(iso8601(0), "1970-01-01T00:00:00");
        assert_eq!(iso8601(1_796_000_000), "2026-11-30T00:53:20");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00");
    }
}
