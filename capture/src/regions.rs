//! Host memory a copy reads or writes, as capture records it: linear bytes, the rows of
//! a pitched 2D side packed end to end (seed 003: the capture cost follows the bytes
//! copied, and padding between rows is never compared), or the box of a 3D side packed
//! row after row, slice after slice.

use std::borrow::Cow;

use hrr_archive::api::memcpy3d;

use crate::ffi::host_bytes;

/// Largest host footprint of one 2D or 3D copy recorded (larger geometry is refused
/// loudly).
pub const MAX_2D_BYTES: u64 = 1 << 40;

/// The host side of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostRegion {
    /// `len` bytes at `ptr`.
    Linear { ptr: u64, len: u64 },
    /// `height` rows of `width` bytes, `pitch` apart, from `ptr`.
    Rows {
        ptr: u64,
        pitch: u64,
        width: u64,
        height: u64,
    },
    /// The `extent` (width in bytes, height, depth) box of a 3D side at its position.
    Box {
        side: memcpy3d::Side,
        extent: [u64; 3],
    },
}

/// Geometry capture refuses to record (the copy is then recorded incomplete).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionError {
    RowsTooLarge { width: u64, height: u64 },
    BoxTooLarge { extent: [u64; 3] },
    WidthExceedsPitch { width: u64, pitch: u64 },
}

impl std::fmt::Display for RegionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegionError::RowsTooLarge { width, height } => {
                write!(f, "{width} x {height} bytes is too large to record")
            }
            RegionError::BoxTooLarge { extent: [w, h, d] } => {
                write!(f, "a {w} x {h} x {d} box is too large to record")
            }
            RegionError::WidthExceedsPitch { width, pitch } => {
                write!(f, "width {width} exceeds pitch {pitch}")
            }
        }
    }
}

impl std::error::Error for RegionError {}

/// The packed size of `height` rows of `width` bytes `pitch` apart, if capture records
/// such a side.
pub fn rows_len(pitch: u64, width: u64, height: u64) -> Result<u64, RegionError> {
    if width > pitch && height > 1 {
        return Err(RegionError::WidthExceedsPitch { width, pitch });
    }
    width
        .checked_mul(height)
        .filter(|&t| t <= MAX_2D_BYTES)
        .ok_or(RegionError::RowsTooLarge { width, height })
}

/// The packed size of a 3D box on a side of this pitch, if capture records it.
pub fn box_len(pitch: u64, extent: [u64; 3]) -> Result<u64, RegionError> {
    let [w, h, d] = extent;
    let total = w
        .checked_mul(h)
        .and_then(|x| x.checked_mul(d))
        .filter(|&t| t <= MAX_2D_BYTES)
        .ok_or(RegionError::BoxTooLarge { extent })?;
    if w > pitch && (h > 1 || d > 1) {
        return Err(RegionError::WidthExceedsPitch { width: w, pitch });
    }
    Ok(total)
}

impl HostRegion {
    /// The pointer the program passed for this side.
    pub fn ptr(&self) -> u64 {
        match *self {
            HostRegion::Linear { ptr, .. } | HostRegion::Rows { ptr, .. } => ptr,
            HostRegion::Box { side, .. } => side.ptr,
        }
    }

    /// The region's bytes as capture records them (linear bytes borrowed, rows and boxes
    /// packed into a copy).
    ///
    /// # Safety
    /// The region must be host memory the runtime reads (a source, before the call) or
    /// has written (a destination, once the copy completed), with this geometry.
    pub unsafe fn gather<'a>(&self) -> Result<Cow<'a, [u8]>, RegionError> {
        Ok(match *self {
            // SAFETY: the caller's contract.
            HostRegion::Linear { ptr, len } => Cow::Borrowed(unsafe { host_bytes(ptr, len) }),
            HostRegion::Rows {
                ptr,
                pitch,
                width,
                height,
            } => {
                // SAFETY: the caller's contract.
                Cow::Owned(unsafe { packed_rows(ptr, pitch, width, height) }?)
            }
            HostRegion::Box { side, extent } => {
                // SAFETY: the caller's contract.
                Cow::Owned(unsafe { packed_box(&side, extent) }?)
            }
        })
    }
}

