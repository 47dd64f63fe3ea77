//! Replay's large host buffers: page-aligned memory of its own that the runtime may
//! page-lock (copy staging, the buffers standing in for a program's registered memory,
//! graph copy nodes' host sides).
//!
//! Fresh memory costs a page fault per page before the first copy can use it, and
//! registering it faults every page on the runtime's one thread. So from `LARGE_BYTES`
//! on a buffer starts on a 2 MiB boundary and asks the kernel for transparent huge pages
//! (a fault per 2 MiB where the system allows them; where it does not, nothing changes),
//! and its pages are faulted in by several threads before anyone registers it.
//!
//! A size the system refuses is an error (`NoMemory`), not an abort: lengths come from an
//! untrusted archive.

/// Buffers this large are aligned for huge pages and faulted in ahead.
pub const LARGE_BYTES: usize = 8 << 20;
const PAGE: usize = 4096;
const HUGE_PAGE: usize = 2 << 20;

/// The system refused memory for a host buffer.
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate {bytes} bytes of host memory for the copy")]
pub struct NoMemory {
    pub bytes: usize,
}

/// `len` bytes of page-aligned host memory of an anonymous mapping of its own, zeroed
/// when new, unmapped when dropped.
pub struct Pages {
    /// The mapping (null for an empty buffer) and its length.
    base: *mut u8,
    map_len: usize,
    /// Where the used part starts in the mapping, and its length.
    offset: usize,
    len: usize,
}

impl Default for Pages {
    fn default() -> Self {
        Pages {
            base: std::ptr::null_mut(),
            map_len: 0,
            offset: 0,
            len: 0,
        }
    }
}

impl Pages {
    /// `len` zeroed bytes, aligned to a page (to 2 MiB and faulted in from
    /// `LARGE_BYTES` on), or the system's refusal.
    ///
    /// A mapping of its own, not the allocator's: once a large block has been freed,
    /// glibc serves the next one of that size from its heap, and its calloc clears
    /// every byte there itself (10 ms for 16 MiB, measured on the H200's host, where a
    /// fresh mapping's pages cost 1 ms to fault in).
    pub fn new(len: usize) -> Result<Pages, NoMemory> {
        if len == 0 {
            return Ok(Pages::default());
        }
        let large = len >= LARGE_BYTES;
        let align = if large { HUGE_PAGE } else { PAGE };
        let map_len = len
            .checked_add(if large { HUGE_PAGE } else { 0 })
            .ok_or(NoMemory { bytes: usize::MAX })?;
        // SAFETY: a new private anonymous mapping (no file, no fixed address): it
        // aliases nothing, and this value owns it until `drop` unmaps it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(NoMemory { bytes: map_len });
        }
        let base = base.cast::<u8>();
        let offset = (align - base as usize % align) % align;
        let mut p = Pages {
            base,
            map_len,
            offset,
            len,
        };
        if large {
            advise_huge(p.as_mut_slice());
            touch_pages(p.as_mut_slice());
        }
        Ok(p)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The address of the first byte.
    pub fn addr(&self) -> u64 {
        self.as_slice().as_ptr() as u64
    }

    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `offset + len <= map_len` bytes of the mapping this value owns, mapped
        // readable and writable until `drop`; `&self` keeps them from being written
        // through `as_mut_slice` meanwhile.
        unsafe { std::slice::from_raw_parts(self.base.add(self.offset), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `as_slice`, borrowed exclusively through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.offset), self.len) }
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        if !self.base.is_null() {
            // SAFETY: unmaps the mapping `new` made, which no slice outlives (slices
            // borrow `self`).
            let _ = unsafe { libc::munmap(self.base.cast::<libc::c_void>(), self.map_len) };
        }
    }
}

/// Threads for one pass over a large buffer (one thread reaches a fraction of memory
/// bandwidth).
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |t| t.get().min(8))
}

/// Asks for transparent huge pages over `buf` (advice: a refusal changes nothing).
fn advise_huge(buf: &mut [u8]) {
    // SAFETY: madvise over memory this buffer owns; MADV_HUGEPAGE changes how its pages
    // are backed, never their contents or their mapping.
    let _ = unsafe {
        libc::madvise(
            buf.as_mut_ptr().cast::<libc::c_void>(),
            buf.len(),
            libc::MADV_HUGEPAGE,
        )
    };
}

/// Writes one byte of every page of `buf` from several threads, so the kernel maps (and
/// zeroes) its pages in parallel.
fn touch_pages(buf: &mut [u8]) {
    let threads = threads();
    let step = buf.len().div_ceil(threads).div_ceil(HUGE_PAGE).max(1) * HUGE_PAGE;
    std::thread::scope(|s| {
        for part in buf.chunks_mut(step) {
            s.spawn(move || {
                for page in part.chunks_mut(PAGE) {
                    // The store is what faults the page in; the mapping is zero
                    // already, and a zero the compiler cannot see is never dropped.
                    page[0] = std::hint::black_box(0);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_large_ones_faulted_in() {
        for len in [0usize, 1, 4095, LARGE_BYTES, LARGE_BYTES + 5] {
            let mut p = Pages::new(len).unwrap();
            assert_eq!(p.len(), len);
            let align = if len >= LARGE_BYTES { HUGE_PAGE } else { PAGE };
            if len > 0 {
                assert_eq!(p.addr() as usize % align, 0, "{len}");
            }
            assert!(p.as_slice().iter().all(|&b| b == 0), "{len}");
            p.as_mut_slice().fill(3);
            assert!(p.as_slice().iter().all(|&b| b == 3));
        }
    }

    #[test]
    fn a_size_the_system_refuses_is_an_error() {
        assert!(Pages::new(usize::MAX - 1).is_err());
        assert!(Pages::new(isize::MAX as usize).is_err());
    }
}
