//! GPU drivers and runtimes loaded into a link-map namespace of their own (`dlmopen`).
//! LD_PRELOAD places capture in the base namespace only: a `libcuda.so.1` (or a runtime)
//! loaded into another namespace binds its callers to that namespace's copies of the C
//! library and of the driver, so none of their calls reaches capture, and capture's own
//! functions must never stand in for that instance's (they forward to the base
//! namespace's driver, a different instance with different contexts).
//!
//! So: a lookup whose answer lies in such an instance keeps the answer and is noted as
//! unmodelled (`lookup::hand_out`), and at exit every such instance among the loaded
//! objects is recorded as an unmodelled call named after it, so replay refuses the
//! archive by name instead of missing work it never saw.

use std::ffi::{c_void, CString};

use crate::private_runtime;

/// File names of the objects whose calls capture records (the driver, the runtimes).
fn is_gpu_runtime(file: &str) -> bool {
    ["libcuda.so", "libcudart.so", "libamdhip64.so"]
        .iter()
        .any(|p| file.starts_with(p))
}

/// Whether the object loaded at `base` from `path` is the base namespace's instance of
/// that file (false when the base namespace has none loaded, or another one).
pub fn in_base_namespace(path: &str, base: usize) -> bool {
    let Ok(c) = CString::new(path) else {
        return false;
    };
    // SAFETY: RTLD_NOLOAD only returns a handle to an object the base namespace already
    // has (taking one reference, given back below); dlinfo writes the handle's
    // `struct link_map*`, whose first member is `l_addr`, the object's load base
    // (<link.h>: a stable glibc ABI).
    unsafe {
        let h = libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if h.is_null() {
            return false;
        }
        let mut map: *mut c_void = std::ptr::null_mut();
        let ok = libc::dlinfo(h, libc::RTLD_DI_LINKMAP, &mut map as *mut _ as *mut c_void) == 0
            && !map.is_null()
            && *(map as *const usize) == base;
        libc::dlclose(h);
        ok
    }
}

/// The objects mapped from a file whose name `keep` accepts, from the text of
/// `/proc/self/maps`: (path, load base), one per loaded instance (the mapping of the
/// file's first page, offset 0). The loader's own list cannot serve: `dl_iterate_phdr`
/// walks only its caller's namespace.
fn instances_in_maps(maps: &str, keep: impl Fn(&str) -> bool) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(_perms), Some(offset), Some(_dev), Some(_inode)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let Some(path) = f.next().filter(|p| p.starts_with('/')) else {
            continue;
        };
        let file = path.rsplit('/').next().unwrap_or(path);
        let start = range
            .split('-')
            .next()
            .and_then(|s| usize::from_str_radix(s, 16).ok());
        if let (Some(start), true) = (start, u64::from_str_radix(offset, 16) == Ok(0)) {
            if keep(file) && !out.iter().any(|(_, b)| *b == start) {
                out.push((path.to_string(), start));
            }
        }
    }
    out
}

/// Every loaded GPU driver or runtime outside the base namespace: (path, base).
fn foreign_instances() -> Vec<(String, usize)> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    let mut all = instances_in_maps(&maps, is_gpu_runtime);
    all.retain(|(path, base)| !in_base_namespace(path, *base));
    all
}

/// The paths of the GPU drivers and runtimes loaded outside the base namespace (for the
/// exit notice of a process that recorded nothing).
pub fn foreign_paths() -> Vec<String> {
    foreign_instances().into_iter().map(|(p, _)| p).collect()
}

/// At exit: each GPU driver or runtime loaded into another namespace, recorded as an
/// unmodelled call (`dlmopen namespace: FILE`) that replay refuses by name.
pub fn record_at_exit(w: &hrr_archive::writer::ProcessWriter) {
    for (path, _) in foreign_instances() {
        let file = path.rsplit('/').next().unwrap_or(&path).to_string();
        private_runtime::refuse(
            w,
            &format!("dlmopen namespace: {file}"),
            &path,
            &format!("warning: {path} was loaded into a link-map namespace of its own (dlmopen), where capture is not: the GPU work done through it was not recorded; hrr-replay will refuse the archive"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn gpu_runtimes_are_told_by_file_name() {
        assert!(is_gpu_runtime("libcuda.so.1") && is_gpu_runtime("libcudart.so.13"));
        assert!(is_gpu_runtime("libamdhip64.so.5"));
        assert!(!is_gpu_runtime("libcublas.so.13") && !is_gpu_runtime("libc.so.6"));
    }

    #[test]
    fn each_instance_is_the_mapping_of_its_first_page() {
        let maps = "\
7f0000000000-7f0000001000 r--p 00000000 08:01 11 /usr/lib/libcuda.so.1
7f0000001000-7f0000009000 r-xp 00001000 08:01 11 /usr/lib/libcuda.so.1
7f1000000000-7f1000001000 r--p 00000000 08:01 11 /usr/lib/libcuda.so.1
7f2000000000-7f2000001000 r--p 00000000 08:01 12 /usr/lib/libc.so.6
7f3000000000-7f3000001000 rw-p 00000000 00:00 0
7f4000000000-7f4000001000 r--p 00000000 08:01 13 /opt/x/libamdhip64.so.5 (deleted)
";
        assert_eq!(
            instances_in_maps(maps, is_gpu_runtime),
            [
                ("/usr/lib/libcuda.so.1".to_string(), 0x7f00_0000_0000),
                ("/usr/lib/libcuda.so.1".to_string(), 0x7f10_0000_0000),
                ("/opt/x/libamdhip64.so.5".to_string(), 0x7f40_0000_0000),
            ]
        );
    }

    #[test]
    fn the_c_library_is_the_base_namespace_s_own_and_a_wrong_base_is_not() {
        // SAFETY: all-zero bytes are a valid Dl_info (pointers and integers).
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr reads the loader's tables; `info` is a valid out struct.
        assert_ne!(
            unsafe { libc::dladdr(libc::strlen as *const c_void, &mut info) },
            0
        );
        // SAFETY: dladdr's file name is a NUL-terminated string of the loaded object.
        let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        let base = info.dli_fbase as usize;
        assert!(in_base_namespace(&path, base), "{path} at {base:#x}");
        assert!(!in_base_namespace(&path, base + 4096));
        assert!(!in_base_namespace("/nonexistent/libcuda.so.1", base));
    }
}
