//! The replay engine: re-issues a process's events in sequence order on the GPU,
//! rebuilding handles and addresses, and checks every device-to-host result.
//!
//! This module owns the per-process state (`Ctx`), the dispatch of an event to its
//! handler, and what a replay releases at its end. Generic table rows are replayed in
//! `generic` (decode -> policy -> encode per parameter kind) and `outputs` (what a call
//! created); copies' host side and the D2H check in `copies` and `compare`; kernels,
//! modules and device variables in `kernels`. An event that fails becomes a `Failure`
//! whose kind its `EventError` variant gives.

mod copies;
mod deferred;
mod error;
mod generic;
mod graphs;
mod kernel_nodes;
mod kernels;
mod launchcfg;
mod mapped;
mod mempool;
mod observe;
mod outputs;
mod recent_blobs;
mod replace;
mod restore;
mod textures;
mod timing;
mod vmm;

use std::collections::HashMap;
use std::os::raw::c_int;

use hrr_archive::api::{self, fid, semantic, RetPolicy, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::{Event, ProcessArchive};
use hrr_contract::{Comparison, Counts, DeclaredMatch, Failure, UnstableCheck};

use crate::profile::{self, Part};
use crate::runtime::Runtime;
use crate::stability::Learner;
use crate::staging::Staging;
use crate::translate::{AddressMap, Translated};

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

/// Why an event could not be replayed (turned into a Failure with its seq and API).
type EvResult = Result<(), EventError>;

struct Ctx<'a> {
    rt: &'a Runtime,
    proc_: &'a ProcessArchive,
    addrs: AddressMap,
    handles: HashMap<u64, u64>,
    modules: HashMap<String, u64>,
    /// Code object -> kernel name -> replay function (two levels: a launch looks both up
    /// by the &str its payload holds, allocating nothing).
    functions: HashMap<String, HashMap<String, u64>>,
    /// The program's own module loads (driver and hipModule API, libraries included):
    /// captured module or library handle -> the replay module loaded at the same point,
    /// so each load is its own instance (its own `__device__` variables), in the context
    /// current then.
    module_instances: HashMap<u64, u64>,
    /// Captured function or kernel handle (`cuModuleGetFunction`, `cuLibraryGetKernel`,
    /// `cuKernelGetFunction`) -> the replay function in its module instance.
    function_instances: HashMap<u64, u64>,
    /// Captured function or kernel handle -> the captured module or library it came
    /// from: an unload drops its functions, whose handles the driver may hand out again.
    function_module: HashMap<u64, u64>,
    /// Replay function -> the sizes of its parameters as the driver describes them
    /// (None: it cannot), to check each launch's arguments against (`check_arguments`).
    param_sizes: HashMap<u64, Option<Vec<u64>>>,
    /// Host buffers replay page-locked in place of the captured process's registered
    /// memory (HostRegister), by their replay address.
    registered: HashMap<u64, crate::pages::Pages>,
    /// Reused host buffers for copies' sources, results and expected bytes.
    staging: Staging<'a>,
    /// Host buffers of graph copy nodes, by the sequence id of the call that made the
    /// node (held in `registered`; `graphs`).
    nodes: HashMap<u64, graphs::NodeBuffer>,
    /// Graphs (by captured handle) missing a node replay could not rebuild, and which.
    broken_graphs: HashMap<u64, String>,
    /// Asynchronous D2H copies compared when their `CopyOutput` record arrives.
    deferred: deferred::Deferred<'a>,
    /// What this replay created and has not released yet, by replay address or handle:
    /// released when the process's replay ends, so the next archive replayed in the same
    /// process (`hrr-replay --serve`) starts on an empty device.
    live: HashMap<u64, Resource>,
    counts: Counts,
    failures: Vec<Failure>,
    /// The first event that showed the archive invalid or refused by a limit.
    refused: Option<String>,
    /// Devices whose current memory pool the program set (`DeviceSetMemPool`): given
    /// back their default pool at the end, before the program's pools are destroyed.
    pool_devices: Vec<u64>,
    /// Under `--stability-runs`: what earlier replays of this process found (`observe`).
    learner: Option<&'a mut Learner>,
    /// Checks with bytes that differed between replays (judged in the last run).
    unstable: Vec<UnstableCheck>,
    /// Texture and surface objects (`textures`).
    objects: textures::Objects,
    /// Memory the program mapped into its reserved ranges (`vmm`).
    mappings: vmm::Mappings,
    /// Pinned snapshots' pieces loaded last (`recent_blobs`).
    recent_blobs: recent_blobs::RecentBlobs,
    /// Captured addresses a graph allocates (an allocation made into a capturing stream,
    /// a memory allocation node): each launch of the graph allocates them again at the
    /// same address, so a free outside the graph keeps their translation for the next.
    graph_memory: std::collections::HashSet<u64>,
    /// The declared comparison (`Options::comparison`), and the checks matched only by it.
    comparison: Option<Comparison>,
    declared: Vec<DeclaredMatch>,
    /// `Options::replacements`, and the modules and lookups they served.
    replacements: Vec<Replacement>,
    replaced: replace::Replaced,
    /// `Options::kernel_filter`, and the first launch it left out.
    kernel_filter: Option<String>,
    filtered_since: Option<u64>,
    /// `--timing`'s events and totals (None: not timing).
    timing: Option<timing::Timing>,
    /// The sequence id of the first unmodelled call the replay refused for (replayed on
    /// under --continue-on-error): checks of later calls are marked.
    after_unmodelled: Option<u64>,
}

