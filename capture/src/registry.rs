//! The kernel registry: what registration and module loads taught capture about code
//! objects, kernels and variables, which launches and symbol copies look up. One per
//! capture ([`crate::state::Capture::kernels`]); it calls nothing above it.
//!
//! Every stub or kernel handle (re)bound to a name and code object bumps the registry's
//! generation, so each thread's launch cache drops what it resolved before.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hrr_archive::api::fid;
use hrr_archive::payload::PayloadWriter;
use hrr_archive::sync::{ForkLock, Mutex};
use hrr_archive::ContentHash;

/// A kernel's parameters: (offset, size) of each, in order.
pub type Layout = Vec<(u64, u64)>;

/// A registered `__device__` / `__constant__` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarInfo {
    pub name: String,
    pub code_object: ContentHash,
    pub size: u64,
}

#[derive(Default)]
struct Tables {
    /// Fat-binary handle -> code object hash.
    fatbins: HashMap<u64, ContentHash>,
    /// Host stub (or module function) -> (device function name, code object hash).
    stubs: HashMap<u64, (String, ContentHash)>,
    /// cudaKernel_t -> host stub.
    kernels: HashMap<u64, u64>,
    /// Function or kernel handle -> parameter layout, as the CUDA driver reported it.
    layouts: HashMap<u64, Layout>,
    /// HIP: (code object, kernel name) -> explicit parameter layout, from the code
    /// object's AMDGPU metadata note.
    hip_layouts: HashMap<(ContentHash, String), Layout>,
    /// Host stub -> its launch records' fixed fields (name, code object), encoded once.
    launch_prefix: HashMap<u64, Arc<PayloadWriter>>,
    /// Host shadow of a variable -> what it is.
    vars: HashMap<u64, VarInfo>,
    /// Variables whose device address was already recorded.
    symbols_noted: HashSet<u64>,
    /// Module handle (cuModuleLoadData / hipModuleLoadData) -> its code object.
    modules: HashMap<u64, ContentHash>,
}

impl Tables {
    fn bind_stub(&mut self, stub: u64, name: String, co: ContentHash) {
        self.launch_prefix.remove(&stub);
        self.stubs.insert(stub, (name, co));
    }
}

#[derive(Default)]
pub struct KernelRegistry {
    tables: Mutex<Tables>,
    generation: AtomicU64,
}

impl KernelRegistry {
    /// Changes whenever a launch cache entry may have become stale.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// A fat binary registered under `handle` holds the code object `co`.
    pub fn add_fat_binary(&self, handle: u64, co: ContentHash) {
        self.tables.lock().fatbins.insert(handle, co);
    }

