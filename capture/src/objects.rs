//! Live arrays and texture/surface objects seen by capture. Arrays: their handle and the
//! bytes of one element (a 3D copy with an array side counts its width in elements).
//! Objects: the live texture and surface handles, which kernel arguments may carry by
//! value; a launch records which of its argument words held one (`fid::ARG_OBJECT_WORDS`)
//! so replay puts its own handle there, as it translates pointer words.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use hrr_archive::sync::{ForkLock, RwLock};

#[derive(Default)]
pub struct ObjectTable {
    /// Array (or mipmapped array) handle -> bytes of one element.
    arrays: RwLock<HashMap<u64, u64>>,
    /// Live object handle -> how many objects have it (a texture and a surface object
    /// may share a value).
    objects: RwLock<HashMap<u64, u32>>,
    /// How many objects are live: a launch of a program without any takes no lock.
    live: AtomicUsize,
}

impl ObjectTable {
    pub fn insert_array(&self, handle: u64, element_bytes: Option<u64>) {
        if handle != 0 {
            self.arrays
                .write()
                .insert(handle, element_bytes.unwrap_or(0));
        }
    }
    pub fn remove_array(&self, handle: u64) {
        self.arrays.write().remove(&handle);
    }
    /// The bytes of one element of a live array; None for an unknown array or format.
    pub fn element_bytes(&self, handle: u64) -> Option<u64> {
        self.arrays.read().get(&handle).copied().filter(|&e| e > 0)
    }
    pub fn insert_object(&self, handle: u64) {
        *self.objects.write().entry(handle).or_insert(0) += 1;
        self.live.fetch_add(1, Ordering::Release);
    }
    pub fn remove_object(&self, handle: u64) {
        let mut objects = self.objects.write();
        if let Some(n) = objects.get_mut(&handle) {
            *n -= 1;
            if *n == 0 {
                objects.remove(&handle);
            }
            self.live.fetch_sub(1, Ordering::Release);
        }
    }
    /// The byte offsets of the 8-byte words of `bytes` (one kernel argument) that hold a
    /// live texture or surface object.
    pub fn object_words(&self, bytes: &[u8]) -> Vec<u64> {
        if self.live.load(Ordering::Acquire) == 0 || bytes.len() < 8 {
            return Vec::new();
        }
        let live = self.objects.read();
        bytes
            .chunks_exact(8)
            .enumerate()
            .filter(|(_, w)| {
                live.contains_key(&u64::from_le_bytes((*w).try_into().unwrap_or([0; 8])))
            })
            .map(|(i, _)| (i * 8) as u64)
            .collect()
    }

    /// The tables' locks, in their order, for the fork protocol (`fork.rs`).
    pub fn fork_locks(&self) -> [&dyn ForkLock; 2] {
        [&self.arrays, &self.objects]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_live_objects_are_found_in_argument_words() {
        let t = ObjectTable::default();
        let mut arg = Vec::new();
        for v in [7u64, 0x55, 7] {
            arg.extend_from_slice(&v.to_le_bytes());
        }
        assert!(t.object_words(&arg).is_empty());
        t.insert_object(7);
        assert_eq!(t.object_words(&arg), [0, 16]);
        assert!(
            t.object_words(&7u32.to_le_bytes()).is_empty(),
            "no whole word"
        );
        t.remove_object(7);
        assert!(t.object_words(&arg).is_empty());
    }

    #[test]
    fn arrays_know_their_element_size() {
        let t = ObjectTable::default();
        t.insert_array(0xa0, Some(4));
        t.insert_array(0xb0, None);
        assert_eq!(t.element_bytes(0xa0), Some(4));
        assert_eq!(t.element_bytes(0xb0), None);
        t.remove_array(0xa0);
        assert_eq!(t.element_bytes(0xa0), None);
    }
}
