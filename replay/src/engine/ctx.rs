//! One process's replay state (`Ctx`): the archive and the runtime it reads, and its
//! parts by concern, each with its own methods and file. The handlers (`generic`,
//! `copies`, `kernels`, `launchcfg`, `kernel_nodes`, `graph_launch`, `copy_outputs`,
//! `mapped`, `restore`) reach the parts through it; the parts never reach back.

use std::os::raw::c_int;

use hrr_archive::api::{self, fid, semantic, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::{Event, ProcessArchive};

use super::checks::Checks;
use super::code::Code;
use super::deferred::Deferred;
use super::error::{EvResult, EventError};
use super::graphs::Graphs;
use super::owned::Owned;
use super::snapshots::Snapshots;
use super::timing::Timing;
use super::translation::Translation;
use crate::profile::{self, Part};
use crate::runtime::Runtime;
use crate::staging::Staging;

/// One process's replay: the archive and runtime it reads, and its state by concern.
/// Each part has its own methods; a handler borrows the parts it changes separately
/// (`outputs::record` and `restore::replay_range_restore` take only those parts).
pub(super) struct Ctx<'a> {
    pub(super) rt: &'a Runtime,
    pub(super) proc_: &'a ProcessArchive,
    /// Captured addresses and handles to replay's (`translation`).
    pub(super) tr: Translation,
    /// Modules and functions loaded, replacements, the kernel filter (`code`).
    pub(super) code: Code,
    /// What replay owns on the device until the program releases it (`owned`).
    pub(super) owned: Owned,
    /// Copy nodes' host buffers and graphs missing a node (`graphs`).
    pub(super) graphs: Graphs,
    /// Counts, failures and what checks are judged against (`checks`, `observe`).
    pub(super) checks: Checks<'a>,
    /// Reused host buffers for copies' sources, results and expected bytes.
    pub(super) staging: Staging<'a>,
    /// Asynchronous D2H copies compared when their `CopyOutput` record arrives.
    pub(super) deferred: Deferred<'a>,
    /// Pinned snapshots restored before launches (`snapshots`).
    pub(super) snapshots: Snapshots,
    /// `--timing`'s events and totals (None: not timing).
    pub(super) timing: Option<Timing>,
}

impl<'a> Ctx<'a> {
    /// Records event `ev`'s failure under the API it stands for.
    pub(super) fn fail(&mut self, ev: &Event, e: EventError) {
        let api = self.event_api_label(ev);
        self.checks.fail(ev, api, e);
    }

    /// The replay handle of a captured one (`Translation::handle`).
    pub(super) fn handle(&self, captured: u64) -> Result<u64, EventError> {
        self.tr.handle(captured)
    }

    /// The replay address of a captured one (`Translation::translate`).
    pub(super) fn translate(&mut self, addr: u64) -> u64 {
        self.tr.translate(addr)
    }

    /// The API an event stands for; an unreplayable event names the real API it recorded.
    pub(super) fn event_api_label(&self, ev: &Event) -> String {
        if ev.header.api_id == semantic::UNREPLAYABLE {
            if let Ok(p) = Payload::parse(&ev.payload) {
                if let Ok(name) = p.str(fid::API_NAME, "api") {
                    return name.to_string();
                }
            }
        }
        self.api_label(ev.header.api_id)
    }

    pub(super) fn api_label(&self, id: u16) -> String {
        api::call_name(id, self.rt.vendor)
    }

    /// Waits for the stream of a copy whose host buffer is about to be read or reused.
    pub(super) fn stream_sync(&mut self, stream: u64, what: &str) -> EvResult {
        match self.wait_stream(stream)? {
            0 => Ok(()),
            code => Err(EventError::Call {
                call: format!("waiting for the copy's stream ({what})"),
                code,
            }),
        }
    }

    /// Waits for `stream` (the runtime's synchronisation), returning its code.
    pub(super) fn wait_stream(&mut self, stream: u64) -> Result<c_int, EventError> {
        let sync = match self.rt.vendor {
            Vendor::Cuda => "cudaStreamSynchronize",
            Vendor::Hip => "hipStreamSynchronize",
        };
        let _t = profile::span(Part::Wait);
        Ok(self.rt.call_ptr(sync, stream)?)
    }

    /// A host buffer length from the archive, refused above `max_host_bytes`.
    pub(super) fn host_len(&self, n: u64, what: &str) -> Result<usize, EventError> {
        super::error::host_len(self.proc_, n, what)
    }
}
