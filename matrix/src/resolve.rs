//! What one family runs: every case with its disposition (run, or skip with its kind and
//! reason), its expectation and its time limit; and deterministic sharding: round robin
//! by name, or balanced by previous durations (longest first onto the least-loaded shard).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::glob;
use crate::schema::{Case, ExpectKind, Family, Matrix, Rule, RunsOn, SkipKind};

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

fn rule_selects(r: &Rule, family: &Family, case: &Case, on: RunsOn) -> bool {
    if r.only_on.is_some_and(|o| o != on) {
        return false;
    }
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

/// Every case of the matrix as `family` sees it on its GPUs, in matrix order. A skip rule
/// beats an expectation; among rules of one kind the first in the file wins.
pub fn resolve_family(m: &Matrix, family: &Family) -> Vec<ResolvedCase> {
    resolve_family_on(m, family, RunsOn::Gpu)
}

/// As [`resolve_family`], where the cases run `on` real GPUs or the stand-in runtime
/// (rules with `only_on` apply to one of them).
pub fn resolve_family_on(m: &Matrix, family: &Family, on: RunsOn) -> Vec<ResolvedCase> {
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
                .filter(|(_, r)| rule_selects(r, family, case, on))
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

/// Which shard (0-based) each case name lands in when cases are dealt by `durations`
/// (seconds per case name): longest first onto the least-loaded shard, ties broken by
/// name and then by the lower shard number, so the same inputs always give the same split.
/// A case without a duration counts as the median of the known ones (1 s when none is
/// known, which makes the deal round robin by name).
pub fn balanced_assignment(
    names: &[&str],
    durations: &BTreeMap<String, f64>,
    count: u32,
) -> BTreeMap<String, u32> {
    let mut known: Vec<f64> = names
        .iter()
        .filter_map(|n| durations.get(*n).copied())
        .filter(|d| d.is_finite() && *d >= 0.0)
        .collect();
    known.sort_by(f64::total_cmp);
    let median = match known.len() {
        0 => 1.0,
        n if n % 2 == 1 => known[n / 2],
        n => (known[n / 2 - 1] + known[n / 2]) / 2.0,
    };
    let mut weighted: Vec<(f64, &str)> = names
        .iter()
        .map(|n| {
            let d = durations
                .get(*n)
                .copied()
                .filter(|d| d.is_finite() && *d >= 0.0)
                .unwrap_or(median);
            (d, *n)
        })
        .collect();
    weighted.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut load = vec![0.0f64; count.max(1) as usize];
    let mut out = BTreeMap::new();
    for (d, name) in weighted {
        let (i, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then_with(|| a.0.cmp(&b.0)))
            .unwrap_or((0, &0.0));
        load[i] += d;
        out.insert(name.to_string(), i as u32);
    }
    out
}

/// The cases of shard K/N dealt by previous durations (`balanced_assignment`), in name
/// order. Every runner given the same durations file computes the same split.
pub fn shard_by_durations(
    cases: Vec<ResolvedCase>,
    s: Shard,
    durations: &BTreeMap<String, f64>,
) -> Vec<ResolvedCase> {
    let names: Vec<&str> = cases.iter().map(|c| c.case.name.as_str()).collect();
    let at = balanced_assignment(&names, durations, s.count);
    let mut mine: Vec<ResolvedCase> = cases
        .into_iter()
        .filter(|c| at.get(&c.case.name) == Some(&(s.index - 1)))
        .collect();
    mine.sort_by(|a, b| a.case.name.cmp(&b.case.name));
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slowest shard's load over the mean, minus one (0.10: 10% above the mean).
    fn imbalance(loads: &[f64]) -> f64 {
        let mean = loads.iter().sum::<f64>() / loads.len() as f64;
        loads.iter().cloned().fold(0.0, f64::max) / mean - 1.0
    }

    /// 200 cases with a heavy tail: a deterministic generator (no randomness between
    /// runs), durations from 1 s to 100 s, most of them short (median about 2 s, total
    /// about 834 s, the three longest 100 s each).
    fn skewed_cases() -> BTreeMap<String, f64> {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        (0..200)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                // Pareto-like: 1 / u^0.9, capped; a few cases dominate.
                let d = (1.0 / u.max(1e-3).powf(0.9)).min(100.0);
                (format!("case_{i:03}"), (d * 10.0).round() / 10.0)
            })
            .collect()
    }

    #[test]
    fn balanced_shards_are_within_ten_percent_where_round_robin_is_not() {
        let durations = skewed_cases();
        let names: Vec<&str> = durations.keys().map(String::as_str).collect();
        // 8 shards: 0.7% balanced, 75.3% round robin (bench/RESULTS.md records these).
        let count = 8u32;
        let at = balanced_assignment(&names, &durations, count);
        let mut balanced = vec![0.0; count as usize];
        let mut round_robin = vec![0.0; count as usize];
        for (i, n) in names.iter().enumerate() {
            balanced[at[*n] as usize] += durations[*n];
            round_robin[i % count as usize] += durations[*n];
        }
        let (b, r) = (imbalance(&balanced), imbalance(&round_robin));
        eprintln!(
            "{count} shards: slowest shard {:.1}% over the mean balanced, {:.1}% round robin",
            b * 100.0,
            r * 100.0
        );
        assert!(b <= 0.10, "balanced: {b}");
        assert!(r > 0.50, "round robin: {r}");
        // Every case in exactly one shard, and the same split every time.
        assert_eq!(at.len(), names.len());
        assert_eq!(at, balanced_assignment(&names, &durations, count));
    }

    #[test]
    fn unknown_cases_weigh_the_median_and_ties_go_by_name() {
        let d: BTreeMap<String, f64> = [("a", 10.0), ("b", 2.0), ("c", 4.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        // x and y weigh 4, the median of 10, 2 and 4.
        let at = balanced_assignment(&["a", "b", "c", "x", "y"], &d, 2);
        let got: Vec<(&str, u32)> = at.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        // a -> 0 (10); c, x, y tie at 4 and go by name: c -> 1, x -> 1 (8 < 10), y -> 1
        // (8 < 10); b -> 0 (10 < 12).
        assert_eq!(got, vec![("a", 0), ("b", 0), ("c", 1), ("x", 1), ("y", 1)]);
        // No durations at all: round robin by name.
        let rr = balanced_assignment(&["d", "a", "c", "b"], &BTreeMap::new(), 2);
        let got: Vec<u32> = rr.values().copied().collect();
        assert_eq!(got, vec![0, 1, 0, 1]);
    }

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
