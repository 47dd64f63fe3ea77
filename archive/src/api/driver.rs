//! Which table rows and hand-written symbols belong to the CUDA driver (libcuda.so.1)
//! rather than a runtime: replay calls them through the driver library, and capture
//! waits for their asynchronous copies with the driver's own stream synchronize.

use super::{ApiDesc, Vendor};

/// Whether `symbol` is a CUDA driver API name (`cu*`, not `cuda*`).
pub fn is_driver_symbol(symbol: &str) -> bool {
    symbol.starts_with("cu") && !symbol.starts_with("cuda")
}

impl ApiDesc {
    /// Whether this row's `vendor` symbol is a CUDA driver API entry point.
    pub fn is_driver(&self, vendor: Vendor) -> bool {
        vendor == Vendor::Cuda && self.cuda.is_some_and(is_driver_symbol)
    }
}

/// Input structs capture does not record (`UnrecordedStructIn`) that mean what null
/// means when every byte is zero, by row and size: `cuCtxCreate_v4`'s
/// `CUctxCreateParams` (execution-affinity list and count, CIG parameters: 24 bytes), which
/// programs pass zero-filled. Such a struct is recorded as null, which replay passes.
pub const EMPTY_MEANS_NULL: &[(u16, u64)] = &[(super::id::CtxCreate, 24)];

/// The size of row `id`'s unrecorded input struct whose all-zero form means null, if any.
pub fn empty_means_null(id: u16) -> Option<u64> {
    EMPTY_MEANS_NULL
        .iter()
        .find(|(row, _)| *row == id)
        .map(|(_, size)| *size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{desc, id};

    #[test]
    fn driver_rows_are_the_cu_symbols_and_only_under_cuda() {
        assert!(is_driver_symbol("cuMemAlloc_v2"));
        assert!(!is_driver_symbol("cudaMalloc"));
        assert!(!is_driver_symbol("hipMemcpyHtoD"));
        let htod = desc(id::MemcpyHtoD).unwrap();
        assert!(htod.is_driver(Vendor::Cuda));
        assert!(!htod.is_driver(Vendor::Hip));
        assert!(!desc(id::Malloc).unwrap().is_driver(Vendor::Cuda));
    }
}
