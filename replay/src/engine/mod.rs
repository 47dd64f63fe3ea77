//! The replay engine: re-issues a process's events in sequence order on the GPU,
//! rebuilding handles and addresses, and checks every device-to-host result.
//!
//! This module owns the dispatch of an event to its handler, a device reset, what a
//! replay releases at its end, and `replay_process`. The per-process state is `ctx::Ctx`,
//! made of parts by concern (translation, code, owned resources, graphs, checks,
//! staging, pending outputs, timing), each in its own file with its own methods.
//! Generic table rows are replayed in `generic` (decode -> policy -> encode per
//! parameter kind) and `outputs` (what a call created); copies' host side and the D2H
//! check in `copies` and `compare`; kernels, modules and device variables in `kernels`.
//! An event that fails becomes a `Failure` whose kind its `EventError` variant gives.

mod call_buffers;
mod checks;
mod code;
mod copies;
mod copy_outputs;
mod ctx;
mod deferred;
mod error;
mod generic;
mod graph_launch;
mod graphs;
mod host_fns;
mod kernel_nodes;
mod kernels;
mod launchcfg;
mod mapped;
mod mempool;
mod modules;
mod observe;
mod outputs;
mod owned;
mod recent_blobs;
mod replace;
mod resource;
mod restore;
mod snapshots;
mod textures;
mod timing;
mod translation;
mod vmm;

use std::collections::HashMap;

