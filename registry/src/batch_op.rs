//! `cudaMemcpy3DBatchOp` / the driver's `CUDA_MEMCPY3D_BATCH_OP` (112 bytes on x86-64, the
//! same layout): one copy of a 3D batch, and the `cudaMemcpy3DParms` it equals (pure:
//! [`to_parms`]). Capture records each copy of `cudaMemcpy3DBatchAsync` as the
//! `cudaMemcpy3DAsync` it equals (`capture/src/batch_copies.rs`).
//!
//! An operand is a pointer (address, row length and layer height in elements, zero for
//! "tightly packed", a location hint) or an array (handle, offset in elements). The extent
//! counts elements: one byte each between pointers, the array's element otherwise, which is
//! how `cudaMemcpy3DParms` counts its extent and array positions too; a pointer side's
//! pitch is its row length in bytes.

use super::memcpy3d::{Parms, Side};

pub const SIZE: usize = 112;
const SRC: usize = 0;
const DST: usize = 40;
const EXTENT: usize = 80;
/// An operand's union, after its type and padding.
const OP: usize = 8;

/// `cudaMemcpyOperandTypePointer`, `...Array`.
const POINTER: u32 = 1;
const ARRAY: u32 = 2;

/// `cudaMemcpyDefault`: the pointers decide the direction.
const DEFAULT_KIND: i32 = 4;

fn word(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
}

/// One operand: a pointer side or an array with its side's position.
enum Operand {
    Pointer { ptr: u64, row: u64, layer: u64 },
    Array { array: u64, at: [u64; 3] },
}

fn operand(b: &[u8], at: usize) -> Result<Operand, &'static str> {
    let t = b
        .get(at..at + 4)
        .map_or(0, |w| u32::from_le_bytes(w.try_into().unwrap_or([0; 4])));
    let u = at + OP;
    match t {
        POINTER => Ok(Operand::Pointer {
            ptr: word(b, u),
            row: word(b, u + 8),
            layer: word(b, u + 16),
        }),
        ARRAY => Ok(Operand::Array {
            array: word(b, u),
            at: [word(b, u + 8), word(b, u + 16), word(b, u + 24)],
        }),
        _ => Err("names a 3D batch operand of a type neither pointer nor array"),
    }
}

/// The `cudaMemcpy3DParms` (kind default) the copy `op` equals; `element` gives an array's
/// element size in bytes (None: unknown, which the copy cannot be converted without).
pub fn to_parms(op: &[u8], element: impl Fn(u64) -> Option<u64>) -> Result<Parms, &'static str> {
    if op.len() < SIZE {
        return Err("passed a 3D batch operation shorter than its struct");
    }
    let (src, dst) = (operand(op, SRC)?, operand(op, DST)?);
    let extent = [
        word(op, EXTENT),
        word(op, EXTENT + 8),
        word(op, EXTENT + 16),
    ];
    let e = match (&src, &dst) {
        (Operand::Array { array, .. }, _) | (_, Operand::Array { array, .. }) => element(*array)
            .ok_or(
            "copies to or from an array capture did not see allocated (its element size unknown)",
        )?,
        _ => 1,
    };
    let side = |o: &Operand| -> (u64, Side) {
        match *o {
            Operand::Pointer { ptr, row, layer } => {
                let row = if row == 0 { extent[0] } else { row };
                let layer = if layer == 0 { extent[1] } else { layer };
                let pitch = row.saturating_mul(e);
                let side = Side {
                    ptr,
                    pitch,
                    xsize: pitch,
                    ysize: layer,
                    ..Side::default()
                };
                (0, side)
            }
            Operand::Array { array, at } => {
                let side = Side {
                    x: at[0],
                    y: at[1],
                    z: at[2],
                    ..Side::default()
                };
                (array, side)
            }
        }
    };
    let ((src_array, src), (dst_array, dst)) = (side(&src), side(&dst));
    Ok(Parms {
        src_array,
        dst_array,
        src,
        dst,
        extent,
        kind: DEFAULT_KIND,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(src: (u32, [u64; 4]), dst: (u32, [u64; 4]), extent: [u64; 3]) -> [u8; SIZE] {
        let mut b = [0u8; SIZE];
        for (at, (t, w)) in [(SRC, src), (DST, dst)] {
            b[at..at + 4].copy_from_slice(&t.to_le_bytes());
            for (i, v) in w.iter().enumerate() {
                b[at + OP + 8 * i..at + OP + 8 * i + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        for (i, v) in extent.iter().enumerate() {
            b[EXTENT + 8 * i..EXTENT + 8 * i + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    #[test]
    fn pointer_sides_get_their_pitch_and_packed_ones_the_extent() {
        let b = op((1, [0x1000, 64, 8, 0]), (1, [0x2000, 0, 0, 0]), [40, 6, 3]);
        let p = to_parms(&b, |_| None).unwrap();
        assert_eq!((p.src.ptr, p.src.pitch, p.src.ysize), (0x1000, 64, 8));
        assert_eq!((p.dst.ptr, p.dst.pitch, p.dst.ysize), (0x2000, 40, 6));
        assert_eq!((p.extent, p.kind, p.src_array), ([40, 6, 3], 4, 0));
    }

    #[test]
    fn an_array_side_counts_elements_and_an_unknown_one_is_named() {
        let b = op((2, [0xa, 1, 2, 3]), (1, [0x2000, 10, 0, 0]), [4, 2, 1]);
        let p = to_parms(&b, |a| (a == 0xa).then_some(4)).unwrap();
        assert_eq!((p.src_array, p.src.x, p.src.y, p.src.z), (0xa, 1, 2, 3));
        assert_eq!((p.dst.pitch, p.dst.ysize), (40, 2));
        let e = to_parms(&b, |_| None).unwrap_err();
        assert!(e.contains("element size unknown"), "{e}");
        let bad = op((7, [0; 4]), (1, [0; 4]), [1, 1, 1]);
        assert!(to_parms(&bad, |_| None).is_err());
    }
}
