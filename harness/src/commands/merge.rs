//! `hrr-harness report merge`: every results.json under the directories into one JUnit,
//! results.json, summary and durations.json; with `--expect matrix [--families]` or
//! `--expect-list FILE`, a family or shard that sent no results is named, its cases are
//! reported `not-run`, and the merge exits 1.

use std::path::{Path, PathBuf};

use hrr_matrix::resolve_family;
use hrr_reports::merge::{
    merge_expecting, parse_expect_list, CheckedMerge, ExpectedRuns, ExpectedShard, FindError,
};
use hrr_reports::RunReport;

use super::{family, Res};
use crate::cli::{ExpectArgs, ExpectFrom};
use crate::error::HarnessError;
use crate::exit::Exit;
use crate::output;
use crate::repo::SourceTree;

/// What the merge must find, from the matrix or an expect list; `None`: no check.
fn expected_runs(
    matrix: Option<&Path>,
    expect: &ExpectArgs,
) -> Result<Option<ExpectedRuns>, HarnessError> {
    let cases_of = |m: &hrr_matrix::Matrix, f: &hrr_matrix::Family| -> Vec<String> {
        resolve_family(m, f)
            .into_iter()
            .map(|rc| rc.case.name)
            .collect()
    };
    match (expect.expect, &expect.expect_list) {
        (None, None) => Ok(None),
        (Some(ExpectFrom::Matrix), _) => {
            let tree = SourceTree::locate(matrix)?;
            let m = tree.load_matrix()?;
            let families = if expect.families.is_empty() {
                m.families.iter().collect::<Vec<_>>()
            } else {
                expect
                    .families
                    .iter()
                    .map(|n| family(&m, n))
                    .collect::<Result<Vec<_>, _>>()?
            };
            let mut runs = ExpectedRuns::default();
            for f in families {
                let count = f.shards.max(1);
                runs.shards.extend((1..=count).map(|index| ExpectedShard {
                    family: f.name.clone(),
                    index,
                    count,
                }));
                runs.cases.insert(f.name.clone(), cases_of(&m, f));
            }
            Ok(Some(runs))
        }
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                HarnessError::usage(format!("--expect-list {}: {e}", file.display()))
            })?;
            let shards = parse_expect_list(&text).map_err(|e| {
                HarnessError::usage(format!("--expect-list {}: {e}", file.display()))
            })?;
            // The matrix, when there is one, names each family's cases for `not-run`.
            let mut runs = ExpectedRuns {
                shards,
                ..Default::default()
            };
            if let Ok(m) = SourceTree::locate(matrix).and_then(|t| t.load_matrix()) {
                for s in &runs.shards {
                    if let Some(f) = m.families.iter().find(|f| f.name == s.family) {
                        runs.cases.insert(f.name.clone(), cases_of(&m, f));
                    }
                }
            }
            Ok(Some(runs))
        }
    }
}

/// `report merge DIR... --output OUT [--expect matrix [--families a,b] | --expect-list FILE]`.
pub fn merge_with(
    matrix: Option<&Path>,
    dirs: &[PathBuf],
    output: &Path,
    expect: &ExpectArgs,
) -> Res {
    let expected = expected_runs(matrix, expect)?;
    let files = match hrr_reports::merge::find_results(dirs) {
        Ok(files) => files,
        // With an expectation, finding nothing is the extreme case of missing shards (every
        // shard job failed before writing, or the download found none): every expected
        // shard is reported not-run and the merge fails, with the reports written.
        Err(FindError::NoneFound(_) | FindError::Missing(_)) if expected.is_some() => Vec::new(),
        Err(e) => return Err(HarnessError::usage(e.to_string())),
    };
    let mut reports = Vec::new();
    for f in &files {
        reports.push(RunReport::read_json(f).map_err(|e| HarnessError::usage(e.to_string()))?);
    }
    let checked = match &expected {
        Some(e) => merge_expecting(&reports, e),
        None => hrr_reports::merge::merge(&reports).map(|merged| CheckedMerge {
            merged,
            missing: vec![],
            not_run: vec![],
            unexpected: vec![],
        }),
    }
    .map_err(|e| HarnessError::usage(e.to_string()))?;
    std::fs::create_dir_all(output)
        .map_err(|e| HarnessError::usage(format!("--output {}: {e}", output.display())))?;
    let io = |what: &str, e: std::io::Error| {
        HarnessError::failed(format!("writing {}: {e}", output.join(what).display()))
    };
    // JUnit keeps one suite per family and shard, from the original reports, and one per
    // family for the shards that did not report.
    let suites: Vec<&RunReport> = reports.iter().chain(checked.not_run.iter()).collect();
    hrr_reports::result::write_atomic(
        &output.join("junit.xml"),
        hrr_reports::junit::render(&suites).as_bytes(),
    )
    .map_err(|e| io("junit.xml", e))?;
    let merged = &checked.merged;
    merged
        .write_json(&output.join("results.json"))
        .map_err(|e| io("results.json", e))?;
    hrr_reports::result::write_durations(&output.join("durations.json"), &merged.durations())
        .map_err(|e| io("durations.json", e))?;
    let mut md = hrr_reports::markdown::merged_summary(merged);
    md.push_str(&hrr_reports::markdown::missing_shards(&checked.missing));
    hrr_reports::result::write_atomic(&output.join("summary.md"), md.as_bytes())
        .map_err(|e| io("summary.md", e))?;
    // report.html (reports-ui): the merged page, linking each case's log and replay result.
    let sources: Vec<(&Path, &RunReport)> =
        files.iter().map(PathBuf::as_path).zip(&reports).collect();
    let page = hrr_reports::html::write_report(output, merged, &sources, &checked.missing)
        .map_err(|e| HarnessError::failed(format!("report.html: {e}")))?;
    output::append_step_summary(&md);
    print!("{md}");
    for s in &checked.unexpected {
        eprintln!("hrr-harness: note: {s} reported but was not expected (merged all the same)");
    }
    for s in &checked.missing {
        eprintln!(
            "hrr-harness: missing: family {} shard {} sent no results.json; its cases are reported not-run",
            s.family,
            s.label()
        );
    }
    crate::out!(
        "merged {} report(s) into {} (page: {}){}",
        files.len(),
        output.display(),
        page.display(),
        match (&expected, checked.missing.len()) {
            (None, _) => String::new(),
            (Some(e), 0) => format!("; all {} expected shard(s) present", e.shards.len()),
            (Some(e), n) => format!("; {n} of {} expected shard(s) MISSING", e.shards.len()),
        }
    );
    Ok(if merged.totals.unexpected == 0 {
        Exit::Ok
    } else {
        Exit::Unexpected
    })
}
