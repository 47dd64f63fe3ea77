//! `hrr-replay --serve VENDOR`: one process, one runtime and context, replaying every
//! `hrr_contract::ServeRequest` read from stdin and answering each with one
//! `hrr_contract::ServeAnswer` line.

use std::io::{BufRead, Write};

use hrr_archive::api::Vendor;
use hrr_archive::Limits;
use hrr_contract::{LimitOverrides, ReplayExit, ServeAnswer, ServeReply, ServeRequest};

use crate::session::{replay_all, ReplayRequest, Runtimes};

/// The reader limits a request asks for: replay's defaults where it names none.
fn limits(o: LimitOverrides) -> Limits {
    let d = Limits::default();
    Limits {
        max_file_bytes: o.max_file_bytes.unwrap_or(d.max_file_bytes),
        max_events: o.max_events.unwrap_or(d.max_events),
        max_host_bytes: o.max_host_bytes.unwrap_or(d.max_host_bytes),
    }
}

fn answer(out: &mut impl Write, a: &ServeAnswer) -> std::io::Result<()> {
    let line = serde_json::to_string(a).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
}

/// Serves requests until end of input, or until the device is no longer usable after
/// one (answered first). The exit code: `Invalid` for an unknown vendor, the runtime's
/// start-up failure, `Fail` after an unusable device or a closed output, else `Pass`.
pub fn serve(vendor: &str) -> ReplayExit {
    let Some(v) = Vendor::parse(vendor) else {
        eprintln!("hrr-replay: --serve {vendor:?}: expected cuda or hip");
        return ReplayExit::Invalid;
    };
    let mut runtimes = Runtimes::default();
    if let Err(why) = runtimes.get(v) {
        eprintln!("hrr-replay: --serve: {why}");
        return ReplayExit::NoGpu;
    }
    let sync = match v {
        Vendor::Cuda => "cudaDeviceSynchronize",
        Vendor::Hip => "hipDeviceSynchronize",
    };
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let req: ServeRequest = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                let error = format!("bad request: {e}");
                let _ = answer(&mut stdout, &ServeAnswer::Refused { error });
                continue;
            }
        };
        if let Some(n) = req
            .stability_runs
            .filter(|&n| n > crate::stability::MAX_RUNS as u32)
        {
            let error = format!(
                "bad request: stability_runs {n} is more than {}",
                crate::stability::MAX_RUNS
            );
            let _ = answer(&mut stdout, &ServeAnswer::Refused { error });
            continue;
        }
        if let Some(s) = req
            .sync_watchdog_s
            .filter(|&s| s == 0 || s > crate::watchdog::MAX_LIMIT_S)
        {
            let error = format!(
                "bad request: sync_watchdog_s {s} is not 1 to {} seconds",
                crate::watchdog::MAX_LIMIT_S
            );
            let _ = answer(&mut stdout, &ServeAnswer::Refused { error });
            continue;
        }
        let mut log: Box<dyn Write> = match &req.log {
            Some(path) => match std::fs::File::create(path) {
                Ok(f) => Box::new(std::io::BufWriter::new(f)),
                Err(e) => {
                    let error = format!("cannot create {}: {e}", path.display());
                    let _ = answer(&mut stdout, &ServeAnswer::Refused { error });
                    continue;
                }
            },
            None => Box::new(std::io::stderr()),
        };
        let replacements =
            match crate::session::load_replacements(&req.replace_kernels, &limits(req.limits)) {
                Ok(r) => r,
                Err(error) => {
                    let _ = answer(&mut stdout, &ServeAnswer::Refused { error });
                    continue;
                }
            };
        if let Some(s) = req.sync_watchdog_s {
            crate::watchdog::arm(
                std::time::Duration::from_secs(s),
                crate::watchdog::api_symbol,
            );
        }
        let exit_code = {
            let mut err = Vec::new();
            let job = ReplayRequest {
                archives: req.archives,
                json: req.json,
                continue_on_error: req.continue_on_error,
                limits: limits(req.limits),
                stability_runs: req.stability_runs.unwrap_or(1),
                trace: false,
                code_store: None,
                expect_fault: false,
                divergence_abort: None,
                comparison: req.comparison,
                replacements,
                kernel_filter: None,
                timing: false,
            };
            let code = replay_all(&job, &mut runtimes, &mut log, &mut err);
            let _ = log.write_all(&err);
            let _ = log.flush();
            code
        };
        // A replay can leave the context unusable (an illegal address is sticky): the
        // next archive would then fail for a reason of this one's.
        let healthy = match runtimes.get(v) {
            Ok(rt) => rt.call_void(sync) == Ok(0),
            Err(_) => false,
        };
        let reply = ServeAnswer::Replied(ServeReply { exit_code, healthy });
        if answer(&mut stdout, &reply).is_err() || !healthy {
            return ReplayExit::Fail;
        }
    }
    ReplayExit::Pass
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_overrides_only_the_limits_it_names() {
        let d = Limits::default();
        assert_eq!(limits(LimitOverrides::default()), d);
        let l = limits(LimitOverrides {
            max_events: Some(0),
            ..LimitOverrides::default()
        });
        assert_eq!(l, Limits { max_events: 0, ..d });
    }
}
