//! The HIP surface check: every function current HIP declares (the PyPI wheel
//! `rocm-bindings-hip`, AMD's hip-python generated from the current headers) is either
//! modelled by capture (a table row or a hand-written shim) or covered by a counting
//! pass-through (a surface list), so no call of a current HIP program goes unseen.
//!
//! The wheel is data only: `rocm/bindings/cyhip.pxd` gives the functions' declarations,
//! `cyhip.pyx` the symbol each resolves in libamdhip64 (`hipGetDeviceProperties` is
//! `hipGetDevicePropertiesR0600`). `.ci/install` downloads the pinned wheel and unpacks it
//! into `target/ci-tools` (`hrr_testkit::tools::HIP_BINDINGS`); `HRR_HIP_BINDINGS` names
//! another unpacked wheel. Without it the test skips through `hrr_testkit` (a failure under
//! `CI=true` or `HRR_REQUIRE_ALL=1`).

use std::collections::{BTreeMap, BTreeSet};

use hrr_archive::api::exported_symbols;
use hrr_archive::api::surface::{unmodelled_surface, SURFACE_LISTS};

/// Function names the `.pxd` declares: `cdef <type> <name>(` at the start of a line
/// (struct fields and enum members are indented).
fn declared_functions(pxd: &str) -> BTreeSet<String> {
    pxd.lines()
        .filter_map(|l| l.strip_prefix("cdef "))
        .filter(|l| !l.starts_with("extern") && !l.starts_with("struct") && !l.starts_with("enum"))
        .filter_map(|l| {
            let open = l.find('(')?;
            let head = l[..open].trim_end();
            let name = head.rsplit([' ', '*']).next()?;
            let ident =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            ident.then(|| name.to_string())
        })
        .collect()
}

/// The symbol each function resolves, from the `.pyx`'s `_<function>__funptr,"<symbol>"`.
fn resolved_symbols(pyx: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for part in pyx.split("__init_symbol(&_").skip(1) {
        let Some((func, rest)) = part.split_once("__funptr,\"") else {
            continue;
        };
        let Some((sym, _)) = rest.split_once('"') else {
            continue;
        };
        out.insert(func.to_string(), sym.to_string());
    }
    out
}

/// The HIP symbols neither modelled nor passed through, of `symbols`.
fn uncovered<'a>(symbols: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let modelled: BTreeSet<&str> = exported_symbols().collect();
    let passed: BTreeSet<&str> = unmodelled_surface().iter().map(|s| s.name).collect();
    symbols
        .filter(|s| !modelled.contains(s) && !passed.contains(s))
        .collect()
}

#[test]
fn a_function_outside_both_sets_is_reported() {
    let names = [
        "hipMalloc",
        "hipMemcpyAsync_spt",
        "hipGraphAddNode",
        "hipFutureCall",
    ];
    assert_eq!(uncovered(names.into_iter()), ["hipFutureCall"]);
    let pxd = "cdef struct s:\n    int f(int)\ncdef hipError_t hipA(int * x) nogil\ncdef const char * hipB(int e)\n";
    let got: Vec<String> = declared_functions(pxd).into_iter().collect();
    assert_eq!(got, ["hipA", "hipB"]);
    let pyx = "if __init_symbol(&_hipA__funptr,\"hipAR0600\") > 0:";
    assert_eq!(resolved_symbols(pyx)["hipA"], "hipAR0600");
}

#[test]
fn every_current_hip_function_is_modelled_or_passed_through() {
    let Some(dir) = hrr_testkit::tool(&hrr_testkit::tools::HIP_BINDINGS) else {
        return;
    };
    let read = |f: &str| {
        std::fs::read_to_string(dir.join("rocm/bindings").join(f))
            .unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let functions = declared_functions(&read("cyhip.pxd"));
    let symbols = resolved_symbols(&read("cyhip.pyx"));
    assert!(
        functions.len() > 500,
        "only {} functions parsed",
        functions.len()
    );
    assert_eq!(
        symbols.get("hipGetDeviceProperties").map(String::as_str),
        Some("hipGetDevicePropertiesR0600")
    );
    // A declared function the .pyx resolves no symbol for is the wheel's own helper
    // (`__hip_has_symbol`), not a libamdhip64 function.
    let helpers: Vec<&String> = functions
        .iter()
        .filter(|f| !symbols.contains_key(*f))
        .collect();
    assert!(
        helpers.len() <= 3,
        "functions without a symbol: {helpers:?}"
    );
    let current: BTreeSet<&str> = functions
        .iter()
        .filter_map(|f| symbols.get(f).map(String::as_str))
        .collect();
    assert!(current.len() > 500, "only {} symbols", current.len());
    let missing = uncovered(current.iter().copied());
    assert!(
        missing.is_empty(),
        "{} current HIP functions are neither modelled (api table, HAND_WRITTEN) nor passed through (registry/src/surface/*.txt): {}",
        missing.len(),
        missing.join(", ")
    );
    // The committed list is the wheel's: a newer wheel's names show here by name.
    let list = SURFACE_LISTS
        .iter()
        .find(|l| l.file == "libamdhip64-7.txt")
        .expect("the HIP 7 list");
    let listed: BTreeSet<&str> = list.names().collect();
    let wheel: BTreeSet<&str> = symbols.values().map(String::as_str).collect();
    let new: Vec<_> = wheel.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&wheel).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "libamdhip64-7.txt differs from the rocm-bindings-hip wheel at {}: new {new:?}, gone {gone:?}",
        dir.display()
    );
}