/// A device resource a replay owns until the program's own call releases it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    DeviceMemory,
    PinnedHostMemory,
    Stream,
    Event,
    /// A context the program created (`cuCtxCreate`, `hipCtxCreate`).
    Context,
    MemPool,
    Graph,
    GraphExec,
    Array,
    MipmappedArray,
    /// Physical memory (`cuMemCreate`, `hipMemCreate`).
    MemHandle,
    /// A reserved range of addresses, of `size` bytes (`cuMemAddressReserve`).
    AddressRange {
        size: u64,
    },
}

impl Resource {
    /// The API table row that releases it.
    fn release_row(self) -> u16 {
        match self {
            Resource::DeviceMemory => api::id::Free,
            Resource::PinnedHostMemory => api::id::FreeHost,
            Resource::Stream => api::id::StreamDestroy,
            Resource::Event => api::id::EventDestroy,
            Resource::Context => api::id::CtxDestroy,
            Resource::MemPool => api::id::MemPoolDestroy,
            Resource::Graph => api::id::GraphDestroy,
            Resource::GraphExec => api::id::GraphExecDestroy,
            Resource::Array => api::id::FreeArray,
            Resource::MipmappedArray => api::id::FreeMipmappedArray,
            Resource::MemHandle => api::id::MemRelease,
            Resource::AddressRange { .. } => api::id::MemAddressFree,
        }
    }

    /// The release row's arguments for the handle or address `at`.
    fn release_args(self, at: u64) -> Vec<u64> {
        match self {
            Resource::AddressRange { size } => vec![at, size],
            _ => vec![at],
        }
    }

    /// When it is released at the end: address ranges after the memory mapped into them
    /// was unmapped and released, contexts last (what was made in one is released while
    /// it still exists).
    fn release_order(self) -> u8 {
        match self {
            Resource::AddressRange { .. } => 1,
            Resource::Context => 2,
            _ => 0,
        }
    }
}

/// `CUDA_ERROR_DEINITIALIZED`, `cudaErrorCudartUnloading` and `hipErrorDeinitialized`:
/// the runtime or driver was being torn down.
const TORN_DOWN: i32 = 4;

impl<'a> Ctx<'a> {
    fn fail(&mut self, ev: &Event, e: EventError) {
        if e.refuses_archive() && self.refused.is_none() {
            self.refused = Some(format!(
                "pid {} seq {} {}: {e}",
                self.proc_.entry.pid,
                ev.header.seq,
                self.event_api_label(ev)
            ));
        }
        self.failures.push(Failure {
            pid: self.proc_.entry.pid,
            seq: ev.header.seq,
            api: self.event_api_label(ev),
            kind: e.kind(),
            message: e.to_string(),
            bytes: None,
            differing_bytes: None,
            first_differing_offset: None,
            expected_hex: None,
            found_hex: None,
            after_unmodelled_call: false,
        });
    }

