//! The driver's copy structs, `CUDA_MEMCPY2D` (128 bytes) and `CUDA_MEMCPY3D` (200 bytes)
//! on x86-64: every field a `size_t` or a pointer, the memory-type enums padded to 8
//! bytes. They are read into the runtime 3D copy's [`Parms`] (a side's pointer is its
//! host or device field by its memory type; the kind follows the two memory types), so
//! capture and replay handle them as they handle `cudaMemcpy3D`, and written back over
//! the captured struct with replay's pointers.
//!
//! `CUDA_MEMCPY2D`: srcXInBytes, srcY, srcMemoryType, srcHost, srcDevice, srcArray,
//! srcPitch, then the same seven for dst, WidthInBytes, Height.
//! `CUDA_MEMCPY3D`: srcXInBytes, srcY, srcZ, srcLOD, srcMemoryType, srcHost, srcDevice,
//! srcArray, reserved0, srcPitch, srcHeight, then the same eleven for dst,
//! WidthInBytes, Height, Depth.

use super::memcpy3d::{Parms, Side};

/// `CU_MEMORYTYPE_*`.
pub const MEMORYTYPE_HOST: u64 = 1;
pub const MEMORYTYPE_DEVICE: u64 = 2;
pub const MEMORYTYPE_ARRAY: u64 = 3;
pub const MEMORYTYPE_UNIFIED: u64 = 4;

/// Which driver copy struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Memcpy2D,
    Memcpy3D,
}

/// Word indices of one side's fields (None: the struct has no such field).
struct SideWords {
    x: usize,
    y: usize,
    z: Option<usize>,
    memory_type: usize,
    host: usize,
    device: usize,
    array: usize,
    pitch: usize,
    height: Option<usize>,
}

impl Layout {
    pub const fn size(self) -> usize {
        match self {
            Layout::Memcpy2D => 16 * 8,
            Layout::Memcpy3D => 25 * 8,
        }
    }

    fn side(self, dst: bool) -> SideWords {
        match self {
            Layout::Memcpy2D => {
                let b = if dst { 7 } else { 0 };
                SideWords {
                    x: b,
                    y: b + 1,
                    z: None,
                    memory_type: b + 2,
                    host: b + 3,
                    device: b + 4,
                    array: b + 5,
                    pitch: b + 6,
                    height: None,
                }
            }
            Layout::Memcpy3D => {
                let b = if dst { 11 } else { 0 };
                SideWords {
                    x: b,
                    y: b + 1,
                    z: Some(b + 2),
                    memory_type: b + 4,
                    host: b + 5,
                    device: b + 6,
                    array: b + 7,
                    pitch: b + 9,
                    height: Some(b + 10),
                }
            }
        }
    }

    /// Word indices of width, height and (3D) depth.
    fn extent_words(self) -> (usize, usize, Option<usize>) {
        match self {
            Layout::Memcpy2D => (14, 15, None),
            Layout::Memcpy3D => (22, 23, Some(24)),
        }
    }

    /// The struct's copy as 3D parameters; None when `raw` is not the struct's size.
    pub fn decode(self, raw: &[u8]) -> Option<Parms> {
        if raw.len() != self.size() {
            return None;
        }
        let w = |i: usize| u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let side = |dst: bool| {
            let s = self.side(dst);
            let ty = w(s.memory_type) & 0xffff_ffff;
            let ptr = if ty == MEMORYTYPE_HOST {
                w(s.host)
            } else {
                w(s.device)
            };
            let array = if ty == MEMORYTYPE_ARRAY {
                w(s.array).max(1)
            } else {
                0
            };
            let (ew, eh, _) = self.extent_words();
            let side = Side {
                ptr,
                pitch: w(s.pitch),
                xsize: w(ew),
                ysize: s.height.map(w).unwrap_or(w(eh)),
                x: w(s.x),
                y: w(s.y),
                z: s.z.map(w).unwrap_or(0),
            };
            (ty, side, array)
        };
        let (src_ty, src, src_array) = side(false);
        let (dst_ty, dst, dst_array) = side(true);
        let (ew, eh, ed) = self.extent_words();
        Some(Parms {
            src_array,
            dst_array,
            src,
            dst,
            extent: [w(ew), w(eh), ed.map(w).unwrap_or(1)],
            kind: kind_of(src_ty, dst_ty),
        })
    }

    /// The captured struct `raw` with `parms`' sides written over it (pointer in the
    /// field its memory type names, an array side's array handle, position, pitch,
    /// height); extent and memory types stay as captured.
    pub fn encode(self, raw: &[u8], parms: &Parms) -> Vec<u8> {
        let mut b = raw.to_vec();
        b.resize(self.size(), 0);
        let mut put = |i: usize, v: u64| b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        let ty = |i: usize| {
            u64::from_le_bytes(
                raw.get(i * 8..i * 8 + 8)
                    .and_then(|s| s.try_into().ok())
                    .unwrap_or([0; 8]),
            ) & 0xffff_ffff
        };
        let sides = [
            (false, parms.src, parms.src_array),
            (true, parms.dst, parms.dst_array),
        ];
        for (dst, s, array) in sides {
            let words = self.side(dst);
            match ty(words.memory_type) {
                MEMORYTYPE_HOST => put(words.host, s.ptr),
                MEMORYTYPE_ARRAY => put(words.array, array),
                _ => put(words.device, s.ptr),
            }
            put(words.x, s.x);
            put(words.y, s.y);
            if let Some(z) = words.z {
                put(z, s.z);
            }
            put(words.pitch, s.pitch);
            if let Some(h) = words.height {
                put(h, s.ysize);
            }
        }
        b
    }
}

