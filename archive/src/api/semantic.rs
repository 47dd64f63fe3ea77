//! Record kinds that capture writes by hand (registration, launches, symbol addresses,
//! unreplayable calls): their ids, stable because archives record them, and names.

pub const REGISTER_FAT_BINARY: u16 = 100;
pub const REGISTER_FUNCTION: u16 = 101;
pub const REGISTER_VAR: u16 = 102;
pub const UNREGISTER_FAT_BINARY: u16 = 103;
/// The device address of a `__device__`/`__constant__` variable at capture (recorded
/// before the first symbol copy that touches it), so replay can map it to the same
/// variable in its own module (`cuModuleGetGlobal` / `hipModuleGetGlobal`). The copy
/// itself is recorded as a plain Memcpy / MemcpyAsync to or from that address.
pub const SYMBOL_ADDRESS: u16 = 104;
/// `cuModuleLoadData[Ex]` / `hipModuleLoadData`: a code object loaded from memory.
pub const MODULE_LOAD: u16 = 105;
/// `cuModuleGetFunction` / `hipModuleGetFunction`.
pub const MODULE_GET_FUNCTION: u16 = 106;
/// `cudaLaunchKernel` / `hipLaunchKernel`: launch by host stub.
pub const LAUNCH_KERNEL: u16 = 110;
/// `__cudaLaunchKernel`: launch by `cudaKernel_t` (CUDA 12.4+ triple-chevron path).
pub const LAUNCH_KERNEL_BY_HANDLE: u16 = 111;
/// `cuLaunchKernel` / `hipModuleLaunchKernel` / `hipExtModuleLaunchKernel`: a function
/// from a module loaded by the program; recorded like every launch (name, code object,
/// grid, block, arguments).
pub const MODULE_LAUNCH_KERNEL: u16 = 112;
/// An API that no other process can reproduce (host callbacks, IPC handles).
pub const UNREPLAYABLE: u16 = 120;
/// The expected output of an asynchronous device-to-host copy, read by capture once the
/// copy completed (off the program's thread) and attached to the copy's record, which
/// says its output is pending (`api::OUTPUT_PENDING_FIELD`). Fields: `fid::COPY_SEQ`
/// (the copy's sequence id), `fid::COPY_FIELD` (the copy parameter's field id) and the
/// bytes as a blob at `BLOB_FIELD | COPY_FIELD`; flagged incomplete, with the reason in
/// the manifest, when capture could not read them.
pub const COPY_OUTPUT: u16 = 171;

/// A record kind that capture writes by hand rather than from a table row. Its id is
/// stable: archives record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemanticKind {
    pub id: u16,
    pub name: &'static str,
}

/// Every hand-written record kind, by id (names as `api_name` prints them).
pub const SEMANTIC_KINDS: &[SemanticKind] = &[
    SemanticKind {
        id: REGISTER_FAT_BINARY,
        name: "RegisterFatBinary",
    },
    SemanticKind {
        id: REGISTER_FUNCTION,
        name: "RegisterFunction",
    },
    SemanticKind {
        id: REGISTER_VAR,
        name: "RegisterVar",
    },
    // Accepted by replay; capture does not intercept __cudaUnregisterFatBinary.
    SemanticKind {
        id: UNREGISTER_FAT_BINARY,
        name: "UnregisterFatBinary",
    },
    SemanticKind {
        id: SYMBOL_ADDRESS,
        name: "SymbolAddress",
    },
    SemanticKind {
        id: MODULE_LOAD,
        name: "ModuleLoadData",
    },
    SemanticKind {
        id: MODULE_GET_FUNCTION,
        name: "ModuleGetFunction",
    },
    SemanticKind {
        id: LAUNCH_KERNEL,
        name: "LaunchKernel",
    },
    SemanticKind {
        id: LAUNCH_KERNEL_BY_HANDLE,
        name: "LaunchKernelByHandle",
    },
    SemanticKind {
        id: MODULE_LAUNCH_KERNEL,
        name: "ModuleLaunchKernel",
    },
    SemanticKind {
        id: UNREPLAYABLE,
        name: "Unreplayable",
    },
    SemanticKind {
        id: COPY_OUTPUT,
        name: "CopyOutput",
    },
];
