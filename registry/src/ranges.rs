//! The device ranges rows touch through a plain address parameter (`ParamKind::DevPtr`),
//! as data beside the API table: which parameter, and how many bytes from it the call
//! writes. Copies name their lengths in their parameter kinds already; memsets pass a
//! count (or rows) as plain values, listed here. Replay checks every such range against
//! its own allocation before the call (issue 20: a memset of 2^40 bytes on a 16 KiB
//! allocation is refused, never handed to the runtime).

use super::id;

/// How many bytes a range spans, from the row's captured values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// `count` elements of `unit` bytes.
    Count { count: &'static str, unit: u64 },
    /// `height` rows of `width` elements of `unit` bytes, `pitch` bytes apart: the last
    /// row ends `pitch * (height - 1) + width * unit` bytes from the start.
    Rows {
        pitch: &'static str,
        width: &'static str,
        height: &'static str,
        unit: u64,
    },
}

impl Extent {
    /// The bytes spanned, given each named value (None: a name the row lacks).
    /// Saturating: a hostile count cannot wrap into a small range.
    pub fn bytes(&self, value: impl Fn(&str) -> Option<u64>) -> Option<u64> {
        Some(match *self {
            Extent::Count { count, unit } => value(count)?.saturating_mul(unit),
            Extent::Rows {
                pitch,
                width,
                height,
                unit,
            } => {
                let (p, w, h) = (value(pitch)?, value(width)?, value(height)?);
                let row = w.saturating_mul(unit);
                if h == 0 || row == 0 {
                    0
                } else {
                    p.saturating_mul(h - 1).saturating_add(row)
                }
            }
        })
    }
}

const fn count(count: &'static str, unit: u64) -> Extent {
    Extent::Count { count, unit }
}

const fn rows(unit: u64) -> Extent {
    Extent::Rows {
        pitch: "pitch",
        width: "width",
        height: "height",
        unit,
    }
}

/// (row id, address parameter, extent).
pub const DEVICE_RANGES: &[(u16, &str, Extent)] = &[
    (id::Memset, "ptr", count("count", 1)),
    (id::MemsetAsync, "ptr", count("count", 1)),
    (id::MemsetSpt, "ptr", count("count", 1)),
    (id::MemsetAsyncSpt, "ptr", count("count", 1)),
    (id::Memset2D, "ptr", rows(1)),
    (id::Memset2DAsync, "ptr", rows(1)),
    (id::MemsetD8, "dst", count("count", 1)),
    (id::MemsetD16, "dst", count("count", 2)),
    (id::MemsetD32, "dst", count("count", 4)),
    (id::MemsetD8Async, "dst", count("count", 1)),
    (id::MemsetD16Async, "dst", count("count", 2)),
    (id::MemsetD32Async, "dst", count("count", 4)),
    (id::MemsetD2D8, "dst", rows(1)),
    (id::MemsetD2D16, "dst", rows(2)),
    (id::MemsetD2D32, "dst", rows(4)),
    (id::MemsetD2D8Async, "dst", rows(1)),
    (id::MemsetD2D16Async, "dst", rows(2)),
    (id::MemsetD2D32Async, "dst", rows(4)),
    (id::MemcpyPeer, "dst", count("count", 1)),
    (id::MemcpyPeer, "src", count("count", 1)),
    (id::MemcpyPeerAsync, "dst", count("count", 1)),
    (id::MemcpyPeerAsync, "src", count("count", 1)),
];

/// The range row `id` touches through parameter `param`, if listed.
pub fn device_range(id: u16, param: &str) -> Option<Extent> {
    DEVICE_RANGES
        .iter()
        .find(|(i, p, _)| *i == id && *p == param)
        .map(|(_, _, e)| *e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{desc, ParamKind};

    /// Every listed row exists, its parameter is a device address, and every value its
    /// extent names is one of the row's parameters.
    #[test]
    fn every_listed_range_names_a_device_address_and_real_parameters() {
        for &(row, param, extent) in DEVICE_RANGES {
            let d = desc(row).unwrap_or_else(|| panic!("row {row}"));
            let at = d
                .param_index(param)
                .unwrap_or_else(|| panic!("{} {param}", d.name));
            assert_eq!(d.params[at].kind, ParamKind::DevPtr, "{} {param}", d.name);
            let names: Vec<&str> = match extent {
                Extent::Count { count, .. } => vec![count],
                Extent::Rows {
                    pitch,
                    width,
                    height,
                    ..
                } => vec![pitch, width, height],
            };
            for n in names {
                assert!(d.param_index(n).is_some(), "{} has no {n}", d.name);
            }
        }
    }

    #[test]
    fn extents_saturate_and_rows_end_at_the_last_row() {
        let v = |pairs: &'static [(&'static str, u64)]| {
            move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
        };
        assert_eq!(count("count", 4).bytes(v(&[("count", 10)])), Some(40));
        assert_eq!(
            count("count", 4).bytes(v(&[("count", u64::MAX)])),
            Some(u64::MAX)
        );
        let r = rows(2);
        let geo = v(&[("pitch", 512), ("width", 10), ("height", 3)]);
        assert_eq!(r.bytes(geo), Some(512 * 2 + 20));
        assert_eq!(
            r.bytes(v(&[("pitch", 512), ("width", 10), ("height", 0)])),
            Some(0)
        );
        assert_eq!(count("count", 1).bytes(v(&[])), None);
    }
}
