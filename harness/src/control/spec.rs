//! What a control is: its name, how its fix is removed (a commit reverted or a patch
//! applied), its guard cases and the cases that must keep passing. Controls come from the
//! matrix or from `Guarded-by:` trailers in a range of commits.

use std::collections::BTreeSet;
use std::path::Path;

use hrr_matrix::{Control, Matrix};
use serde::{Deserialize, Serialize};

/// How the fix is removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Removal {
    Revert { commit: String },
    Patch { file: String, reverse: bool },
}

impl std::fmt::Display for Removal {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Removal::Revert { commit } => write!(f, "revert {}", &commit[..commit.len().min(12)]),
            Removal::Patch {
                file,
                reverse: false,
            } => write!(f, "apply {file}"),
            Removal::Patch {
                file,
                reverse: true,
            } => write!(f, "apply {file} in reverse"),
        }
    }
}

/// One control to run (from the matrix, or from a commit's `Guarded-by:` trailer).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ControlSpec {
    pub name: String,
    pub removal: Removal,
    pub guards: Vec<String>,
    pub keep_passing: Vec<String>,
}

impl ControlSpec {
    pub fn from_matrix(c: &Control) -> ControlSpec {
        let removal = match (&c.revert, &c.patch) {
            (Some(commit), _) => Removal::Revert {
                commit: commit.clone(),
            },
            (None, Some(file)) => Removal::Patch {
                file: file.clone(),
                reverse: c.reverse,
            },
            (None, None) => Removal::Patch {
                file: String::new(),
                reverse: false,
            },
        };
        ControlSpec {
            name: c.name.clone(),
            removal,
            guards: c.guards.clone(),
            keep_passing: c.keep_passing.clone(),
        }
    }

    /// The cases this control runs: its guards, then those that must keep passing.
    pub fn cases(&self) -> Vec<String> {
        self.guards
            .iter()
            .chain(&self.keep_passing)
            .cloned()
            .collect()
    }
}

/// Why `--commits BASE..HEAD` gave no controls.
#[derive(Debug, thiserror::Error)]
pub enum CommitsError {
    #[error("--commits {0}: expected BASE..HEAD")]
    NotARange(String),
    #[error("git log: {0}")]
    GitLog(#[source] std::io::Error),
    #[error("--commits {range}: {stderr}")]
    BadRange { range: String, stderr: String },
    #[error("commit {commit} ({subject}): Guarded-by names unknown case(s): {}", .unknown.join(", "))]
    UnknownCases {
        commit: String,
        subject: String,
        unknown: Vec<String>,
    },
}

/// Finds `Guarded-by: A, B` trailers in the commits of `range` (BASE..HEAD), one control
/// per commit, reverting that commit. Unknown case names are an error.
pub fn controls_from_commits(
    root: &Path,
    range: &str,
    m: &Matrix,
) -> Result<Vec<ControlSpec>, CommitsError> {
    if !range.contains("..") {
        return Err(CommitsError::NotARange(range.to_string()));
    }
    let out = crate::process::command("git")
        .arg("-C")
        .arg(root)
        .args(["log", "--reverse", "--format=%H%x00%s%x00%B%x1e", range])
        .output()
        .map_err(CommitsError::GitLog)?;
    if !out.status.success() {
        return Err(CommitsError::BadRange {
            range: range.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let known: BTreeSet<&str> = m.cases.iter().map(|c| c.name.as_str()).collect();
    let mut specs = Vec::new();
    for rec in String::from_utf8_lossy(&out.stdout).split('\x1e') {
        let mut parts = rec.trim_start_matches('\n').splitn(3, '\0');
        let (Some(hash), Some(subject), Some(body)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let guards = parse_trailer(body);
        if guards.is_empty() {
            continue;
        }
        let short = &hash[..hash.len().min(12)];
        let unknown: Vec<String> = guards
            .iter()
            .filter(|g| !known.contains(g.as_str()))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(CommitsError::UnknownCases {
                commit: short.to_string(),
                subject: subject.to_string(),
                unknown,
            });
        }
        specs.push(ControlSpec {
            name: format!("commit-{short}"),
            removal: Removal::Revert {
                commit: hash.to_string(),
            },
            guards,
            keep_passing: vec![],
        });
    }
    Ok(specs)
}

/// Case names of every `Guarded-by:` line of a commit message (case-insensitive key,
/// names separated by commas or spaces).
pub fn parse_trailer(body: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in body.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("guarded-by") {
            for n in value
                .split([',', ' ', '\t'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                if !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_are_parsed_from_commit_messages() {
        let body = "Fix pinned snapshots\n\nLonger text: with a colon.\n\nGuarded-by: PinnedHostRoundtrip, PinnedHostSnapshotCap\nguarded-by:   other  third\nSigned-off-by: A <a@b>\n";
        assert_eq!(
            parse_trailer(body),
            vec![
                "PinnedHostRoundtrip",
                "PinnedHostSnapshotCap",
                "other",
                "third"
            ]
        );
        assert!(parse_trailer("no trailer here\nGuarded by: x\n").is_empty());
    }

    #[test]
    fn removals_are_described_for_people() {
        let revert = Removal::Revert {
            commit: "0123456789abcdef0123".into(),
        };
        assert_eq!(revert.to_string(), "revert 0123456789ab");
        let patch = |reverse| Removal::Patch {
            file: "matrix/controls/x.patch".into(),
            reverse,
        };
        assert_eq!(patch(false).to_string(), "apply matrix/controls/x.patch");
        assert_eq!(
            patch(true).to_string(),
            "apply matrix/controls/x.patch in reverse"
        );
    }

    #[test]
    fn a_control_runs_its_guards_then_its_keep_passing_cases() {
        let s = ControlSpec {
            name: "c".into(),
            removal: Removal::Revert { commit: "x".into() },
            guards: vec!["a".into(), "b".into()],
            keep_passing: vec!["k".into()],
        };
        assert_eq!(s.cases(), ["a", "b", "k"]);
    }
}
