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
