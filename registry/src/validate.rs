//! The table's consistency: unique ids and symbols, length references that name a
//! parameter, hand-written rows whose records and vendors are declared.

use super::{surface, ParamKind, Vendor, API_TABLE, EXEMPT, HAND_WRITTEN, SEMANTIC_KINDS};

/// An inconsistency in the API table or the hand-written rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// Two rows or record kinds share an id.
    DuplicateId(u16),
    /// A symbol is declared twice (generic or hand-written).
    DuplicateSymbol(&'static str),
    /// A length reference that names no parameter of its row.
    UnknownLength {
        api: &'static str,
        param: &'static str,
        length: &'static str,
    },
    /// A descriptor layout `api::texture` does not declare.
    UnknownLayout {
        api: &'static str,
        layout: &'static str,
    },
    /// A hand-written row whose record id is neither a record kind nor a table row.
    UnknownRecord { symbol: &'static str, id: u16 },
    /// A symbol whose name does not belong to its vendor's runtime.
    WrongVendor {
        symbol: &'static str,
        vendor: Vendor,
    },
    /// An exemption naming a symbol no surface list holds (misspelt, or of a library
    /// capture does not interpose), or named by two exemptions.
    BadExemption(&'static str),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::DuplicateId(id) => write!(f, "API id {id} is used twice"),
            TableError::DuplicateSymbol(s) => write!(f, "symbol {s} is declared twice"),
            TableError::UnknownLength { api, param, length } => write!(
                f,
                "{api}: parameter {param} names length {length}, which is not a parameter"
            ),
            TableError::UnknownLayout { api, layout } => {
                write!(f, "{api}: no descriptor layout {layout} is declared")
            }
            TableError::UnknownRecord { symbol, id } => {
                write!(
                    f,
                    "{symbol} writes record {id}, which no row or kind declares"
                )
            }
            TableError::WrongVendor { symbol, vendor } => {
                write!(f, "{symbol} is not a {} symbol", vendor.as_str())
            }
            TableError::BadExemption(s) => write!(
                f,
                "exemption {s} names no symbol of a surface list, or is listed twice"
            ),
        }
    }
}

impl std::error::Error for TableError {}

/// Whether `symbol` is named as `vendor`'s runtime or driver names its functions.
fn symbol_of_vendor(symbol: &str, vendor: Vendor) -> bool {
    // A C++ name (HIP 5.2's surface object calls): `_Z`, the name's length, the name.
    let symbol = match symbol.strip_prefix("_Z") {
        Some(rest) => rest.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => symbol,
    };
    match vendor {
        Vendor::Cuda => symbol.starts_with("cu") || symbol.starts_with("__cuda"),
        // roctx: ROCm's range markers (libroctx64), the AMD side of NVTX ranges.
        Vendor::Hip => {
            symbol.starts_with("hip") || symbol.starts_with("__hip") || symbol.starts_with("roctx")
        }
    }
}

