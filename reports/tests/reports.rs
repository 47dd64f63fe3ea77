//! Reports against their consumers: every JUnit document validates against junit-10.xsd
//! with xmllint (the schema GitHub's and Jenkins' reporters accept), statuses land in the
//! right JUnit elements, and merged totals add up.

use std::path::Path;
use std::process::Command;

use hrr_reports::merge::{
    find_results, merge, merge_expecting, parse_expect_list, ExpectedRuns, ExpectedShard,
    FindError, MergeError,
};
use hrr_reports::result::{read_durations, ReadReportError, SchemaVersion};
use hrr_reports::{
    AttemptResult, CaseResult, CheckResult, ExcludedBytes, RawOutcome, RunReport, Status, Totals,
};

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
        excluded: None,
        declared: None,
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

/// `xml` against junit-10.xsd, with xmllint; without it this part of the calling test is
/// skipped through `hrr_testkit` (a failure under `CI=true` or `HRR_REQUIRE_ALL=1`).
#[track_caller]
fn validate(xml: &str) {
    let Some(xmllint) = hrr_testkit::tool(&hrr_testkit::tools::XMLLINT) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("junit.xml");
    std::fs::write(&f, xml).unwrap();
    let out = Command::new(xmllint)
        .arg("--noout")
        .arg("--schema")
        .arg(xsd())
        .arg(&f)
        .output()
        .unwrap();
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
        ("tests", "11"),
        ("failures", "3"),
        ("errors", "2"),
        ("skipped", "3"),
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
    // A stand-in pass is a success labelled as the stand-in, never the family's GPU.
    let stand_in = section("case_10_stand-in");
    assert!(
        stand_in.contains("classname=\"sm90-stand-in\""),
        "{stand_in}"
    );
    assert!(stand_in.contains("stand-in runtime, no GPU"), "{stand_in}");
    assert!(
        !stand_in.contains("<failure") && !stand_in.contains("<skipped"),
        "{stand_in}"
    );
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
    assert_eq!(
        kind("case_8_compiled-not-run", "skipped").as_deref(),
        Some("compiled-not-run")
    );
    assert_eq!(kind("case_9_not-run", "error").as_deref(), Some("not-run"));
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
    let e = merge(&[a.clone(), a.clone()]).unwrap_err();
    assert_eq!(
        e,
        MergeError::DuplicateShard {
            family: "sm90".into(),
            shard: "1/2".into()
        }
    );
    assert!(e.to_string().contains("appears in two reports"), "{e}");
    // Overlapping shards (the same case from two different shards) too.
    let overlap = report("sm90", "2/2", vec![case("sm90", "2/2", "a", Status::Pass)]);
    assert_eq!(
        merge(&[a, overlap]).unwrap_err(),
        MergeError::Duplicate {
            family: "sm90".into(),
            case: "a".into()
        }
    );
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

fn shard(family: &str, index: u32, count: u32) -> ExpectedShard {
    ExpectedShard {
        family: family.into(),
        index,
        count,
    }
}

#[test]
fn a_missing_shard_is_named_and_its_cases_are_not_run() {
    let one = report(
        "sm90",
        "1/2",
        vec![
            case("sm90", "1/2", "a", Status::Pass),
            case("sm90", "1/2", "c", Status::Pass),
        ],
    );
    let gfx = report(
        "gfx90a",
        "1/1",
        vec![case("gfx90a", "1/1", "a", Status::Pass)],
    );
    let expect = ExpectedRuns {
        shards: vec![
            shard("gfx90a", 1, 1),
            shard("sm90", 1, 2),
            shard("sm90", 2, 2),
            shard("gfx110x", 1, 1),
        ],
        cases: [
            (
                "sm90".to_string(),
                vec!["a".into(), "b".into(), "c".into(), "d".into()],
            ),
            ("gfx90a".to_string(), vec!["a".into()]),
        ]
        .into_iter()
        .collect(),
    };
    let m = merge_expecting(&[one.clone(), gfx.clone()], &expect).unwrap();
    assert_eq!(m.missing, vec![shard("sm90", 2, 2), shard("gfx110x", 1, 1)]);
    assert!(m.unexpected.is_empty());
    let not_run: Vec<(&str, &str, &str)> = m
        .merged
        .cases
        .iter()
        .filter(|c| c.status == Status::NotRun)
        .map(|c| (c.family.as_str(), c.shard.as_str(), c.case.as_str()))
        .collect();
    // sm90's absent cases by name; gfx110x, with no case list, as a whole shard.
    assert_eq!(
        not_run,
        vec![
            ("gfx110x", "1/1", "(shard 1/1)"),
            ("sm90", "2/2", "b"),
            ("sm90", "2/2", "d"),
        ]
    );
    assert_eq!(m.merged.totals.cases, 6);
    assert_eq!(m.merged.totals.unexpected, 3);
    assert_eq!(m.merged.families, vec!["gfx110x", "gfx90a", "sm90"]);
    let md = hrr_reports::markdown::merged_summary(&m.merged);
    assert!(
        md.starts_with("## hrr-harness: results by GPU family\n\n**FAIL**"),
        "{md}"
    );
    // JUnit gets a suite for what did not run, and stays valid.
    let mut all: Vec<&RunReport> = vec![&one, &gfx];
    all.extend(m.not_run.iter());
    let xml = hrr_reports::junit::render(&all);
    validate(&xml);
    assert!(
        xml.contains("<testsuite name=\"hrr-sm90-shard-2-of-2\""),
        "{xml}"
    );
    // Complete: nothing missing, nothing added.
    let two = report("sm90", "2/2", vec![case("sm90", "2/2", "b", Status::Pass)]);
    let full = ExpectedRuns {
        shards: vec![shard("sm90", 1, 2), shard("sm90", 2, 2)],
        cases: Default::default(),
    };
    let ok = merge_expecting(&[one.clone(), two, gfx], &full).unwrap();
    assert!(ok.missing.is_empty() && ok.not_run.is_empty());
    assert_eq!(ok.unexpected, vec![shard("gfx90a", 1, 1)]);
    assert_eq!(ok.merged.totals.unexpected, 0);
    // A shard with no case at all still counts as present.
    let empty = report("sm90", "2/2", vec![]);
    assert!(merge_expecting(&[one, empty], &full)
        .unwrap()
        .missing
        .is_empty());
}

#[test]
fn expect_lists_are_family_and_k_of_n_per_line() {
    let l = parse_expect_list(
        "# written by gpu.yml\nsm90 1/2\n\nsm90 2/2  # second\ngfx90a 1/1\nsm90 1/2\n",
    )
    .unwrap();
    assert_eq!(
        l,
        vec![
            shard("gfx90a", 1, 1),
            shard("sm90", 1, 2),
            shard("sm90", 2, 2)
        ]
    );
    for bad in ["sm90", "sm90 3/2", "sm90 0/2", "sm90 1-2", "sm90 1/2 x"] {
        let e = parse_expect_list(&format!("gfx90a 1/1\n{bad}\n")).unwrap_err();
        assert_eq!(e.line, 2, "{bad}");
        assert!(e.to_string().contains("expected `FAMILY K/N`"), "{e}");
    }
}

#[test]
fn results_carry_a_schema_version_and_newer_majors_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let r = report("sm90", "1/1", vec![case("sm90", "1/1", "a", Status::Pass)]);
    let p = t.path().join("results.json");
    r.write_json(&p).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.starts_with(&format!(
            "{{\n  \"schema_version\": \"{}\",",
            SchemaVersion::CURRENT
        )),
        "{text}"
    );
    assert_eq!(RunReport::read_json(&p).unwrap(), r);
    // Unversioned (older) files and newer minors are read; a newer major is refused.
    let body = text.replacen(
        &format!("\"schema_version\": \"{}\",", SchemaVersion::CURRENT),
        "",
        1,
    );
    std::fs::write(&p, &body).unwrap();
    assert_eq!(RunReport::read_json(&p).unwrap(), r);
    let minor = text.replacen(
        &format!("\"schema_version\": \"{}\"", SchemaVersion::CURRENT),
        "\"schema_version\": \"1.9\"",
        1,
    );
    std::fs::write(&p, minor).unwrap();
    assert_eq!(RunReport::read_json(&p).unwrap(), r);
    let major = text.replacen(
        &format!("\"schema_version\": \"{}\"", SchemaVersion::CURRENT),
        "\"schema_version\": \"2.0\"",
        1,
    );
    std::fs::write(&p, major).unwrap();
    let e = RunReport::read_json(&p).unwrap_err();
    assert!(
        matches!(e, ReadReportError::NewerSchema { found, .. } if found == SchemaVersion { major: 2, minor: 0 }),
        "{e}"
    );
    assert!(
        e.to_string().contains("newer than this tool reads (1.x)"),
        "{e}"
    );
    let garbled = text.replacen(
        &format!("\"schema_version\": \"{}\"", SchemaVersion::CURRENT),
        "\"schema_version\": \"one\"",
        1,
    );
    std::fs::write(&p, garbled).unwrap();
    assert!(matches!(
        RunReport::read_json(&p).unwrap_err(),
        ReadReportError::BadSchemaVersion { .. }
    ));
}

