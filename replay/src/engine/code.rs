//! The code replay launches: captured code objects loaded as replay modules on first
//! use, kernels looked up in them (or in a `--replace-kernel` replacement's module), the
//! program's own module and function handles mapped to their replay instances, and what
//! the driver says each replay function's parameters are.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};

use hrr_archive::api::{sigs, Vendor};
use hrr_archive::ProcessArchive;

use super::error::{EvResult, EventError};
use super::replace::{Replaced, Replacement};
use crate::runtime::Runtime;

#[derive(Default)]
pub(super) struct Code {
    /// Code object -> the replay module loaded for launches by code object.
    pub(super) modules: HashMap<String, u64>,
    /// Code object -> kernel name -> replay function (two levels: a launch looks both up
    /// by the &str its payload holds, allocating nothing).
    pub(super) functions: HashMap<String, HashMap<String, u64>>,
    /// The program's own module loads (driver and hipModule API, libraries included):
    /// captured module or library handle -> the replay module loaded at the same point,
    /// so each load is its own instance (its own `__device__` variables), in the context
    /// current then.
    pub(super) module_instances: HashMap<u64, u64>,
    /// Captured function or kernel handle (`cuModuleGetFunction`, `cuLibraryGetKernel`,
    /// `cuKernelGetFunction`) -> the replay function in its module instance.
    pub(super) function_instances: HashMap<u64, u64>,
    /// Captured function or kernel handle -> the captured module or library it came
    /// from: an unload drops its functions, whose handles the driver may hand out again.
    pub(super) function_module: HashMap<u64, u64>,
    /// Replay function -> the sizes of its parameters as the driver describes them
    /// (None: it cannot), to check each launch's arguments against (`check_arguments`).
    param_sizes: HashMap<u64, Option<Vec<u64>>>,
    /// `Options::replacements`, and the modules and lookups they served.
    pub(super) replacements: Vec<Replacement>,
    pub(super) replaced: Replaced,
    /// `Options::kernel_filter`: the kernels launched (the others are left out).
    pub(super) kernel_filter: Option<String>,
}

impl Code {
    pub(super) fn new(replacements: Vec<Replacement>, kernel_filter: Option<String>) -> Code {
        Code {
            replacements,
            kernel_filter,
            ..Code::default()
        }
    }

    /// The replay module of a captured code object, loaded on first use.
    pub(super) fn module(
        &mut self,
        rt: &Runtime,
        proc_: &ProcessArchive,
        code_object: &str,
    ) -> Result<u64, EventError> {
        if let Some(m) = self.modules.get(code_object) {
            return Ok(*m);
        }
        let m = load_module(rt, proc_, code_object)?;
        self.modules.insert(code_object.to_string(), m);
        Ok(m)
    }

    /// The replay function `name` of a captured code object, looked up on first use.
    pub(super) fn function(
        &mut self,
        rt: &Runtime,
        proc_: &ProcessArchive,
        code_object: &str,
        name: &str,
    ) -> Result<u64, EventError> {
        if let Some(f) = self.functions.get(code_object).and_then(|m| m.get(name)) {
            return Ok(*f);
        }
        let module = self.module(rt, proc_, code_object)?;
        let func = self.get_function(rt, module, name)?;
        self.functions
            .entry(code_object.to_string())
            .or_default()
            .insert(name.to_string(), func);
        Ok(func)
    }

