//! How much of each runtime's surface capture covers, and by which rule: a function is
//! modelled (a table row or a hand-written shim: recorded and replayed), exempt (passed
//! through and counted by a stated rule in `exempt`: replay does not refuse it), or
//! refused (passed through and counted, or recorded only as unreplayable
//! (`unreplayable_only`): replay refuses the archive, naming it at its first call). Pure: [`classify`] one symbol, [`summary`] a list of them.
//! `hrr-replay --info` prints the figures for every surface list;
//! `archive/tests/cuda_surface.rs` checks CUDA 13's headers against them.

use std::collections::BTreeSet;

use super::hand_written::unreplayable_only;
use super::surface::{SurfaceList, SURFACE_LISTS};
use super::{exempt_reason, exported_symbols};

/// The rule that covers one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Recorded and replayed.
    Modelled,
    /// Passed through and counted; harmless by the stated reason.
    Exempt(&'static str),
    /// Passed through and counted; replay refuses the archive naming it.
    Refused,
}

/// The symbols capture records and replay replays: every exported one but those recorded
/// only as unreplayable.
fn replayed() -> BTreeSet<&'static str> {
    let refused: BTreeSet<&str> = unreplayable_only().collect();
    exported_symbols()
        .filter(|s| !refused.contains(s))
        .collect()
}

/// The rule covering `symbol`, given the symbols capture records and replay replays
/// (`modelled`).
pub fn classify_in(modelled: &BTreeSet<&str>, symbol: &str) -> Coverage {
    if modelled.contains(symbol) {
        Coverage::Modelled
    } else if let Some(reason) = exempt_reason(symbol) {
        Coverage::Exempt(reason)
    } else {
        Coverage::Refused
    }
}

/// The rule covering `symbol`.
pub fn classify(symbol: &str) -> Coverage {
    classify_in(&replayed(), symbol)
}

/// Counts of one list of functions by rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub modelled: usize,
    pub exempt: usize,
    pub refused: usize,
}

impl Summary {
    pub fn total(&self) -> usize {
        self.modelled + self.exempt + self.refused
    }

    /// The share modelled or exempt, in percent (100 for an empty list).
    pub fn covered_percent(&self) -> f64 {
        match self.total() {
            0 => 100.0,
            t => 100.0 * (self.modelled + self.exempt) as f64 / t as f64,
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} functions: {} modelled, {} exempt by rule, {} refused by name ({:.1}% modelled or exempt)",
            self.total(),
            self.modelled,
            self.exempt,
            self.refused,
            self.covered_percent()
        )
    }
}

/// Counts `symbols` by the rule covering each.
pub fn summary<'a>(symbols: impl IntoIterator<Item = &'a str>) -> Summary {
    let modelled = replayed();
    let mut s = Summary::default();
    for sym in symbols {
        match classify_in(&modelled, sym) {
            Coverage::Modelled => s.modelled += 1,
            Coverage::Exempt(_) => s.exempt += 1,
            Coverage::Refused => s.refused += 1,
        }
    }
    s
}

/// Every surface list with its counts, in `SURFACE_LISTS` order.
pub fn by_list() -> Vec<(&'static SurfaceList, Summary)> {
    SURFACE_LISTS
        .iter()
        .map(|l| (l, summary(l.names())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_is_told_apart_and_counted() {
        assert_eq!(classify("cudaMalloc"), Coverage::Modelled);
        assert!(matches!(
            classify("cudaGetErrorString"),
            Coverage::Exempt(_)
        ));
        assert_eq!(classify("cuMemExportToShareableHandle"), Coverage::Refused);
        // Recorded, but only as unreplayable: replay refuses it by name.
        assert_eq!(
            classify("hipLaunchCooperativeKernelMultiDevice"),
            Coverage::Refused
        );
        // Inter-process handles made: replayed (nothing opens them at replay).
        assert_eq!(classify("cudaIpcGetMemHandle"), Coverage::Modelled);
        // Host functions: replayed as ordering points.
        assert_eq!(classify("cudaLaunchHostFunc"), Coverage::Modelled);
        // Unreplayable in some uses only: modelled.
        assert_eq!(classify("cudaGraphAddKernelNode"), Coverage::Modelled);
        let s = summary([
            "cudaMalloc",
            "cudaGetErrorString",
            "cuMemExportToShareableHandle",
            "cuMemMap",
        ]);
        assert_eq!((s.modelled, s.exempt, s.refused), (2, 1, 1));
        assert_eq!(s.covered_percent(), 75.0);
        assert_eq!(
            s.to_string(),
            "4 functions: 2 modelled, 1 exempt by rule, 1 refused by name (75.0% modelled or exempt)"
        );
    }

    #[test]
    fn every_list_is_summed_and_print_the_figures() {
        for (list, s) in by_list() {
            assert_eq!(s.total(), list.names().count(), "{}", list.file);
            eprintln!("{}: {s}", list.file);
        }
    }
}