use hrr_archive::api::{self, fid, semantic, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::{Event, ProcessArchive};
use hrr_contract::{Comparison, Counts, DeclaredMatch, Failure, UnstableCheck};

use crate::profile::{self, Part};
use crate::runtime::Runtime;
use crate::stability::Learner;
use crate::staging::Staging;
use checks::Checks;
use code::Code;
use ctx::Ctx;
use error::EvResult;
use graphs::Graphs;
use owned::Owned;
use translation::Translation;

pub use error::EventError;
pub use replace::Replacement;

pub struct Options {
    pub continue_on_error: bool,
    /// Name each event on stderr before replaying it.
    pub trace: bool,
    /// `--divergence-abort FRACTION`: stop once more than this share of the D2H checks
    /// failed (after `DIVERGENCE_MIN_CHECKS`), naming the first failing check.
    pub divergence_abort: Option<f64>,
    /// `--compare`: what a D2H check may match by besides byte equality.
    pub comparison: Option<Comparison>,
    /// `--replace-kernel`: kernels launched from another code object.
    pub replacements: Vec<Replacement>,
    /// `--kernel-filter PATTERN`: launch only the kernels whose mangled name matches.
    pub kernel_filter: Option<String>,
    /// `--timing`: events around each launch.
    pub timing: bool,
}

/// The D2H checks made before `--divergence-abort` judges the share that failed.
pub const DIVERGENCE_MIN_CHECKS: u64 = 10;

/// Why a replay diverging past `limit` stops, if it does: `failed` of `checks` D2H checks.
fn diverged(limit: Option<f64>, failed: u64, checks: u64) -> Option<String> {
    let limit = limit?;
    (checks >= DIVERGENCE_MIN_CHECKS && failed as f64 > limit * checks as f64).then(|| {
        format!(
            "replay stopped: {failed} of {checks} D2H checks failed, more than {:.0}% (--divergence-abort {limit})",
            limit * 100.0
        )
    })
}

/// `CUDA_ERROR_DEINITIALIZED`, `cudaErrorCudartUnloading` and `hipErrorDeinitialized`:
/// the runtime or driver was being torn down.
const TORN_DOWN: i32 = 4;

impl Ctx<'_> {
    fn replay_event(&mut self, ev: &Event) -> EvResult {
        if ev.header.flags & RECORD_FLAG_INCOMPLETE != 0 {
            let why = self
                .proc_
                .manifest
                .capture_failures
                .iter()
                .find(|f| f.seq == ev.header.seq)
                .map(|f| f.reason.clone())
                .unwrap_or_else(|| "capture could not record it whole".into());
            return Err(EventError::Incomplete(why));
        }
        if ev.header.ret == TORN_DOWN {
            // The runtime or driver refused the call because the captured process was
            // exiting (nvcc's static runtime unloads its modules and releases the primary
            // context from a destructor after the driver began tearing down): the call
            // changed nothing, and replay, mid-archive, could not be refused the same way.
            self.checks.counts.failed_as_captured += 1;
            return Ok(());
        }
        if let Some(desc) = api::desc(ev.header.api_id) {
            if let Some(sync) = api::polls::completion_of(desc.id) {
                return self.replay_poll(ev, desc, sync);
            }
            if api::resets_device(desc.id) {
                // The reset would drop the staging buffers' registrations under them,
                // and the events of copies still waiting for their outputs.
                self.staging.unpin_all();
                self.snapshots.release(self.rt);
                self.compare_all_waiting()?;
                self.deferred.release(self.rt);
            }
            let r = self.replay_generic(ev, desc);
            if api::resets_device(desc.id) && ev.header.ret == 0 {
                // A reset destroys every allocation, module, stream and event of the
                // device: nothing captured before it may be translated to a stale handle.
                self.tr.reset();
                self.code.reset();
                self.owned.reset();
                self.graphs.nodes.clear();
            }
            return r;
        }
        match ev.header.api_id {
            // Code objects are loaded by hash when a launch or a variable needs them.
            semantic::REGISTER_FAT_BINARY
            | semantic::REGISTER_FUNCTION
            | semantic::REGISTER_VAR
            | semantic::UNREGISTER_FAT_BINARY => Ok(()),
            semantic::MODULE_LOAD => {
                modules::replay_module_load(self.rt, self.proc_, &mut self.code, ev)
            }
            semantic::MODULE_GET_FUNCTION => {
                modules::replay_get_function(self.rt, &mut self.code, ev)
            }
            semantic::MODULE_UNLOAD => modules::replay_module_unload(self.rt, &mut self.code, ev),
            semantic::LAUNCH_KERNEL
            | semantic::LAUNCH_KERNEL_BY_HANDLE
            | semantic::MODULE_LAUNCH_KERNEL => self.replay_launch(ev),
            semantic::SYMBOL_ADDRESS => modules::replay_symbol_address(
                self.rt,
                self.proc_,
                &mut self.code,
                &mut self.tr,
                ev,
            ),
            semantic::FUNC_SET_ATTRIBUTE
            | semantic::FUNC_SET_CACHE_CONFIG
            | semantic::FUNC_SET_SHARED_MEM_CONFIG => self.replay_func_setting(ev),
            semantic::LAUNCH_COOPERATIVE
            | semantic::LAUNCH_KERNEL_EX
            | semantic::HIP_EXT_LAUNCH => self.replay_configured_launch(ev),
            semantic::GRAPH_LAUNCH => self.replay_graph_launch(ev),
            semantic::GRAPH_KERNEL_NODE
            | semantic::GRAPH_KERNEL_NODE_SET_PARAMS
            | semantic::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS => self.replay_kernel_node(ev),
            // A marker of where an unmodelled call was made: nothing to re-execute (the
            // archive was refused for it, or is replayed under --continue-on-error).
            semantic::UNMODELLED_CALL => Ok(()),
            semantic::COPY_OUTPUT => self.replay_copy_output(ev),
            semantic::MAPPED_OUTPUT => self.replay_mapped_output(ev),
            semantic::RANGE_RESTORE => restore::replay_range_restore(
                self.rt,
                self.proc_,
                &self.tr,
                &mut self.checks.counts,
                ev,
            ),
            // Where a range capture's range starts or ends: nothing to re-execute.
            semantic::RANGE_MARK => Ok(()),
            semantic::UNREPLAYABLE => {
                self.checks.counts.unreplayable_refused += 1;
                let p = Payload::parse(&ev.payload)?;
                self.graphs.note_missing_node(ev, &p);
                Err(EventError::Unreplayable {
                    api: p.str(fid::API_NAME, "api").unwrap_or("?").to_string(),
                    reason: p.str(fid::REASON, "reason").unwrap_or("?").to_string(),
                })
            }
            other => Err(EventError::UnknownApi(other)),
        }
    }

    /// Releases what the replayed program left allocated, registered or loaded (a
    /// program need not free before it exits; a replay process serving several archives
    /// must). Failures here change no result: the device is checked before the next
    /// archive (`--serve`).
    fn release_all(&mut self) {
        let sync = match self.rt.vendor {
            Vendor::Cuda => "cudaDeviceSynchronize",
            Vendor::Hip => "hipDeviceSynchronize",
        };
        let _ = self.rt.call_void(sync);
        self.deferred.release(self.rt);
        self.owned.release(self.rt);
        self.code.release(self.rt);
        self.staging.unpin_all();
        self.snapshots.release(self.rt);
    }
}

/// What replaying one process found.
pub struct ProcessReplay {
    pub counts: Counts,
    pub failures: Vec<Failure>,
    /// The first event that showed the archive invalid or refused by a limit, named.
    pub refused: Option<String>,
    /// Checks with unstable bytes (a judging run under `--stability-runs`).
    pub unstable: Vec<UnstableCheck>,
    /// Checks that matched only by the declared comparison.
    pub declared: Vec<DeclaredMatch>,
    /// Lookups each replaced kernel's name served (`--replace-kernel`).
    pub replaced_lookups: HashMap<String, u64>,
    /// `--timing`: per-name GPU times, and the launches not timed.
    pub times: Option<(Vec<hrr_contract::KernelTime>, u64)>,
}