#[test]
fn durations_are_the_mean_over_families_of_cases_that_ran() {
    let t = tempfile::tempdir().unwrap();
    let mut a = case("sm90", "1/1", "a", Status::Pass);
    a.duration_s = 2.0;
    let mut a2 = case("gfx90a", "1/1", "a", Status::Fail);
    a2.duration_s = 4.0;
    let mut skipped = case("gfx90a", "1/1", "b", Status::Skip);
    skipped.duration_s = 0.0;
    let compiled = case("sm90", "1/1", "c", Status::CompiledNotRun);
    let m = merge(&[
        report("sm90", "1/1", vec![a, compiled]),
        report("gfx90a", "1/1", vec![a2, skipped]),
    ])
    .unwrap();
    let d = m.durations();
    assert_eq!(
        d.into_iter().collect::<Vec<_>>(),
        vec![("a".to_string(), 3.0)]
    );
    // --durations takes a results.json or the durations.json a merge writes.
    let results = t.path().join("results.json");
    m.write_json(&results).unwrap();
    assert_eq!(read_durations(&results).unwrap()["a"], 3.0);
    let file = t.path().join("durations.json");
    hrr_reports::result::write_durations(&file, &m.durations()).unwrap();
    assert_eq!(read_durations(&file).unwrap(), m.durations());
    std::fs::write(&file, "{\"a\": -1}").unwrap();
    assert!(read_durations(&file)
        .unwrap_err()
        .to_string()
        .contains("case `a` has -1 s"));
    std::fs::write(&file, "[1]").unwrap();
    assert!(read_durations(&file)
        .unwrap_err()
        .to_string()
        .contains("neither a results.json"));
}

