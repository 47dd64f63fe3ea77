//! Loading the vendor runtime with libloading and calling table rows through it. A HIP
//! runtime is any of ROCm 7's, 6's or HIP 5's libamdhip64 (`hip_abi`), from the loader
//! path, `$ROCM_PATH/lib` or `/opt/rocm/lib`; its `hipRuntimeGetVersion` is asked once.
//! A row whose HIP symbol the loaded runtime lacks (an R0600 or `_spt` form) is called by
//! its base name.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};

use hrr_archive::api::hip_abi::{self, HipVersion};
use hrr_archive::api::sigs;
use hrr_archive::api::{ApiDesc, FfiArg, Vendor};
use libloading::Library;

/// Why the runtime could not be loaded or a call could not be made through it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    #[error("no {vendor} runtime could be loaded ({tried})")]
    NotLoadable { vendor: &'static str, tried: String },
    #[error("{library} does not export {symbol}")]
    MissingSymbol { library: String, symbol: String },
    /// A CUDA runtime function, in a replay that runs on libcuda alone.
    #[error(
        "{symbol} is a CUDA runtime function, and this replay runs on {library} alone \
         (HRR_REPLAY_CUDART=none, or no libcudart could be loaded): an archive with runtime \
         records needs libcudart"
    )]
    NoRuntime { symbol: String, library: String },
    #[error(
        "{symbol} is a CUDA driver function and no driver library ({library}) could be loaded"
    )]
    NoDriver { symbol: String, library: String },
    #[error("no API table row {0}")]
    NoRow(u16),
    #[error("{api} has no {vendor} symbol")]
    NoVendorSymbol {
        api: &'static str,
        vendor: &'static str,
    },
    #[error("{count} arguments for {api}")]
    Arity { count: usize, api: String },
}

pub struct Runtime {
    pub vendor: Vendor,
    pub library_name: String,
    /// What the HIP runtime's `hipRuntimeGetVersion` reported (None for CUDA, or when it
    /// failed).
    pub hip_version: Option<HipVersion>,
    lib: Library,
    driver: Option<Library>,
    cache: std::cell::RefCell<HashMap<String, *mut c_void>>,
    /// CUDA on libcuda alone: no runtime library; replay's own calls go to their driver
    /// equivalents (`DRIVER_EQUIVALENTS`), and a runtime row fails naming itself.
    pub driver_only: bool,
}

/// The driver function replay calls for one of its own runtime calls when it runs on
/// libcuda alone (same C signature).
const DRIVER_EQUIVALENTS: &[(&str, &str)] = &[
    ("cudaGetDeviceCount", "cuDeviceGetCount"),
    ("cudaStreamSynchronize", "cuStreamSynchronize"),
    ("cudaDeviceSynchronize", "cuCtxSynchronize"),
];

/// The table row that releases a resource in a replay on libcuda alone, for each runtime
/// row that would (the driver's functions take the same handles).
pub const DRIVER_RELEASE_ROWS: &[(u16, u16)] = &[
    (hrr_archive::api::id::Free, hrr_archive::api::id::MemFree),
    (
        hrr_archive::api::id::FreeHost,
        hrr_archive::api::id::MemFreeHost,
    ),
    (
        hrr_archive::api::id::StreamDestroy,
        hrr_archive::api::id::CuStreamDestroy,
    ),
    (
        hrr_archive::api::id::EventDestroy,
        hrr_archive::api::id::CuEventDestroy,
    ),
];

fn candidates(v: Vendor) -> Vec<String> {
    let var = match v {
        Vendor::Cuda => "HRR_REPLAY_CUDART",
        Vendor::Hip => "HRR_REPLAY_AMDHIP",
    };
    let mut c: Vec<String> = std::env::var(var)
        .ok()
        .filter(|s| !s.is_empty())
        .into_iter()
        .collect();
    match v {
        Vendor::Cuda => {
            c.extend(["libcudart.so.13", "libcudart.so.12", "libcudart.so"].map(String::from))
        }
        Vendor::Hip => c.extend(hip_candidates(
            std::env::var("ROCM_PATH")
                .ok()
                .filter(|s| !s.is_empty())
                .as_deref(),
        )),
    }
    c
}