    /// The API an event stands for; an unreplayable event names the real API it recorded.
    fn event_api_label(&self, ev: &Event) -> String {
        if ev.header.api_id == semantic::UNREPLAYABLE {
            if let Ok(p) = Payload::parse(&ev.payload) {
                if let Ok(name) = p.str(fid::API_NAME, "api") {
                    return name.to_string();
                }
            }
        }
        self.api_label(ev.header.api_id)
    }

    fn api_label(&self, id: u16) -> String {
        api::call_name(id, self.rt.vendor)
    }

    fn handle(&self, captured: u64) -> Result<u64, EventError> {
        // 0 is the default stream; 1 and 2 are the legacy / per-thread default streams.
        if captured <= 2 {
            return Ok(captured);
        }
        self.handles
            .get(&captured)
            .copied()
            .ok_or(EventError::UnknownHandle(captured))
    }

    fn translate(&mut self, addr: u64) -> u64 {
        match self.addrs.translate(addr) {
            Translated::Null => 0,
            Translated::Mapped(a) => a,
            Translated::Unmapped => {
                self.counts.untranslated_pointers += 1;
                0
            }
        }
    }

    fn check_ret(&mut self, ev: &Event, policy: RetPolicy, got: c_int) -> EvResult {
        if policy == RetPolicy::Any {
            return Ok(());
        }
        let want = ev.header.ret;
        if got == want {
            if want != 0 {
                self.counts.failed_as_captured += 1;
            }
            return Ok(());
        }
        Err(EventError::ReturnCode { got, want })
    }

    /// Waits for the stream of a copy whose host buffer is about to be read or reused.
    fn stream_sync(&mut self, stream: u64, what: &str) -> EvResult {
        match self.wait_stream(stream)? {
            0 => Ok(()),
            code => Err(EventError::Call {
                call: format!("waiting for the copy's stream ({what})"),
                code,
            }),
        }
    }

    /// Waits for `stream` (the runtime's synchronisation), returning its code.
    fn wait_stream(&mut self, stream: u64) -> Result<c_int, EventError> {
        let sync = match self.rt.vendor {
            Vendor::Cuda => "cudaStreamSynchronize",
            Vendor::Hip => "hipStreamSynchronize",
        };
        let _t = profile::span(Part::Wait);
        Ok(self.rt.call_ptr(sync, stream)?)
    }

    /// A context argument no recorded call created: the device's primary context, which
    /// nvcc's static runtime retains through the driver's private export table and then
    /// makes current with `cuCtxSetCurrent` before any public call names it (H200, CUDA
    /// 13). Replay retains its own primary context of device 0 (replay runs on one GPU)
    /// and maps the captured handle to it; the program's later
    /// `cuDevicePrimaryCtxRetain` returns the same handle, which then maps to it too.
    fn adopt_primary_context(&mut self, captured: u64) -> Result<u64, EventError> {
        let mut ctx: u64 = 0;
        // SAFETY: the row's out pointer is a local of ours; device 0 is replay's GPU.
        let r = unsafe {
            self.rt.call_table(
                api::id::DevicePrimaryCtxRetain,
                &[&mut ctx as *mut u64 as u64, 0],
            )
        }?;
        if r != 0 || ctx == 0 {
            return Err(EventError::Call {
                call: format!(
                    "retaining the primary context of device 0 for context {captured:#x}, which no recorded call created"
                ),
                code: r,
            });
        }
        self.handles.insert(captured, ctx);
        Ok(ctx)
    }

    /// After the program's context `ctx` (a replay handle) was destroyed: it is no longer
    /// replay's to release, and modules loaded while it was current went with it (they
    /// are loaded again, by code object, where a later launch needs them).
    fn context_destroyed(&mut self, ctx: u64) {
        self.live.remove(&ctx);
        self.modules.clear();
        self.functions.clear();
    }

