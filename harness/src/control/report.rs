//! The files a control run leaves for people and CI: `outcomes.json` and the plain lists
//! (`caught.txt`, `missed.txt`, `unviable.txt`, `timeout.txt`), rewritten as each control
//! finishes; the Markdown table (also what a pull request gets) and JUnit.

use std::path::Path;

use hrr_reports::{CaseResult, RunReport, Status, Totals};

use super::classify::{exit_code, first_line, Tally};
use super::outcome::{Outcome, Outcomes};
use crate::exit::Exit;

/// The files every run clears first, so none is left from an earlier run.
pub const FILES: [&str; 7] = [
    "outcomes.json",
    "caught.txt",
    "missed.txt",
    "unviable.txt",
    "timeout.txt",
    "junit.xml",
    "summary.md",
];

/// Writes `outcomes.json` and one list of control names per outcome (errors have none:
/// their reasons are in `outcomes.json`).
pub fn write_outcomes(dir: &Path, o: &Outcomes) {
    if let Ok(d) = serde_json::to_vec_pretty(o) {
        let _ = hrr_reports::result::write_atomic(&dir.join("outcomes.json"), &d);
    }
    for outcome in [
        Outcome::Caught,
        Outcome::Missed,
        Outcome::Unviable,
        Outcome::Timeout,
        Outcome::Built,
    ] {
        let lines: String = o
            .controls
            .iter()
            .filter(|c| c.outcome == outcome)
            .map(|c| format!("{}\n", c.name))
            .collect();
        let _ = std::fs::write(dir.join(format!("{}.txt", outcome.as_str())), lines);
    }
}

/// The Markdown table of outcomes (also what a pull request gets).
pub fn markdown(o: &Outcomes) -> String {
    let mut s = format!("## hrr-harness negative controls: {}\n\n", o.family);
    if !o.baseline_passed {
        s.push_str("**Baseline failed**: the guard cases must pass on the unmodified tree before a control proves anything.\n\n| case | status | detail |\n| --- | --- | --- |\n");
        for b in &o.baseline {
            s.push_str(&format!(
                "| {} | {} | {} |\n",
                b.case,
                b.status,
                first_line(&b.message).replace('|', "\\|")
            ));
        }
        return s;
    }
    let t = Tally::of(o);
    let verdict = if exit_code(o) != Exit::Ok {
        "**FAIL**"
    } else if t.built > 0 && t.caught == 0 {
        // --build-only: tools made, nothing proven yet.
        "**BUILT, NOT RUN**"
    } else {
        "**PASS**"
    };
    let built = if t.built > 0 {
        format!(", {} built", t.built)
    } else {
        String::new()
    };
    s.push_str(&format!(
        "{verdict}: {} caught, {} missed, {} unviable, {} timeout, {} error{built} (revision `{}`)\n\n| control | removes | outcome | detail |\n| --- | --- | --- | --- |\n",
        t.caught,
        t.missed,
        t.unviable,
        t.timeout,
        t.error,
        o.source_revision
    ));
    for c in &o.controls {
        let mut d = c.summary.replace('|', "\\|");
        if d.len() > 400 {
            let mut cut = 400;
            while !d.is_char_boundary(cut) {
                cut -= 1;
            }
            d.truncate(cut);
            d.push('…');
        }
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.name,
            c.removal,
            c.outcome.as_str(),
            d
        ));
    }
    s
}

/// A control's outcome as a JUnit status: caught passes, missed fails, unviable and
/// error are errors, built (`--build-only`) is skipped as compiled, not run.
fn junit_status(o: Outcome) -> Status {
    match o {
        Outcome::Caught => Status::Pass,
        Outcome::Built => Status::CompiledNotRun,
        Outcome::Missed => Status::Fail,
        Outcome::Timeout => Status::Timeout,
        Outcome::Unviable | Outcome::Error => Status::Crash,
    }
}