/// Bytes a replay excluded as unstable: in results.json (schema 1.3, read back), and in
/// JUnit's system-out of a passing case and the failure text of a failing one, valid
/// against junit-10.xsd; an older results.json without them reads as none.
#[test]
fn excluded_unstable_bytes_are_said_in_junit_and_results() {
    let excluded = hrr_reports::ExcludedBytes {
        bytes: 6,
        checks: 1,
        runs: 3,
        why: "they differed between 3 replays of the archive; the case declares at most 16".into(),
    };
    let mut pass = case("sm90", "1/1", "atomic_float_sum", Status::Pass);
    pass.attempts[0].outcome = RawOutcome::Pass;
    pass.attempts[0].excluded = Some(excluded.clone());
    let mut fail = case("sm90", "1/1", "atomic_float_sum_2", Status::Fail);
    fail.attempts[0].excluded = Some(ExcludedBytes {
        bytes: 40,
        ..excluded.clone()
    });
    let r = report("sm90", "1/1", vec![pass, fail]);
    let xml = hrr_reports::junit::render(&[&r]);
    validate(&xml);
    assert!(
        xml.contains("unstable: 6 byte(s) of 1 D2H check(s) excluded: they differed between 3 replays of the archive; the case declares at most 16"),
        "{xml}"
    );
    assert!(
        xml.contains("  unstable: 40 byte(s) of 1 D2H check(s) excluded"),
        "{xml}"
    );
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("results.json");
    r.write_json(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(v["schema_version"], "1.4");
    assert_eq!(v["cases"][0]["attempts"][0]["excluded"]["bytes"], 6);
    assert!(v["cases"][1]["attempts"][0].get("excluded").is_some());
    let back = RunReport::read_json(&path).unwrap();
    assert_eq!(back.cases[0].attempts[0].excluded, Some(excluded));
    v["schema_version"] = serde_json::json!("1.2");
    v["cases"][0]["attempts"][0]
        .as_object_mut()
        .unwrap()
        .remove("excluded");
    let back = RunReport::from_json(&path, v.to_string().as_bytes()).unwrap();
    assert_eq!(back.cases[0].attempts[0].excluded, None);
}

/// Checks matched only by a declared comparison: in results.json (schema 1.4, read
/// back) and in JUnit's system-out, valid against junit-10.xsd; an older results.json
/// without them reads as none.
#[test]
fn declared_matches_are_said_in_junit_and_results() {
    let declared = hrr_reports::DeclaredMatches {
        checks: 12,
        comparison: "f64 within 1024 ulps".into(),
        widest_ulps: Some(30),
        listed: vec![
            "seq 14 cudaMemcpy: 1 of 1 f64 element(s) differ, matched within 30 ulps".into(),
            "seq 17 cudaMemcpy: 1 of 1 f64 element(s) differ, matched within 2 ulps".into(),
        ],
    };
    let mut pass = case("sm90", "1/1", "float_noise", Status::Pass);
    pass.attempts[0].outcome = RawOutcome::Pass;
    pass.attempts[0].declared = Some(declared.clone());
    let r = report("sm90", "1/1", vec![pass]);
    let xml = hrr_reports::junit::render(&[&r]);
    validate(&xml);
    assert!(
        xml.contains("declared comparison: 12 D2H check(s) matched as f64 within 1024 ulps only, not byte-exact (widest 30 ulps): seq 14 cudaMemcpy: 1 of 1 f64 element(s) differ, matched within 30 ulps; seq 17 cudaMemcpy: 1 of 1 f64 element(s) differ, matched within 2 ulps; and 10 more"),
        "{xml}"
    );
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("results.json");
    r.write_json(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(v["cases"][0]["attempts"][0]["declared"]["widest_ulps"], 30);
    let back = RunReport::read_json(&path).unwrap();
    assert_eq!(back.cases[0].attempts[0].declared, Some(declared));
    v["schema_version"] = serde_json::json!("1.3");
    v["cases"][0]["attempts"][0]
        .as_object_mut()
        .unwrap()
        .remove("declared");
    let back = RunReport::from_json(&path, v.to_string().as_bytes()).unwrap();
    assert_eq!(back.cases[0].attempts[0].declared, None);
}
