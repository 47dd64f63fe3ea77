//! The records of a run: one `CaseResult` per case and the `RunReport` that holds them,
//! written as `results.json` (and one JSON line per case as it finishes, `results.jsonl`),
//! with its `schema_version`; and `durations.json`, case -> seconds, for balanced shards.

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
    /// D2H bytes the replay excluded because they differed between its replays (1.3;
    /// cases that declare `unstable:` in the matrix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded: Option<ExcludedBytes>,
    /// D2H checks that matched only by the comparison the case declares (1.4; a float
    /// tolerance, or elements in any order): passed, never byte-exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<DeclaredMatches>,
}

/// D2H checks of one replay that were not byte-exact but matched by the case's declared
/// comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredMatches {
    pub checks: u64,
    /// The comparison, in words ("f64 within 4 ulps").
    pub comparison: String,
    /// The most units in the last place a matched element differed by (tolerances).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widest_ulps: Option<u64>,
    /// The first few checks, one line each ("seq 85 cudaMemcpy: 1 of 1 f64 element(s)
    /// differ, matched within 1 ulps").
    #[serde(default)]
    pub listed: Vec<String>,
}

impl DeclaredMatches {
    /// One line: "2 D2H check(s) matched as f64 within 4 ulps only, not byte-exact (widest 1 ulps): ...".
    pub fn line(&self) -> String {
        let more = (self.checks as usize).saturating_sub(self.listed.len());
        format!(
            "{} D2H check(s) matched as {} only, not byte-exact{}: {}{}",
            self.checks,
            self.comparison,
            self.widest_ulps
                .map(|u| format!(" (widest {u} ulps)"))
                .unwrap_or_default(),
            self.listed.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        )
    }
}

/// Bytes of D2H results a case's replay did not compare: they differed between its
/// replays of one archive. Never counted as passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcludedBytes {
    pub bytes: u64,
    /// The D2H checks they belong to.
    pub checks: u64,
    /// Replays compared with each other.
    pub runs: u32,
    /// Why, in words (the replays, the case's declaration).
    pub why: String,
}

impl ExcludedBytes {
    /// One line: "6 byte(s) of 1 D2H check(s) excluded: WHY".
    pub fn line(&self) -> String {
        format!(
            "{} byte(s) of {} D2H check(s) excluded: {}",
            self.bytes, self.checks, self.why
        )
    }
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

/// The version of `results.json`'s layout, written as `"MAJOR.MINOR"` in its
/// `schema_version`. A reader takes any minor version of its major (new fields are
/// ignored) and refuses a newer major, whose meaning it cannot know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SchemaVersion {
    pub major: u32,
    pub minor: u32,
}

impl SchemaVersion {
    /// 1.1: `schema_version` itself, and the statuses `compiled-not-run` and `not-run`;
    /// 1.2: the status `stand-in`; 1.3: an attempt's `excluded` (unstable) bytes; 1.4: an
    /// attempt's `declared` matches (a tolerance or an unordered comparison).
    pub const CURRENT: SchemaVersion = SchemaVersion { major: 1, minor: 4 };
    /// What a file without `schema_version` (written before it existed) is.
    pub const UNVERSIONED: SchemaVersion = SchemaVersion { major: 1, minor: 0 };

