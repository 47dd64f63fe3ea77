//! HIP across runtime generations: the other names a table row is exported under (ROCm
//! 6.0's `R0600` entry points, the per-thread default stream `_spt` forms), which HIP
//! runtime's surface list exports each name, the runtime version `hipRuntimeGetVersion`
//! reports, and the struct layouts that changed between HIP 5.2 and ROCm 6/7.
//!
//! A variant is a row of its own in the table (ids 300-349), with the base row's
//! parameters: the record says which symbol the program called, and replay calls that
//! name when the loaded runtime exports it, the base name otherwise. Code that acts on a
//! row's meaning (a synchronisation, the end of a stream capture) asks [`base_row`].

use super::surface::SURFACE_LISTS;
use super::{ApiDesc, ParamKind, Vendor, API_TABLE};

/// How a variant symbol differs from its base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// ROCm 6.0's renamed ABI entry point (`hipGetDevicePropertiesR0600`,
    /// `hipChooseDeviceR0600`): the headers bind the old name to it, and it takes the
    /// larger `hipDeviceProp_tR0600`.
    R0600,
    /// The per-thread default stream form (`hipMemcpyAsync_spt`), which programs built with
    /// `-fgpu-default-stream=per-thread` call: a null stream is the calling thread's
    /// default stream.
    PerThread,
}

/// `hipStreamPerThread`: the per-thread default stream as a handle. Capture records a
/// `_spt` call's null stream as this value, so replay runs it on the same kind of stream
/// whichever name it calls.
pub const STREAM_PER_THREAD: u64 = 2;

/// The form and base symbol of a HIP variant symbol (by its suffix), or None.
pub fn variant(symbol: &str) -> Option<(Form, &str)> {
    if !symbol.starts_with("hip") {
        return None;
    }
    if let Some(base) = symbol.strip_suffix("_spt") {
        return Some((Form::PerThread, base));
    }
    symbol.strip_suffix("R0600").map(|b| (Form::R0600, b))
}

/// The row a HIP variant row stands for (the row whose HIP symbol is the variant's base);
/// any other row is its own base.
pub fn base_row(id: u16) -> u16 {
    let Some(d) = super::desc(id) else { return id };
    let Some((_, base)) = d.hip.and_then(variant) else {
        return id;
    };
    API_TABLE
        .iter()
        .find(|b| b.hip == Some(base))
        .map_or(id, |b| b.id)
}

/// Whether row `desc` is a per-thread default stream form.
pub fn is_per_thread(desc: &ApiDesc) -> bool {
    matches!(desc.hip.and_then(variant), Some((Form::PerThread, _)))
}

/// The arguments capture records for a call of `desc`: a per-thread form's null stream
/// becomes [`STREAM_PER_THREAD`] (what the runtime runs it on); anything else unchanged.
pub fn recorded_args(desc: &ApiDesc, args: &mut [u64]) {
    if !is_per_thread(desc) {
        return;
    }
    for (p, a) in desc.params.iter().zip(args.iter_mut()) {
        if p.kind == ParamKind::Stream && *a == 0 {
            *a = STREAM_PER_THREAD;
        }
    }
}

/// The name replay calls for `symbol` when the loaded runtime lacks it: the base name
/// (a per-thread form's stream is recorded as [`STREAM_PER_THREAD`], which the base
/// function honours; an R0600 call's struct is an out slot larger than any layout).
pub fn fallback(symbol: &str) -> Option<&str> {
    variant(symbol).map(|(_, b)| b)
}

/// A HIP runtime generation with a surface list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HipSurface {
    /// As docs/api.md names it.
    pub label: &'static str,
    /// Its list under `registry/src/surface/`.
    pub file: &'static str,
}

/// The HIP runtimes we have an export list of, oldest first.
pub const HIP_SURFACES: &[HipSurface] = &[
    HipSurface {
        label: "HIP 5.2 (Debian's libamdhip64.so.5)",
        file: "libamdhip64-5.2.txt",
    },
    HipSurface {
        label: "ROCm 6.x/7.x (rocm-bindings-hip 10.0.0.0.1.2)",
        file: "libamdhip64-7.txt",
    },
];

