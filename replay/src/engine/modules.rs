//! The program's own modules and libraries at replay: a load made again as its own
//! replay instance, an unload, a function or kernel looked up in an instance (or the
//! function behind a kernel), and a device variable's captured address mapped to the
//! same variable in the replay module. Each handler takes the runtime, the archive and
//! the parts it changes: the code loaded, and for a variable the translation.

use std::os::raw::c_void;

use hrr_archive::api::sigs;
use hrr_archive::api::{fid, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::{Event, ProcessArchive};

use super::code::{load_module, unload_module, Code};
use super::error::{EvResult, EventError};
use super::translation::Translation;
use crate::runtime::Runtime;

/// The program's module (or library) load: its own replay instance, loaded now.
pub(super) fn replay_module_load(
    rt: &Runtime,
    proc_: &ProcessArchive,
    code: &mut Code,
    ev: &Event,
) -> EvResult {
    let p = Payload::parse(&ev.payload)?;
    let handle = p.handle(fid::HANDLE, "module")?;
    if ev.header.ret != 0 || handle == 0 {
        return Ok(()); // the load failed at capture: nothing was loaded
    }
    let co = p.str(fid::CODE_OBJECT, "code object")?.to_string();
    let m = load_module(rt, proc_, &co)?;
    if let Some(old) = code.module_instances.insert(handle, m) {
        // A handle reused after an unload capture did not see.
        code.forget_functions_of(handle);
        let _ = unload_module(rt, old);
    }
    Ok(())
}

/// `cuModuleUnload` / `cuLibraryUnload` / `hipModuleUnload`: the instance goes.
pub(super) fn replay_module_unload(rt: &Runtime, code: &mut Code, ev: &Event) -> EvResult {
    let p = Payload::parse(&ev.payload)?;
    let handle = p.handle(fid::HANDLE, "module")?;
    if ev.header.ret != 0 {
        return Ok(());
    }
    if let Some(m) = code.module_instances.remove(&handle) {
        code.forget_functions_of(handle);
        let r = unload_module(rt, m)?;
        if r != 0 {
            return Err(EventError::Call {
                call: "unloading the module".into(),
                code: r,
            });
        }
    }
    Ok(())
}

/// A function (or library kernel) looked up in a module instance, or (for
/// `cuKernelGetFunction`) the function behind a kernel: mapped to replay's.
pub(super) fn replay_get_function(rt: &Runtime, code: &mut Code, ev: &Event) -> EvResult {
    let p = Payload::parse(&ev.payload)?;
    let handle = p.handle(fid::HANDLE, "function")?;
    let of = p.handle(fid::KERNEL, "module")?;
    if ev.header.ret != 0 || handle == 0 {
        return Ok(());
    }
    // A live module first: a stale function handle (its module unloaded) is never
    // consulted, and a live module and a live kernel never share an address.
    let (f, module) = match code.module_instances.get(&of) {
        Some(&m) => {
            let name = p.str(fid::NAME, "kernel name")?.to_string();
            (code.get_function(rt, m, &name)?, of)
        }
        None => match code.function_instances.get(&of) {
            // cuKernelGetFunction: the function behind a kernel, of its module.
            Some(&f) => (f, code.function_module.get(&of).copied().unwrap_or(0)),
            None => return Ok(()), // a module capture saw no load of: launched by code object
        },
    };
    code.function_instances.insert(handle, f);
    code.function_module.insert(handle, module);
    Ok(())
}

/// A `__device__`/`__constant__` variable's captured address, mapped to the same
/// variable in the replay module (`cuModuleGetGlobal` / `hipModuleGetGlobal`).
pub(super) fn replay_symbol_address(
    rt: &Runtime,
    proc_: &ProcessArchive,
    code: &mut Code,
    tr: &mut Translation,
    ev: &Event,
) -> EvResult {
    let p = Payload::parse(&ev.payload)?;
    let name = p.str(fid::NAME, "variable name")?.to_string();
    let co = p.str(fid::CODE_OBJECT, "code object")?.to_string();
    let captured = p.devptr(fid::DEVICE_ADDRESS, "device address")?;
    let size = p.u64(fid::SIZE, "size")?;
    // A driver global names its module instance; a `__device__` variable its code object.
    let instance = p
        .get(fid::HANDLE)
        .and_then(|f| f.as_u64().ok())
        .and_then(|h| code.module_instances.get(&h).copied());
    let module = match instance {
        Some(m) => m,
        None => code.module(rt, proc_, &co)?,
    };
    let get = match rt.vendor {
        Vendor::Cuda => "cuModuleGetGlobal_v2",
        Vendor::Hip => "hipModuleGetGlobal",
    };
    // SAFETY: cuModuleGetGlobal_v2 / hipModuleGetGlobal have this C type.
    let g = unsafe { rt.typed::<sigs::ModuleGetGlobal>(get) }?;
    let cname = std::ffi::CString::new(name.as_str())
        .map_err(|_| EventError::Inconsistent(format!("variable name {name:?} holds a NUL")))?;
    let mut dptr: u64 = 0;
    let mut bytes: usize = 0;
    // SAFETY: out pointers to locals, replay's module, a NUL-terminated name.
    let r = unsafe {
        g(
            &mut dptr,
            &mut bytes,
            module as usize as *mut c_void,
            cname.as_ptr(),
        )
    };
    if r != 0 {
        return Err(EventError::Call {
            call: format!("{get}({name})"),
            code: r,
        });
    }
    if bytes as u64 != size {
        return Err(EventError::Inconsistent(format!(
            "variable {name}: {bytes} bytes in the replay module, {size} at capture"
        )));
    }
    tr.addrs.insert(captured, size, dptr);
    Ok(())
}
