//! Reports against their consumers: every JUnit document validates against junit-10.xsd
//! with xmllint (the schema GitHub's and Jenkins' reporters accept), statuses land in the
//! right JUnit elements, and merged totals add up.

use std::path::Path;
use std::process::Command;

use hrr_reports::merge::merge;
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
    assert!(
        xml.contains(
            "<testsuite name=\"hrr-sm90\" tests=\"8\" failures=\"3\" errors=\"1\" skipped=\"2\""
        ),
        "{xml}"
    );
    let section = |name: &str| {
        let start = xml.find(&format!("name=\"{name}\"")).unwrap();
        let end = xml[start..].find("</testcase>").unwrap();
        xml[start..start + end].to_string()
    };
    assert!(section("case_1_fail").contains(
        "<failure type=\"check\" message=\"fail: reason with &lt;xml&gt; &amp; unicode ✓\""
    ));
    assert!(section("case_1_fail").contains("<system-out>"));
    assert!(section("case_2_crash").contains("<error type=\"crash\""));
    assert!(section("case_3_timeout").contains("<failure type=\"timeout\""));
    assert!(section("case_4_skip").contains("<skipped type=\"skip\""));
    assert!(section("case_5_expected-fail").contains("<skipped type=\"expected-failure\""));
    assert!(section("case_6_unexpected-pass").contains("<failure type=\"unexpected-pass\""));
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
    assert!(e.contains("appears in two reports"), "{e}");
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