    /// A host buffer length from the archive, refused above `max_host_bytes`.
    fn host_len(&self, n: u64, what: &str) -> Result<usize, EventError> {
        let limit = self.proc_.limits.max_host_bytes;
        usize::try_from(n)
            .ok()
            .filter(|_| n <= limit)
            .ok_or_else(|| EventError::TooLarge {
                what: format!("{what}: {n} bytes"),
                limit: Some(limit),
            })
    }

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
            self.counts.failed_as_captured += 1;
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
                self.compare_all_waiting()?;
                self.deferred.release(self.rt);
            }
            let r = self.replay_generic(ev, desc);
            if api::resets_device(desc.id) && ev.header.ret == 0 {
                // A reset destroys every allocation, module, stream and event of the
                // device: nothing captured before it may be translated to a stale handle.
                self.addrs = AddressMap::default();
                self.modules.clear();
                self.functions.clear();
                self.module_instances.clear();
                self.function_instances.clear();
                self.function_module.clear();
                self.handles.clear();
                self.objects = textures::Objects::default();
                self.pool_devices.clear();
                self.live.clear();
                // Registrations went with the context; the buffers are still ours.
                self.registered.clear();
                self.nodes.clear();
            }
            return r;
        }
        match ev.header.api_id {
            // Code objects are loaded by hash when a launch or a variable needs them.
            semantic::REGISTER_FAT_BINARY
            | semantic::REGISTER_FUNCTION
            | semantic::REGISTER_VAR
            | semantic::UNREGISTER_FAT_BINARY => Ok(()),
            semantic::MODULE_LOAD => self.replay_module_load(ev),
            semantic::MODULE_GET_FUNCTION => self.replay_get_function(ev),
            semantic::MODULE_UNLOAD => self.replay_module_unload(ev),
            semantic::LAUNCH_KERNEL
            | semantic::LAUNCH_KERNEL_BY_HANDLE
            | semantic::MODULE_LAUNCH_KERNEL => self.replay_launch(ev),
            semantic::SYMBOL_ADDRESS => self.replay_symbol_address(ev),
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
            semantic::RANGE_RESTORE => self.replay_range_restore(ev),
            // Where a range capture's range starts or ends: nothing to re-execute.
            semantic::RANGE_MARK => Ok(()),
            semantic::UNREPLAYABLE => {
                self.counts.unreplayable_refused += 1;
                let p = Payload::parse(&ev.payload)?;
                self.note_missing_node(ev, &p);
                Err(EventError::Unreplayable {
                    api: p.str(fid::API_NAME, "api").unwrap_or("?").to_string(),
                    reason: p.str(fid::REASON, "reason").unwrap_or("?").to_string(),
                })
            }
            other => Err(EventError::UnknownApi(other)),
        }
    }

    /// Marks the failures from `from` on that belong to calls after the first refused
    /// unmodelled call.
    fn mark_after_unmodelled(&mut self, from: usize) {
        if let Some(first) = self.after_unmodelled {
            for f in &mut self.failures[from..] {
                f.after_unmodelled_call |= f.seq > first;
            }
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
        self.restore_device_pools();
        // Objects before the arrays and memory they read.
        self.objects.release(self.rt);
        // Mappings before the ranges that hold them (`Resource::release_order`).
        self.mappings.release(self.rt);
        let mut live: Vec<(u64, Resource)> = std::mem::take(&mut self.live).into_iter().collect();
        live.sort_by_key(|(_, kind)| kind.release_order());
        let contexts = live.iter().any(|(_, k)| *k == Resource::Context);
        for (handle, kind) in live {
            // SAFETY: the row that releases `kind`, given the handle or address this
            // replay's own call created and nothing has released since.
            let mut row = kind.release_row();
            if self.rt.driver_only {
                if let Some(&(_, d)) = crate::runtime::DRIVER_RELEASE_ROWS
                    .iter()
                    .find(|(r, _)| *r == row)
                {
                    row = d;
                }
            }
            let _ = unsafe { self.rt.call_table(row, &kind.release_args(handle)) };
        }
        if contexts {
            // The runtime makes its primary context current again on its next call.
            // SAFETY: CtxSetCurrent(NULL) unbinds the thread's context.
            let _ = unsafe { self.rt.call_table(api::id::CtxSetCurrent, &[0]) };
        }
        for buf in std::mem::take(&mut self.registered).keys() {
            // SAFETY: HostUnregister of a buffer this replay registered; the buffer is
            // dropped only after the call.
            let _ = unsafe { self.rt.call_table(api::id::HostUnregister, &[*buf]) };
        }
        let unload = match self.rt.vendor {
            Vendor::Cuda => "cuModuleUnload",
            Vendor::Hip => "hipModuleUnload",
        };
        for (_, m) in std::mem::take(&mut self.modules) {
            let _ = self.rt.call_ptr(unload, m);
        }
        for (_, m) in std::mem::take(&mut self.module_instances) {
            let _ = self.rt.call_ptr(unload, m);
        }
        self.functions.clear();
        self.function_instances.clear();
        self.function_module.clear();
        self.staging.unpin_all();
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
        addrs: AddressMap::default(),
        handles: HashMap::new(),
        modules: HashMap::new(),
        functions: HashMap::new(),
        module_instances: HashMap::new(),
        function_instances: HashMap::new(),
        function_module: HashMap::new(),
        param_sizes: HashMap::new(),
        registered: HashMap::new(),
        staging: Staging::new(rt, proc_.limits.max_host_bytes),
        nodes: HashMap::new(),
        broken_graphs: HashMap::new(),
        deferred: deferred::Deferred::default(),
        live: HashMap::new(),
        counts: Counts {
            events_total: proc_.events.len() as u64,
            ..Counts::default()
        },
        failures: Vec::new(),
        refused: None,
        pool_devices: Vec::new(),
        learner,
        unstable: Vec::new(),
        objects: textures::Objects::default(),
        mappings: vmm::Mappings::default(),
        recent_blobs: recent_blobs::RecentBlobs::default(),
        graph_memory: std::collections::HashSet::new(),
        comparison: opts.comparison,
        declared: Vec::new(),
        replacements: opts.replacements.clone(),
        replaced: replace::Replaced::default(),
        kernel_filter: opts.kernel_filter.clone(),
        filtered_since: None,
        timing: opts.timing.then(timing::Timing::default),
        // Under --continue-on-error: checks after this are marked (what the unmodelled
        // call did is missing from the replay).
        after_unmodelled: crate::unmodelled::first_refused(&crate::unmodelled::calls(proc_)),
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
        let failures = ctx.failures.len();
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
            Ok(()) => ctx.counts.events_replayed += 1,
            Err(e) => {
                ctx.fail(ev, e);
                if !opts.continue_on_error {
                    break;
                }
            }
        }
        ctx.mark_after_unmodelled(failures);
        let c = &ctx.counts;
        if progress {
            crate::progress::done(done as u64 + 1, c.kernels_launched, c.d2h_pass, c.d2h_fail);
        }
        if let Some(why) = diverged(opts.divergence_abort, c.d2h_fail, c.d2h_pass + c.d2h_fail) {
            let first = ctx
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
    let failures = ctx.failures.len();
    if let Err(e) = ctx.compare_ready(true) {
        if let Some(last) = proc_.events.last() {
            ctx.fail(last, e);
        }
    }
    ctx.mark_after_unmodelled(failures);
    drop(drain);
    let times = ctx.timing_finish().map(timing::Timing::report);
    let release = profile::span(Part::Release);
    ctx.unload_replacements();
    ctx.release_all();
    drop(release);
    ProcessReplay {
        counts: ctx.counts,
        failures: ctx.failures,
        refused: ctx.refused,
        unstable: ctx.unstable,
        declared: ctx.declared,
        replaced_lookups: std::mem::take(&mut ctx.replaced.lookups),
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