/// Replays one process: its counts and failures. With a `learner` this is one of
/// several runs: a learning run records its D2H results there and counts no check; the
/// last run judges every check with what the runs learned.
pub fn replay_process<'a>(
    rt: &'a Runtime,
    proc_: &'a ProcessArchive,
    opts: &Options,
    learner: Option<&'a mut Learner>,
) -> ProcessReplay {
    let mut ctx = Ctx {
        rt,
        proc_,
        tr: Translation::default(),
        code: Code::new(opts.replacements.clone(), opts.kernel_filter.clone()),
        owned: Owned::default(),
        graphs: Graphs::default(),
        // Under --continue-on-error: checks after the first refused unmodelled call are
        // marked (what that call did is missing from the replay).
        checks: Checks::new(
            proc_.entry.pid,
            proc_.events.len() as u64,
            learner,
            opts.comparison,
            crate::unmodelled::first_refused(&crate::unmodelled::calls(proc_)),
        ),
        staging: Staging::new(rt, proc_.limits.max_host_bytes),
        deferred: deferred::Deferred::default(),
        snapshots: snapshots::Snapshots::default(),
        timing: opts.timing.then(timing::Timing::default),
    };
    let events = profile::span(Part::Events);
    let progress = crate::progress::armed();
    if progress {
        crate::progress::process(proc_.entry.pid, proc_.events.len() as u64);
    }
    for (done, ev) in proc_.events.iter().enumerate() {
        if progress {
            crate::progress::running(ev.header.seq);
        }
        let failures = ctx.checks.failures.len();
        if opts.trace {
            eprintln!(
                "hrr-replay: trace: pid {} seq {} {}",
                proc_.entry.pid,
                ev.header.seq,
                ctx.api_label(ev.header.api_id)
            );
        }
        crate::watchdog::enter(proc_.entry.pid, ev.header.seq, ev.header.api_id);
        let t = profile::api_start();
        let r = ctx.replay_event(ev);
        profile::api_done(t, || ctx.api_label(ev.header.api_id));
        match r {
            Ok(()) => ctx.checks.counts.events_replayed += 1,
            Err(e) => {
                ctx.fail(ev, e);
                if !opts.continue_on_error {
                    break;
                }
            }
        }
        ctx.checks.mark_after_unmodelled(failures);
        let c = &ctx.checks.counts;
        if progress {
            crate::progress::done(done as u64 + 1, c.kernels_launched, c.d2h_pass, c.d2h_fail);
        }
        if let Some(why) = diverged(opts.divergence_abort, c.d2h_fail, c.d2h_pass + c.d2h_fail) {
            let first = ctx
                .checks
                .failures
                .iter()
                .find(|f| f.kind == hrr_contract::FailureKind::D2hMismatch)
                .map(|f| {
                    format!(
                        "; the first failing check: pid {} seq {} {}",
                        f.pid, f.seq, f.api
                    )
                })
                .unwrap_or_default();
            ctx.fail(ev, EventError::Stopped(format!("{why}{first}")));
            break;
        }
    }
    crate::watchdog::leave();
    drop(events);
    // Copies whose outputs arrived and whose comparison waited for them to complete.
    let drain = profile::span(Part::Drain);
    let failures = ctx.checks.failures.len();
    if let Err(e) = ctx.compare_ready(true) {
        if let Some(last) = proc_.events.last() {
            ctx.fail(last, e);
        }
    }
    ctx.checks.mark_after_unmodelled(failures);
    drop(drain);
    let times = ctx.timing.take().map(|t| t.finish(rt).report());
    let release = profile::span(Part::Release);
    ctx.release_all();
    drop(release);
    ctx.checks.counts.untranslated_pointers += ctx.tr.untranslated;
    let checks = ctx.checks;
    ProcessReplay {
        counts: checks.counts,
        failures: checks.failures,
        refused: checks.refused,
        unstable: checks.unstable,
        declared: checks.declared,
        replaced_lookups: std::mem::take(&mut ctx.code.replaced.lookups),
        times,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divergence_is_judged_after_enough_checks_and_above_the_share() {
        assert_eq!(diverged(None, 100, 100), None);
        // Too few checks to judge.
        assert_eq!(diverged(Some(0.25), 9, 9), None);
        // At the share is not above it.
        assert_eq!(diverged(Some(0.25), 5, 20), None);
        let why = diverged(Some(0.25), 6, 20).unwrap();
        assert_eq!(
            why,
            "replay stopped: 6 of 20 D2H checks failed, more than 25% (--divergence-abort 0.25)"
        );
    }
}
