//! Which records are work, as a range capture (`HRR_CAPTURE_RANGE`, issue 23) divides a
//! program: before its range, capture keeps every call that builds state a later call
//! needs (allocations and frees, streams, events, graphs being built, modules, kernel
//! registrations and settings) and leaves out the work itself (copies, memsets, launches,
//! graph launches, synchronisations and queries, outputs), whose effect on device memory
//! the snapshot at the range's start holds. A call made while a stream captures into a
//! graph builds the graph and is always kept (capture decides that, not this list).
//! After the range nothing is kept. Listed as data beside the table: the row names'
//! copy and memset families, the synchronisations by row, the launches by record kind.

use super::{desc, id, semantic};

/// Row-name prefixes of the copy and memset families (runtime, driver, HIP, per-thread).
const WORK_ROW_PREFIXES: &[&str] = &["Memcpy", "Memset", "DrvMemcpy", "CuMemcpy", "RtMemcpy"];

/// Rows that wait, order or query work, and prefetches.
const WORK_ROWS: &[u16] = &[
    id::DeviceSynchronize,
    id::CtxSynchronize,
    id::CtxSynchronizeV2,
    id::StreamSynchronize,
    id::StreamSynchronizeSpt,
    id::CuStreamSynchronize,
    id::StreamQuery,
    id::StreamQuerySpt,
    id::CuStreamQuery,
    id::StreamWaitEvent,
    id::StreamWaitEventSpt,
    id::CuStreamWaitEvent,
    id::EventRecord,
    id::EventRecordSpt,
    id::CuEventRecord,
    id::EventRecordWithFlags,
    id::DrvEventRecordWithFlags,
    id::EventSynchronize,
    id::CuEventSynchronize,
    id::EventQuery,
    id::CuEventQuery,
    id::EventElapsedTime,
    id::CuEventElapsedTime,
    id::MemPrefetchAsync,
    id::HipMemPrefetchAsync,
    id::DrvMemPrefetchAsync,
    id::GraphUpload,
    id::DrvGraphUpload,
    id::DrvCtxRecordEvent,
    id::DrvCtxWaitEvent,
    id::ExecutionCtxRecordEvent,
    id::ExecutionCtxWaitEvent,
    id::ExecutionCtxSynchronize,
];

/// Hand-written record kinds that are work: launches, graph launches, and the outputs
/// capture attaches to work.
const WORK_KINDS: &[u16] = &[
    semantic::LAUNCH_KERNEL,
    semantic::LAUNCH_KERNEL_BY_HANDLE,
    semantic::MODULE_LAUNCH_KERNEL,
    semantic::LAUNCH_COOPERATIVE,
    semantic::LAUNCH_KERNEL_EX,
    semantic::HIP_EXT_LAUNCH,
    semantic::GRAPH_LAUNCH,
    semantic::COPY_OUTPUT,
    semantic::MAPPED_OUTPUT,
];

/// Whether a record of `id` (a table row or a hand-written kind) is work.
pub fn is_work(id: u16) -> bool {
    if WORK_KINDS.contains(&id) || WORK_ROWS.contains(&id) {
        return true;
    }
    desc(id).is_some_and(|d| WORK_ROW_PREFIXES.iter().any(|p| d.name.starts_with(p)))
}

/// Whether a row begins a stream capture (its calls then build a graph).
pub fn begins_capture(id: u16) -> bool {
    [
        id::StreamBeginCapture,
        id::StreamBeginCaptureSpt,
        id::StreamBeginCaptureToGraph,
    ]
    .contains(&id)
}

/// Whether a row ends a stream capture.
pub fn ends_capture(id: u16) -> bool {
    [id::StreamEndCapture, id::StreamEndCaptureSpt].contains(&id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::API_TABLE;

    #[test]
    fn copies_memsets_launches_and_waits_are_work_and_state_is_not() {
        for w in [
            id::Memcpy,
            id::MemcpyAsync,
            id::MemcpyHtoD,
            id::MemsetD32Async,
            id::Memcpy2DToArray,
            id::DrvMemcpy3D,
            id::StreamSynchronize,
            id::EventRecord,
            semantic::LAUNCH_KERNEL,
            semantic::GRAPH_LAUNCH,
        ] {
            assert!(is_work(w), "{w}");
        }
        for s in [
            id::Malloc,
            id::Free,
            id::MallocAsync,
            id::StreamCreate,
            id::EventCreate,
            id::GraphCreate,
            id::GraphAddMemcpyNode,
            id::GraphAddMemsetNode,
            id::GraphInstantiate,
            id::StreamBeginCapture,
            id::MemMap,
            semantic::MODULE_LOAD,
            semantic::REGISTER_FUNCTION,
            semantic::SYMBOL_ADDRESS,
            semantic::FUNC_SET_ATTRIBUTE,
            semantic::UNMODELLED_CALL,
        ] {
            assert!(!is_work(s), "{s}");
        }
    }

    #[test]
    fn every_work_row_is_a_table_row_and_no_graph_row_is_work() {
        for r in WORK_ROWS {
            assert!(desc(*r).is_some(), "{r}");
        }
        for d in API_TABLE.iter().filter(|d| d.name.starts_with("Graph")) {
            assert!(
                !is_work(d.id) || [id::GraphUpload].contains(&d.id),
                "{} is a graph row",
                d.name
            );
        }
    }
}
