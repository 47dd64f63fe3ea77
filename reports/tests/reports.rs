//! Reports against their consumers: every JUnit document validates against junit-10.xsd
//! with xmllint (the schema GitHub's and Jenkins' reporters accept), statuses land in the
//! right JUnit elements, and merged totals add up.

use std::path::Path;
use std::process::Command;

use hrr_reports::merge::{find_results, merge, FindError, MergeError};
use hrr_reports::{AttemptResult, CaseResult, CheckResult, RawOutcome, RunReport, Status, Totals};

fn case(family: &str, shard: &str, name: &str, status: Status) -> CaseResult {
    let outcome = match status {
        Status::Pass | Status::UnexpectedPass => RawOutcome::Pass,
        Status::Crash => RawOutcome::Crash,
        Status::Timeout => RawOutcome::Timeout,
        _ => RawOutcome::Fail,
    };
    let failing = AttemptResult {
        outcome,
        duration_s: 1.25,
        message: "blob-edit: seq 12 cudaMemcpy offset 100 <expected> & \"found\"".into(),
        checks: vec![CheckResult {
            name: "roundtrip".into(),
            passed: outcome == RawOutcome::Pass,
            detail: "D2H 6 pass\u{1}".into(),
        }],
        output: "events replayed  : 54 of 54\nFAIL: 1 failure(s)".into(),
    };
    let mut attempts = vec![failing.clone()];
    if status == Status::Flake {
        attempts.push(AttemptResult {
            outcome: RawOutcome::Pass,
            ..failing
        });
    }
    CaseResult {
        family: family.into(),
        shard: shard.into(),
        case: name.into(),
        status,
        duration_s: 2.5,
        message: format!("{status}: reason with <xml> & unicode ✓"),
        attempts: if status == Status::Skip {
            vec![]
        } else {
            attempts
        },
        artifacts: Some("/tmp/x".into()),
    }
}

fn report(family: &str, shard: &str, cases: Vec<CaseResult>) -> RunReport {
    RunReport {
        tool_version: "0.1.0".into(),
        source_revision: "abc".into(),
        families: vec![family.into()],
        shard: shard.into(),
        gpus: vec!["0 NVIDIA H200 (sm_90)".into()],
        hostname: "runner-1".into(),
        started_unix: 1_796_000_000,
        duration_s: 10.0,
        totals: Totals::of(&cases),
        cases,
    }
}

fn xsd() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/junit-10.xsd")
}

fn validate(xml: &str) {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("junit.xml");
    std::fs::write(&f, xml).unwrap();
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(xsd())
        .arg(&f)
        .output()
        .expect("xmllint is needed for the JUnit schema test: apt install libxml2-utils");
    assert!(
        out.status.success(),
        "junit does not validate:\n{}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The start tag `<element ...>` at the first `<element` in `xml` (empty if none).
fn start_tag<'a>(xml: &'a str, element: &str) -> &'a str {
    let Some(at) = xml.find(&format!("<{element} ")) else {
        return "";
    };
    let end = xml[at..].find('>').map_or(xml.len(), |e| at + e);
    &xml[at..end]
}

/// An attribute's (escaped) value in a start tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