/// JUnit: one testcase per control, classname `controls-FAMILY`.
pub fn junit(o: &Outcomes) -> String {
    let family = format!("controls-{}", o.family);
    let cases: Vec<CaseResult> = o
        .controls
        .iter()
        .map(|c| CaseResult {
            family: family.clone(),
            shard: "1/1".into(),
            case: c.name.clone(),
            status: junit_status(c.outcome),
            duration_s: c.duration_s,
            message: format!("{}: {}", c.outcome.as_str(), c.summary),
            attempts: vec![],
            artifacts: Some(c.dir.clone()),
        })
        .collect();
    let report = RunReport {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        source_revision: o.source_revision.clone(),
        families: vec![family],
        shard: "1/1".into(),
        gpus: vec![],
        hostname: String::new(),
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        duration_s: o.controls.iter().map(|c| c.duration_s).sum(),
        totals: Totals::of(&cases),
        cases,
    };
    hrr_reports::junit::render(&[&report])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::outcome::{ControlResult, GuardResult};
    use crate::control::spec::Removal;

    fn control(name: &str, outcome: Outcome, summary: &str) -> ControlResult {
        ControlResult {
            name: name.into(),
            removal: Removal::Patch {
                file: "matrix/controls/x.patch".into(),
                reverse: false,
            },
            outcome,
            summary: summary.into(),
            guards: vec![],
            collateral: vec![],
            duration_s: 1.5,
            dir: format!("/o/controls/{name}"),
        }
    }

    fn outcomes(baseline_passed: bool, controls: Vec<ControlResult>) -> Outcomes {
        Outcomes {
            family: "sm90".into(),
            source_revision: "abc".into(),
            baseline: vec![GuardResult {
                case: "adds".into(),
                status: if baseline_passed {
                    Status::Pass
                } else {
                    Status::Fail
                },
                message: "wrong | sum\nsecond line".into(),
            }],
            baseline_passed,
            controls,
        }
    }

    #[test]
    fn markdown_counts_outcomes_and_escapes_table_cells() {
        let o = outcomes(
            true,
            vec![
                control("a", Outcome::Caught, "every guard failed: x (a|b)"),
                control("b", Outcome::Missed, &"y".repeat(500)),
            ],
        );
        let md = markdown(&o);
        assert!(
            md.contains(
                "**FAIL**: 1 caught, 1 missed, 0 unviable, 0 timeout, 0 error (revision `abc`)"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| a | apply matrix/controls/x.patch | caught | every guard failed: x (a\\|b) |"
            ),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "| b | apply matrix/controls/x.patch | missed | {}… |",
                "y".repeat(400)
            )),
            "{md}"
        );
        let all_caught = outcomes(true, vec![control("a", Outcome::Caught, "")]);
        assert!(markdown(&all_caught).contains("**PASS**: 1 caught"));
    }

    #[test]
    fn a_failed_baseline_lists_the_baseline_instead() {
        let md = markdown(&outcomes(false, vec![]));
        assert!(md.contains("**Baseline failed**"), "{md}");
        assert!(md.contains("| adds | fail | wrong \\| sum |"), "{md}");
        assert!(!md.contains("| control |"), "{md}");
    }

    #[test]
    fn junit_has_one_testcase_per_control() {
        let o = outcomes(
            true,
            vec![
                control("a", Outcome::Caught, "ok"),
                control("b", Outcome::Missed, "still passed"),
                control("c", Outcome::Unviable, "conflict"),
            ],
        );
        let x = junit(&o);
        assert_eq!(x.matches("<testcase ").count(), 3, "{x}");
        assert!(x.contains("classname=\"controls-sm90\""), "{x}");
        assert!(x.contains("missed: still passed"), "{x}");
        assert!(x.contains("unviable: conflict"), "{x}");
    }

    #[test]
    fn outcome_files_list_control_names() {
        let t = tempfile::tempdir().unwrap();
        let o = outcomes(
            true,
            vec![
                control("a", Outcome::Caught, ""),
                control("b", Outcome::Missed, ""),
                control("c", Outcome::Caught, ""),
                control("d", Outcome::Error, ""),
            ],
        );
        write_outcomes(t.path(), &o);
        let read = |f: &str| std::fs::read_to_string(t.path().join(f)).unwrap();
        assert_eq!(read("caught.txt"), "a\nc\n");
        assert_eq!(read("missed.txt"), "b\n");
        assert_eq!(read("unviable.txt"), "");
        assert_eq!(read("timeout.txt"), "");
        let back: Outcomes = serde_json::from_str(&read("outcomes.json")).unwrap();
        assert_eq!(back.controls.len(), 4);
        assert_eq!(back.controls[3].outcome, Outcome::Error);
    }
}
