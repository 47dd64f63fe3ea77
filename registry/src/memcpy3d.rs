//! The layout of `cudaMemcpy3DParms` / `hipMemcpy3DParms` (identical on x86-64, 160 bytes):
//! `{array srcArray; pos srcPos{x,y,z}; pitchedPtr srcPtr{ptr,pitch,xsize,ysize};
//! array dstArray; pos dstPos; pitchedPtr dstPtr; extent{width,height,depth}; int kind}`.

pub const SIZE: usize = 160;
pub const SRC_ARRAY: usize = 0;
pub const SRC_POS: usize = 8;
pub const SRC_PTR: usize = 32;
pub const DST_ARRAY: usize = 64;
pub const DST_POS: usize = 72;
pub const DST_PTR: usize = 96;
pub const EXTENT: usize = 128;
pub const KIND: usize = 152;

/// One side of a 3D copy: a pitched pointer and a position in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Side {
    pub ptr: u64,
    pub pitch: u64,
    pub xsize: u64,
    pub ysize: u64,
    pub x: u64,
    pub y: u64,
    pub z: u64,
}

impl Side {
    /// Address of row `j` of slice `k` of the copied box.
    pub fn row(&self, j: u64, k: u64) -> u64 {
        self.ptr
            .wrapping_add((self.z + k).wrapping_mul(self.pitch.wrapping_mul(self.ysize)))
            .wrapping_add((self.y + j).wrapping_mul(self.pitch))
            .wrapping_add(self.x)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Parms {
    pub src_array: u64,
    pub dst_array: u64,
    pub src: Side,
    pub dst: Side,
    /// Width in bytes (for linear memory), height, depth.
    pub extent: [u64; 3],
    pub kind: i32,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

impl Parms {
    pub fn decode(b: &[u8; SIZE]) -> Parms {
        let side = |pos: usize, ptr: usize| Side {
            ptr: u64_at(b, ptr),
            pitch: u64_at(b, ptr + 8),
            xsize: u64_at(b, ptr + 16),
            ysize: u64_at(b, ptr + 24),
            x: u64_at(b, pos),
            y: u64_at(b, pos + 8),
            z: u64_at(b, pos + 16),
        };
        Parms {
            src_array: u64_at(b, SRC_ARRAY),
            dst_array: u64_at(b, DST_ARRAY),
            src: side(SRC_POS, SRC_PTR),
            dst: side(DST_POS, DST_PTR),
            extent: [
                u64_at(b, EXTENT),
                u64_at(b, EXTENT + 8),
                u64_at(b, EXTENT + 16),
            ],
            kind: i32::from_le_bytes(b[KIND..KIND + 4].try_into().unwrap_or([0; 4])),
        }
    }

    pub fn encode(&self) -> [u8; SIZE] {
        let mut b = [0u8; SIZE];
        let mut put = |at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        put(SRC_ARRAY, self.src_array);
        put(DST_ARRAY, self.dst_array);
        for (pos, ptr, s) in [(SRC_POS, SRC_PTR, self.src), (DST_POS, DST_PTR, self.dst)] {
            put(pos, s.x);
            put(pos + 8, s.y);
            put(pos + 16, s.z);
            put(ptr, s.ptr);
            put(ptr + 8, s.pitch);
            put(ptr + 16, s.xsize);
            put(ptr + 24, s.ysize);
        }
        put(EXTENT, self.extent[0]);
        put(EXTENT + 8, self.extent[1]);
        put(EXTENT + 16, self.extent[2]);
        b[KIND..KIND + 4].copy_from_slice(&self.kind.to_le_bytes());
        b
    }

    /// Bytes of the copied box (width x height x depth), None on overflow.
    pub fn box_bytes(&self) -> Option<u64> {
        self.extent[0]
            .checked_mul(self.extent[1])?
            .checked_mul(self.extent[2])
    }
}
