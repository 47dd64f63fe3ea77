//! What one family runs: every case with its disposition (run, or skip with its kind and
//! reason), its expectation and its time limit; and deterministic sharding.

use std::time::Duration;

use serde::Serialize;

use crate::glob;
use crate::schema::{Case, ExpectKind, Family, Matrix, Rule, SkipKind};

/// Time limit for a case when nothing in the matrix sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Disposition {
    Run,
    /// Not run here; `reason` is the rule's reason or issue URL.
    Skip {
        skip: SkipKind,
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expectation {
    Pass,
    Fail { reason: String },
    Flake { reason: String },
}

#[derive(Clone, Debug, Serialize)]
pub struct ResolvedCase {
    pub case: Case,
    pub disposition: Disposition,
    pub expectation: Expectation,
    #[serde(serialize_with = "ser_duration")]
    pub timeout: Duration,
    /// Index of the rule that decided the disposition or expectation (for `matrix list`).
    pub rule: Option<usize>,
}

fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::duration::format(*d))
}

fn rule_selects(r: &Rule, family: &Family, case: &Case) -> bool {
    let fam_ok = match (&r.family, &r.target) {
        (Some(p), _) => glob::matches(p, &family.name),
        (None, Some(p)) => family.targets.iter().any(|t| glob::matches(p, t)),
        (None, None) => false,
    };
    let case_ok = r.case.as_ref().is_none_or(|p| glob::matches(p, &case.name));
    let tag_ok = r
        .tag
        .as_ref()
        .is_none_or(|p| case.tags.iter().any(|t| glob::matches(p, t)));
    fam_ok && case_ok && tag_ok
}

/// Every case of the matrix as `family` sees it, in matrix order. A skip rule beats an
/// expectation; among rules of one kind the first in the file wins.
pub fn resolve_family(m: &Matrix, family: &Family) -> Vec<ResolvedCase> {
    m.cases
        .iter()
        .map(|case| {
            let timeout = case
                .timeout
                .or(family.timeout)
                .or(m.defaults.timeout)
                .map(|t| t.0)
                .unwrap_or(DEFAULT_TIMEOUT);
            let selected: Vec<(usize, &Rule)> = m
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| rule_selects(r, family, case))
                .collect();
            if let Some((i, r)) = selected.iter().find(|(_, r)| r.skip.is_some()) {
                let skip = r.skip.unwrap_or(SkipKind::Unsupported);
                let reason = match skip {
                    SkipKind::Disabled => format!(
                        "disabled: {}{}",
                        r.issue.clone().unwrap_or_default(),
                        r.reason
                            .as_ref()
                            .map(|s| format!(" ({s})"))
                            .unwrap_or_default()
                    ),
                    SkipKind::Unsupported => {
                        format!("unsupported: {}", r.reason.clone().unwrap_or_default())
                    }
                };
                return ResolvedCase {
                    case: case.clone(),
                    disposition: Disposition::Skip { skip, reason },
                    expectation: Expectation::Pass,
                    timeout,
                    rule: Some(*i),
                };
            }
            let (expectation, rule) = match selected.iter().find(|(_, r)| r.expect.is_some()) {
                Some((i, r)) => {
                    let reason = r.reason.clone().unwrap_or_default();
                    let e = match r.expect {
                        Some(ExpectKind::Fail) => Expectation::Fail { reason },
                        _ => Expectation::Flake { reason },
                    };
                    (e, Some(*i))
                }
                None => (Expectation::Pass, None),
            };
            ResolvedCase {
                case: case.clone(),
                disposition: Disposition::Run,
                expectation,
                timeout,
                rule,
            }
        })
        .collect()
}

/// A shard specification `K/N` (1-based K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| ShardError::NotKOfN(text.into()))?;
        let k: u32 = k
            .trim()
            .parse()
            .map_err(|_| ShardError::BadIndex(text.into()))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| ShardError::BadCount(text.into()))?;
        if n == 0 || k == 0 || k > n {
            return Err(ShardError::OutOfRange(text.into()));
        }
        Ok(Shard { index: k, count: n })
    }
}

/// Why a `--shard K/N` was refused; each names the text as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("--shard `{0}`: expected K/N, e.g. 2/4")]
    NotKOfN(String),
    #[error("--shard `{0}`: K is not a number")]
    BadIndex(String),
    #[error("--shard `{0}`: N is not a number")]
    BadCount(String),
    #[error("--shard `{0}`: need 1 <= K <= N (shards are numbered from 1)")]
    OutOfRange(String),
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The cases of shard K/N: cases sorted by name, dealt round-robin, so every runner
/// computes the same split with no coordination, each case lands in exactly one shard and
/// shard sizes differ by at most one.
pub fn shard(cases: Vec<ResolvedCase>, s: Shard) -> Vec<ResolvedCase> {
    let mut sorted = cases;
    sorted.sort_by(|a, b| a.case.name.cmp(&b.case.name));
    sorted
        .into_iter()
        .enumerate()
        .filter(|(i, _)| (*i as u32) % s.count == s.index - 1)
        .map(|(_, c)| c)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_shards_say_which_part_is_wrong() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse("2"), Err(ShardError::NotKOfN("2".into())));
        assert_eq!(Shard::parse("x/4"), Err(ShardError::BadIndex("x/4".into())));
        assert_eq!(Shard::parse("1/y"), Err(ShardError::BadCount("1/y".into())));
        assert_eq!(
            Shard::parse("0/2"),
            Err(ShardError::OutOfRange("0/2".into()))
        );
        assert_eq!(
            Shard::parse("3/2").unwrap_err().to_string(),
            "--shard `3/2`: need 1 <= K <= N (shards are numbered from 1)"
        );
    }
}