#[test]
fn every_status_renders_valid_junit_in_the_right_element() {
    let cases: Vec<CaseResult> = Status::ALL
        .iter()
        .enumerate()
        .map(|(i, s)| case("sm90", "1/1", &format!("case_{i}_{s}"), *s))
        .collect();
    let r = report("sm90", "1/1", cases);
    let xml = hrr_reports::junit::render(&[&r]);
    validate(&xml);
    let suite = start_tag(&xml, "testsuite");
    for (k, v) in [
        ("name", "hrr-sm90"),
        ("tests", "8"),
        ("failures", "3"),
        ("errors", "1"),
        ("skipped", "2"),
    ] {
        assert_eq!(attr(suite, k), Some(v), "{suite}");
    }
    let section = |name: &str| {
        let start = xml.find(&format!("name=\"{name}\"")).unwrap();
        let end = xml[start..].find("</testcase>").unwrap();
        xml[start..start + end].to_string()
    };
    let fail = section("case_1_fail");
    let failure = start_tag(&fail, "failure");
    assert_eq!(attr(failure, "type"), Some("check"), "{fail}");
    assert_eq!(
        attr(failure, "message"),
        Some("fail: reason with &lt;xml&gt; &amp; unicode ✓"),
        "{fail}"
    );
    assert!(fail.contains("<system-out>"));
    let kind = |case: &str, element: &str| {
        let s = section(case);
        attr(start_tag(&s, element), "type").map(str::to_string)
    };
    assert_eq!(kind("case_2_crash", "error").as_deref(), Some("crash"));
    assert_eq!(
        kind("case_3_timeout", "failure").as_deref(),
        Some("timeout")
    );
    assert_eq!(kind("case_4_skip", "skipped").as_deref(), Some("skip"));
    assert_eq!(
        kind("case_5_expected-fail", "skipped").as_deref(),
        Some("expected-failure")
    );
    assert_eq!(
        kind("case_6_unexpected-pass", "failure").as_deref(),
        Some("unexpected-pass")
    );
    let flake = section("case_7_flake");
    assert!(
        flake.contains("<flakyFailure") && !flake.contains("<failure"),
        "{flake}"
    );
    assert!(!section("case_0_pass").contains("<failure"));
    // A control character never reaches the XML raw.
    assert!(!xml.contains('\u{1}'));
}

#[test]
fn merged_reports_add_up_and_keep_one_suite_per_family_and_shard() {
    let a = report(
        "sm90",
        "1/2",
        vec![
            case("sm90", "1/2", "a", Status::Pass),
            case("sm90", "1/2", "b", Status::Fail),
        ],
    );
    let b = report(
        "sm90",
        "2/2",
        vec![
            case("sm90", "2/2", "c", Status::Skip),
            case("sm90", "2/2", "d", Status::Flake),
        ],
    );
    let c = report(
        "gfx90a",
        "1/1",
        vec![
            case("gfx90a", "1/1", "a", Status::Pass),
            case("gfx90a", "1/1", "b", Status::ExpectedFail),
            case("gfx90a", "1/1", "c", Status::Timeout),
        ],
    );
    let m = merge(&[a.clone(), b.clone(), c.clone()]).unwrap();
    assert_eq!(m.totals.cases, 7);
    assert_eq!(m.totals.by_status.values().sum::<u64>(), 7);
    assert_eq!(m.totals.count(Status::Pass), 2);
    assert_eq!(m.totals.unexpected, 2);
    assert_eq!(m.families, vec!["gfx90a".to_string(), "sm90".to_string()]);
    let xml = hrr_reports::junit::render(&[&a, &b, &c]);
    validate(&xml);
    for suite in [
        "hrr-sm90-shard-1-of-2",
        "hrr-sm90-shard-2-of-2",
        "hrr-gfx90a",
    ] {
        assert!(
            xml.contains(&format!("<testsuite name=\"{suite}\"")),
            "{suite}"
        );
    }
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hrr-harness\" tests=\"7\" failures=\"2\" errors=\"0\""), "{xml}");
    let md = hrr_reports::markdown::merged_summary(&m);
    assert!(md.contains("| gfx90a | 3 | 1 | 1 | 1 | 0 | c |"), "{md}");
    assert!(md.contains("| sm90 | 4 | 1 | 1 | 1 | 1 | b |"), "{md}");
    assert!(md.contains("| **total** | 7 | 2 | 2 | 2 | 1 | |"), "{md}");
    // The same shard twice is refused, not double counted.
    let e = merge(&[a.clone(), a]).unwrap_err();
    assert_eq!(
        e,
        MergeError::Duplicate {
            family: "sm90".into(),
            case: "a".into()
        }
    );
    assert!(e.to_string().contains("appears in two reports"), "{e}");
}