/// Checks the table's internal consistency: unique ids and symbols, length references
/// that name a parameter of the same row, hand-written rows whose records and vendors
/// are declared. Tests call it.
pub fn validate_table() -> Result<(), TableError> {
    let mut ids = std::collections::HashSet::new();
    let mut syms = std::collections::HashSet::new();
    for d in API_TABLE {
        if !ids.insert(d.id) {
            return Err(TableError::DuplicateId(d.id));
        }
        for (s, v) in [(d.cuda, Vendor::Cuda), (d.hip, Vendor::Hip)] {
            let Some(s) = s else { continue };
            if !syms.insert(s) {
                return Err(TableError::DuplicateSymbol(s));
            }
            if !symbol_of_vendor(s, v) {
                return Err(TableError::WrongVendor {
                    symbol: s,
                    vendor: v,
                });
            }
        }
        for p in d.params {
            let refs: Vec<&'static str> = match p.kind {
                ParamKind::OutDevPtr(l)
                | ParamKind::OutHostPtr(l)
                | ParamKind::OutManagedPtr(l)
                | ParamKind::CopyDst(l)
                | ParamKind::CopySrc(l)
                | ParamKind::RegisterHostPtr(l)
                | ParamKind::HostSrc(l)
                | ParamKind::HostDst(l)
                | ParamKind::OutMappedDevPtr(l)
                | ParamKind::PoolAttrValue(l)
                | ParamKind::OutPoolAttrValue(l)
                | ParamKind::GraphNodes(l)
                | ParamKind::OutArray(l)
                | ParamKind::OutMipmappedArray(l)
                | ParamKind::OutArrayLevel(l)
                | ParamKind::OutArrayPlane(l)
                | ParamKind::DeviceList(l)
                | ParamKind::OutAddressRange(l)
                | ParamKind::MapAt(l)
                | ParamKind::AccessDescs(l)
                | ParamKind::LaunchAttrValue(l)
                | ParamKind::OutGraphNodeList(l) => vec![l],
                ParamKind::ByLayout(l) if !super::texture::LAYOUT_NAMES.contains(&l) => {
                    return Err(TableError::UnknownLayout {
                        api: d.name,
                        layout: l,
                    })
                }
                ParamKind::OutPitchedDevPtr(a, b) => vec![a, b],
                ParamKind::CopyDst2D(a, b, c) | ParamKind::CopySrc2D(a, b, c) => vec![a, b, c],
                _ => vec![],
            };
            for l in refs {
                if d.param_index(l).is_none() {
                    return Err(TableError::UnknownLength {
                        api: d.name,
                        param: p.name,
                        length: l,
                    });
                }
            }
        }
    }
    for k in SEMANTIC_KINDS {
        if !ids.insert(k.id) {
            return Err(TableError::DuplicateId(k.id));
        }
    }
    for h in HAND_WRITTEN {
        if !syms.insert(h.symbol) {
            return Err(TableError::DuplicateSymbol(h.symbol));
        }
        if !symbol_of_vendor(h.symbol, h.vendor) {
            return Err(TableError::WrongVendor {
                symbol: h.symbol,
                vendor: h.vendor,
            });
        }
        if let Some(&id) = h.records.iter().find(|id| !ids.contains(*id)) {
            return Err(TableError::UnknownRecord {
                symbol: h.symbol,
                id,
            });
        }
    }
    let mut exempt = std::collections::HashSet::new();
    for s in EXEMPT.iter().flat_map(|e| e.symbols.iter().copied()) {
        if !exempt.insert(s) || surface::surface_of(s).is_none() {
            return Err(TableError::BadExemption(s));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    #[test]
    fn the_table_is_consistent() {
        validate_table().unwrap();
        assert_eq!(desc(id::Malloc).unwrap().cuda, Some("cudaMalloc"));
        assert_eq!(desc(id::Malloc).unwrap().hip, Some("hipMalloc"));
        assert_eq!(
            desc(id::Malloc).unwrap().params[0].kind,
            ParamKind::OutDevPtr("size")
        );
        assert_eq!(api_name(semantic::LAUNCH_KERNEL), "LaunchKernel");
        assert_eq!(api_name(semantic::UNREPLAYABLE), "Unreplayable");
        assert_eq!(api_name(hrr_format::record::TRAILER_API_ID), "Trailer");
        assert_eq!(api_name(999), "Api999");
        assert_eq!(desc(id::StreamQuery).unwrap().ret, RetPolicy::Any);
    }

    #[test]
    fn record_ids_are_the_archive_formats() {
        // Archives store these ids: changing one makes old archives unreadable.
        let kinds: Vec<(u16, &str)> = SEMANTIC_KINDS.iter().map(|k| (k.id, k.name)).collect();
        assert_eq!(
            kinds,
            [
                (100, "RegisterFatBinary"),
                (101, "RegisterFunction"),
                (102, "RegisterVar"),
                (103, "UnregisterFatBinary"),
                (104, "SymbolAddress"),
                (105, "ModuleLoadData"),
                (106, "ModuleGetFunction"),
                (110, "LaunchKernel"),
                (111, "LaunchKernelByHandle"),
                (112, "ModuleLaunchKernel"),
                (120, "Unreplayable"),
                (141, "ModuleUnload"),
                (121, "FuncSetAttribute"),
                (122, "FuncSetCacheConfig"),
                (123, "LaunchCooperativeKernel"),
                (124, "LaunchKernelEx"),
                (125, "FuncSetSharedMemConfig"),
                (126, "HipExtLaunchKernel"),
                (131, "GraphLaunch"),
                (132, "GraphAddKernelNode"),
                (133, "GraphKernelNodeSetParams"),
                (134, "GraphExecKernelNodeSetParams"),
                (161, "UnmodelledCall"),
                (171, "CopyOutput"),
                (419, "MappedOutput"),
                (172, "RangeRestore"),
                (173, "RangeMark"),
            ]
        );
        assert_eq!((id::Malloc, id::Memcpy, id::EventDestroy), (10, 20, 46));
    }

    #[test]
    fn every_exported_symbol_is_declared_once() {
        let all: Vec<&str> = exported_symbols().collect();
        let unique: std::collections::HashSet<&str> = all.iter().copied().collect();
        assert_eq!(all.len(), unique.len());
        // A row without one vendor's symbol adds only the other's.
        let row_symbols: usize = API_TABLE
            .iter()
            .map(|d| usize::from(d.cuda.is_some()) + usize::from(d.hip.is_some()))
            .sum();
        assert_eq!(
            all.len(),
            row_symbols
                + HAND_WRITTEN.len()
                + super::super::PROCESS_HOOKS.len()
                + super::super::per_thread::TABLE_ALIASES.len()
                + super::super::driver::RUNTIME_TWINS.len()
        );
        let launch = HAND_WRITTEN
            .iter()
            .find(|h| h.symbol == "hipExtModuleLaunchKernel")
            .unwrap();
        assert_eq!(
            (launch.vendor, launch.records, launch.owner),
            (
                Vendor::Hip,
                &[semantic::MODULE_LAUNCH_KERNEL][..],
                "modules"
            )
        );
    }

    #[test]
    fn table_errors_name_what_is_wrong() {
        assert!(symbol_of_vendor("cuLaunchKernel", Vendor::Cuda));
        assert!(symbol_of_vendor("__hipRegisterVar", Vendor::Hip));
        assert!(!symbol_of_vendor("hipMalloc", Vendor::Cuda));
        let e = TableError::UnknownRecord {
            symbol: "cudaX",
            id: 7,
        };
        assert_eq!(
            e.to_string(),
            "cudaX writes record 7, which no row or kind declares"
        );
        assert_eq!(
            TableError::DuplicateSymbol("hipFree").to_string(),
            "symbol hipFree is declared twice"
        );
    }
}