/// The HIP runtimes whose list exports `symbol` (a row's per-version availability).
pub fn exported_by(symbol: &str) -> Vec<&'static HipSurface> {
    HIP_SURFACES
        .iter()
        .filter(|h| {
            SURFACE_LISTS.iter().any(|l| {
                l.vendor == Vendor::Hip && l.file == h.file && l.names().any(|n| n == symbol)
            })
        })
        .collect()
}

/// A HIP runtime version as `hipRuntimeGetVersion` reports it
/// (`major * 10_000_000 + minor * 100_000 + patch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HipVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl HipVersion {
    pub fn from_runtime(v: i64) -> Option<HipVersion> {
        let v = u32::try_from(v).ok().filter(|&v| v >= 10_000_000)?;
        Some(HipVersion {
            major: v / 10_000_000,
            minor: v / 100_000 % 100,
            patch: v % 100_000,
        })
    }
    /// From a manifest's `runtime_version` (the reported integer as text).
    pub fn parse(s: &str) -> Option<HipVersion> {
        HipVersion::from_runtime(s.trim().parse().ok()?)
    }
}

impl std::fmt::Display for HipVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Struct layouts that differ between HIP generations (sizes from HIP 5.2's headers and
/// from the layouts `rocm-bindings-hip` declares; x86_64).
pub mod layout {
    use super::HipVersion;

    /// `hipDeviceProp_t` of HIP 5.x (ROCm 6 keeps it as `hipDeviceProp_tR0000` behind the
    /// unsuffixed `hipGetDeviceProperties`).
    pub const DEVICE_PROP_R0000: usize = 792;
    /// `hipDeviceProp_tR0600`, what `hipGetDevicePropertiesR0600` fills.
    pub const DEVICE_PROP_R0600: usize = 1472;
    /// Offsets in `hipDeviceProp_tR0600` the stand-in and the tests use.
    pub const R0600_MAJOR: usize = 360;
    pub const R0600_MULTIPROCESSORS: usize = 388;
    pub const R0600_GCN_ARCH_NAME: usize = 1160;
    /// `hipPointerAttribute_t`: 32 bytes in both, but its first field's enum was
    /// renumbered in ROCm 6.0 ([`memory_type`]).
    pub const POINTER_ATTRIBUTE: usize = 32;
    /// The first runtime with the R0600 names and numbering.
    pub const R0600_SINCE: HipVersion = HipVersion {
        major: 6,
        minor: 0,
        patch: 0,
    };

    /// The size of the device properties struct `symbol` fills.
    pub fn device_prop_size(symbol: &str) -> Option<usize> {
        match symbol {
            "hipGetDeviceProperties" => Some(DEVICE_PROP_R0000),
            "hipGetDevicePropertiesR0600" => Some(DEVICE_PROP_R0600),
            _ => None,
        }
    }

    /// The struct a program built against runtime `v`'s headers passes to what its
    /// `hipGetDeviceProperties` binds to.
    pub fn device_prop_size_for(v: HipVersion) -> usize {
        if v >= R0600_SINCE {
            DEVICE_PROP_R0600
        } else {
            DEVICE_PROP_R0000
        }
    }

    /// Where memory lives, from `hipPointerAttribute_t`'s first field.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum MemoryType {
        Unregistered,
        Host,
        Device,
        Managed,
        Array,
        Unified,
    }

    /// Decodes `hipPointerAttribute_t`'s memory type as runtime `v` numbers it: HIP 5.x
    /// counts Host, Device, Array, Unified from 0; ROCm 6.0 put Unregistered first and
    /// Managed after Device.
    pub fn memory_type(v: HipVersion, raw: u32) -> Option<MemoryType> {
        use MemoryType::*;
        let order: &[MemoryType] = if v >= R0600_SINCE {
            &[Unregistered, Host, Device, Managed, Array, Unified]
        } else {
            &[Host, Device, Array, Unified]
        };
        order.get(raw as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::layout::*;
    use super::*;
    use crate::id;

    #[test]
    fn variant_rows_stand_for_their_base() {
        assert_eq!(
            base_row(id::GetDevicePropertiesR0600),
            id::GetDeviceProperties
        );
        assert_eq!(base_row(id::MemcpyAsyncSpt), id::MemcpyAsync);
        assert_eq!(base_row(id::StreamSynchronizeSpt), id::StreamSynchronize);
        assert_eq!(base_row(id::StreamEndCaptureSpt), id::StreamEndCapture);
        assert_eq!(base_row(id::Malloc), id::Malloc);
        // Every row whose HIP symbol is a variant has a base row of the same arity.
        for d in API_TABLE {
            if let Some((_, base)) = d.hip.and_then(variant) {
                let b = API_TABLE.iter().find(|b| b.hip == Some(base));
                let b = b.unwrap_or_else(|| panic!("{}: no row for {base}", d.name));
                assert_eq!(b.params.len(), d.params.len(), "{}", d.name);
                assert!(d.id >= 300 && d.id < 350, "{}: outside rocm's ids", d.name);
            }
        }
    }

    #[test]
    fn a_per_thread_null_stream_is_recorded_as_the_per_thread_stream() {
        let d = crate::desc(id::MemcpyAsyncSpt).unwrap();
        let mut a = [0x10, 0x20, 64, 1, 0];
        recorded_args(d, &mut a);
        assert_eq!(a, [0x10, 0x20, 64, 1, STREAM_PER_THREAD]);
        let mut a = [0x10, 0x20, 64, 1, 0x5000];
        recorded_args(d, &mut a);
        assert_eq!(a[4], 0x5000, "an explicit stream stays");
        let base = crate::desc(id::MemcpyAsync).unwrap();
        let mut a = [0x10, 0x20, 64, 1, 0];
        recorded_args(base, &mut a);
        assert_eq!(a[4], 0, "the base form's null stream is the null stream");
    }

    #[test]
    fn each_row_says_which_runtimes_export_it() {
        let labels = |s| exported_by(s).iter().map(|h| h.file).collect::<Vec<_>>();
        assert_eq!(labels("hipGetDevicePropertiesR0600"), ["libamdhip64-7.txt"]);
        assert_eq!(
            labels("hipMemcpyAsync_spt"),
            ["libamdhip64-5.2.txt", "libamdhip64-7.txt"]
        );
        assert_eq!(labels("hipMemsetAsync_spt"), ["libamdhip64-7.txt"]);
        assert_eq!(labels("hipGetDeviceProperties"), ["libamdhip64-5.2.txt"]);
        assert_eq!(fallback("hipEventRecord_spt"), Some("hipEventRecord"));
        assert_eq!(fallback("hipMalloc"), None);
    }

    #[test]
    fn versions_and_layouts() {
        let v = HipVersion::parse("50221153").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (5, 2, 21153));
        assert_eq!(v.to_string(), "5.2.21153");
        let v7 = HipVersion::from_runtime(70_100_000).unwrap();
        assert_eq!(device_prop_size_for(v), DEVICE_PROP_R0000);
        assert_eq!(device_prop_size_for(v7), DEVICE_PROP_R0600);
        assert_eq!(
            HipVersion::parse("12080"),
            None,
            "a CUDA version is no HIP version"
        );
        assert_eq!(memory_type(v, 1), Some(MemoryType::Device));
        assert_eq!(memory_type(v7, 1), Some(MemoryType::Host));
        assert_eq!(memory_type(v7, 2), Some(MemoryType::Device));
        assert_eq!(memory_type(v, 4), None);
        assert_eq!(device_prop_size("hipGetDevicePropertiesR0600"), Some(1472));
        const _: () = assert!(R0600_GCN_ARCH_NAME + 256 <= DEVICE_PROP_R0600);
        const _: () = assert!(R0600_GCN_ARCH_NAME > DEVICE_PROP_R0000);
    }
}