#[test]
fn summaries_stay_under_githubs_limit() {
    let cases: Vec<CaseResult> = (0..3000)
        .map(|i| case("sm90", "1/1", &format!("case_{i:04}"), Status::Fail))
        .collect();
    let r = report("sm90", "1/1", cases);
    let md = hrr_reports::markdown::run_summary(&r);
    assert!(md.len() < 64 * 1024, "{} bytes", md.len());
    assert!(md.contains("more rows left out"), "truncation not said");
    let json = serde_json::to_string(&r).unwrap();
    let back: RunReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}

#[test]
fn a_case_failing_both_attempts_carries_a_rerun_failure() {
    let mut fail = case("sm90", "1/1", "twice", Status::Fail);
    let mut rerun = fail.attempts[0].clone();
    rerun.message = "rerun: seq 12 differs again".into();
    rerun.output = "replay summary of the second attempt".into();
    fail.attempts.push(rerun);
    let mut crash = case("sm90", "1/1", "crashed_twice", Status::Crash);
    crash.attempts.push(crash.attempts[0].clone());
    let r = report("sm90", "1/1", vec![fail, crash]);
    let xml = hrr_reports::junit::render(&[&r]);
    validate(&xml);
    let section = |name: &str| {
        let start = xml.find(&format!("name=\"{name}\"")).unwrap();
        let end = xml[start..].find("</testcase>").unwrap();
        xml[start..start + end].to_string()
    };
    let twice = section("twice");
    let failure = start_tag(&twice, "failure");
    assert_eq!(attr(failure, "type"), Some("check"), "{twice}");
    let rerun = start_tag(&twice, "rerunFailure");
    assert_eq!(attr(rerun, "type"), Some("check"), "{twice}");
    assert_eq!(
        attr(rerun, "message"),
        Some("rerun: seq 12 differs again"),
        "{twice}"
    );
    assert!(
        twice.contains("replay summary of the second attempt"),
        "{twice}"
    );
    assert_eq!(twice.matches("<rerunFailure").count(), 1, "{twice}");
    assert!(!twice.contains("<flakyFailure"), "{twice}");
    let crashed = section("crashed_twice");
    assert_eq!(
        attr(start_tag(&crashed, "rerunError"), "type"),
        Some("crash"),
        "{crashed}"
    );
    // A case run once carries no rerun element.
    let once = hrr_reports::junit::render(&[&report(
        "sm90",
        "1/1",
        vec![case("sm90", "1/1", "once", Status::Fail)],
    )]);
    assert!(!once.contains("<rerun"), "{once}");
}

#[test]
fn results_are_found_in_nested_artifact_directories() {
    let t = tempfile::tempdir().unwrap();
    let r = report("sm90", "1/1", vec![case("sm90", "1/1", "a", Status::Pass)]);
    let deep = t.path().join("artifacts/results-sm90-1/run");
    std::fs::create_dir_all(&deep).unwrap();
    r.write_json(&deep.join("results.json")).unwrap();
    std::fs::create_dir_all(t.path().join("artifacts/empty")).unwrap();
    std::fs::write(t.path().join("artifacts/other.json"), "{}").unwrap();
    let found = find_results(&[t.path().join("artifacts")]).unwrap();
    assert_eq!(found, vec![deep.join("results.json")]);
    assert_eq!(RunReport::read_json(&found[0]).unwrap(), r);
    let none = find_results(&[t.path().join("artifacts/empty")]).unwrap_err();
    assert!(matches!(none, FindError::NoneFound(_)), "{none}");
    assert!(
        none.to_string().starts_with("no results.json under "),
        "{none}"
    );
    let missing = find_results(&[t.path().join("nowhere")]).unwrap_err();
    assert!(matches!(missing, FindError::Missing(_)), "{missing}");
    std::fs::write(t.path().join("bad.json"), "{\"tool_version\": 1}").unwrap();
    let bad = RunReport::read_json(&t.path().join("bad.json")).unwrap_err();
    assert!(
        bad.to_string().contains("bad.json:1:")
            && bad.to_string().contains("not a harness results.json"),
        "{bad}"
    );
}
