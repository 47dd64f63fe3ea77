//! `--replace-kernel NAME=PATH`: the kernel NAME is launched from the code object at
//! PATH (a cubin, fatbin or PTX file on CUDA; an AMD code object or bundle on HIP) instead
//! of the captured one, with the captured arguments and launch configuration, so a
//! compiler or runtime engineer sees byte for byte whether a rebuilt kernel's outputs
//! changed. Every lookup of the name (a registered kernel, a module's function, a graph
//! kernel node's function) is served from the replacement's module, loaded once per
//! process. A replacement the archive never looked up is a failure: a misspelt name must
//! not pass as "unchanged".

use std::collections::HashMap;
use std::os::raw::c_int;
use std::path::PathBuf;

use hrr_archive::api::Vendor;

use super::{Ctx, EventError};

/// One `--replace-kernel`, its code object read when replay started.
#[derive(Clone, Debug)]
pub struct Replacement {
    pub name: String,
    pub path: PathBuf,
    pub image: Vec<u8>,
}

/// The replacement modules this process loaded, and the lookups each name served.
#[derive(Debug, Default)]
pub(super) struct Replaced {
    modules: HashMap<PathBuf, u64>,
    pub(super) lookups: HashMap<String, u64>,
}

impl Ctx<'_> {
    /// The module to look kernel `name` up in: a replacement's (loaded on first use), or
    /// None for the captured one.
    pub(super) fn replacement_module(&mut self, name: &str) -> Result<Option<u64>, EventError> {
        let Some(r) = self.replacements.iter().find(|r| r.name == name) else {
            return Ok(None);
        };
        *self.replaced.lookups.entry(name.to_string()).or_default() += 1;
        if let Some(&m) = self.replaced.modules.get(&r.path) {
            return Ok(Some(m));
        }
        let load = match self.rt.vendor {
            Vendor::Cuda => "cuModuleLoadData",
            Vendor::Hip => "hipModuleLoadData",
        };
        let f = self.rt.require(load)?;
        let mut m: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: cuModuleLoadData / hipModuleLoadData(module*, const void* image); the
        // image lives in `self.replacements` for the whole replay.
        let rc = unsafe {
            let f: unsafe extern "C" fn(
                *mut *mut std::ffi::c_void,
                *const std::ffi::c_void,
            ) -> c_int = std::mem::transmute(f);
            f(&mut m, r.image.as_ptr().cast())
        };
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

    /// Unloads the replacement modules (the end of the process's replay).
    pub(super) fn unload_replacements(&mut self) {
        let modules: Vec<u64> = self.replaced.modules.drain().map(|(_, m)| m).collect();
        for m in modules {
            let unload = match self.rt.vendor {
                Vendor::Cuda => "cuModuleUnload",
                Vendor::Hip => "hipModuleUnload",
            };
            let _ = self.rt.call_ptr(unload, m);
        }
    }
}