/// HIP runtime library names, newest first: on the loader path, then under
/// `$ROCM_PATH/lib` and `/opt/rocm/lib` (a runtime-only install may lack the unversioned
/// link, and a ROCm install outside ld.so's configuration is found there).
fn hip_candidates(rocm_path: Option<&str>) -> Vec<String> {
    const NAMES: [&str; 4] = [
        "libamdhip64.so.7",
        "libamdhip64.so.6",
        "libamdhip64.so.5",
        "libamdhip64.so",
    ];
    let mut c: Vec<String> = NAMES.map(String::from).to_vec();
    let dirs = rocm_path
        .map(|r| format!("{}/lib", r.trim_end_matches('/')))
        .into_iter()
        .chain(["/opt/rocm/lib".to_string()]);
    let mut seen = Vec::new();
    for d in dirs {
        if seen.contains(&d) {
            continue;
        }
        c.extend(NAMES.map(|n| format!("{d}/{n}")));
        seen.push(d);
    }
    c
}

/// The CUDA driver library: `HRR_REPLAY_LIBCUDA` where set (a stand-in in tests), else
/// libcuda.so.1. Driver rows are called through it and nothing else.
fn driver_name() -> String {
    std::env::var("HRR_REPLAY_LIBCUDA")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "libcuda.so.1".into())
}

impl Runtime {
    /// Loads the runtime (and, for CUDA, the driver). The error names what was tried.
    pub fn load(v: Vendor) -> Result<Runtime, RuntimeError> {
        let mut tried = Vec::new();
        let none = std::env::var("HRR_REPLAY_CUDART").is_ok_and(|s| s == "none");
        let names = if v == Vendor::Cuda && none {
            Vec::new()
        } else {
            candidates(v)
        };
        for name in names {
            // SAFETY: loading a vendor runtime library runs its initialisers, as any
            // program linking it would.
            match unsafe { Library::new(&name) } {
                Ok(lib) => {
                    let driver = match v {
                        // SAFETY: as above, for the CUDA driver library.
                        Vendor::Cuda => unsafe { Library::new(driver_name()) }.ok(),
                        Vendor::Hip => None,
                    };
                    let mut rt = Runtime {
                        vendor: v,
                        library_name: name,
                        hip_version: None,
                        lib,
                        driver,
                        cache: Default::default(),
                        driver_only: false,
                    };
                    if v == Vendor::Hip {
                        rt.hip_version = match rt.call_int_out("hipRuntimeGetVersion") {
                            Ok((0, n)) => HipVersion::from_runtime(n.into()),
                            _ => None,
                        };
                    }
                    return Ok(rt);
                }
                Err(e) => tried.push(format!("{name}: {e}")),
            }
        }
        // CUDA without its runtime: an archive of driver records replays on libcuda alone.
        if v == Vendor::Cuda {
            let name = driver_name();
            // SAFETY: loading the CUDA driver library runs its initialisers, as any
            // program linking it would; twice, one handle per role.
            let both = unsafe { (Library::new(&name), Library::new(&name)) };
            match both {
                (Ok(lib), Ok(driver)) => {
                    return Ok(Runtime {
                        vendor: v,
                        library_name: format!("{name} (no CUDA runtime)"),
                        hip_version: None,
                        lib,
                        driver: Some(driver),
                        cache: Default::default(),
                        driver_only: true,
                    })
                }
                (Err(e), _) | (_, Err(e)) => tried.push(format!("{name}: {e}")),
            }
        }
        Err(RuntimeError::NotLoadable {
            vendor: v.as_str(),
            tried: tried.join("; "),
        })
    }

