//! The C library's own `dlsym` and `dlvsym`, found in libc.so.6's dynamic symbol table
//! (GNU hash, or the SysV hash where there is none), never through `dlsym`: capture
//! exports `dlsym` itself (`lookup.rs`), so asking `dlsym` for the real one would ask
//! capture, and `dlvsym` is capture's too.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

/// C type of `dlsym`.
pub type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
/// C type of `dlvsym`.
pub type DlvsymFn = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;

/// libc's `dlsym`, once found (the trampolines jump through these).
pub static REAL_DLSYM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
/// libc's `dlvsym`, once found.
pub static REAL_DLVSYM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// The GNU hash of a symbol name (the ELF gABI extension's `dl_new_hash`).
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter()
        .fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

/// The SysV ELF hash of a symbol name.
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(c as u32);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

/// An entry of the dynamic section (`Elf64_Dyn`): a tag and a value or address.
#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

const DT_NULL: i64 = 0;
const DT_HASH: i64 = 4;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;

/// A loaded object's dynamic symbol table, as the dynamic section describes it.
pub struct DynTable {
    pub base: usize,
    pub symtab: *const libc::Elf64_Sym,
    pub strtab: *const c_char,
    pub gnu_hash: *const u32,
    pub sysv_hash: *const u32,
}

impl DynTable {
    /// The address of the defined symbol `name`, if the table has one.
    ///
    /// # Safety
    /// The table's pointers describe a loaded object's tables (as the loader laid them out).
    pub unsafe fn find(&self, name: &CStr) -> Option<usize> {
        let bytes = name.to_bytes();
        // SAFETY: the caller's contract: index `i` comes from the object's own hash table.
        let matches = |i: u32| unsafe {
            let s = &*self.symtab.add(i as usize);
            s.st_shndx != 0
                && s.st_value != 0
                && CStr::from_ptr(self.strtab.add(s.st_name as usize)).to_bytes() == bytes
        };
        // SAFETY: as above, for the symbol found.
        let address =
            |i: u32| unsafe { self.base + (*self.symtab.add(i as usize)).st_value as usize };
        if !self.gnu_hash.is_null() {
            // SAFETY: the GNU hash layout: nbuckets, symoffset, bloom size, bloom shift,
            // the bloom words (64-bit), the buckets, then the chain.
            unsafe {
                let gh = self.gnu_hash;
                let (nbuckets, symoffset, bloom_size) = (*gh, *gh.add(1), *gh.add(2));
                if nbuckets == 0 {
                    return None;
                }
                let buckets = (gh.add(4) as *const u64).add(bloom_size as usize) as *const u32;
                let chain = buckets.add(nbuckets as usize);
                let h = gnu_hash(bytes);
                let mut i = *buckets.add((h % nbuckets) as usize);
                if i < symoffset {
                    return None;
                }
                loop {
                    let ch = *chain.add((i - symoffset) as usize);
                    if ch | 1 == h | 1 && matches(i) {
                        return Some(address(i));
                    }
                    if ch & 1 != 0 {
                        return None;
                    }
                    i += 1;
                }
            }
        }
        if !self.sysv_hash.is_null() {
            // SAFETY: the SysV layout: nbucket, nchain, the buckets, then the chain.
            unsafe {
                let sh = self.sysv_hash;
                let nbucket = *sh;
                if nbucket == 0 {
                    return None;
                }
                let buckets = sh.add(2);
                let chain = buckets.add(nbucket as usize);
                let mut i = *buckets.add((sysv_hash(bytes) % nbucket) as usize);
                while i != 0 {
                    if matches(i) {
                        return Some(address(i));
                    }
                    i = *chain.add(i as usize);
                }
            }
        }
        None
    }
}