    /// The function `name` of the replay module `module`, or of its replacement's module
    /// (`--replace-kernel`).
    pub(super) fn get_function(
        &mut self,
        rt: &Runtime,
        module: u64,
        name: &str,
    ) -> Result<u64, EventError> {
        let replaced = self.replacement_module(rt, name)?;
        let module = replaced.unwrap_or(module);
        let get = match rt.vendor {
            Vendor::Cuda => "cuModuleGetFunction",
            Vendor::Hip => "hipModuleGetFunction",
        };
        // SAFETY: cuModuleGetFunction / hipModuleGetFunction have this C type.
        let g = unsafe { rt.typed::<sigs::ModuleGetFunction>(get) }?;
        let cname = std::ffi::CString::new(name)
            .map_err(|_| EventError::Inconsistent(format!("kernel name {name:?} holds a NUL")))?;
        let mut func: *mut c_void = std::ptr::null_mut();
        // SAFETY: an out pointer to a local, replay's module, a NUL-terminated name.
        let r = unsafe { g(&mut func, module as usize as *mut c_void, cname.as_ptr()) };
        if r != 0 {
            let from = match replaced {
                Some(_) => " in its replacement (--replace-kernel)",
                None => "",
            };
            return Err(EventError::Call {
                call: format!("{get}({name}){from}"),
                code: r,
            });
        }
        Ok(func as u64)
    }

    /// Drops the functions looked up in captured module `module`, which is going: the
    /// driver may hand their captured handles out again, for another module's functions.
    pub(super) fn forget_functions_of(&mut self, module: u64) {
        let gone: Vec<u64> = self
            .function_module
            .iter()
            .filter(|(_, m)| **m == module)
            .map(|(f, _)| *f)
            .collect();
        for f in gone {
            self.function_module.remove(&f);
            if let Some(rf) = self.function_instances.remove(&f) {
                self.param_sizes.remove(&rf);
            }
        }
    }

    /// The driver reads one argument per parameter of the kernel, of the parameter's
    /// size: a record giving other arguments (a damaged or edited archive, a capture that
    /// could not describe the kernel) is refused by name, never launched to have the
    /// driver read past them. CUDA only, where the driver describes replay's function
    /// (`cuFuncGetParamInfo`, CUDA 12.4 on); the answer is kept per function.
    pub(super) fn check_arguments(
        &mut self,
        rt: &Runtime,
        func: u64,
        name: &str,
        values: &[&[u8]],
    ) -> EvResult {
        if rt.vendor != Vendor::Cuda {
            return Ok(());
        }
        let Some(sizes) = &*self
            .param_sizes
            .entry(func)
            .or_insert_with(|| param_sizes(rt, func))
        else {
            return Ok(());
        };
        if values.len() == sizes.len()
            && values.iter().zip(sizes).all(|(v, &s)| v.len() as u64 == s)
        {
            return Ok(());
        }
        let given: Vec<usize> = values.iter().map(|v| v.len()).collect();
        Err(EventError::Inconsistent(format!(
            "kernel {name} takes {} parameter(s) of {sizes:?} bytes, the record gives {} argument(s) of {given:?} bytes: launched so, the kernel would read parameters that are not there",
            sizes.len(),
            values.len()
        )))
    }

    /// The modules loaded by code object and the functions in them went with the context
    /// current when they were loaded (they are loaded again where a later launch needs
    /// them).
    pub(super) fn context_destroyed(&mut self) {
        self.modules.clear();
        self.functions.clear();
    }

    /// After a device reset: every module and function went with it.
    pub(super) fn reset(&mut self) {
        self.context_destroyed();
        self.module_instances.clear();
        self.function_instances.clear();
        self.function_module.clear();
    }

    /// Unloads every module this replay loaded (the end of the process's replay).
    pub(super) fn release(&mut self, rt: &Runtime) {
        for (_, m) in std::mem::take(&mut self.modules) {
            let _ = unload_module(rt, m);
        }
        for (_, m) in std::mem::take(&mut self.module_instances) {
            let _ = unload_module(rt, m);
        }
        self.unload_replacements(rt);
        self.functions.clear();
        self.function_instances.clear();
        self.function_module.clear();
    }
}