    /// Every code object registration and module loads named (a forked child's
    /// directory gets them all).
    pub fn code_objects(&self) -> Vec<ContentHash> {
        let t = self.tables.lock();
        let mut all: Vec<ContentHash> = t
            .fatbins
            .values()
            .chain(t.modules.values())
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// In a forked child: symbol addresses the parent recorded are not in the child's log,
    /// so the child records each again on its first use.
    pub fn fork_child_forget_symbols(&self) {
        self.tables.lock().symbols_noted.clear();
    }

    /// A module loaded as `module` holds the code object `co`.
    pub fn add_module(&self, module: u64, co: ContentHash) {
        self.tables.lock().modules.insert(module, co);
    }

    /// HIP: the explicit parameter layout of each kernel in a code object, from its
    /// AMDGPU metadata note (for fat binaries and modules alike). Without them a launch
    /// is recorded without its arguments, marked incomplete.
    pub fn add_hip_layouts(&self, co: ContentHash, image: &[u8]) {
        if let Ok(ks) = hrr_archive::amdgpu::kernels_of_code_object(image) {
            let mut t = self.tables.lock();
            for k in ks {
                t.hip_layouts
                    .insert((co, k.name.clone()), k.explicit_params());
            }
        }
    }

    /// `__cudaRegisterFunction` / `__hipRegisterFunction`: the host stub launches the
    /// device function `name` of the fat binary `fatbin`. The code object, if capture saw
    /// that fat binary registered.
    pub fn register_function(&self, fatbin: u64, stub: u64, name: String) -> Option<ContentHash> {
        let mut t = self.tables.lock();
        let co = t.fatbins.get(&fatbin).copied()?;
        t.bind_stub(stub, name, co);
        self.bump();
        Some(co)
    }

    /// `__cudaRegisterVar` / `__hipRegisterVar`: the host shadow `host_var` stands for the
    /// variable `name` of `size` bytes in the fat binary `fatbin`. Its address is recorded
    /// again at its next use. The code object, if capture saw the fat binary.
    pub fn register_var(
        &self,
        fatbin: u64,
        host_var: u64,
        name: String,
        size: u64,
    ) -> Option<ContentHash> {
        let mut t = self.tables.lock();
        let co = t.fatbins.get(&fatbin).copied()?;
        t.vars.insert(
            host_var,
            VarInfo {
                name,
                code_object: co,
                size,
            },
        );
        t.symbols_noted.remove(&host_var);
        Some(co)
    }

    /// `cuModuleGetFunction` / `hipModuleGetFunction`: `func` (when non-zero) is the
    /// function `name` of `module`, launched like a registered stub. The module's code
    /// object, if capture saw it loaded.
    pub fn bind_module_function(
        &self,
        module: u64,
        func: u64,
        name: String,
    ) -> Option<ContentHash> {
        let mut t = self.tables.lock();
        let co = t.modules.get(&module).copied()?;
        if func != 0 {
            t.bind_stub(func, name, co);
            self.bump();
        }
        Some(co)
    }

    /// The code object of a module (or library) capture saw loaded.
    pub fn module_code_object(&self, module: u64) -> Option<ContentHash> {
        self.tables.lock().modules.get(&module).copied()
    }

    /// `cuKernelGetFunction`: `func` launches what the handle `of` (a library kernel)
    /// launches. Its name and code object, if capture knew `of`.
    pub fn alias_function(&self, of: u64, func: u64) -> Option<(String, ContentHash)> {
        let mut t = self.tables.lock();
        let (name, co) = t.stubs.get(&of).cloned()?;
        if func != 0 {
            t.bind_stub(func, name.clone(), co);
            if let Some(l) = t.layouts.get(&of).cloned() {
                t.layouts.insert(func, l);
            }
            self.bump();
        }
        Some((name, co))
    }

    /// `__cudaGetKernel`: the kernel handle `kernel` launches the host stub `stub`.
    pub fn bind_kernel(&self, kernel: u64, stub: u64) {
        let old = self.tables.lock().kernels.insert(kernel, stub);
        if old.is_some_and(|o| o != stub) {
            self.bump();
        }
    }

    /// The host stub behind a kernel handle (0 when unknown).
    pub fn stub_of_kernel(&self, kernel: u64) -> u64 {
        self.tables
            .lock()
            .kernels
            .get(&kernel)
            .copied()
            .unwrap_or(0)
    }

    /// HIP: the parameter layout of the kernel a stub (or module function) names.
    pub fn hip_layout(&self, stub: u64) -> Option<Layout> {
        let t = self.tables.lock();
        let (name, co) = t.stubs.get(&stub)?;
        t.hip_layouts.get(&(*co, name.clone())).cloned()
    }

    /// CUDA: a layout the driver reported before for this function or kernel handle.
    pub fn cached_layout(&self, handle: u64) -> Option<Layout> {
        self.tables.lock().layouts.get(&handle).cloned()
    }

    pub fn cache_layout(&self, handle: u64, layout: Layout) {
        self.tables.lock().layouts.insert(handle, layout);
    }

    /// A launch record's fixed fields for a stub (kernel name, code object), encoded on
    /// first use; None when the stub was never registered.
    pub fn launch_prefix(&self, stub: u64) -> Option<Arc<PayloadWriter>> {
        let mut t = self.tables.lock();
        if let Some(pre) = t.launch_prefix.get(&stub) {
            return Some(pre.clone());
        }
        let (name, co) = t.stubs.get(&stub)?;
        let mut pre = PayloadWriter::new();
        pre.str(fid::NAME, name).str(fid::CODE_OBJECT, &co.to_hex());
        let pre = Arc::new(pre);
        t.launch_prefix.insert(stub, pre.clone());
        Some(pre)
    }

    /// A registered variable, by its host shadow's address.
    pub fn var_info(&self, host_var: u64) -> Option<VarInfo> {
        self.tables.lock().vars.get(&host_var).cloned()
    }

    /// Marks a variable's address as recorded; true the first time.
    pub fn first_symbol_use(&self, host_var: u64) -> bool {
        self.tables.lock().symbols_noted.insert(host_var)
    }

    /// The registry's lock, for the fork protocol (`fork.rs`).
    pub fn fork_locks(&self) -> [&dyn ForkLock; 1] {
        [&self.tables]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn co(b: u8) -> ContentHash {
        ContentHash::of(&[b])
    }

    #[test]
    fn registration_binds_stubs_to_their_fat_binarys_code_object() {
        let r = KernelRegistry::default();
        // A function of a fat binary capture never saw: nothing bound.
        assert_eq!(r.register_function(1, 0x10, "k".into()), None);
        assert!(r.launch_prefix(0x10).is_none());
        r.add_fat_binary(1, co(1));
        let g = r.generation();
        assert_eq!(r.register_function(1, 0x10, "k".into()), Some(co(1)));
        assert!(r.generation() > g, "rebinding retires launch caches");
        let pre = r.launch_prefix(0x10).unwrap();
        assert!(Arc::ptr_eq(&pre, &r.launch_prefix(0x10).unwrap()));
        // Rebinding the stub drops its encoded prefix.
        r.add_fat_binary(2, co(2));
        r.register_function(2, 0x10, "k2".into());
        assert!(!Arc::ptr_eq(&pre, &r.launch_prefix(0x10).unwrap()));
    }

    #[test]
    fn kernels_modules_and_variables() {
        let r = KernelRegistry::default();
        r.bind_kernel(0xa, 0x10);
        let g = r.generation();
        r.bind_kernel(0xa, 0x10);
        assert_eq!(r.generation(), g, "the same binding again changes nothing");
        r.bind_kernel(0xa, 0x20);
        assert!(r.generation() > g);
        assert_eq!((r.stub_of_kernel(0xa), r.stub_of_kernel(0xb)), (0x20, 0));

        assert_eq!(r.bind_module_function(7, 0x30, "f".into()), None);
        r.add_module(7, co(7));
        assert_eq!(r.bind_module_function(7, 0x30, "f".into()), Some(co(7)));
        assert_eq!(r.hip_layout(0x30), None, "no metadata note was read");

        r.add_fat_binary(1, co(1));
        assert_eq!(r.register_var(1, 0x40, "v".into(), 16), Some(co(1)));
        assert!(r.first_symbol_use(0x40));
        assert!(!r.first_symbol_use(0x40));
        r.register_var(1, 0x40, "v".into(), 16);
        assert!(r.first_symbol_use(0x40), "re-registration records it again");
        assert_eq!(r.var_info(0x40).map(|v| v.size), Some(16));

        r.cache_layout(0x50, vec![(0, 8)]);
        assert_eq!(r.cached_layout(0x50), Some(vec![(0, 8)]));
    }
}
