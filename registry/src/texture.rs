//! Arrays, textures and surfaces (and the one struct of virtual memory management): the
//! descriptor structs their calls take by pointer, declared once as field lists (HRR seed 004's declarative specs). Capture records a
//! descriptor by value (its layout's size); replay rebuilds it around its own objects:
//! each [`Field`] names a word whose meaning is an array handle or a device address,
//! possibly only for some values of a tag (the resource type selects a union member).
//! Every other byte is a value passed as captured.

use super::Vendor;

/// What a word of a descriptor holds, which decides how replay rewrites it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// A `cudaArray_t` / `hipArray_t`: mapped to replay's array.
    Array,
    /// A `cudaMipmappedArray_t` / `hipMipmappedArray_t`: mapped to replay's.
    MipmappedArray,
    /// A device address: translated into replay's allocation.
    DevPtr,
}

/// One 8-byte word of a descriptor that replay rewrites.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub at: usize,
    pub meaning: Meaning,
    /// The word means this only when the 4-byte tag at `.0` is one of `.1`.
    pub when: Option<(usize, &'static [u32])>,
}

/// A descriptor passed by pointer: its size and the words that are not plain values.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub name: &'static str,
    pub size: usize,
    pub fields: &'static [Field],
}

/// `cudaChannelFormatDesc` / `hipChannelFormatDesc`: `{int x, y, z, w; kind f}`.
const CHANNEL_DESC: Layout = Layout {
    name: "channel_desc",
    size: 20,
    fields: &[],
};

/// The resource types (`cudaResourceType` / `hipResourceType`, the same numbers).
pub const RESOURCE_ARRAY: u32 = 0;
pub const RESOURCE_MIPMAPPED_ARRAY: u32 = 1;
pub const RESOURCE_LINEAR: u32 = 2;
pub const RESOURCE_PITCH_2D: u32 = 3;

/// The union of a resource descriptor starts at 8 in both vendors: an array, a
/// mipmapped array, or a device pointer (linear, pitch 2D), by `resType` at 0.
const RESOURCE_FIELDS: &[Field] = &[
    Field {
        name: "res.array.array",
        at: 8,
        meaning: Meaning::Array,
        when: Some((0, &[RESOURCE_ARRAY])),
    },
    Field {
        name: "res.mipmap.mipmap",
        at: 8,
        meaning: Meaning::MipmappedArray,
        when: Some((0, &[RESOURCE_MIPMAPPED_ARRAY])),
    },
    Field {
        name: "res.linear.devPtr",
        at: 8,
        meaning: Meaning::DevPtr,
        when: Some((0, &[RESOURCE_LINEAR, RESOURCE_PITCH_2D])),
    },
];

/// CUDA 13's `cudaResourceDesc`: resType, a 128-byte union (`reserved[32]`), `flags`.
const CUDA_RESOURCE_DESC: Layout = Layout {
    name: "resource_desc",
    size: 144,
    fields: RESOURCE_FIELDS,
};
/// HIP 5.2's `hipResourceDesc`: resType, a 56-byte union.
const HIP_RESOURCE_DESC: Layout = Layout {
    name: "resource_desc",
    size: 64,
    fields: RESOURCE_FIELDS,
};
/// `cudaTextureDesc` (CUDA 13: up to `seamlessCubemap`): values only.
const CUDA_TEXTURE_DESC: Layout = Layout {
    name: "texture_desc",
    size: 72,
    fields: &[],
};
/// `hipTextureDesc` (HIP 5.2: up to `maxMipmapLevelClamp`): values only.
const HIP_TEXTURE_DESC: Layout = Layout {
    name: "texture_desc",
    size: 64,
    fields: &[],
};
/// `cudaResourceViewDesc` (CUDA 13, with `reserved[16]`): values only.
const CUDA_VIEW_DESC: Layout = Layout {
    name: "resource_view_desc",
    size: 112,
    fields: &[],
};
/// `hipResourceViewDesc` (HIP 5.2): values only.
const HIP_VIEW_DESC: Layout = Layout {
    name: "resource_view_desc",
    size: 48,
    fields: &[],
};