impl Code {
    /// The module to look kernel `name` up in: a replacement's (loaded on first use), or
    /// None for the captured one.
    pub(super) fn replacement_module(
        &mut self,
        rt: &Runtime,
        name: &str,
    ) -> Result<Option<u64>, EventError> {
        let Some(r) = self.replacements.iter().find(|r| r.name == name) else {
            return Ok(None);
        };
        *self.replaced.lookups.entry(name.to_string()).or_default() += 1;
        if let Some(&m) = self.replaced.modules.get(&r.path) {
            return Ok(Some(m));
        }
        let load = match rt.vendor {
            Vendor::Cuda => "cuModuleLoadData",
            Vendor::Hip => "hipModuleLoadData",
        };
        // SAFETY: cuModuleLoadData / hipModuleLoadData have this C type.
        let f = unsafe { rt.typed::<sigs::ModuleLoadData>(load) }?;
        let mut m: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: the image lives in `self.replacements` for the whole replay.
        let rc = unsafe { f(&mut m, r.image.as_ptr().cast()) };
        if rc != 0 {
            return Err(EventError::Call {
                call: format!(
                    "{load} of the replacement for {name} ({})",
                    r.path.display()
                ),
                code: rc,
            });
        }
        let path = r.path.clone();
        self.replaced.modules.insert(path, m as u64);
        Ok(Some(m as u64))
    }

    /// Whether `--kernel-filter` leaves out a launch of kernel `name`.
    pub(super) fn filtered_out(&self, name: &str) -> bool {
        self.kernel_filter
            .as_deref()
            .is_some_and(|pattern| !super::replace::glob(pattern, name))
    }

    /// Unloads the replacement modules (the end of the process's replay).
    pub(super) fn unload_replacements(&mut self, rt: &Runtime) {
        for (_, m) in self.replaced.modules.drain() {
            let _ = unload_module(rt, m);
        }
    }
}

/// Loads a captured code object as a new replay module.
pub(super) fn load_module(
    rt: &Runtime,
    proc_: &ProcessArchive,
    code_object: &str,
) -> Result<u64, EventError> {
    let image = proc_.load_code_object(code_object)?;
    let load = match rt.vendor {
        Vendor::Cuda => "cuModuleLoadData",
        Vendor::Hip => "hipModuleLoadData",
    };
    // SAFETY: cuModuleLoadData / hipModuleLoadData have this C type.
    let f = unsafe { rt.typed::<sigs::ModuleLoadData>(load) }?;
    let mut m: *mut c_void = std::ptr::null_mut();
    // SAFETY: the image is copied by the driver before the call returns.
    let r = unsafe { f(&mut m, image.as_ptr().cast()) };
    if r != 0 {
        return Err(EventError::Call {
            call: format!("{load} of code object {code_object}"),
            code: r,
        });
    }
    Ok(m as u64)
}

/// Unloads a replay module, returning the runtime's code.
pub(super) fn unload_module(rt: &Runtime, m: u64) -> Result<c_int, EventError> {
    let unload = match rt.vendor {
        Vendor::Cuda => "cuModuleUnload",
        Vendor::Hip => "hipModuleUnload",
    };
    Ok(rt.call_ptr(unload, m)?)
}

/// The sizes of a CUDA function's parameters (`cuFuncGetParamInfo` until the index past
/// the last, CUDA_ERROR_INVALID_VALUE), or None where the driver cannot describe it.
fn param_sizes(rt: &Runtime, func: u64) -> Option<Vec<u64>> {
    // SAFETY: cuFuncGetParamInfo has this C type.
    let f = unsafe { rt.typed_if_present::<sigs::FuncGetParamInfo>("cuFuncGetParamInfo") }?;
    let mut sizes = Vec::new();
    for i in 0..4096usize {
        let (mut off, mut size) = (0usize, 0usize);
        // SAFETY: replay's own function handle and out pointers to locals.
        match unsafe { f(func as usize as *mut c_void, i, &mut off, &mut size) } {
            0 => sizes.push(size as u64),
            1 => return Some(sizes),
            _ => return None,
        }
    }
    None
}
