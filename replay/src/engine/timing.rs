//! `--timing`: the GPU time of each kernel and graph launch, from a pair of events replay
//! records around it on the launch's stream, so a slow replay splits into GPU time and
//! host time. Launches into a stream that is capturing are not timed (an event recorded
//! there would become a node of the program's graph). Pending pairs are read when more
//! than `MAX_PENDING` wait, and at the end of the process; their events are reused.

use std::collections::BTreeMap;

use hrr_archive::api::id;
use hrr_contract::KernelTime;

use super::error::EventError;
use crate::runtime::Runtime;

const MAX_PENDING: usize = 4096;

#[derive(Debug, Default)]
pub(super) struct Timing {
    /// (what was launched, start event, stop event), recorded and not yet read.
    pending: Vec<(String, u64, u64)>,
    free: Vec<u64>,
    /// Per name: launches timed, total and longest milliseconds.
    by_name: BTreeMap<String, (u64, f64, f64)>,
    /// Launches not timed (a capturing stream, an event the runtime refused).
    untimed: u64,
}

impl Timing {
    /// The per-name times, longest total first.
    pub(super) fn report(self) -> (Vec<KernelTime>, u64) {
        let mut v: Vec<KernelTime> = self
            .by_name
            .into_iter()
            .map(|(name, (launches, total, max))| KernelTime {
                name,
                launches,
                total_us: (total * 1000.0).round() as u64,
                max_us: (max * 1000.0).round() as u64,
            })
            .collect();
        v.sort_by(|a, b| b.total_us.cmp(&a.total_us).then(a.name.cmp(&b.name)));
        (v, self.untimed)
    }
}

/// Before a launch on `stream`: its start event, recorded, or None (not timing, or the
/// stream is capturing).
pub(super) fn start(
    timing: Option<&mut Timing>,
    rt: &Runtime,
    stream: u64,
) -> Result<Option<u64>, EventError> {
    let Some(t) = timing else {
        return Ok(None);
    };
    let mut status = 0i32;
    // SAFETY: StreamIsCapturing(stream, &status): a stream of this replay (or the legacy
    // one), an out pointer to a local.
    let r = match unsafe {
        rt.call_table(
            id::StreamIsCapturing,
            &[stream, &mut status as *mut i32 as u64],
        )
    } {
        Ok(r) => r,
        // A runtime without the query has no stream capture: every stream is idle.
        Err(crate::runtime::RuntimeError::MissingSymbol { .. }) => 0,
        Err(e) => return Err(e.into()),
    };
    if r != 0 || status != 0 {
        t.untimed += 1;
        return Ok(None);
    }
    let start = t.event(rt)?;
    // SAFETY: EventRecord of replay's own event on the launch's stream.
    let r = unsafe { rt.call_table(id::EventRecord, &[start, stream]) }?;
    if r != 0 {
        t.free.push(start);
        t.untimed += 1;
        return Ok(None);
    }
    Ok(Some(start))
}

/// After the launch of `name` that `start` began: its stop event, and the pair kept.
pub(super) fn stop(
    timing: Option<&mut Timing>,
    rt: &Runtime,
    name: &str,
    start: Option<u64>,
    stream: u64,
) -> Result<(), EventError> {
    let (Some(t), Some(start)) = (timing, start) else {
        return Ok(());
    };
    let stop = t.event(rt)?;
    // SAFETY: EventRecord of replay's own event on the launch's stream.
    let r = unsafe { rt.call_table(id::EventRecord, &[stop, stream]) }?;
    if r != 0 {
        t.free.extend([start, stop]);
        t.untimed += 1;
        return Ok(());
    }
    t.pending.push((name.to_string(), start, stop));
    if t.pending.len() > MAX_PENDING {
        t.read(rt);
    }
    Ok(())
}

impl Timing {
    fn event(&mut self, rt: &Runtime) -> Result<u64, EventError> {
        if let Some(e) = self.free.pop() {
            return Ok(e);
        }
        let mut slot = 0u64;
        // SAFETY: EventCreateWithFlags(&slot, 0): a timing event written into `slot`.
        let r =
            unsafe { rt.call_table(id::EventCreateWithFlags, &[&mut slot as *mut u64 as u64, 0]) }?;
        if r != 0 {
            return Err(EventError::Call {
                call: "creating a --timing event".into(),
                code: r,
            });
        }
        Ok(slot)
    }

    /// Reads every pending pair (waiting for its stop event) into the per-name totals.
    fn read(&mut self, rt: &Runtime) {
        for (name, start, stop) in std::mem::take(&mut self.pending) {
            let mut ms = 0f32;
            // SAFETY: replay's own recorded events; an out pointer to a local.
            let ok = unsafe {
                rt.call_table(id::EventSynchronize, &[stop]) == Ok(0)
                    && rt.call_table(
                        id::EventElapsedTime,
                        &[&mut ms as *mut f32 as u64, start, stop],
                    ) == Ok(0)
            };
            self.free.extend([start, stop]);
            if ok {
                let e = self.by_name.entry(name).or_insert((0, 0.0, 0.0));
                let ms = f64::from(ms);
                e.0 += 1;
                e.1 += ms;
                e.2 = e.2.max(ms);
            } else {
                self.untimed += 1;
            }
        }
    }

    /// Reads what is pending and destroys the events (the end of the process).
    pub(super) fn finish(mut self, rt: &Runtime) -> Timing {
        self.read(rt);
        for e in self.free.drain(..) {
            // SAFETY: replay's own event, no longer recorded anywhere.
            let _ = unsafe { rt.call_table(id::EventDestroy, &[e]) };
        }
        self
    }
}
