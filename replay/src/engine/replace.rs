//! `--replace-kernel NAME=PATH`: the kernel NAME is launched from the code object at
//! PATH (a cubin, fatbin or PTX file on CUDA; an AMD code object or bundle on HIP) instead
//! of the captured one, with the captured arguments and launch configuration, so a
//! compiler or runtime engineer sees byte for byte whether a rebuilt kernel's outputs
//! changed. Every lookup of the name (a registered kernel, a module's function, a graph
//! kernel node's function) is served from the replacement's module, loaded once per
//! process. A replacement the archive never looked up is a failure: a misspelt name must
//! not pass as "unchanged".
//!
//! `--kernel-filter PATTERN` (a glob on the mangled name) launches only the kernels that
//! match; every D2H check after the first launch it leaves out is skipped, never passed
//! (its result may depend on that kernel). Kernels inside a graph launch with their graph.

use std::collections::HashMap;
use std::path::PathBuf;

use hrr_archive::api::sigs;
use hrr_archive::api::Vendor;

use super::code::Code;
use super::error::EventError;
use crate::runtime::Runtime;

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
            .is_some_and(|pattern| !glob(pattern, name))
    }

    /// Unloads the replacement modules (the end of the process's replay).
    pub(super) fn unload_replacements(&mut self, rt: &Runtime) {
        for (_, m) in self.replaced.modules.drain() {
            let _ = super::code::unload_module(rt, m);
        }
    }
}

/// `*` any run of characters, `?` one; everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("_Z6affine*", "_Z6affinePiPKiiij"));
        assert!(glob("*affine*", "affine"));
        assert!(glob("a?fine", "affine"));
        assert!(!glob("affine", "affine2"));
        assert!(!glob("*scale", "scale_add"));
        assert!(glob("*", ""));
    }
}