/// A runtime copy kind (0 host to host .. 3 device to device, 4 by the pointers) from the
/// two sides' memory types: a unified side is resolved by where its pointer lives.
fn kind_of(src: u64, dst: u64) -> i32 {
    let device = |t: u64| match t {
        MEMORYTYPE_HOST => Some(false),
        MEMORYTYPE_DEVICE | MEMORYTYPE_ARRAY => Some(true),
        _ => None,
    };
    match (device(src), device(dst)) {
        (Some(false), Some(false)) => 0,
        (Some(false), Some(true)) => 1,
        (Some(true), Some(false)) => 2,
        (Some(true), Some(true)) => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[(usize, u64)], n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n * 8];
        for &(i, x) in v {
            b[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
        }
        b
    }

    #[test]
    fn a_2d_device_to_host_copy_reads_each_side_by_its_memory_type() {
        // src: device 0xd000 pitch 512 at (8, 2); dst: host 0x5000 pitch 64.
        let raw = words(
            &[
                (0, 8),
                (1, 2),
                (2, MEMORYTYPE_DEVICE),
                (3, 0xbad),
                (4, 0xd000),
                (6, 512),
            ]
            .into_iter()
            .chain([
                (9, MEMORYTYPE_HOST),
                (10, 0x5000),
                (11, 0xbad),
                (13, 64),
                (14, 48),
                (15, 3),
            ])
            .collect::<Vec<_>>(),
            16,
        );
        let p = Layout::Memcpy2D.decode(&raw).unwrap();
        assert_eq!(p.kind, 2);
        assert_eq!(
            (p.src.ptr, p.src.pitch, p.src.x, p.src.y),
            (0xd000, 512, 8, 2)
        );
        assert_eq!((p.dst.ptr, p.dst.pitch), (0x5000, 64));
        assert_eq!(p.extent, [48, 3, 1]);
        assert_eq!((p.src_array, p.dst_array), (0, 0));
        // Written back: the host side packed, the device side moved; the rest as captured.
        let mut q = p;
        q.dst = Side {
            ptr: 0x9000,
            pitch: 48,
            xsize: 48,
            ysize: 3,
            x: 0,
            y: 0,
            z: 0,
        };
        q.src.ptr = 0xe000;
        let out = Layout::Memcpy2D.encode(&raw, &q);
        let back = Layout::Memcpy2D.decode(&out).unwrap();
        assert_eq!(
            (back.dst.ptr, back.dst.pitch, back.src.ptr),
            (0x9000, 48, 0xe000)
        );
        assert_eq!(
            &out[3 * 8..4 * 8],
            &0xbadu64.to_le_bytes(),
            "the unused host field stays"
        );
        assert!(Layout::Memcpy2D.decode(&raw[..64]).is_none());
    }

    #[test]
    fn a_3d_copy_has_depth_and_heights_and_arrays_are_flagged() {
        let raw = words(
            &[
                (4, MEMORYTYPE_HOST),
                (5, 0x1000),
                (9, 256),
                (10, 4),
                (15, MEMORYTYPE_ARRAY),
                (18, 0x77),
                (22, 256),
                (23, 4),
                (24, 2),
            ],
            25,
        );
        let p = Layout::Memcpy3D.decode(&raw).unwrap();
        assert_eq!(p.extent, [256, 4, 2]);
        assert_eq!((p.src.ptr, p.src.ysize), (0x1000, 4));
        assert_eq!(p.dst_array, 0x77);
        assert_eq!(p.kind, 1);
        assert_eq!(p.box_bytes(), Some(2048));
        // Written back, the array side carries replay's array: a captured handle left in
        // the struct would be dereferenced by the driver (H200: replay crashed, SIGSEGV).
        let mut q = p;
        q.dst_array = 0x99;
        let out = Layout::Memcpy3D.encode(&raw, &q);
        assert_eq!(&out[18 * 8..19 * 8], &0x99u64.to_le_bytes());
        assert_eq!(Layout::Memcpy3D.decode(&out).unwrap().dst_array, 0x99);
    }

    #[test]
    fn unified_sides_are_resolved_by_their_pointers() {
        assert_eq!(kind_of(MEMORYTYPE_UNIFIED, MEMORYTYPE_HOST), 4);
        assert_eq!(kind_of(MEMORYTYPE_DEVICE, MEMORYTYPE_DEVICE), 3);
        assert_eq!(kind_of(MEMORYTYPE_HOST, MEMORYTYPE_HOST), 0);
    }
}
