//! The C side of the shims: CUDA's and HIP's `dim3`, and reads of memory the program
//! handed to the runtime (argument bytes, names, values an out parameter received).
//! Every read is `unsafe`: its caller states why the memory is there.

use std::ffi::{c_char, CStr};
use std::os::raw::c_uint;

/// CUDA's and HIP's `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

impl Dim3 {
    /// The three extents as the record stores them.
    #[inline]
    pub fn to_u64s(self) -> [u64; 3] {
        [self.x as u64, self.y as u64, self.z as u64]
    }
}

/// `len` bytes at `p` (empty for a null pointer or no bytes).
///
/// # Safety
/// A non-null `p` must be valid for reads of `len` bytes while the slice is used.
pub unsafe fn bytes_at<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, len) }
}

/// `len` bytes at the address `ptr`, as the generic rows carry pointers (u64).
///
/// # Safety
/// As [`bytes_at`].
pub unsafe fn host_bytes<'a>(ptr: u64, len: u64) -> &'a [u8] {
    // SAFETY: the caller's contract.
    unsafe { bytes_at(ptr as usize as *const u8, len as usize) }
}

/// The value of type `T` at the address `at` (what a call stored through an out pointer).
///
/// # Safety
/// `at` must be non-null, aligned for `T` and hold an initialised `T`.
pub unsafe fn read_at<T: Copy>(at: u64) -> T {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::read(at as usize as *const T) }
}

/// A C string's text (lossy UTF-8; empty for null).
///
/// # Safety
/// A non-null `p` must point at a NUL-terminated string.
pub unsafe fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_of_null_or_empty_memory_are_empty() {
        // SAFETY: null and zero-length reads touch no memory.
        unsafe {
            assert!(bytes_at(std::ptr::null(), 8).is_empty());
            assert!(host_bytes(0x1000, 0).is_empty());
            assert_eq!(c_string(std::ptr::null()), "");
        }
        let v: u64 = 0x1122_3344_5566_7788;
        // SAFETY: a live, aligned u64 and its 8 bytes.
        unsafe {
            assert_eq!(read_at::<u64>(&v as *const u64 as u64), v);
            assert_eq!(host_bytes(&v as *const u64 as u64, 8), v.to_ne_bytes());
            assert_eq!(c_string(c"kern".as_ptr()), "kern");
        }
        assert_eq!(Dim3 { x: 1, y: 2, z: 3 }.to_u64s(), [1, 2, 3]);
    }
}