/// The dynamic table of the loaded object `info` describes, if it has one.
///
/// # Safety
/// `info` comes from `dl_iterate_phdr`, for the duration of its callback.
pub unsafe fn dyn_table(info: &libc::dl_phdr_info) -> Option<DynTable> {
    let base = info.dlpi_addr as usize;
    // SAFETY: the loader's program headers for this object.
    let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let dynamic = phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC)?;
    let mut d = (base + dynamic.p_vaddr as usize) as *const Dyn;
    // glibc relocates the dynamic section's addresses in place; others leave offsets.
    let at = |v: u64| {
        let v = v as usize;
        if v < base {
            v + base
        } else {
            v
        }
    };
    let mut t = DynTable {
        base,
        symtab: std::ptr::null(),
        strtab: std::ptr::null(),
        gnu_hash: std::ptr::null(),
        sysv_hash: std::ptr::null(),
    };
    // SAFETY: the dynamic section ends with DT_NULL.
    unsafe {
        while (*d).tag != DT_NULL {
            let v = (*d).val;
            match (*d).tag {
                DT_SYMTAB => t.symtab = at(v) as *const _,
                DT_STRTAB => t.strtab = at(v) as *const _,
                DT_HASH => t.sysv_hash = at(v) as *const _,
                DT_GNU_HASH => t.gnu_hash = at(v) as *const _,
                _ => {}
            }
            d = d.add(1);
        }
    }
    (!t.symtab.is_null() && !t.strtab.is_null()).then_some(t)
}

/// Whether a loaded object's path names the C library.
fn is_libc(path: &[u8]) -> bool {
    path.rsplit(|&b| b == b'/')
        .next()
        .is_some_and(|f| f.starts_with(b"libc.so"))
}

/// Finds libc's `dlsym` and `dlvsym` and stores them; true when both are known.
pub fn resolve() -> bool {
    if !REAL_DLSYM.load(Ordering::Acquire).is_null()
        && !REAL_DLVSYM.load(Ordering::Acquire).is_null()
    {
        return true;
    }
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, _: *mut c_void) -> i32 {
        // SAFETY: dl_iterate_phdr passes a valid info for the call.
        let info = unsafe { &*info };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: the loader's NUL-terminated path of this object.
        let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes();
        if !is_libc(path) {
            return 0;
        }
        // SAFETY: as above; the tables are the loaded libc's.
        let Some(t) = (unsafe { dyn_table(info) }) else {
            return 0;
        };
        // SAFETY: as above.
        let (s, v) = unsafe { (t.find(c"dlsym"), t.find(c"dlvsym")) };
        if let (Some(s), Some(v)) = (s, v) {
            REAL_DLSYM.store(s as *mut c_void, Ordering::Release);
            REAL_DLVSYM.store(v as *mut c_void, Ordering::Release);
            return 1;
        }
        0
    }
    // SAFETY: the callback only reads the loader's tables and stores two atomics.
    unsafe { libc::dl_iterate_phdr(Some(each), std::ptr::null_mut()) };
    !REAL_DLSYM.load(Ordering::Acquire).is_null()
}

/// libc's `dlsym`, or None where it could not be found.
pub fn dlsym() -> Option<DlsymFn> {
    let p = REAL_DLSYM.load(Ordering::Acquire);
    // SAFETY: a non-null value is libc's dlsym, whose C type this is.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, DlsymFn>(p) })
}

/// libc's `dlvsym`, or None where it could not be found.
pub fn dlvsym() -> Option<DlvsymFn> {
    let p = REAL_DLVSYM.load(Ordering::Acquire);
    // SAFETY: a non-null value is libc's dlvsym, whose C type this is.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, DlvsymFn>(p) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_known_values() {
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(gnu_hash(b"printf"), 0x156b_2bb8);
        assert_eq!(sysv_hash(b"printf"), 0x077905a6);
    }

    #[test]
    fn libcs_dlsym_is_found_in_its_own_table_and_answers() {
        assert!(resolve(), "libc's dlsym and dlvsym");
        let f = dlsym().unwrap();
        // SAFETY: libc's dlsym with RTLD_DEFAULT and a NUL-terminated name.
        let p = unsafe { f(libc::RTLD_DEFAULT, c"strlen".as_ptr()) };
        assert_eq!(p as usize, libc::strlen as *const () as usize);
        let v = dlvsym().unwrap();
        // SAFETY: as above, with a version every x86-64 glibc defines.
        let q = unsafe {
            v(
                libc::RTLD_DEFAULT,
                c"strlen".as_ptr(),
                c"GLIBC_2.2.5".as_ptr(),
            )
        };
        assert_eq!(q as usize, libc::strlen as *const () as usize);
    }
}
