//! The known surface: every exported function of the libraries capture interposes, as
//! data (`surface/*.txt`, one name a line, `#` comments saying where each list came
//! from), and the part of it capture does not model: the symbols capture's build gives a
//! counting pass-through (`unmodelled_surface`), computed from [`exported_symbols`] so it
//! can never drift from the table.
//!
//! Adding a library (or a newer version of one) is one file and one [`SURFACE_LISTS`]
//! row. A name listed by several files belongs to the first row that lists it.

use std::collections::BTreeSet;

use super::{exported_symbols, Vendor};

/// Where capture finds the real function of a surface symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The next object after capture (`dlsym(RTLD_NEXT)`): the program's runtime.
    Next,
    /// As `Next`, then in the already-loaded CUDA driver (libcuda.so.1), which the CUDA
    /// runtime may have opened privately.
    CudaDriver,
}

/// One list of exported functions.
#[derive(Clone, Copy, Debug)]
pub struct SurfaceList {
    /// The library, as the manifest names it.
    pub library: &'static str,
    pub vendor: Vendor,
    pub lookup: Lookup,
    /// The list's file under `registry/src/surface/`.
    pub file: &'static str,
    text: &'static str,
}

impl SurfaceList {
    /// The names the list holds, in file order (comments and blank lines skipped).
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
    }
}

macro_rules! surface_list {
    ($library:literal, $vendor:ident, $lookup:ident, $file:literal) => {
        SurfaceList {
            library: $library,
            vendor: Vendor::$vendor,
            lookup: Lookup::$lookup,
            file: $file,
            text: include_str!(concat!("surface/", $file)),
        }
    };
}

/// Every list, in precedence order.
pub static SURFACE_LISTS: &[SurfaceList] = &[
    surface_list!("libcudart.so.13", Cuda, Next, "libcudart-13.0.txt"),
    surface_list!("libcuda.so.1", Cuda, CudaDriver, "libcuda-580.txt"),
    // What CUDA 13.5 adds (archive/tests/cuda_surface.rs): names 13.0 and driver 580 lack.
    surface_list!("libcudart.so.13", Cuda, Next, "libcudart-13.5.txt"),
    surface_list!("libcuda.so.1", Cuda, CudaDriver, "libcuda-13.5.txt"),
    surface_list!("libamdhip64.so", Hip, Next, "libamdhip64-5.2.txt"),
    // What ROCm 6.x/7.x add (api::hip_abi): names HIP 5.2 lacks, from the current headers.
    surface_list!("libamdhip64.so", Hip, Next, "libamdhip64-7.txt"),
];

/// A surface symbol and the list it came from.
#[derive(Clone, Copy, Debug)]
pub struct SurfaceSymbol {
    pub name: &'static str,
    pub list: &'static SurfaceList,
}

/// Every surface symbol once, in list order then file order.
pub fn surface_symbols() -> Vec<SurfaceSymbol> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for list in SURFACE_LISTS {
        for name in list.names() {
            if seen.insert(name) {
                out.push(SurfaceSymbol { name, list });
            }
        }
    }
    out
}

/// The surface symbols capture has no shim for: each gets a counting pass-through.
pub fn unmodelled_surface() -> Vec<SurfaceSymbol> {
    let modelled: BTreeSet<&str> = exported_symbols().collect();
    surface_symbols()
        .into_iter()
        .filter(|s| !modelled.contains(s.name))
        .collect()
}

/// The surface list naming `symbol`, if any.
pub fn surface_of(symbol: &str) -> Option<&'static SurfaceList> {
    SURFACE_LISTS
        .iter()
        .find(|l| l.names().any(|n| n == symbol))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_list_holds_c_identifiers_once_each() {
        for (i, list) in SURFACE_LISTS.iter().enumerate() {
            let names: Vec<&str> = list.names().collect();
            // A library's first list is its whole export table; later ones add a newer
            // version's names.
            let whole = SURFACE_LISTS[..i].iter().all(|l| l.library != list.library);
            let least = if whole { 300 } else { 20 };
            assert!(names.len() > least, "{}: {} names", list.file, names.len());
            let unique: BTreeSet<&str> = names.iter().copied().collect();
            assert_eq!(unique.len(), names.len(), "{} repeats a name", list.file);
            for n in names {
                let ok = n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                assert!(ok, "{}: {n:?} is not a symbol name", list.file);
            }
            assert!(list.text.starts_with('#'), "{}: no header", list.file);
        }
    }

    #[test]
    fn the_unmodelled_set_is_the_surface_less_every_export() {
        let unmodelled = unmodelled_surface();
        let names: BTreeSet<&str> = unmodelled.iter().map(|s| s.name).collect();
        assert!(names.contains("cudaGraphicsMapResources"));
        assert!(names.contains("cuGetExportTable"));
        assert!(
            !names.contains("cuGetProcAddress"),
            "hand-written (lookup.rs)"
        );
        assert!(!names.contains("cudaMalloc"), "modelled by the table");
        assert!(!names.contains("__cudaRegisterFatBinary"), "hand-written");
        assert!(!names.contains("hipMalloc"));
        assert_eq!(
            surface_of("cuMemAlloc_v2").map(|l| l.library),
            Some("libcuda.so.1")
        );
        let modelled_in_surface = surface_symbols().len() - unmodelled.len();
        assert!(modelled_in_surface > 60, "{modelled_in_surface}");
    }
}
