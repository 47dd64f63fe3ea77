//! `hrr-harness report merge DIR...`: finds every `results.json` under the given
//! directories (one per family and shard, as CI artifacts arrive) and combines them into
//! one report. A case reported twice for the same family and shard is an error: it means
//! two artifacts of the same job were downloaded, and counting both would lie.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::result::{RunReport, Totals};

/// How deep under each directory `results.json` files are looked for (CI artifacts nest a
/// few levels; a deeper tree is not an artifact download).
const MAX_DEPTH: usize = 9;

/// Why no list of `results.json` files came out of the arguments.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    #[error("{}: no such file or directory", .0.display())]
    Missing(PathBuf),
    #[error("{}: {source}", dir.display())]
    Walk {
        dir: PathBuf,
        #[source]
        source: walkdir::Error,
    },
    #[error("no results.json under {}", list(.0))]
    NoneFound(Vec<PathBuf>),
}

fn list(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why reports cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("case `{case}` of family `{family}` appears in two reports (the same shard twice, or overlapping shards)")]
    Duplicate { family: String, case: String },
}

/// Every `results.json` under `dirs` (a file argument is taken as is), sorted.
pub fn find_results(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, FindError> {
    let mut found = Vec::new();
    for d in dirs {
        if d.is_file() {
            found.push(d.clone());
            continue;
        }
        if !d.is_dir() {
            return Err(FindError::Missing(d.clone()));
        }
        for e in walkdir::WalkDir::new(d).max_depth(MAX_DEPTH) {
            let e = e.map_err(|source| FindError::Walk {
                dir: d.clone(),
                source,
            })?;
            if e.file_type().is_file() && e.file_name() == "results.json" {
                found.push(e.into_path());
            }
        }
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        return Err(FindError::NoneFound(dirs.to_vec()));
    }
    Ok(found)
}

/// Combines reports. Totals are recomputed from the cases, so they always add up.
pub fn merge(reports: &[RunReport]) -> Result<RunReport, MergeError> {
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
                return Err(MergeError::Duplicate {
                    family: c.family.clone(),
                    case: c.case.clone(),
                });
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
