//! JUnit XML as GitHub's and Jenkins' reporters read it (valid against junit-10.xsd),
//! written by quick-junit, the writer nextest uses. One `<testsuite
//! name="hrr-FAMILY[-shard-K-of-N]">` per family and shard, classname the family, one
//! `<testcase>` per case. How a status maps (Surefire's rerun model, as nextest writes it):
//!
//! | status | element | attempts after the first |
//! | --- | --- | --- |
//! | pass | none | none |
//! | flake | none (it passed once) | each failed attempt as `<flakyFailure>` (`<flakyError>` if it crashed) |
//! | fail, timeout, unexpected-pass | `<failure type="check\|timeout\|unexpected-pass">` | `<rerunFailure>` (`<rerunError>` if it crashed) |
//! | crash | `<error type="crash">` | `<rerunFailure>` (`<rerunError>` if it crashed) |
//! | skip, expected-fail | `<skipped type="skip\|expected-failure">` | none |
//!
//! A failure carries the failing check in `message` and every attempt's checks as its
//! text; the replay summaries go to `system-out` (a rerun also carries its own), each
//! attempt's D2H bytes excluded as unstable first (`unstable: N byte(s) ... excluded: why`;
//! junit-10.xsd allows no properties in a testcase).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use quick_junit::{
    NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestRerun, TestSuite, XmlString,
};

use crate::result::{AttemptResult, CaseResult, RunReport};
use crate::status::{RawOutcome, Status};

/// A duration in seconds as JUnit's `time` (negative or not finite: zero).
fn secs(d: f64) -> Duration {
    Duration::try_from_secs_f64(d.max(0.0)).unwrap_or_default()
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
        if let Some(e) = &a.excluded {
            let _ = writeln!(s, "  unstable: {}", e.line());
        }
        if let Some(d) = &a.declared {
            let _ = writeln!(s, "  declared comparison: {}", d.line());
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
        // Bytes a replay did not compare are said first, never left to the summaries.
        let excluded = a
            .excluded
            .as_ref()
            .map(|e| format!("unstable: {}\n", e.line()))
            .unwrap_or_default()
            + &a.declared
                .as_ref()
                .map(|d| format!("declared comparison: {}\n", d.line()))
                .unwrap_or_default();
        if !a.output.is_empty() || !excluded.is_empty() {
            let _ = writeln!(s, "--- attempt {} ---\n{excluded}{}", i + 1, a.output);
        }
    }
    s
}

/// The element kind and `type` of one attempt that did not do what the matrix expects. A
/// passing attempt is one only for a case expected to fail.
fn attempt_kind(o: RawOutcome) -> (NonSuccessKind, &'static str) {
    match o {
        RawOutcome::Crash => (NonSuccessKind::Error, "crash"),
        RawOutcome::Timeout => (NonSuccessKind::Failure, "timeout"),
        RawOutcome::Fail => (NonSuccessKind::Failure, "check"),
        RawOutcome::Pass => (NonSuccessKind::Failure, "unexpected-pass"),
    }
}

/// One attempt as a `<flakyFailure>`/`<rerunFailure>` (or their `Error` twins); which of
/// the two is decided by the case's status.
fn rerun(a: &AttemptResult) -> TestRerun {
    let (kind, ty) = attempt_kind(a.outcome);
    let mut r = TestRerun::new(kind);
    r.set_type(ty).set_message(a.message.as_str());
    if !a.output.is_empty() {
        r.set_system_out(a.output.as_str());
    }
    r
}

/// The status element of a case: what the table in the module comment says.
fn case_status(c: &CaseResult) -> TestCaseStatus {
    let non_success = |kind: NonSuccessKind, ty: &str| {
        let mut s = TestCaseStatus::non_success(kind);
        s.set_type(ty)
            .set_message(c.message.as_str())
            .set_description(details(c))
            .add_reruns(c.attempts.iter().skip(1).map(rerun));
        s
    };
    let skipped = |ty: &str| {
        let mut s = TestCaseStatus::skipped();
        s.set_type(ty).set_message(c.message.as_str());
        s
    };
    match c.status {
        Status::Pass => TestCaseStatus::success(),
        Status::Flake => {
            let mut s = TestCaseStatus::success();
            s.add_reruns(
                c.attempts
                    .iter()
                    .filter(|a| a.outcome != RawOutcome::Pass)
                    .map(rerun),
            );
            s
        }
        Status::Fail => non_success(NonSuccessKind::Failure, "check"),
        Status::Timeout => non_success(NonSuccessKind::Failure, "timeout"),
        Status::UnexpectedPass => non_success(NonSuccessKind::Failure, "unexpected-pass"),
        Status::Crash => non_success(NonSuccessKind::Error, "crash"),
        Status::NotRun => non_success(NonSuccessKind::Error, "not-run"),
        Status::Skip => skipped("skip"),
        Status::ExpectedFail => skipped("expected-failure"),
        Status::CompiledNotRun => skipped("compiled-not-run"),
        // Passed against the stand-in runtime: a success, named as such (classname and
        // system-out), never as the family's GPU.
        Status::StandIn => TestCaseStatus::success(),
    }
}

fn testcase(c: &CaseResult) -> TestCase {
    let mut t = TestCase::new(c.case.as_str(), case_status(c));
    let classname = if c.status == Status::StandIn {
        format!("{}-stand-in", c.family)
    } else {
        c.family.clone()
    };
    t.set_classname(classname).set_time(secs(c.duration_s));
    let mut so = outputs(c);
    if c.status == Status::StandIn {
        so = format!("stand-in runtime, no GPU: {}\n{so}", c.message);
    }
    if !so.is_empty() && c.status != Status::Flake {
        t.set_system_out(so);
    }
    t
}

