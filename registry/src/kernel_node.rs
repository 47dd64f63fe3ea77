//! Graph kernel nodes: the layouts of `cudaKernelNodeParams` (the runtime's, which is
//! also the driver's `CUDA_KERNEL_NODE_PARAMS` v1), and `hipKernelNodeParams`, read by
//! capture and written by replay. `replay/tests/graph_layouts.rs` checks the offsets
//! against the real headers.

use super::Vendor;

/// The fields of one kernel node's parameters capture reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeParams {
    /// The host stub (runtime) or function handle (driver, HIP module function).
    pub func: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shmem: u32,
    /// `void** kernelParams`: one pointer per parameter.
    pub kernel_params: u64,
    /// `void** extra`: arguments packed by the program (capture refuses a node using it).
    pub extra: u64,
}

/// Byte offsets of one vendor's struct.
struct Offsets {
    func: usize,
    grid: usize,
    block: usize,
    shmem: usize,
    kernel_params: usize,
    extra: usize,
    size: usize,
}

/// `cudaKernelNodeParams` = `CUDA_KERNEL_NODE_PARAMS` (v1): func, grid (3 u32), block
/// (3 u32), shared memory, kernelParams, extra.
const CUDA: Offsets = Offsets {
    func: 0,
    grid: 8,
    block: 20,
    shmem: 32,
    kernel_params: 40,
    extra: 48,
    size: 56,
};

/// `hipKernelNodeParams`: block, extra, func, grid, kernelParams, shared memory.
const HIP: Offsets = Offsets {
    block: 0,
    extra: 16,
    func: 24,
    grid: 32,
    kernel_params: 48,
    shmem: 56,
    size: 64,
};

fn offsets(vendor: Vendor) -> &'static Offsets {
    match vendor {
        Vendor::Cuda => &CUDA,
        Vendor::Hip => &HIP,
    }
}

/// `CUDA_KERNEL_NODE_PARAMS_v2` (CUDA 12+, what `cuGraphAddKernelNode_v2` and its set
/// calls take): v1's fields, then `CUkernel kern` (used instead of `func` when not null)
/// and `CUcontext ctx`.
pub mod driver_v2 {
    pub const SIZE: usize = 72;
    pub const KERN: usize = 56;
    pub const CTX: usize = 64;

    /// The kernel a v2 struct names: `kern` when set, else `func`.
    pub fn kernel_handle(b: &[u8]) -> Option<u64> {
        let at = |o: usize| {
            b.get(o..o + 8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
        };
        match at(KERN)? {
            0 => at(0),
            k => Some(k),
        }
    }
}

/// The size of `vendor`'s kernel node parameter struct.
pub fn params_size(vendor: Vendor) -> usize {
    offsets(vendor).size
}

/// Each field's byte offset by its C name (`gridDim`, `blockDim`: the first of three
/// u32), then `("size", size)`: for the layout check against the headers.
pub fn field_offsets(vendor: Vendor) -> [(&'static str, usize); 7] {
    let o = offsets(vendor);
    [
        ("func", o.func),
        ("gridDim", o.grid),
        ("blockDim", o.block),
        ("sharedMemBytes", o.shmem),
        ("kernelParams", o.kernel_params),
        ("extra", o.extra),
        ("size", o.size),
    ]
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

impl NodeParams {
    /// Reads `vendor`'s struct from its bytes (None: shorter than the struct).
    pub fn decode(vendor: Vendor, b: &[u8]) -> Option<NodeParams> {
        let o = offsets(vendor);
        if b.len() < o.size {
            return None;
        }
        let dim = |at: usize| [u32_at(b, at), u32_at(b, at + 4), u32_at(b, at + 8)];
        Some(NodeParams {
            func: u64_at(b, o.func),
            grid: dim(o.grid),
            block: dim(o.block),
            shmem: u32_at(b, o.shmem),
            kernel_params: u64_at(b, o.kernel_params),
            extra: u64_at(b, o.extra),
        })
    }

    /// `vendor`'s struct, as the runtime reads it.
    pub fn encode(&self, vendor: Vendor) -> Vec<u8> {
        let o = offsets(vendor);
        let mut b = vec![0u8; o.size];
        let mut put = |at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        put(o.func, &self.func.to_le_bytes());
        for i in 0..3 {
            put(o.grid + 4 * i, &self.grid[i].to_le_bytes());
            put(o.block + 4 * i, &self.block[i].to_le_bytes());
        }
        put(o.shmem, &self.shmem.to_le_bytes());
        put(o.kernel_params, &self.kernel_params.to_le_bytes());
        put(o.extra, &self.extra.to_le_bytes());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NodeParams {
        NodeParams {
            func: 0x1111_2222_3333,
            grid: [4, 5, 6],
            block: [128, 1, 2],
            shmem: 96,
            kernel_params: 0x7fff_0000_1000,
            extra: 0,
        }
    }

    #[test]
    fn both_layouts_round_trip_and_place_each_field() {
        for v in [Vendor::Cuda, Vendor::Hip] {
            let b = sample().encode(v);
            assert_eq!(b.len(), params_size(v));
            assert_eq!(NodeParams::decode(v, &b), Some(sample()));
            assert_eq!(NodeParams::decode(v, &b[..b.len() - 1]), None);
        }
        let cuda = sample().encode(Vendor::Cuda);
        assert_eq!(u64_at(&cuda, 0), 0x1111_2222_3333);
        assert_eq!(u32_at(&cuda, 20), 128);
        assert_eq!(u64_at(&cuda, 40), 0x7fff_0000_1000);
        let hip = sample().encode(Vendor::Hip);
        assert_eq!(u32_at(&hip, 0), 128);
        assert_eq!(u64_at(&hip, 24), 0x1111_2222_3333);
        assert_eq!(u32_at(&hip, 32), 4);
        assert_eq!(u32_at(&hip, 56), 96);
    }
}