    /// The address of `name` in the runtime (or the CUDA driver), or None.
    pub fn sym(&self, name: &str) -> Option<*mut c_void> {
        if let Some(p) = self.cache.borrow().get(name) {
            return Some(*p);
        }
        // On libcuda alone a runtime name resolves only to its driver equivalent.
        let name = match DRIVER_EQUIVALENTS.iter().find(|(r, _)| *r == name) {
            Some((_, d)) if self.driver_only => *d,
            _ if self.driver_only && name.starts_with("cuda") => return None,
            _ => name,
        };
        // SAFETY: looking up a symbol's address; it is only called through a signature
        // the API table (or the driver API) declares for it.
        let p = unsafe {
            self.lib
                .get::<*mut c_void>(name.as_bytes())
                .map(|s| *s)
                .ok()
                .or_else(|| {
                    self.driver
                        .as_ref()
                        .and_then(|d| d.get::<*mut c_void>(name.as_bytes()).map(|s| *s).ok())
                })
        }?;
        self.cache.borrow_mut().insert(name.to_string(), p);
        Some(p)
    }

    /// A row's function: a driver row's (`ApiDesc::is_driver`) from libcuda.so.1 only,
    /// never a runtime's symbol of the same name; any other from the runtime.
    pub fn require_row(&self, desc: &ApiDesc) -> Result<*mut c_void, RuntimeError> {
        let name = self.symbol_of(desc)?;
        if !desc.is_driver(self.vendor) {
            // An R0600 or per-thread form the runtime lacks: its base function (same
            // parameters; the per-thread stream was recorded as hipStreamPerThread).
            if let (None, Some(base)) = (self.sym(name), hip_abi::fallback(name)) {
                if self.vendor == Vendor::Hip {
                    return self.require(base);
                }
            }
            return self.require(name);
        }
        let driver = self.driver.as_ref().ok_or_else(|| RuntimeError::NoDriver {
            symbol: name.to_string(),
            library: driver_name(),
        })?;
        // SAFETY: looking up a symbol's address; it is called only through the row's
        // declared signature.
        unsafe { driver.get::<*mut c_void>(name.as_bytes()) }
            .map(|s| *s)
            .map_err(|_| RuntimeError::MissingSymbol {
                library: driver_name(),
                symbol: name.to_string(),
            })
    }

    pub fn require(&self, name: &str) -> Result<*mut c_void, RuntimeError> {
        self.sym(name).ok_or_else(|| {
            if self.driver_only && name.starts_with("cuda") {
                RuntimeError::NoRuntime {
                    symbol: name.to_string(),
                    library: driver_name(),
                }
            } else {
                RuntimeError::MissingSymbol {
                    library: self.library_name.clone(),
                    symbol: name.to_string(),
                }
            }
        })
    }