fn suite(name: &str, cases: &[&CaseResult], report: &RunReport) -> TestSuite {
    let mut s = TestSuite::new(name);
    s.set_time(secs(cases.iter().map(|c| c.duration_s).sum()));
    if let Some(t) = i64::try_from(report.started_unix)
        .ok()
        .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
    {
        s.set_timestamp(t);
    }
    s.extra
        .insert(XmlString::new("hostname"), XmlString::new(&report.hostname));
    let mut props = vec![
        ("family", cases[0].family.as_str()),
        ("shard", cases[0].shard.as_str()),
        ("tool_version", report.tool_version.as_str()),
        ("source_revision", report.source_revision.as_str()),
    ];
    props.extend(report.gpus.iter().map(|g| ("gpu", g.as_str())));
    s.add_properties(props.into_iter().map(|(k, v)| Property::new(k, v)));
    s.add_test_cases(cases.iter().map(|c| testcase(c)));
    s
}

/// junit-10.xsd declares no `skipped` on `<testsuites>` (each `<testsuite>` carries its
/// own), and quick-junit writes one there: it is dropped from the root element only.
fn drop_root_skipped(mut xml: String) -> String {
    let Some(start) = xml.find("<testsuites ") else {
        return xml;
    };
    let end = xml[start..].find('>').map_or(xml.len(), |e| start + e);
    if let Some(at) = xml[start..end].find(" skipped=\"").map(|i| start + i) {
        let value = at + " skipped=\"".len();
        if let Some(close) = xml[value..end].find('"') {
            xml.replace_range(at..value + close + 1, "");
        }
    }
    xml
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
    let mut doc = Report::new("hrr-harness");
    doc.set_time(secs(
        suites
            .values()
            .flat_map(|(cs, _)| cs.iter())
            .map(|c| c.duration_s)
            .sum(),
    ));
    doc.add_test_suites(
        suites
            .iter()
            .map(|(name, (cases, report))| suite(name, cases, report)),
    );
    let xml = doc
        .to_string()
        .expect("quick-junit serializes into memory, which cannot fail");
    drop_root_skipped(xml)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::CheckResult;

    fn attempt(outcome: RawOutcome, message: &str) -> AttemptResult {
        AttemptResult {
            outcome,
            duration_s: 1.0,
            message: message.into(),
            checks: vec![CheckResult {
                name: "d2h".into(),
                passed: outcome == RawOutcome::Pass,
                detail: "seq 3".into(),
            }],
            output: format!("output of {message}"),
            excluded: None,
            declared: None,
        }
    }

    fn case(status: Status, attempts: Vec<AttemptResult>) -> CaseResult {
        CaseResult {
            family: "sm90".into(),
            shard: "1/1".into(),
            case: "c".into(),
            status,
            duration_s: 2.0,
            message: "why".into(),
            attempts,
            artifacts: None,
        }
    }

    #[test]
    fn a_case_failing_both_attempts_carries_its_rerun() {
        let c = case(
            Status::Crash,
            vec![
                attempt(RawOutcome::Crash, "first"),
                attempt(RawOutcome::Fail, "second"),
            ],
        );
        let TestCaseStatus::NonSuccess {
            kind, ty, reruns, ..
        } = case_status(&c)
        else {
            panic!("a crash is not a success")
        };
        assert_eq!(kind, NonSuccessKind::Error);
        assert_eq!(ty.as_deref(), Some("crash"));
        assert_eq!(reruns.kind, quick_junit::FlakyOrRerun::Rerun);
        assert_eq!(reruns.runs.len(), 1);
        assert_eq!(reruns.runs[0].kind, NonSuccessKind::Failure);
        assert_eq!(reruns.runs[0].message.as_deref(), Some("second"));
        assert_eq!(
            reruns.runs[0].system_out.as_deref(),
            Some("output of second")
        );
    }

    #[test]
    fn a_flake_passes_with_its_failed_attempts() {
        let c = case(
            Status::Flake,
            vec![
                attempt(RawOutcome::Timeout, "first"),
                attempt(RawOutcome::Pass, "second"),
            ],
        );
        let TestCaseStatus::Success { flaky_runs } = case_status(&c) else {
            panic!("a flake is reported as passed")
        };
        assert_eq!(flaky_runs.len(), 1);
        assert_eq!(flaky_runs[0].ty.as_deref(), Some("timeout"));
        assert_eq!(flaky_runs[0].message.as_deref(), Some("first"));
    }

    #[test]
    fn only_the_roots_skipped_count_is_dropped() {
        let xml = "<?xml?>\n<testsuites name=\"n\" tests=\"2\" skipped=\"1\" failures=\"0\">\n<testsuite name=\"s\" tests=\"2\" skipped=\"1\">".to_string();
        assert_eq!(
            drop_root_skipped(xml),
            "<?xml?>\n<testsuites name=\"n\" tests=\"2\" failures=\"0\">\n<testsuite name=\"s\" tests=\"2\" skipped=\"1\">"
        );
    }

    #[test]
    fn durations_never_panic() {
        assert_eq!(secs(-1.0), Duration::ZERO);
        assert_eq!(secs(f64::NAN), Duration::ZERO);
        assert_eq!(secs(f64::INFINITY), Duration::ZERO);
        assert_eq!(secs(1.5), Duration::from_millis(1500));
    }
}