/// The CUDA driver's descriptors (`cuda.h`, CUDA 13), taken by the driver's array,
/// texture and surface calls. `CUDA_ARRAY_DESCRIPTOR`: Width, Height, Format,
/// NumChannels.
const DRV_ARRAY_DESC: Layout = Layout {
    name: "drv_array_desc",
    size: 24,
    fields: &[],
};
/// `CUDA_ARRAY3D_DESCRIPTOR`: Width, Height, Depth, Format, NumChannels, Flags.
const DRV_ARRAY3D_DESC: Layout = Layout {
    name: "drv_array3d_desc",
    size: 40,
    fields: &[],
};
/// `CUDA_RESOURCE_DESC`: resType (`CUresourcetype`, the runtime's numbers), a 128-byte
/// union at 8 (hArray, hMipmappedArray, or a devPtr first), flags.
const DRV_RESOURCE_DESC: Layout = Layout {
    name: "drv_resource_desc",
    size: 144,
    fields: RESOURCE_FIELDS,
};
/// `CUDA_TEXTURE_DESC`: address modes, filter mode, flags, anisotropy, mipmap filter,
/// bias and clamps, border colour, `reserved[12]`: values only.
const DRV_TEXTURE_DESC: Layout = Layout {
    name: "drv_texture_desc",
    size: 104,
    fields: &[],
};
/// `CUDA_RESOURCE_VIEW_DESC`: format, width, height, depth, mipmap levels and layers,
/// `reserved[16]`: values only.
const DRV_VIEW_DESC: Layout = Layout {
    name: "drv_resource_view_desc",
    size: 112,
    fields: &[],
};

/// `CUmemAllocationProp` (CUDA 13: type, requested handle types, location, then
/// `win32HandleMetaData` and the allocation flags) and `hipMemAllocationProp` (HIP 5.2:
/// compression type, location, handle type, type, usage, then `win32HandleMetaData`):
/// 32 bytes either way, values only. The Windows metadata pointer is read only for a
/// Windows handle type, which Linux drivers refuse.
const MEM_ALLOC_PROP: Layout = Layout {
    name: "mem_alloc_prop",
    size: 32,
    fields: &[],
};

/// Every layout name a table row may give `ParamKind::ByLayout`.
pub const LAYOUT_NAMES: &[&str] = &[
    "channel_desc",
    "resource_desc",
    "texture_desc",
    "resource_view_desc",
    "drv_array_desc",
    "drv_array3d_desc",
    "drv_resource_desc",
    "drv_texture_desc",
    "drv_resource_view_desc",
    "mem_alloc_prop",
];

/// The layout called `name` as `vendor`'s headers declare it (the `drv_*` layouts are
/// CUDA's only).
pub fn layout(name: &str, vendor: Vendor) -> Option<&'static Layout> {
    let all: &[&'static Layout] = match vendor {
        Vendor::Cuda => &[
            &CHANNEL_DESC,
            &CUDA_RESOURCE_DESC,
            &CUDA_TEXTURE_DESC,
            &CUDA_VIEW_DESC,
            &DRV_ARRAY_DESC,
            &DRV_ARRAY3D_DESC,
            &DRV_RESOURCE_DESC,
            &DRV_TEXTURE_DESC,
            &DRV_VIEW_DESC,
            &MEM_ALLOC_PROP,
        ],
        Vendor::Hip => &[
            &CHANNEL_DESC,
            &HIP_RESOURCE_DESC,
            &HIP_TEXTURE_DESC,
            &HIP_VIEW_DESC,
            &MEM_ALLOC_PROP,
        ],
    };
    all.iter().copied().find(|l| l.name == name)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap_or([0; 4])))
}

/// The words of `bytes` (a descriptor of `layout`) that hold handles or addresses, with
/// their meaning and captured value; None when `bytes` is not the layout's size.
pub fn live_words(layout: &Layout, bytes: &[u8]) -> Option<Vec<(usize, Meaning, u64)>> {
    if bytes.len() != layout.size {
        return None;
    }
    Some(
        layout
            .fields
            .iter()
            .filter(|f| match f.when {
                None => true,
                Some((tag, values)) => u32_at(bytes, tag).is_some_and(|t| values.contains(&t)),
            })
            .filter_map(|f| {
                let w = bytes.get(f.at..f.at + 8)?;
                Some((
                    f.at,
                    f.meaning,
                    u64::from_le_bytes(w.try_into().unwrap_or([0; 8])),
                ))
            })
            .collect(),
    )
}