    /// Initialises the driver and makes device 0's primary context current: what the
    /// runtime's first call does, for a replay on libcuda alone.
    pub fn start_driver(&self) -> Result<(), (&'static str, c_int)> {
        let call = |name: &'static str, code: Result<c_int, RuntimeError>| match code {
            Ok(0) => Ok(()),
            Ok(c) => Err((name, c)),
            Err(_) => Err((name, -1)),
        };
        call("cuInit", self.call_ptr("cuInit", 0))?;
        // SAFETY: cuDevicePrimaryCtxRetain has this C type.
        let retain = unsafe { self.typed::<sigs::PrimaryCtxRetain>("cuDevicePrimaryCtxRetain") }
            .map_err(|_| ("cuDevicePrimaryCtxRetain", -1))?;
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out pointer, device 0.
        call(
            "cuDevicePrimaryCtxRetain",
            Ok(unsafe { retain(&mut ctx, 0) }),
        )?;
        call(
            "cuCtxSetCurrent",
            self.call_ptr("cuCtxSetCurrent", ctx as u64),
        )
    }

    /// `int f(int*)` style calls (device count, versions).
    pub fn call_int_out(&self, name: &str) -> Result<(c_int, c_int), RuntimeError> {
        // SAFETY: every name passed here has the C signature int(int*).
        let f = unsafe { self.typed::<sigs::IntOut>(name) }?;
        let mut v: c_int = 0;
        // SAFETY: a valid out pointer.
        let r = unsafe { f(&mut v) };
        Ok((r, v))
    }

    /// `int f(void)` calls (synchronize the device).
    pub fn call_void(&self, name: &str) -> Result<c_int, RuntimeError> {
        // SAFETY: every name passed here has the C signature int(void).
        let f = unsafe { self.typed::<sigs::NoArgs>(name) }?;
        // SAFETY: no arguments.
        Ok(unsafe { f() })
    }

    /// `int f(void*)` style calls (free, synchronize a stream).
    pub fn call_ptr(&self, name: &str, a: u64) -> Result<c_int, RuntimeError> {
        // SAFETY: every name passed here has the C signature int(void*).
        let f = unsafe { self.typed::<sigs::PtrArg>(name) }?;
        // SAFETY: the argument is a handle or address of this replay.
        Ok(unsafe { f(a as usize as *mut c_void) })
    }

    /// `name`'s definition as a function of C type `F`, one of `api::sigs` (the types
    /// capture's shims are checked against): the one place replay turns a symbol's
    /// address into a function it calls outside the table.
    ///
    /// # Safety
    /// `F` must be the C type of `name` in this runtime.
    pub unsafe fn typed<F: Copy>(&self, name: &str) -> Result<F, RuntimeError> {
        let p = self.require(name)?;
        // SAFETY: the caller's contract.
        Ok(unsafe { as_function(p) })
    }

    /// As [`Self::typed`], None when the runtime lacks `name`.
    ///
    /// # Safety
    /// As [`Self::typed`].
    pub unsafe fn typed_if_present<F: Copy>(&self, name: &str) -> Option<F> {
        // SAFETY: the caller's contract.
        self.sym(name).map(|p| unsafe { as_function(p) })
    }
}

/// A symbol's address as a function pointer of type `F`.
///
/// # Safety
/// `F` must be an `unsafe extern "C" fn` type, the C type of the function at `p`.
unsafe fn as_function<F: Copy>(p: *mut c_void) -> F {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
    // SAFETY: `F` is a function pointer (one word, asserted above) to what `p` points at.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

impl Runtime {
    /// Calls API table row `id` by this vendor's name for it.
    ///
    /// # Safety
    /// Each argument must be valid for its parameter's meaning in the row (live buffers,
    /// handles of this replay), as for `call_row`.
    pub unsafe fn call_table(&self, id: u16, args: &[u64]) -> Result<c_int, RuntimeError> {
        let desc = hrr_archive::api::desc(id).ok_or(RuntimeError::NoRow(id))?;
        let name = self.symbol_of(desc)?;
        let f = self.require_row(desc)?;
        // SAFETY: `f` is the runtime's definition of the row's symbol; the caller
        // vouches for the arguments.
        unsafe { call_row(id, f, args) }.ok_or_else(|| RuntimeError::Arity {
            count: args.len(),
            api: name.to_string(),
        })
    }

    /// The library and, for HIP, the version it reported ("libamdhip64.so.7, HIP 7.1.0").
    pub fn describe(&self) -> String {
        match self.hip_version {
            Some(v) => format!("{}, HIP {v}", self.library_name),
            None => self.library_name.clone(),
        }
    }

    /// This vendor's name for a table row.
    pub fn symbol_of(&self, desc: &ApiDesc) -> Result<&'static str, RuntimeError> {
        desc.symbol(self.vendor)
            .ok_or(RuntimeError::NoVendorSymbol {
                api: desc.name,
                vendor: self.vendor.as_str(),
            })
    }
}

