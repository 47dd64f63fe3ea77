//! Every CUDA symbol the API table and the hand-written rows declare is one the H200's
//! libraries export (libcuda.so.1 of driver 580, libcudart.so.13), and no driver symbol
//! is a name CUDA 13's cuda.h renames: a program's call of `cuMemAlloc` binds to
//! `cuMemAlloc_v2`, so a shim named `cuMemAlloc` would never see it. The lists in
//! tests/data were taken from that machine (`nm -D --defined-only`) and its cuda.h.

use std::collections::{HashMap, HashSet};

use hrr_archive::api::{
    driver::is_driver_symbol, exported_symbols, Vendor, API_TABLE, HAND_WRITTEN,
};

fn lines(name: &str) -> Vec<String> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        // `name@@VERSION` as nm prints a versioned definition: the name.
        .map(|l| l.split('@').next().unwrap_or(l).to_string())
        .collect()
}

fn cuda_symbols() -> Vec<&'static str> {
    API_TABLE
        .iter()
        .filter_map(|d| d.cuda)
        .chain(
            HAND_WRITTEN
                .iter()
                .filter(|h| h.vendor == Vendor::Cuda)
                .map(|h| h.symbol),
        )
        .collect()
}

/// Names cuda.h renames that are still reached at their older ABI: the CUDA runtime
/// resolves `cuDevicePrimaryCtxRelease` (and `cuDevicePrimaryCtxReset`) at version 7000
/// through `cuGetProcAddress` (H200, CUDA 13, driver 580: bench/gpu/lookups/), programs
/// and libraries built with CUDA 11 bind the first `cuGetProcAddress`, and those built
/// with CUDA 12.0-12.2 headers bind the graph edge queries without their edge data (the
/// `_v2` forms, with it, came in 12.3; rows 515-517 beside 511-513). Capture interposes
/// both forms of each. Likewise the batched copy of CUDA 12.8-12.9 headers, with its
/// failing index (`cuMemcpyBatchAsync`; 13.0's `_v2` has none), and the generic node
/// add of 12.2's, without edge data (`cuGraphAddNode`).
const OLD_ABI_BY_LOOKUP: &[&str] = &[
    "cuMemcpyBatchAsync",
    "cuMemcpy3DBatchAsync",
    "cuGraphAddNode",
    "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxReset",
    "cuGetProcAddress",
    "cuGraphNodeGetDependencies",
    "cuGraphNodeGetDependentNodes",
    "cuGraphGetEdges",
];

#[test]
fn every_driver_symbol_is_exported_by_libcuda_and_is_the_name_programs_bind() {
    let driver: HashSet<String> = lines("libcuda-580.syms").into_iter().collect();
    let renames: HashMap<String, String> = lines("cuda13-renames.txt")
        .into_iter()
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
        })
        .collect();
    let newer: HashSet<&str> = include_str!("../../registry/src/surface/libcuda-13.5.txt")
        .lines()
        .map(str::trim)
        .collect();
    let mut checked = 0;
    for s in cuda_symbols().into_iter().filter(|s| is_driver_symbol(s)) {
        if DRIVER_NEWER.contains(&s) {
            assert!(newer.contains(s), "{s} is not in libcuda-13.5.txt");
            continue;
        }
        assert!(driver.contains(s), "{s} is not exported by libcuda.so.1");
        assert!(
            // A rename to a symbol the driver does not export binds nothing
            // (cuGetProcAddress_v2 -> cuGetProcAddress_v2_ptsz).
            !renames.get(s).is_some_and(|r| driver.contains(r)) || OLD_ABI_BY_LOOKUP.contains(&s),
            "{s}: cuda.h renames it to {}; a program's call binds to that",
            renames[s]
        );
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} driver symbols");
}

/// Driver symbols newer than the 580 driver's export list (`data/libcuda-580.syms`): each
/// must be one the newer driver's surface list names (`registry/src/surface/libcuda-13.5.txt`).
const DRIVER_NEWER: &[&str] = &[
    "cuGraphAddNode_v3",
    "cuGraphNodeSetParams_v2",
    "cuMemcpy3DWithAttributesAsync",
    "cuMemcpyWithAttributesAsync",
];

/// Runtime symbols of CUDA 12 that CUDA 13 dropped; each has a CUDA 13 row beside it.
const CUDA12_ONLY: &[(&str, &str)] = &[("cudaGetDeviceProperties_v2", "cudaGetDeviceProperties")];

/// Runtime symbols newer than the 13.0 export list (`data/cudart-13.syms`): each must be
/// one the newer runtime's surface list names (`registry/src/surface/libcudart-13.5.txt`).
const CUDA13_NEWER: &[&str] = &[
    "cudaDeviceGetExecutionCtx",
    "cudaExecutionCtxRecordEvent",
    "cudaExecutionCtxStreamCreate",
    "cudaExecutionCtxSynchronize",
    "cudaExecutionCtxWaitEvent",
    "cudaGraphNodeGetContainingGraph",
    "cudaLaunchHostFunc_v2",
    "cudaMemcpy3DWithAttributesAsync",
    "cudaMemcpy3DWithAttributesAsync_ptsz",
    "cudaMemcpyWithAttributesAsync",
    "cudaMemcpyWithAttributesAsync_ptsz",
];

#[test]
fn every_runtime_symbol_is_exported_by_libcudart() {
    let rt: HashSet<String> = lines("cudart-13.syms").into_iter().collect();
    let newer: HashSet<&str> = include_str!("../../registry/src/surface/libcudart-13.5.txt")
        .lines()
        .map(str::trim)
        .collect();
    let symbols = cuda_symbols();
    for s in symbols.iter().filter(|s| s.starts_with("cuda")) {
        match CUDA12_ONLY.iter().find(|(old, _)| old == s) {
            Some((_, new)) => assert!(symbols.contains(new), "{s}: no row for CUDA 13's {new}"),
            None if CUDA13_NEWER.contains(s) => {
                assert!(newer.contains(*s), "{s} is not in libcudart-13.5.txt")
            }
            None => assert!(rt.contains(*s), "{s} is not exported by libcudart.so.13"),
        }
    }
}

#[test]
fn driver_and_runtime_calls_are_one_table() {
    // One table: runtime and driver rows side by side, no symbol exported twice.
    let all: Vec<&str> = exported_symbols().collect();
    let unique: HashSet<&str> = all.iter().copied().collect();
    assert_eq!(all.len(), unique.len());
    assert!(all.contains(&"cudaMemcpy") && all.contains(&"cuMemcpyDtoH_v2"));
}
