//! The per-thread default stream entry points of the CUDA runtime: a program built with
//! `--default-stream per-thread` (or `CUDA_API_PER_THREAD_DEFAULT_STREAM`) calls
//! `cudaMemcpyAsync_ptsz` where others call `cudaMemcpyAsync`, and its stream 0 is then the
//! calling thread's default stream (`cudaStreamPerThread`), not the legacy one; the
//! synchronous `_ptds` forms use that stream implicitly. Capture records each under its
//! base row with stream 0 written as `cudaStreamPerThread` (2), so replay calls the base
//! function on the per-thread stream. Each alias is exported by capture.

use super::id;

/// `cudaStreamPerThread`, the handle a per-thread call's stream 0 stands for.
pub const STREAM_PER_THREAD: u64 = 2;

/// (alias, table row): the per-thread forms of generic table rows.
pub const TABLE_ALIASES: &[(&str, u16)] = &[
    ("cudaMemcpy_ptds", id::Memcpy),
    ("cudaMemcpyAsync_ptsz", id::MemcpyAsync),
    ("cudaMemset_ptds", id::Memset),
    ("cudaMemsetAsync_ptsz", id::MemsetAsync),
    ("cudaMemcpy2D_ptds", id::Memcpy2D),
    ("cudaMemcpy2DAsync_ptsz", id::Memcpy2DAsync),
    ("cudaMemset2D_ptds", id::Memset2D),
    ("cudaMemset2DAsync_ptsz", id::Memset2DAsync),
    ("cudaMemcpy3D_ptds", id::Memcpy3D),
    ("cudaMemcpy3DAsync_ptsz", id::Memcpy3DAsync),
    ("cudaStreamSynchronize_ptsz", id::StreamSynchronize),
    ("cudaStreamQuery_ptsz", id::StreamQuery),
    ("cudaStreamWaitEvent_ptsz", id::StreamWaitEvent),
    ("cudaEventRecord_ptsz", id::EventRecord),
    ("cudaEventRecordWithFlags_ptsz", id::EventRecordWithFlags),
    ("cudaMemcpyArrayToArray_ptds", id::MemcpyArrayToArray),
    ("cudaMallocAsync_ptsz", id::MallocAsync),
    ("cudaFreeAsync_ptsz", id::FreeAsync),
    ("cudaMallocFromPoolAsync_ptsz", id::MallocFromPoolAsync),
    ("cudaStreamBeginCapture_ptsz", id::StreamBeginCapture),
    ("cudaStreamEndCapture_ptsz", id::StreamEndCapture),
    ("cudaStreamIsCapturing_ptsz", id::StreamIsCapturing),
    ("cudaMemPrefetchAsync_ptsz", id::MemPrefetchAsync),
    ("cudaMemcpy2DArrayToArray_ptds", id::Memcpy2DArrayToArray),
    (
        "cudaMemcpy2DFromArrayAsync_ptsz",
        id::Memcpy2DFromArrayAsync,
    ),
    ("cudaMemcpy2DFromArray_ptds", id::Memcpy2DFromArray),
    ("cudaMemcpy2DToArrayAsync_ptsz", id::Memcpy2DToArrayAsync),
    ("cudaMemcpy2DToArray_ptds", id::Memcpy2DToArray),
    ("cudaMemcpyFromArrayAsync_ptsz", id::MemcpyFromArrayAsync),
    ("cudaMemcpyFromArray_ptds", id::MemcpyFromArray),
    ("cudaMemcpyToArrayAsync_ptsz", id::MemcpyToArrayAsync),
    ("cudaMemcpyToArray_ptds", id::MemcpyToArray),
    ("cudaStreamAttachMemAsync_ptsz", id::StreamAttachMemAsync),
    (
        "cudaStreamBeginCaptureToGraph_ptsz",
        id::StreamBeginCaptureToGraph,
    ),
    ("cudaStreamGetCaptureInfo_ptsz", id::StreamGetCaptureInfo),
    (
        "cudaStreamUpdateCaptureDependencies_ptsz",
        id::StreamUpdateCaptureDependencies,
    ),
    ("cudaLaunchHostFunc_ptsz", id::LaunchHostFunc),
    ("cudaStreamAddCallback_ptsz", id::StreamAddCallback),
    ("cudaStreamCopyAttributes_ptsz", id::StreamCopyAttributes),
    ("cudaStreamSetAttribute_ptsz", id::StreamSetAttribute),
    ("cudaGraphUpload_ptsz", id::GraphUpload),
    // The driver's, which nvcc's static runtime calls for a per-thread program (libcuda
    // takes stream 0 there as `CU_STREAM_PER_THREAD`, also 2).
    ("cuStreamGetCaptureInfo_v2_ptsz", id::CuStreamGetCaptureInfo),
    ("cuMemPrefetchAsync_v2_ptsz", id::DrvMemPrefetchAsync),
    ("cuStreamAttachMemAsync_ptsz", id::CuStreamAttachMemAsync),
    ("cuMemAllocAsync_ptsz", id::DrvMemAllocAsync),
    ("cuMemFreeAsync_ptsz", id::DrvMemFreeAsync),
    ("cuMemAllocFromPoolAsync_ptsz", id::DrvMemAllocFromPoolAsync),
    ("cuMemcpyHtoD_v2_ptds", id::MemcpyHtoD),
    ("cuMemcpyDtoH_v2_ptds", id::MemcpyDtoH),
    ("cuMemcpyDtoD_v2_ptds", id::MemcpyDtoD),
    ("cuMemcpyHtoDAsync_v2_ptsz", id::MemcpyHtoDAsync),
    ("cuMemcpyDtoHAsync_v2_ptsz", id::MemcpyDtoHAsync),
    ("cuMemcpyDtoDAsync_v2_ptsz", id::MemcpyDtoDAsync),
    ("cuMemcpy2D_v2_ptds", id::DrvMemcpy2D),
    ("cuMemcpy2DAsync_v2_ptsz", id::DrvMemcpy2DAsync),
    ("cuMemcpy3D_v2_ptds", id::DrvMemcpy3D),
    ("cuMemcpy3DAsync_v2_ptsz", id::DrvMemcpy3DAsync),
    ("cuMemcpy_ptds", id::CuMemcpy),
    ("cuMemcpyAsync_ptsz", id::CuMemcpyAsync),
    ("cuMemcpy2DUnaligned_v2_ptds", id::DrvMemcpy2DUnaligned),
    ("cuMemcpyPeer_ptds", id::MemcpyPeer),
    ("cuMemcpyPeerAsync_ptsz", id::MemcpyPeerAsync),
    ("cuMemsetD8_v2_ptds", id::MemsetD8),
    ("cuMemsetD16_v2_ptds", id::MemsetD16),
    ("cuMemsetD32_v2_ptds", id::MemsetD32),
    ("cuMemsetD8Async_ptsz", id::MemsetD8Async),
    ("cuMemsetD16Async_ptsz", id::MemsetD16Async),
    ("cuMemsetD32Async_ptsz", id::MemsetD32Async),
    ("cuMemsetD2D8_v2_ptds", id::MemsetD2D8),
    ("cuMemsetD2D16_v2_ptds", id::MemsetD2D16),
    ("cuMemsetD2D32_v2_ptds", id::MemsetD2D32),
    ("cuMemsetD2D8Async_ptsz", id::MemsetD2D8Async),
    ("cuMemsetD2D16Async_ptsz", id::MemsetD2D16Async),
    ("cuMemsetD2D32Async_ptsz", id::MemsetD2D32Async),
    ("cuStreamSynchronize_ptsz", id::CuStreamSynchronize),
    ("cuStreamWaitEvent_ptsz", id::CuStreamWaitEvent),
    ("cuStreamQuery_ptsz", id::CuStreamQuery),
    ("cuEventRecord_ptsz", id::CuEventRecord),
    ("cuEventRecordWithFlags_ptsz", id::DrvEventRecordWithFlags),
    ("cuStreamCopyAttributes_ptsz", id::DrvStreamCopyAttributes),
    ("cuStreamSetAttribute_ptsz", id::DrvStreamSetAttribute),
    ("cuGraphUpload_ptsz", id::DrvGraphUpload),
];

