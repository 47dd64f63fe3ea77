//! The replay step: a case's archives replayed in one `hrr-replay` (the worker's
//! `--serve` process where it has one, else a process of its own), and its `--json`
//! results read back with the contract's types.

use std::path::Path;

use hrr_contract::{LimitOverrides, ReplayExit, ReplayResult, ServeRequest};

use super::attempt::Attempt;
use super::error::StepError;
use crate::process::{self, Exit};
use crate::service::ServiceError;

/// Why replay's JSON output holds no results for the archives given.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot read it: {0}")]
    Missing(#[from] std::io::Error),
    #[error("{0}")]
    Unreadable(#[from] serde_json::Error),
    #[error("{found} result(s) for {expected} archive(s)")]
    Count { found: usize, expected: usize },
    /// Larger than the harness reads (a replay listing millions of failures).
    #[error("it is {bytes} bytes, more than the {limit} the harness reads")]
    TooLarge { bytes: u64, limit: u64 },
}

/// The largest replay result the harness reads: results of a case's few archives are
/// kilobytes; this bounds the harness's memory whatever a replay writes.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// Reads replay's `--json` output, refusing a file over `MAX_RESULT_BYTES` before
/// reading it.
fn read_result_file(path: &Path) -> Result<Vec<u8>, ResultsError> {
    let bytes = std::fs::metadata(path)?.len();
    if bytes > MAX_RESULT_BYTES {
        return Err(ResultsError::TooLarge {
            bytes,
            limit: MAX_RESULT_BYTES,
        });
    }
    Ok(std::fs::read(path)?)
}

/// The results of `count` archives in replay's `--json` output: one object for one
/// archive, an array for several.
pub fn read_results(data: &[u8], count: usize) -> Result<Vec<ReplayResult>, ResultsError> {
    let results = if count == 1 {
        vec![serde_json::from_slice::<ReplayResult>(data)?]
    } else {
        serde_json::from_slice::<Vec<ReplayResult>>(data)?
    };
    if results.len() != count {
        return Err(ResultsError::Count {
            found: results.len(),
            expected: count,
        });
    }
    Ok(results)
}

impl Attempt<'_> {
    /// The case's built replacement kernel (`replace_kernel`), as replay takes it.
    fn replacement(&self) -> Option<hrr_contract::KernelReplacement> {
        match self.ctx.built.cases.get(&self.rc.case.name) {
            Some(crate::builder::CaseBuild::Built {
                replacement: Some((name, path)),
                ..
            }) => Some(hrr_contract::KernelReplacement {
                name: name.clone(),
                path: path.display().to_string(),
            }),
            _ => None,
        }
    }

    /// Replays `archives` in one `hrr-replay` process (the runtime starts once) and returns
    /// each archive's result, in order.
    /// `runs` above 1 replays each archive that many times (`--stability-runs`).
    pub(super) fn replay(
        &mut self,
        step: &'static str,
        archives: &[&Path],
        runs: u32,
    ) -> Result<Vec<ReplayResult>, StepError> {
        let json = self.dir.join(format!("{step}.json"));
        let log = self.dir.join(format!("{step}.log"));
        super::heartbeat::step(&self.rc.case.name, step);
        let replacement = self.replacement();
        let code = if let Some(service) = self.service.get() {
            let request = ServeRequest {
                archives: archives.iter().map(|a| a.to_path_buf()).collect(),
                json: Some(json.display().to_string()),
                log: Some(log.clone()),
                continue_on_error: true,
                limits: LimitOverrides::default(),
                stability_runs: (runs > 1).then_some(runs),
                comparison: self.rc.case.comparison().ok().flatten(),
                replace_kernels: replacement.clone().into_iter().collect(),
                // A call stuck for half of what is left of the case's time is named by
                // the service before the case times out.
                sync_watchdog_s: Some(
                    (self
                        .deadline
                        .saturating_duration_since(std::time::Instant::now())
                        / 2)
                    .as_secs()
                    .clamp(1, 86_400),
                ),
            };
            match service.request(&request, self.deadline) {
                Ok(reply) => {
                    if !reply.healthy {
                        self.service.discard();
                    }
                    i32::from(reply.exit_code.code())
                }
                Err(ServiceError::Timeout) => {
                    self.service.discard();
                    return Err(StepError::ReplayTimedOut { step });
                }
                Err(source) => {
                    self.service.discard();
                    return Err(StepError::Service { step, source });
                }
            }
        } else {
            let mut cmd = self.command(&self.ctx.built.replay);
            cmd.args(archives)
                .arg("--continue-on-error")
                .arg("--json")
                .arg(&json);
            if runs > 1 {
                cmd.arg("--stability-runs").arg(runs.to_string());
            }
            if let Ok(Some(c)) = self.rc.case.comparison() {
                cmd.arg("--compare").arg(c.to_string());
            }
            if let Some(r) = &replacement {
                cmd.arg("--replace-kernel")
                    .arg(format!("{}={}", r.name, r.path));
            }
            match self.run(step, cmd)? {
                Exit::Code(c) => c,
                _ => -1,
            }
        };
        let names: Vec<String> = archives.iter().map(|a| a.display().to_string()).collect();
        self.output
            .push_str(&format!("$ hrr-replay {} (exit {code})\n", names.join(" ")));
        self.output.push_str(&process::tail(&log, 4000));
        let parsed = read_result_file(&json).and_then(|d| read_results(&d, archives.len()));
        match parsed {
            Ok(rs) => match rs.iter().find(|r| r.exit_code == ReplayExit::NoGpu) {
                Some(r) => Err(StepError::NoGpu {
                    step,
                    reason: r.reason.clone(),
                }),
                None => Ok(rs),
            },
            Err(_) if ReplayExit::from_code(code) == Some(ReplayExit::NoGpu) => {
                Err(StepError::NoGpuNoResult { step })
            }
            Err(e) => Err(StepError::NoResult {
                step,
                code,
                count: archives.len(),
                json,
                // A missing file says enough; an unreadable one says why (a newer
                // schema's major version, say).
                why: (!matches!(e, ResultsError::Missing(_))).then(|| e.to_string()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(exit: ReplayExit) -> ReplayResult {
        ReplayResult::failed("/a".into(), exit, String::new())
    }

    #[test]
    fn one_archive_is_an_object_several_an_array() {
        let r = one(ReplayExit::Fail);
        let data = serde_json::to_vec(&r).unwrap();
        assert_eq!(read_results(&data, 1).unwrap(), vec![r.clone()]);
        let two = serde_json::to_vec(&vec![r.clone(), one(ReplayExit::Pass)]).unwrap();
        assert_eq!(read_results(&two, 2).unwrap().len(), 2);
        assert!(matches!(
            read_results(&two, 3),
            Err(ResultsError::Count {
                found: 2,
                expected: 3
            })
        ));
        assert!(matches!(
            read_results(&data, 2),
            Err(ResultsError::Unreadable(_))
        ));
    }

    #[test]
    fn a_result_file_over_the_limit_is_not_read() {
        let t = tempfile::tempdir().unwrap();
        let big = t.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_RESULT_BYTES + 1).unwrap();
        let e = read_result_file(&big).unwrap_err();
        assert!(matches!(e, ResultsError::TooLarge { .. }), "{e}");
        assert!(matches!(
            read_result_file(&t.path().join("none.json")),
            Err(ResultsError::Missing(_))
        ));
    }

    #[test]
    fn a_newer_schema_is_refused_with_its_reason() {
        let mut v = serde_json::to_value(one(ReplayExit::Pass)).unwrap();
        v["schema_version"] = serde_json::json!("9.0");
        let e = read_results(v.to_string().as_bytes(), 1).unwrap_err();
        assert!(e.to_string().contains("schema version 9.0 is newer"), "{e}");
    }
}
