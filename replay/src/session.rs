//! Replaying archives in this process: the vendor runtimes, each started once and
//! reused by every archive after it; one `ReplayResult` per archive; the summary text and
//! the JSON result written where the request says; the worst exit code.

use std::io::Write;
use std::path::PathBuf;

use hrr_archive::api::Vendor;
use hrr_archive::manifest::UnmodelledCoverage;
use hrr_archive::ProcessArchive;
use hrr_archive::{Archive, Limits};
use hrr_contract::{Failure, FailureKind, ReplayExit, ReplayResult, Verdict};

use crate::engine;
use crate::hip_version;
use crate::info::escape_controls;
use crate::runtime::{Runtime, RuntimeError};
use crate::stability::Learner;
use crate::unmodelled::{self, Refusal};

/// One replay job: archives replayed in order in this process, and where the result goes.
#[derive(Clone, Debug)]
pub struct ReplayRequest {
    pub archives: Vec<PathBuf>,
    /// A file, "-" for stdout, or none.
    pub json: Option<String>,
    pub continue_on_error: bool,
    pub limits: Limits,
    /// Replays of each process (`--stability-runs`): from 2 on, bytes that differ
    /// between them are excluded from the comparison (`crate::stability`).
    pub stability_runs: u32,
    /// Name each event on stderr before replaying it (`--trace`).
    pub trace: bool,
    /// Where code objects an archive does not hold are read, over the store its
    /// manifests name (`--code-store`).
    pub code_store: Option<PathBuf>,
    /// `--expect-fault`: a reproduced fault exits 0, an archive without one fails.
    pub expect_fault: bool,
    /// `--divergence-abort FRACTION` (`engine::Options`).
    pub divergence_abort: Option<f64>,
    /// `--compare`: what a D2H check may match by besides byte equality.
    pub comparison: Option<hrr_contract::Comparison>,
    /// `--replace-kernel`: kernels launched from another code object (read already).
    pub replacements: Vec<engine::Replacement>,
    /// `--kernel-filter`: launch only the kernels whose mangled name matches.
    pub kernel_filter: Option<String>,
    /// `--timing`: the GPU time of each kernel and graph launch.
    pub timing: bool,
}

/// Reads each `--replace-kernel` code object (a regular file, within `max_file_bytes`);
/// Err names the one that cannot be used.
pub fn load_replacements(
    list: &[hrr_contract::KernelReplacement],
    limits: &Limits,
) -> Result<Vec<engine::Replacement>, String> {
    list.iter()
        .map(|r| {
            let path = std::path::PathBuf::from(&r.path);
            hrr_archive::blob::read_regular_file(&path, limits)
                .map(|image| engine::Replacement {
                    name: r.name.clone(),
                    path: path.clone(),
                    image,
                })
                .map_err(|e| format!("--replace-kernel {}={}: {e}", r.name, r.path))
        })
        .collect()
}

/// Why a runtime could not start (replay exits `ReplayExit::NoGpu`).
#[derive(Clone, Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("no {vendor} device: {call} returned {code} with {count} devices")]
    NoDevice {
        vendor: &'static str,
        call: &'static str,
        code: i32,
        count: i32,
    },
    #[error("{call}(NULL) to initialise the runtime returned {code}")]
    Init { call: &'static str, code: i32 },
}

/// The runtimes loaded so far, one per vendor, each initialised once (a second archive
/// of the same vendor reuses the context the first created).
#[derive(Default)]
pub struct Runtimes {
    loaded: Vec<(Vendor, Result<Runtime, StartError>)>,
}

impl Runtimes {
    pub fn get(&mut self, vendor: Vendor) -> Result<&Runtime, StartError> {
        let i = match self.loaded.iter().position(|(v, _)| *v == vendor) {
            Some(i) => i,
            None => {
                let _t = crate::profile::span(crate::profile::Part::Start);
                self.loaded.push((vendor, start_runtime(vendor)));
                self.loaded.len() - 1
            }
        };
        self.loaded[i].1.as_ref().map_err(|e| e.clone())
    }
}

impl Drop for Runtimes {
    fn drop(&mut self) {
        // Unloading runs the runtime's own teardown (its context): timed for --profile.
        let _t = crate::profile::span(crate::profile::Part::Unload);
        self.loaded.clear();
    }
}