    pub fn parse(text: &str) -> Option<SchemaVersion> {
        let (major, minor) = text.split_once('.')?;
        Some(SchemaVersion {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl std::fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
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
    #[error("{}: schema_version `{found}` is not MAJOR.MINOR", path.display())]
    BadSchemaVersion { path: PathBuf, found: String },
    #[error("{}: results.json schema {found} is newer than this tool reads ({}.x): use a newer hrr-harness", path.display(), SchemaVersion::CURRENT.major)]
    NewerSchema { path: PathBuf, found: SchemaVersion },
}

/// The first thing read from a results.json: its version, before its layout is trusted.
#[derive(Deserialize)]
struct VersionProbe {
    #[serde(default)]
    schema_version: Option<String>,
}

/// `results.json` as written: the version first, then the report's fields.
#[derive(Serialize)]
struct Versioned<'a> {
    schema_version: String,
    #[serde(flatten)]
    report: &'a RunReport,
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
    /// Writes `results.json` with `schema_version` = `SchemaVersion::CURRENT`.
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let v = Versioned {
            schema_version: SchemaVersion::CURRENT.to_string(),
            report: self,
        };
        let data = serde_json::to_vec_pretty(&v).map_err(std::io::Error::other)?;
        write_atomic(path, &data)
    }

    /// Reads a `results.json`; refuses one of a newer major schema version.
    pub fn read_json(path: &Path) -> Result<RunReport, ReadReportError> {
        let data = std::fs::read(path).map_err(|source| ReadReportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json(path, &data)
    }

    /// `read_json` of bytes already read (`path` names them in errors).
    pub fn from_json(path: &Path, data: &[u8]) -> Result<RunReport, ReadReportError> {
        let json = |source| ReadReportError::Json {
            path: path.to_path_buf(),
            source,
        };
        let probe: VersionProbe = serde_json::from_slice(data).map_err(json)?;
        let version = match probe.schema_version {
            None => SchemaVersion::UNVERSIONED,
            Some(text) => {
                SchemaVersion::parse(&text).ok_or_else(|| ReadReportError::BadSchemaVersion {
                    path: path.to_path_buf(),
                    found: text.clone(),
                })?
            }
        };
        if version.major > SchemaVersion::CURRENT.major {
            return Err(ReadReportError::NewerSchema {
                path: path.to_path_buf(),
                found: version,
            });
        }
        serde_json::from_slice(data).map_err(json)
    }

    /// Seconds per case name for `--durations`: the mean over the report's families of
    /// each case that ran (skipped, compiled-only and not-run cases took no GPU time).
    pub fn durations(&self) -> Durations {
        let mut sum: BTreeMap<String, (f64, u32)> = BTreeMap::new();
        for c in self.cases.iter().filter(|c| c.status.ran()) {
            let e = sum.entry(c.case.clone()).or_insert((0.0, 0));
            e.0 += c.duration_s;
            e.1 += 1;
        }
        sum.into_iter()
            .map(|(k, (s, n))| (k, s / f64::from(n)))
            .collect()
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

/// `durations.json`: case name -> seconds.
pub type Durations = BTreeMap<String, f64>;

/// Why a `--durations` file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DurationsError {
    #[error(transparent)]
    Report(#[from] ReadReportError),
    #[error("{}: neither a results.json nor a durations.json (case name -> seconds): {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: case `{case}` has {seconds} s: durations are finite and not negative", path.display())]
    Invalid {
        path: PathBuf,
        case: String,
        seconds: f64,
    },
}

/// Reads `--durations FILE`: a `results.json` (merged or not: its cases' durations) or a
/// `durations.json` as `report merge` writes it.
pub fn read_durations(path: &Path) -> Result<Durations, DurationsError> {
    let data = std::fs::read(path).map_err(|source| ReadReportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_slice(&data).map_err(|source| DurationsError::Json {
            path: path.to_path_buf(),
            source,
        })?;
    let map: Durations = if value.get("cases").is_some_and(|c| c.is_array()) {
        RunReport::from_json(path, &data)?.durations()
    } else {
        serde_json::from_value(value).map_err(|source| DurationsError::Json {
            path: path.to_path_buf(),
            source,
        })?
    };
    if let Some((case, seconds)) = map.iter().find(|(_, s)| !s.is_finite() || **s < 0.0) {
        return Err(DurationsError::Invalid {
            path: path.to_path_buf(),
            case: case.clone(),
            seconds: *seconds,
        });
    }
    Ok(map)
}

/// Writes `durations.json` (sorted by case name, so the file diffs well).
pub fn write_durations(path: &Path, d: &Durations) -> std::io::Result<()> {
    let data = serde_json::to_vec_pretty(d).map_err(std::io::Error::other)?;
    write_atomic(path, &data)
}

/// Writes through a temporary file and a rename, so a reader never sees half a report.
/// The one way the harness writes a report: the temporary file is created new
/// (`O_CREAT | O_EXCL`, which never follows a link) under a name of this process's own,
/// and the rename replaces whatever is at `path` (a planted link included) instead of
/// writing through it (issue 20: links planted at `junit.tmp` or `results.tmp` had their
/// targets overwritten, and the reports were left as links).
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{}: no file name", path.display())))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = path.with_file_name(format!(
        ".{}.{}.{}.{nanos}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(data))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::write_atomic;

    #[test]
    fn links_planted_at_the_report_or_the_old_temporary_name_are_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let report = d.path().join("junit.xml");
        std::os::unix::fs::symlink(&victim, &report).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("junit.tmp")).unwrap();
        write_atomic(&report, b"<testsuites/>").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&report).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&report).unwrap(), "<testsuites/>");
        // Nothing of ours is left beside it.
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") && n != "junit.tmp")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
