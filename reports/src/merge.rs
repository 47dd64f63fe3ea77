//! `hrr-harness report merge DIR...`: finds every `results.json` under the given
//! directories (one per family and shard, as CI artifacts arrive) and combines them into
//! one report. A case reported twice for the same family and shard is an error: it means
//! two artifacts of the same job were downloaded, and counting both would lie.
//!
//! A merge can also be told which families and shards to expect (`ExpectedRuns`, from the
//! matrix or a list a workflow writes): each one that did not report is named, and its
//! cases enter the merged report as `not-run`, so a lost shard fails the merge instead of
//! shrinking it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::result::{CaseResult, RunReport, Totals};
use crate::status::Status;

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
    #[error(
        "family `{family}` shard {shard} appears in two reports (two artifacts of the same job)"
    )]
    DuplicateShard { family: String, shard: String },
}

/// One family and shard (`K/N`) a merge expects a report of.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExpectedShard {
    pub family: String,
    pub index: u32,
    pub count: u32,
}

impl ExpectedShard {
    /// `K/N`, as reports write their shard.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

impl std::fmt::Display for ExpectedShard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.family, self.index, self.count)
    }
}

/// What a complete merge holds: these shards, and per family the names of its cases (from
/// the matrix: a missing shard's cases become `not-run` entries; a family without a list
/// gets one `(shard K/N)` entry per missing shard).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExpectedRuns {
    pub shards: Vec<ExpectedShard>,
    pub cases: BTreeMap<String, Vec<String>>,
}

/// A line of an expect list that is not `FAMILY K/N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: `{text}`: expected `FAMILY K/N` (1 <= K <= N), e.g. `sm90 2/4`")]
pub struct ExpectListError {
    pub line: usize,
    pub text: String,
}

/// Parses an expect list: one `FAMILY K/N` per line; blank lines and `#` comments are
/// skipped; the same shard twice counts once.
pub fn parse_expect_list(text: &str) -> Result<Vec<ExpectedShard>, ExpectListError> {
    let mut out = BTreeSet::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let bad = || ExpectListError {
            line: i + 1,
            text: raw.trim().to_string(),
        };
        let mut words = l.split_whitespace();
        let (Some(family), Some(kn), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad());
        };
        let (k, n) = kn.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) =
            (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        out.insert(ExpectedShard {
            family: family.to_string(),
            index,
            count,
        });
    }
    Ok(out.into_iter().collect())
}

/// A merge checked against what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedMerge {
    /// Every case, the missing shards' cases included as `not-run`.
    pub merged: RunReport,
    /// Expected shards no report covers.
    pub missing: Vec<ExpectedShard>,
    /// Per family with missing shards, a report of its `not-run` cases (its shard: the
    /// missing shards, `+`-joined), so JUnit shows them in a suite of their own.
    pub not_run: Vec<RunReport>,
    /// Shards that reported but were not expected (merged all the same).
    pub unexpected: Vec<ExpectedShard>,
}

/// The family and shard of a single run's report (a merged one has none).
fn shard_of(r: &RunReport) -> Option<ExpectedShard> {
    let [family] = r.families.as_slice() else {
        return None;
    };
    let (k, n) = r.shard.split_once('/')?;
    Some(ExpectedShard {
        family: family.clone(),
        index: k.parse().ok()?,
        count: n.parse().ok()?,
    })
}

/// The shards `reports` cover: each single run's own, and those its cases name.
fn present_shards(reports: &[RunReport]) -> BTreeSet<ExpectedShard> {
    let mut present: BTreeSet<ExpectedShard> = reports.iter().filter_map(shard_of).collect();
    for c in reports.iter().flat_map(|r| &r.cases) {
        if let Some((k, n)) = c.shard.split_once('/') {
            if let (Ok(index), Ok(count)) = (k.parse(), n.parse()) {
                present.insert(ExpectedShard {
                    family: c.family.clone(),
                    index,
                    count,
                });
            }
        }
    }
    present
}

/// `merge`, then checks the result against `expect`: every missing shard is named and its
/// cases (those of its family that no report has) are added as `not-run`.
pub fn merge_expecting(
    reports: &[RunReport],
    expect: &ExpectedRuns,
) -> Result<CheckedMerge, MergeError> {
    let mut merged = merge(reports)?;
    let present = present_shards(reports);
    let wanted: BTreeSet<&ExpectedShard> = expect.shards.iter().collect();
    let missing: Vec<ExpectedShard> = expect
        .shards
        .iter()
        .filter(|s| !present.contains(*s))
        .cloned()
        .collect();
    let unexpected: Vec<ExpectedShard> = present
        .iter()
        .filter(|s| !wanted.contains(s))
        .cloned()
        .collect();
    let mut by_family: BTreeMap<&str, Vec<&ExpectedShard>> = BTreeMap::new();
    for s in &missing {
        by_family.entry(s.family.as_str()).or_default().push(s);
    }
    let have: BTreeSet<(&str, &str)> = merged
        .cases
        .iter()
        .map(|c| (c.family.as_str(), c.case.as_str()))
        .collect();
    let mut not_run = Vec::new();
    for (family, shards) in by_family {
        let label = shards
            .iter()
            .map(|s| s.label())
            .collect::<Vec<_>>()
            .join("+");
        let names = shards
            .iter()
            .map(|s| format!("shard {}", s.label()))
            .collect::<Vec<_>>()
            .join(", ");
        let absent: Vec<String> = expect
            .cases
            .get(family)
            .map(|all| {
                all.iter()
                    .filter(|c| !have.contains(&(family, c.as_str())))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let entry = |case: String, message: String| CaseResult {
            family: family.to_string(),
            shard: label.clone(),
            case,
            status: Status::NotRun,
            duration_s: 0.0,
            message,
            attempts: vec![],
            artifacts: None,
        };
        let cases: Vec<CaseResult> = if absent.is_empty() {
            shards
                .iter()
                .map(|s| {
                    entry(
                        format!("(shard {})", s.label()),
                        format!("{family} shard {} sent no results.json", s.label()),
                    )
                })
                .collect()
        } else {
            absent
                .into_iter()
                .map(|c| entry(c, format!("not run: {family} {names} sent no results.json")))
                .collect()
        };
        not_run.push(RunReport {
            tool_version: merged.tool_version.clone(),
            source_revision: merged.source_revision.clone(),
            families: vec![family.to_string()],
            shard: label.clone(),
            gpus: vec![],
            hostname: String::new(),
            started_unix: merged.started_unix,
            duration_s: 0.0,
            totals: Totals::of(&cases),
            cases,
        });
    }
    if !not_run.is_empty() {
        merged
            .cases
            .extend(not_run.iter().flat_map(|r| r.cases.iter().cloned()));
        merged
            .cases
            .sort_by(|a, b| (&a.family, &a.case).cmp(&(&b.family, &b.case)));
        let mut families: BTreeSet<String> = merged.families.iter().cloned().collect();
        families.extend(not_run.iter().flat_map(|r| r.families.iter().cloned()));
        merged.families = families.into_iter().collect();
        merged.totals = Totals::of(&merged.cases);
    }
    Ok(CheckedMerge {
        merged,
        missing,
        not_run,
        unexpected,
    })
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
    let mut shards = BTreeSet::new();
    for s in reports.iter().filter_map(shard_of) {
        if !shards.insert(s.clone()) {
            return Err(MergeError::DuplicateShard {
                shard: s.label(),
                family: s.family,
            });
        }
    }
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
