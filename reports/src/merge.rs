//! `hrr-harness report merge DIR...`: finds every `results.json` under the given
//! directories (one per family and shard, as CI artifacts arrive) and combines them into
//! one report. A case reported twice for the same family and shard is an error: it means
//! two artifacts of the same job were downloaded, and counting both would lie.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::result::{RunReport, Totals};

/// Every `results.json` under `dirs` (a file argument is taken as is), sorted.
pub fn find_results(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    for d in dirs {
        if d.is_file() {
            found.push(d.clone());
            continue;
        }
        if !d.is_dir() {
            return Err(format!("{}: no such file or directory", d.display()));
        }
        walk(d, &mut found, 0)?;
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        return Err(format!(
            "no results.json under {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(found)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: u32) -> Result<(), String> {
    if depth > 8 {
        return Ok(());
    }
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in rd.flatten() {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            walk(&p, out, depth + 1)?;
        } else if t.is_file() && p.file_name().is_some_and(|n| n == "results.json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Combines reports. Totals are recomputed from the cases, so they always add up.
pub fn merge(reports: &[RunReport]) -> Result<RunReport, String> {
    let mut seen = BTreeSet::new();
    let mut cases = Vec::new();
    let mut families = BTreeSet::new();
    let mut gpus = BTreeSet::new();
    let mut revisions = BTreeSet::new();
    for r in reports {
        revisions.insert(r.source_revision.clone());
        for g in &r.gpus {
            gpus.insert(g.clone());
        }
        for c in &r.cases {
            if !seen.insert((c.family.clone(), c.case.clone())) {
                return Err(format!(
                    "case `{}` of family `{}` appears in two reports (the same shard twice, or overlapping shards)",
                    c.case, c.family
                ));
            }
            families.insert(c.family.clone());
            cases.push(c.clone());
        }
    }
    cases.sort_by(|a, b| (&a.family, &a.case).cmp(&(&b.family, &b.case)));
    let totals = Totals::of(&cases);
    Ok(RunReport {
        tool_version: reports
            .first()
            .map(|r| r.tool_version.clone())
            .unwrap_or_default(),
        source_revision: revisions.into_iter().collect::<Vec<_>>().join(" "),
        families: families.into_iter().collect(),
        shard: String::new(),
        gpus: gpus.into_iter().collect(),
        hostname: String::new(),
        started_unix: reports.iter().map(|r| r.started_unix).min().unwrap_or(0),
        duration_s: reports.iter().map(|r| r.duration_s).sum(),
        cases,
        totals,
    })
}