/// The copied rows of a pitched host buffer, packed end to end (width * height bytes).
///
/// # Safety
/// `ptr` must be the host side of a 2D copy the runtime reads or has written with this
/// geometry: `height` rows of `width` bytes, `pitch` apart.
unsafe fn packed_rows(
    ptr: u64,
    pitch: u64,
    width: u64,
    height: u64,
) -> Result<Vec<u8>, RegionError> {
    let total = rows_len(pitch, width, height)?;
    let mut out = Vec::with_capacity(total as usize);
    for row in 0..height {
        // SAFETY: the caller's contract: each row is `width` bytes at ptr + row * pitch.
        out.extend_from_slice(unsafe { host_bytes(ptr + row * pitch, width) });
    }
    Ok(out)
}

/// The copied box of one side of a 3D copy, packed row after row, slice after slice.
///
/// # Safety
/// `side` must be the host side of a 3D copy the runtime reads or has written.
unsafe fn packed_box(side: &memcpy3d::Side, extent: [u64; 3]) -> Result<Vec<u8>, RegionError> {
    let total = box_len(side.pitch, extent)?;
    let [w, h, d] = extent;
    let mut out = Vec::with_capacity(total as usize);
    for k in 0..d {
        for j in 0..h {
            // SAFETY: the caller's contract: each row of the box is `w` bytes here.
            out.extend_from_slice(unsafe { host_bytes(side.row(j, k), w) });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_capture_refuses_is_named_before_any_read() {
        assert_eq!(rows_len(10, 4, 3), Ok(12));
        assert_eq!(rows_len(2, 4, 1), Ok(4), "one row needs no pitch");
        assert_eq!(
            rows_len(2, 4, 3),
            Err(RegionError::WidthExceedsPitch { width: 4, pitch: 2 })
        );
        let e = rows_len(10, 4, u64::MAX).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("4 x {} bytes is too large to record", u64::MAX)
        );
        assert_eq!(box_len(8, [2, 2, 2]), Ok(8));
        assert_eq!(box_len(1, [2, 1, 1]), Ok(2));
        assert_eq!(
            box_len(1, [2, 2, 1]).unwrap_err().to_string(),
            "width 2 exceeds pitch 1"
        );
        assert_eq!(
            box_len(8, [1 << 30, 1 << 30, 2]).unwrap_err().to_string(),
            format!(
                "a {} x {} x 2 box is too large to record",
                1u64 << 30,
                1u64 << 30
            )
        );
    }

    #[test]
    fn pitched_rows_are_packed_without_their_padding() {
        // 3 rows of 4 bytes, 10 apart, padding 0xee.
        let mut buf = [0xeeu8; 30];
        for r in 0..3 {
            for c in 0..4 {
                buf[r * 10 + c] = (r * 4 + c) as u8;
            }
        }
        let rows = HostRegion::Rows {
            ptr: buf.as_ptr() as u64,
            pitch: 10,
            width: 4,
            height: 3,
        };
        // SAFETY: the geometry stays inside `buf`.
        let packed = unsafe { rows.gather() }.unwrap();
        assert_eq!(&packed[..], &(0..12).collect::<Vec<u8>>()[..]);
        let linear = HostRegion::Linear {
            ptr: buf.as_ptr() as u64,
            len: 4,
        };
        // SAFETY: 4 bytes inside `buf`.
        assert_eq!(&unsafe { linear.gather() }.unwrap()[..], &[0, 1, 2, 3]);
    }

    #[test]
    fn a_3d_box_is_packed_slice_by_slice_from_its_position() {
        // Volume: pitch 8 bytes, 4 rows a slice, 3 slices; box 2 x 2 x 2 at (1, 1, 1).
        let vol: Vec<u8> = (0..96).collect();
        let side = memcpy3d::Side {
            ptr: vol.as_ptr() as u64,
            pitch: 8,
            xsize: 8,
            ysize: 4,
            x: 1,
            y: 1,
            z: 1,
        };
        let region = HostRegion::Box {
            side,
            extent: [2, 2, 2],
        };
        // SAFETY: the box stays inside `vol`.
        let packed = unsafe { region.gather() }.unwrap();
        let at = |x: usize, y: usize, z: usize| (z * 32 + y * 8 + x) as u8;
        assert_eq!(
            &packed[..],
            &[
                at(1, 1, 1),
                at(2, 1, 1),
                at(1, 2, 1),
                at(2, 2, 1),
                at(1, 1, 2),
                at(2, 1, 2),
                at(1, 2, 2),
                at(2, 2, 2)
            ]
        );
    }
}