/// Loads the vendor's runtime, checks it sees a device and creates the context.
fn start_runtime(vendor: Vendor) -> Result<Runtime, StartError> {
    let rt = Runtime::load(vendor)?;
    if rt.driver_only {
        if let Err((call, code)) = rt.start_driver() {
            return Err(StartError::Init { call, code });
        }
    }
    let count_fn = match vendor {
        Vendor::Cuda => "cudaGetDeviceCount",
        Vendor::Hip => "hipGetDeviceCount",
    };
    match rt.call_int_out(count_fn)? {
        (0, n) if n > 0 => {}
        (code, count) => {
            return Err(StartError::NoDevice {
                vendor: vendor.as_str(),
                call: count_fn,
                code,
                count,
            })
        }
    }
    // Initialise the runtime's context so driver-level module loads have one.
    let free = match vendor {
        Vendor::Cuda => "cudaFree",
        Vendor::Hip => "hipFree",
    };
    if rt.driver_only {
        return Ok(rt);
    }
    match rt.call_ptr(free, 0) {
        Ok(0) | Err(_) => Ok(rt),
        Ok(code) => Err(StartError::Init { call: free, code }),
    }
}

/// Replays every archive of `req`, in order; writes each summary to `out`, problems to
/// `err`, the JSON result(s) where `req.json` says, and returns the worst exit code.
pub fn replay_all(
    req: &ReplayRequest,
    runtimes: &mut Runtimes,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ReplayExit {
    let mut results = Vec::with_capacity(req.archives.len());
    for path in &req.archives {
        let open = crate::profile::span(crate::profile::Part::Open);
        let opened = crate::packed::open(path, req.limits);
        drop(open);
        let result = match opened {
            Ok((mut archive, unpacked)) => {
                if let Some(store) = &req.code_store {
                    archive.use_code_store(store);
                }
                let mut r = replay(req, &archive, runtimes, err);
                if unpacked.is_some() {
                    // The file the user named, not our temporary copy.
                    r.archive = path.display().to_string();
                }
                r
            }
            Err(e) => {
                let _ = writeln!(err, "hrr-replay: {}", escape_controls(&e.to_string()));
                ReplayResult::failed(
                    path.display().to_string(),
                    ReplayExit::Invalid,
                    e.to_string(),
                )
            }
        };
        let _ = print_summary(out, &result);
        results.push(result);
    }
    let json = if results.len() == 1 {
        serde_json::to_vec_pretty(&results[0])
    } else {
        serde_json::to_vec_pretty(&results)
    }
    .unwrap_or_default();
    match req.json.as_deref() {
        Some("-") => {
            let _ = writeln!(out, "{}", String::from_utf8_lossy(&json));
        }
        Some(file) => {
            // Through safefs, as every file replay writes: a new file of our own renamed
            // over the name, so a link planted there is replaced, never followed.
            let written = hrr_archive::safefs::write_atomic_with(
                std::path::Path::new(file),
                false,
                |mut f, tmp| {
                    f.write_all(&json)
                        .map_err(|e| hrr_archive::ArchiveError::io(tmp, "write", e))
                },
            );
            if let Err(e) = written {
                let _ = writeln!(err, "hrr-replay: cannot write {file}: {e}");
            }
        }
        None => {}
    }
    let _ = out.flush();
    ReplayExit::worst(results.iter().map(|r| r.exit_code))
}

/// The verdict on an archive from what its processes' replays found.
fn verdict(result: &mut ReplayResult) -> ReplayExit {
    let c = &result.counts;
    if !result.failures.is_empty() {
        result.reason = format!("{} failure(s)", result.failures.len());
        ReplayExit::Fail
    } else if c.d2h_pass + c.d2h_unstable + c.d2h_declared_match == 0 {
        result.reason = format!(
            "no device-to-host check passed: nothing was verified{}",
            all_unstable_note(c.d2h_all_unstable, result.stability_runs)
        );
        ReplayExit::Fail
    } else {
        result.verdict = Verdict::Pass;
        result.reason = format!("{} D2H checks passed", c.d2h_pass);
        if let (n @ 1.., Some(cmp)) = (c.d2h_declared_match, &result.comparison) {
            result.reason += &format!(
                "; {n} more matched as {} only, not byte-exact",
                cmp.describe()
            );
        }
        if c.d2h_unstable > 0 {
            result.reason += &format!(
                "; {} more matched on their stable bytes only ({} unstable byte(s) excluded: they differed between {} replays)",
                c.d2h_unstable, c.unstable_bytes, result.stability_runs
            );
        }
        result.reason += &all_unstable_note(c.d2h_all_unstable, result.stability_runs);
        if c.range_restored_bytes > 0 {
            result.reason += &format!(
                "; a range capture: {} bytes of the snapshot at its start restored first",
                c.range_restored_bytes
            );
        }
        if c.kernels_filtered > 0 {
            result.reason += &format!(
                "; --kernel-filter left out {} launch(es), and the {} D2H check(s) after the first were skipped",
                c.kernels_filtered, c.d2h_after_filtered
            );
        }
        ReplayExit::Pass
    }
}

fn all_unstable_note(checks: u64, runs: u32) -> String {
    match checks {
        0 => String::new(),
        n => format!(
            "; {n} check(s) had no byte the same in all {runs} replays (nothing of them verified)"
        ),
    }
}

/// Replays one process `runs` times (once for 0 or 1): the learning runs record their
/// D2H results and count no check; the last run judges every check with what they
/// learned. An event that failed in any run is a failure of the result.
fn replay_runs(
    rt: &Runtime,
    p: &ProcessArchive,
    opts: &engine::Options,
    runs: u32,
) -> engine::ProcessReplay {
    if runs <= 1 {
        return engine::replay_process(rt, p, opts, None);
    }
    let mut learner = Learner::new(runs, p.limits.max_host_bytes);
    let mut earlier: Vec<Failure> = Vec::new();
    loop {
        let judging = learner.judging();
        let mut r = engine::replay_process(rt, p, opts, Some(&mut learner));
        if judging || r.refused.is_some() {
            for f in earlier {
                if !r.failures.iter().any(|g| same_failure(g, &f)) {
                    r.failures.push(f);
                }
            }
            return r;
        }
        for f in r.failures {
            if !earlier.iter().any(|g| same_failure(g, &f)) {
                earlier.push(f);
            }
        }
        learner.next_run();
    }
}

fn same_failure(a: &Failure, b: &Failure) -> bool {
    (a.pid, a.seq, &a.kind, &a.message) == (b.pid, b.seq, &b.kind, &b.message)
}

fn replay(
    req: &ReplayRequest,
    archive: &Archive,
    runtimes: &mut Runtimes,
    err: &mut dyn Write,
) -> ReplayResult {
    let vendor = archive
        .processes
        .iter()
        .map(|p| p.manifest.runtime.vendor.as_str())
        .find(|v| !v.is_empty())
        .and_then(Vendor::parse);
    let mut result = ReplayResult::failed(
        archive.root.display().to_string(),
        ReplayExit::Fail,
        String::new(),
    );
    let Some(vendor) = vendor else {
        result.reason = "the archive names no runtime vendor (no runtime call was recorded)".into();
        result.exit_code = ReplayExit::Invalid;
        return result;
    };
    result.vendor = Some(vendor);
    // Calls capture does not model: named before anything runs, and without
    // --continue-on-error the archive is refused (no GPU needed to say so).
    result.unmodelled_apis = archive
        .processes
        .iter()
        .flat_map(unmodelled::calls)
        .collect();
    for p in &archive.processes {
        if let UnmodelledCoverage::NotMeasured { reason } = &p.manifest.unmodelled_coverage {
            let _ = writeln!(
                err,
                "hrr-replay: warning: pid {}: calls capture does not model were not counted ({}): one could make a check differ without being named",
                p.entry.pid,
                escape_controls(reason)
            );
        }
    }
    if let Some(refusal) = Refusal::of(&result.unmodelled_apis) {
        result.failures.extend(refusal.failures());
        if !req.continue_on_error {
            let _ = writeln!(err, "hrr-replay: {}", escape_controls(&refusal.to_string()));
            result.reason = refusal.to_string();
            return result;
        }
    }
    for p in &archive.processes {
        if !p.is_complete() {
            let _ = writeln!(
                err,
                "hrr-replay: warning: pid {} is {} (replaying its whole records)",
                p.entry.pid,
                p.status.label()
            );
        }
    }
    let rt = match runtimes.get(vendor) {
        Ok(r) => r,
        Err(e) => {
            result.reason = e.to_string();
            result.exit_code = ReplayExit::NoGpu;
            return result;
        }
    };
    result.runtime_library = rt.describe();
    if vendor == Vendor::Hip {
        if let Err(e) = hip_version::check(archive, rt.hip_version, &rt.library_name) {
            let _ = writeln!(err, "hrr-replay: {}", escape_controls(&e.to_string()));
            result.reason = e.to_string();
            result.exit_code = ReplayExit::NoGpu;
            return result;
        }
    }
    let opts = engine::Options {
        continue_on_error: req.continue_on_error,
        trace: req.trace,
        divergence_abort: req.divergence_abort,
        comparison: req.comparison,
        replacements: req.replacements.clone(),
        kernel_filter: req.kernel_filter.clone(),
        timing: req.timing,
    };
    let mut refused = None;
    let mut lookups: std::collections::HashMap<String, u64> = Default::default();
    let mut timing_untimed = 0u64;
    let began = std::time::Instant::now();
    result.stability_runs = req.stability_runs.max(1);
    result.comparison = req.comparison;
    for p in &archive.processes {
        let r = replay_runs(rt, p, &opts, req.stability_runs);
        result.counts.add(&r.counts);
        result.failures.extend(r.failures);
        result.unstable.extend(r.unstable);
        result.declared_matches.extend(r.declared);
        if let Some((times, untimed)) = r.times {
            merge_times(&mut result.kernel_times, times);
            timing_untimed += untimed;
        }
        for (name, n) in r.replaced_lookups {
            *lookups.entry(name).or_default() += n;
        }
        refused = refused.or(r.refused);
    }
    for r in &req.replacements {
        let n = lookups.get(&r.name).copied().unwrap_or(0);
        result.replaced_kernels.push(hrr_contract::ReplacedKernel {
            replacement: hrr_contract::KernelReplacement {
                name: r.name.clone(),
                path: r.path.display().to_string(),
            },
            lookups: n,
        });
        if n == 0 {
            result.failures.push(Failure::event(
                0,
                0,
                "--replace-kernel",
                FailureKind::Error,
                format!(
                    "--replace-kernel {}: the archive looked up no kernel of that name, so nothing was replaced (hrr-replay --events lists its kernels by mangled name)",
                    r.name
                ),
            ));
        }
    }
    if req.timing {
        let gpu_us: u64 = result.kernel_times.iter().map(|k| k.total_us).sum();
        let wall = began.elapsed();
        let _ = writeln!(
            err,
            "hrr-replay: timing: {:.1} ms of GPU time in {} timed launch(es) ({} not timed: in a capturing stream), {:.1} ms of replay in all",
            gpu_us as f64 / 1000.0,
            result.kernel_times.iter().map(|k| k.launches).sum::<u64>(),
            timing_untimed,
            wall.as_secs_f64() * 1000.0
        );
    }
    result.fault = crate::fault::find(archive, vendor);
    let judged = verdict(&mut result);
    result.exit_code = crate::fault::judge(&mut result, judged, req.expect_fault);
    if let Some(why) = refused {
        // Invalid or refused by a limit, as if the archive could not be opened.
        result.reason = format!("the archive is invalid or refused by a limit: {why}");
        result.exit_code = ReplayExit::Invalid;
    }
    result
}

/// Adds one process's per-name times to the archive's, longest total first.
fn merge_times(into: &mut Vec<hrr_contract::KernelTime>, times: Vec<hrr_contract::KernelTime>) {
    for t in times {
        match into.iter_mut().find(|k| k.name == t.name) {
            Some(k) => {
                k.launches += t.launches;
                k.total_us += t.total_us;
                k.max_us = k.max_us.max(t.max_us);
            }
            None => into.push(t),
        }
    }
    into.sort_by(|a, b| b.total_us.cmp(&a.total_us).then(a.name.cmp(&b.name)));
}

/// The line after a list cut at `shown` of `total` entries, if it was cut.
fn and_more(out: &mut dyn Write, total: usize, shown: usize) -> std::io::Result<()> {
    if total > shown {
        writeln!(out, "  ... and {} more (all in --json)", total - shown)?;
    }
    Ok(())
}

/// The most kernels the text summary's timing table lists.
const SUMMARY_TIMES: usize = 30;

/// The most failures the text summary lists.
const SUMMARY_FAILURES: usize = 200;

/// The human-readable summary of one result.
fn print_summary(out: &mut dyn Write, r: &ReplayResult) -> std::io::Result<()> {
    let c = &r.counts;
    // Archive strings (API names an unreplayable event recorded, kernel names, reasons)
    // reach this text: control characters are escaped, as in --info.
    writeln!(out, "archive          : {}", escape_controls(&r.archive))?;
    writeln!(
        out,
        "runtime          : {} ({})",
        r.vendor.map_or("", |v| v.as_str()),
        if r.runtime_library.is_empty() {
            "not loaded"
        } else {
            &r.runtime_library
        }
    )?;
    writeln!(
        out,
        "events replayed  : {} of {}",
        c.events_replayed, c.events_total
    )?;
    writeln!(out, "kernels launched : {}", c.kernels_launched)?;
    writeln!(
        out,
        "D2H checks       : {} pass, {} fail, {} skipped",
        c.d2h_pass, c.d2h_fail, c.d2h_skipped
    )?;
    if !r.kernel_times.is_empty() {
        writeln!(out, "GPU time (--timing): total, launches, longest, name")?;
        for k in r.kernel_times.iter().take(SUMMARY_TIMES) {
            writeln!(
                out,
                "  {:>10.3} ms {:>7} {:>10.3} ms  {}",
                k.total_us as f64 / 1000.0,
                k.launches,
                k.max_us as f64 / 1000.0,
                escape_controls(&k.name)
            )?;
        }
        and_more(out, r.kernel_times.len(), SUMMARY_TIMES)?;
    }
    if c.range_restored_bytes > 0 {
        writeln!(
            out,
            "range capture    : {} bytes restored from the snapshot at the range's start",
            c.range_restored_bytes
        )?;
    }
    if c.kernels_filtered > 0 {
        writeln!(
            out,
            "kernel filter    : {} launch(es) left out; {} D2H check(s) after the first skipped (never passed)",
            c.kernels_filtered, c.d2h_after_filtered
        )?;
    }
    for k in &r.replaced_kernels {
        writeln!(
            out,
            "replaced kernel  : {} from {} ({} lookup(s))",
            escape_controls(&k.replacement.name),
            escape_controls(&k.replacement.path),
            k.lookups
        )?;
    }
    if let Some(cmp) = &r.comparison {
        writeln!(
            out,
            "declared compare : {} ({cmp}): {} check(s) matched by it only, not byte-exact",
            cmp.describe(),
            c.d2h_declared_match
        )?;
        for d in r.declared_matches.iter().take(SUMMARY_FAILURES) {
            writeln!(out, "  {}", escape_controls(&d.describe(Some(cmp))))?;
        }
        and_more(out, r.declared_matches.len(), SUMMARY_FAILURES)?;
    }
    if r.stability_runs > 1 {
        writeln!(
            out,
            "stability runs   : {} (bytes that differ between replays are excluded, never passed)",
            r.stability_runs
        )?;
        writeln!(
            out,
            "unstable checks  : {} matched on stable bytes, {} with no stable byte; {} byte(s) excluded",
            c.d2h_unstable, c.d2h_all_unstable, c.unstable_bytes
        )?;
    }
    writeln!(out, "failed as at capture : {}", c.failed_as_captured)?;
    writeln!(out, "untranslated pointers: {}", c.untranslated_pointers)?;
    writeln!(out, "unreplayable refused : {}", c.unreplayable_refused)?;
    for u in &r.unmodelled_apis {
        writeln!(
            out,
            "unmodelled call      : {} ({}) x{}, first at pid {} seq {}{}",
            escape_controls(&u.api),
            escape_controls(&u.library),
            u.count.map_or("?".to_string(), |n| n.to_string()),
            u.pid,
            u.first_seq,
            if u.exempt.is_some() { " (exempt)" } else { "" }
        )?;
    }
    if c.checks_after_unmodelled > 0 {
        writeln!(
            out,
            "after an unmodelled call: {} D2H check(s) (their result may be its consequence)",
            c.checks_after_unmodelled
        )?;
    }
    for u in r.unstable.iter().take(SUMMARY_FAILURES) {
        writeln!(
            out,
            "UNSTABLE seq {} {} [{}]: {} of {} bytes differed between {} replays, at {}{}",
            u.seq,
            escape_controls(&u.api),
            u.verdict,
            u.unstable_bytes,
            u.bytes,
            r.stability_runs,
            u.ranges
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            match u.ranges_total.saturating_sub(u.ranges.len() as u64) {
                0 => String::new(),
                more => format!(" (and {more} more range(s))"),
            }
        )?;
    }
    // The JSON result lists every failure; the text, read by people and kept in logs,
    // at most `SUMMARY_FAILURES` of them (a hostile archive can fail millions of events).
    for f in r.failures.iter().take(SUMMARY_FAILURES) {
        writeln!(
            out,
            "FAILED seq {} {} [{}]: {}{}",
            f.seq,
            escape_controls(&f.api),
            f.kind,
            escape_controls(&f.message),
            if f.after_unmodelled_call {
                " (after an unmodelled call)"
            } else {
                ""
            }
        )?;
    }
    if r.failures.len() > SUMMARY_FAILURES {
        writeln!(
            out,
            "... and {} more failure(s) (every one is in the --json result)",
            r.failures.len() - SUMMARY_FAILURES
        )?;
    }
    writeln!(out, "{}: {}", r.verdict, escape_controls(&r.reason))?;
    Ok(())
}

#[cfg(test)]
mod tests;