/// A descriptor rebuilt for replay: each live word rewritten by `map` (an error from
/// `map` names the word it could not map).
pub fn rebuild<E>(
    layout: &Layout,
    captured: &[u8],
    mut map: impl FnMut(Meaning, u64) -> Result<u64, E>,
) -> Option<Result<Vec<u8>, E>> {
    let words = live_words(layout, captured)?;
    let mut out = captured.to_vec();
    for (at, meaning, v) in words {
        match map(meaning, v) {
            Ok(r) => out[at..at + 8].copy_from_slice(&r.to_le_bytes()),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok(out))
}

/// The bytes of one element of an array made from `desc`, a descriptor of layout
/// `layout`: a channel format descriptor, or the driver's array descriptors (format and
/// channel count at 16 and 20 in `CUDA_ARRAY_DESCRIPTOR`, 24 and 28 in the 3D one). None
/// for another layout, a wrong size, or a format with no whole bytes per channel (the
/// driver's packed, video and block-compressed formats).
pub fn array_element_bytes(layout: &str, desc: &[u8]) -> Option<u64> {
    let (format_at, size) = match layout {
        "channel_desc" => return element_bytes(desc),
        "drv_array_desc" => (16, DRV_ARRAY_DESC.size),
        "drv_array3d_desc" => (24, DRV_ARRAY3D_DESC.size),
        _ => return None,
    };
    if desc.len() != size {
        return None;
    }
    let channel = match u32_at(desc, format_at)? {
        0x01 | 0x08 => 1,        // CU_AD_FORMAT_UNSIGNED_INT8, SIGNED_INT8
        0x02 | 0x09 | 0x10 => 2, // UNSIGNED_INT16, SIGNED_INT16, HALF
        0x03 | 0x0a | 0x20 => 4, // UNSIGNED_INT32, SIGNED_INT32, FLOAT
        _ => return None,
    };
    let channels = u32_at(desc, format_at + 4)? as u64;
    (1..=4).contains(&channels).then_some(channel * channels)
}

/// The bytes of one element of a channel format descriptor (the sum of its channels'
/// bits, in bytes); None for a descriptor of the wrong size or with no whole byte.
pub fn element_bytes(channel_desc: &[u8]) -> Option<u64> {
    if channel_desc.len() != CHANNEL_DESC.size {
        return None;
    }
    let bits: u64 = (0..4)
        .map(|i| u32_at(channel_desc, i * 4).unwrap_or(0) as u64)
        .sum();
    (bits > 0 && bits.is_multiple_of(8)).then_some(bits / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(vendor: Vendor, res_type: u32, word: u64) -> Vec<u8> {
        let l = layout("resource_desc", vendor).unwrap();
        let mut b = vec![0u8; l.size];
        b[..4].copy_from_slice(&res_type.to_le_bytes());
        b[8..16].copy_from_slice(&word.to_le_bytes());
        b[16] = 32; // a channel's bits (linear): a value
        b
    }

    #[test]
    fn the_resource_type_selects_what_the_union_word_means() {
        for vendor in [Vendor::Cuda, Vendor::Hip] {
            let l = layout("resource_desc", vendor).unwrap();
            let arr = resource(vendor, RESOURCE_ARRAY, 0xa1);
            assert_eq!(live_words(l, &arr), Some(vec![(8, Meaning::Array, 0xa1)]));
            let mip = resource(vendor, RESOURCE_MIPMAPPED_ARRAY, 0xb2);
            assert_eq!(live_words(l, &mip).unwrap()[0].1, Meaning::MipmappedArray);
            for t in [RESOURCE_LINEAR, RESOURCE_PITCH_2D] {
                let lin = resource(vendor, t, 0x7000);
                assert_eq!(
                    live_words(l, &lin),
                    Some(vec![(8, Meaning::DevPtr, 0x7000)])
                );
            }
            assert_eq!(live_words(l, &resource(vendor, 9, 1)), Some(vec![]));
            assert_eq!(live_words(l, &[0u8; 3]), None);
        }
    }

    #[test]
    fn rebuilding_rewrites_only_the_live_word() {
        let l = layout("resource_desc", Vendor::Cuda).unwrap();
        let lin = resource(Vendor::Cuda, RESOURCE_PITCH_2D, 0x7000);
        let out = rebuild(l, &lin, |m, v| {
            assert_eq!(m, Meaning::DevPtr);
            Ok::<u64, ()>(v + 0x100)
        })
        .unwrap()
        .unwrap();
        assert_eq!(u64::from_le_bytes(out[8..16].try_into().unwrap()), 0x7100);
        assert_eq!((out[16], out.len()), (32, 144));
        let failed = rebuild(l, &lin, |_, _| Err::<u64, &str>("unmapped"));
        assert_eq!(failed, Some(Err("unmapped")));
    }

    #[test]
    fn sizes_are_the_headers_and_elements_sum_their_channels() {
        let size = |n, v| layout(n, v).map(|l| l.size);
        assert_eq!(size("texture_desc", Vendor::Cuda), Some(72));
        assert_eq!(size("texture_desc", Vendor::Hip), Some(64));
        assert_eq!(size("resource_view_desc", Vendor::Cuda), Some(112));
        assert_eq!(size("resource_view_desc", Vendor::Hip), Some(48));
        assert_eq!(size("nothing", Vendor::Hip), None);
        let mut float4 = [0u8; 20];
        for i in 0..4 {
            float4[i * 4] = 32;
        }
        assert_eq!(element_bytes(&float4), Some(16));
        assert_eq!(element_bytes(&[0u8; 20]), None);
        for n in LAYOUT_NAMES {
            let hip = layout(n, Vendor::Hip).is_some();
            assert!(layout(n, Vendor::Cuda).is_some() && hip != n.starts_with("drv_"));
        }
        // The driver's: CUDA_TEXTURE_DESC with its reserved words, the resource
        // descriptor's union where the runtime's is.
        assert_eq!(size("drv_texture_desc", Vendor::Cuda), Some(104));
        let l = layout("drv_resource_desc", Vendor::Cuda).unwrap();
        let arr = resource(Vendor::Cuda, RESOURCE_ARRAY, 0xa1);
        assert_eq!(live_words(l, &arr), Some(vec![(8, Meaning::Array, 0xa1)]));
    }

    #[test]
    fn a_driver_array_element_is_its_format_times_its_channels() {
        // CUDA_ARRAY3D_DESCRIPTOR: 64 x 32 x 1, CU_AD_FORMAT_FLOAT, 4 channels.
        let mut d3 = [0u8; 40];
        d3[..8].copy_from_slice(&64u64.to_le_bytes());
        d3[24..28].copy_from_slice(&0x20u32.to_le_bytes());
        d3[28..32].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(array_element_bytes("drv_array3d_desc", &d3), Some(16));
        // CUDA_ARRAY_DESCRIPTOR: CU_AD_FORMAT_HALF, 2 channels.
        let mut d2 = [0u8; 24];
        d2[16..20].copy_from_slice(&0x10u32.to_le_bytes());
        d2[20..24].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(array_element_bytes("drv_array_desc", &d2), Some(4));
        // A block-compressed format, a wrong channel count, a wrong size: unknown.
        d2[16..20].copy_from_slice(&0x91u32.to_le_bytes());
        assert_eq!(array_element_bytes("drv_array_desc", &d2), None);
        d3[28..32].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(array_element_bytes("drv_array3d_desc", &d3), None);
        assert_eq!(array_element_bytes("drv_array3d_desc", &d2), None);
        assert_eq!(array_element_bytes("texture_desc", &d3), None);
    }

    /// `cudaExtent` / `hipExtent`: three `size_t`.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Extent {
        w: usize,
        h: usize,
        d: usize,
    }

    extern "C" fn by_value(array: u64, desc: u64, e: Extent, flags: u32) -> u64 {
        array
            ^ (desc << 1)
            ^ ((e.w as u64) << 2)
            ^ ((e.h as u64) << 3)
            ^ ((e.d as u64) << 4)
            ^ ((flags as u64) << 5)
    }

    extern "C" fn spread(
        array: u64,
        desc: u64,
        flags: u64,
        _rcx: u64,
        _r8: u64,
        _r9: u64,
        w: usize,
        h: usize,
        d: usize,
    ) -> u64 {
        by_value(array, desc, Extent { w, h, d }, flags as u32)
    }

    /// The table's rows for `cudaMalloc3DArray` and `cudaMallocMipmappedArray` spell a
    /// by-value `cudaExtent` as three unused registers and its fields: on x86-64 SysV both
    /// signatures are the same call, in each direction.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn a_by_value_extent_is_its_fields_after_the_spilled_registers() {
        type Spread = extern "C" fn(u64, u64, u64, u64, u64, u64, usize, usize, usize) -> u64;
        type ByValue = extern "C" fn(u64, u64, Extent, u32) -> u64;
        let want = by_value(1, 2, Extent { w: 3, h: 4, d: 5 }, 6);
        // SAFETY: an ABI test: both are extern "C" functions of this file, and on x86-64
        // SysV the 24-byte struct is passed in memory, where the spread signature's 7th to
        // 9th integer arguments go.
        let as_spread: Spread = unsafe { std::mem::transmute(by_value as ByValue) };
        assert_eq!(as_spread(1, 2, 6, 0xdead, 0xbeef, 0xf00d, 3, 4, 5), want);
        // SAFETY: as above, in the other direction (a program's call into the shim).
        let as_by_value: ByValue = unsafe { std::mem::transmute(spread as Spread) };
        assert_eq!(as_by_value(1, 2, Extent { w: 3, h: 4, d: 5 }, 6), want);
    }
}