macro_rules! define_calls {
    ($( ($id:literal, $name:ident, $cuda:ident, $hip:ident, $ret:ident; $( $p:ident : $t:ty => $k:ident $( ( $($ka:ident),+ ) )? ),* ) ),* $(,)?) => {
        /// Calls table row `id` at `f` with `args` converted to the row's C types.
        /// Returns None if `args` does not have the row's arity.
        ///
        /// # Safety
        /// `f` must be the runtime's definition of the row's symbol, and each argument
        /// valid for its parameter's meaning (translated pointers, live buffers).
        #[allow(unused_variables, unused_mut, clippy::too_many_lines)]
        pub unsafe fn call_row(id: u16, f: *mut c_void, args: &[u64]) -> Option<c_int> {
            match id {
                $( $id => {
                    let &[$($p),*] = args else { return None };
                    // SAFETY: the caller's contract; the signature is the row's.
                    let f: unsafe extern "C" fn($($t),*) -> c_int = unsafe { std::mem::transmute(f) };
                    Some(unsafe { f($(<$t as FfiArg>::from_u64($p)),*) })
                } )*
                _ => None,
            }
        }
    };
}

hrr_archive::hrr_api_table!(define_calls);

#[cfg(test)]
mod tests {
    use super::{call_row, hip_candidates};

    #[test]
    fn a_variant_the_runtime_lacks_is_called_by_its_base_name() {
        use super::{Runtime, RuntimeError, Vendor};
        use hrr_archive::api::{desc, id};
        // SAFETY: the C library is loaded already; loading it again runs nothing new.
        let lib = unsafe { libloading::Library::new("libc.so.6") }.unwrap();
        let rt = Runtime {
            vendor: Vendor::Hip,
            library_name: "libc.so.6".into(),
            hip_version: None,
            lib,
            driver: None,
            cache: Default::default(),
            driver_only: false,
        };
        // Neither name is in libc: the error names the base, the name replay fell back to.
        let e = rt
            .require_row(desc(id::MemcpyAsyncSpt).unwrap())
            .unwrap_err();
        assert_eq!(
            e,
            RuntimeError::MissingSymbol {
                library: "libc.so.6".into(),
                symbol: "hipMemcpyAsync".into()
            }
        );
        let e = rt
            .require_row(desc(id::GetDevicePropertiesR0600).unwrap())
            .unwrap_err();
        assert!(
            e.to_string()
                .ends_with("does not export hipGetDeviceProperties"),
            "{e}"
        );
        assert_eq!(rt.describe(), "libc.so.6");
    }

    #[test]
    fn every_supported_hip_runtime_is_a_candidate_newest_first() {
        let c = hip_candidates(Some("/opt/rocm-7.1.0/"));
        assert_eq!(
            &c[..4],
            [
                "libamdhip64.so.7",
                "libamdhip64.so.6",
                "libamdhip64.so.5",
                "libamdhip64.so"
            ]
        );
        assert_eq!(c[4], "/opt/rocm-7.1.0/lib/libamdhip64.so.7");
        assert!(c.contains(&"/opt/rocm/lib/libamdhip64.so.6".to_string()));
        assert_eq!(
            hip_candidates(Some("/opt/rocm")).len(),
            8,
            "one directory once"
        );
        assert_eq!(hip_candidates(None).len(), 8);
    }
    use hrr_archive::api::API_TABLE;
    use std::os::raw::{c_int, c_void};

    extern "C" fn returns_seven() -> c_int {
        7
    }

    #[test]
    fn every_table_row_has_a_typed_replay_call() {
        let f = returns_seven as *const () as *mut c_void;
        for d in API_TABLE {
            let zeros = vec![0u64; d.params.len()];
            // SAFETY: `returns_seven` ignores its arguments; every parameter of every row is
            // an integer or a pointer, passed in registers or on the stack by the caller and
            // never read. The call only proves the row has an arm of the right arity.
            let r = unsafe { call_row(d.id, f, &zeros) };
            assert_eq!(r, Some(7), "{}: no typed call", d.name);
            let wrong = vec![0u64; d.params.len() + 1];
            // SAFETY: a wrong arity is refused before any call is made.
            assert_eq!(unsafe { call_row(d.id, f, &wrong) }, None, "{}", d.name);
        }
    }
}
