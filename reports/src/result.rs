//! The records of a run: one `CaseResult` per case and the `RunReport` that holds them,
//! written as `results.json` (and one JSON line per case as it finishes, `results.jsonl`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::status::{RawOutcome, Status};

/// One check of one attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub passed: bool,
    /// What was verified, or exactly what failed (for a D2H check: sequence id, API,
    /// first differing offset, expected and found bytes).
    pub detail: String,
}

/// One attempt of a case (a case that surprised is run twice).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttemptResult {
    pub outcome: RawOutcome,
    pub duration_s: f64,
    /// One line: the first failing check, or what passed.
    pub message: String,
    pub checks: Vec<CheckResult>,
    /// The replay summary and the tail of the logs, for JUnit's system-out.
    #[serde(default)]
    pub output: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub family: String,
    /// "K/N" of the run that produced it.
    pub shard: String,
    pub case: String,
    pub status: Status,
    pub duration_s: f64,
    /// One line: the skip reason, the failing check, or the expectation's reason.
    pub message: String,
    #[serde(default)]
    pub attempts: Vec<AttemptResult>,
    /// Where the case's archives and logs were kept (failing cases, or --keep-archives).
    #[serde(default)]
    pub artifacts: Option<String>,
}

/// Counts per status; they add up to `cases`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub cases: u64,
    pub by_status: BTreeMap<Status, u64>,
    /// Cases whose status fails the run.
    pub unexpected: u64,
}

impl Totals {
    pub fn of<'a>(cases: impl IntoIterator<Item = &'a CaseResult>) -> Totals {
        let mut t = Totals::default();
        for c in cases {
            t.cases += 1;
            *t.by_status.entry(c.status).or_insert(0) += 1;
            if c.status.is_unexpected() {
                t.unexpected += 1;
            }
        }
        t
    }
    pub fn count(&self, s: Status) -> u64 {
        self.by_status.get(&s).copied().unwrap_or(0)
    }
}

/// Why a `results.json` could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadReportError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{}:{}: not a harness results.json: {source}", path.display(), source.line(), source.column())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// `results.json`: one family and shard (or, merged, many).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub tool_version: String,
    pub source_revision: String,
    /// Families in this report (one for a run, many after a merge).
    pub families: Vec<String>,
    /// "K/N" for a run; empty after a merge.
    pub shard: String,
    /// What the machine had ("NVIDIA H200 (sm_90)"), or why no GPU was used.
    pub gpus: Vec<String>,
    pub hostname: String,
    /// Seconds since the Unix epoch at start.
    pub started_unix: u64,
    pub duration_s: f64,
    pub cases: Vec<CaseResult>,
    pub totals: Totals,
}

impl RunReport {
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let data = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        write_atomic(path, &data)
    }

    pub fn read_json(path: &Path) -> Result<RunReport, ReadReportError> {
        let data = std::fs::read(path).map_err(|source| ReadReportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_slice(&data).map_err(|source| ReadReportError::Json {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The suite name JUnit uses and merges key on: `hrr-<family>` plus the shard when
    /// there are several.
    pub fn suite_name(family: &str, shard: &str) -> String {
        match shard {
            "" | "1/1" => format!("hrr-{family}"),
            s => format!("hrr-{family}-shard-{}", s.replace('/', "-of-")),
        }
    }
}

/// Writes through a temporary file and a rename, so a reader never sees half a report.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path)
}