/// The table row a per-thread alias records as.
pub fn row_of(alias: &str) -> Option<u16> {
    TABLE_ALIASES
        .iter()
        .find(|(a, _)| *a == alias)
        .map(|(_, r)| *r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{surface, ParamKind, API_TABLE};

    #[test]
    fn each_alias_is_a_runtime_symbol_of_its_rows_base_with_the_per_thread_suffix() {
        let list = |prefix: &str| {
            surface::SURFACE_LISTS
                .iter()
                .find(|l| l.library.starts_with(prefix))
                .expect("a surface list")
        };
        for (alias, row) in TABLE_ALIASES {
            let cudart = if crate::driver::is_driver_symbol(alias) {
                list("libcuda.")
            } else {
                list("libcudart")
            };
            let d = API_TABLE.iter().find(|d| d.id == *row).unwrap();
            let base = d.cuda.unwrap();
            let stream = d.params.iter().any(|p| p.kind == ParamKind::Stream);
            let suffix = if stream { "_ptsz" } else { "_ptds" };
            assert_eq!(*alias, format!("{base}{suffix}"), "{alias}");
            assert!(
                cudart.names().any(|s| s == *alias),
                "{alias} not in {}",
                cudart.library
            );
        }
        assert_eq!(row_of("cudaMemcpyAsync_ptsz"), Some(id::MemcpyAsync));
        assert_eq!(row_of("cudaMemcpyAsync"), None);
    }
}
