//! Content hashes that name blobs and code objects: XXH3-128, and for content of
//! `TREE_MIN_BYTES` or more a two-level XXH3-128 tree whose leaves are hashed by
//! several threads at once.
//!
//! One thread hashes at 6-35 GB/s depending on the machine (6.4 GB/s on the H200's
//! host): a gigabyte copy would spend up to 160 ms hashing on the program's thread.
//! Large content is therefore cut into `TREE_LEAF_BYTES` leaves, each hashed on its
//! own, and named by the XXH3-128 of a domain tag, the length and the leaves' hashes.
//! Why XXH3-128 and not BLAKE3: docs/format.md ("Blob hash"), measurements in bench/RESULTS.md.

use std::fmt;

/// 128-bit content hash; its lowercase hex form is the file name of a blob or code object.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(pub [u8; 16]);

impl ContentHash {
    pub const HEX_LEN: usize = 32;

    pub fn of(data: &[u8]) -> Self {
        if data.len() >= TREE_MIN_BYTES {
            return tree(data);
        }
        // Canonical XXH3 byte order (big-endian), so names match `xxhsum -H2`.
        ContentHash(xxhash_rust::xxh3::xxh3_128(data).to_be_bytes())
    }

    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(32);
        for b in self.0 {
            s.push(char::from_digit((b >> 4) as u32, 16).unwrap_or('0'));
            s.push(char::from_digit((b & 15) as u32, 16).unwrap_or('0'));
        }
        s
    }

    /// Parses exactly 32 lowercase hex digits; anything else (a path, `..`, uppercase) is refused.
    pub fn from_hex(s: &str) -> Option<Self> {
        let bytes = s.as_bytes();
        if bytes.len() != Self::HEX_LEN {
            return None;
        }
        let mut out = [0u8; 16];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let hi = hex_digit(pair[0])?;
            let lo = hex_digit(pair[1])?;
            out[i] = (hi << 4) | lo;
        }
        Some(ContentHash(out))
    }
}

/// Content at least this long is hashed as a tree.
pub const TREE_MIN_BYTES: usize = 64 << 20;
/// The tree's leaf size: the last leaf may be shorter.
pub const TREE_LEAF_BYTES: usize = 16 << 20;
const TREE_TAG: &[u8; 16] = b"hrr-xxh3-tree-1\0";
const TREE_THREADS: usize = 8;

/// `src` read once, into a copy, and the copy's `ContentHash::of`: for memory something
/// else may write meanwhile (a kernel writing mapped or managed memory), so the name
/// always says what the copy holds. Tree content is copied and hashed leaf by leaf on up
/// to `TREE_THREADS` threads.
pub fn copy_and_hash(src: &[u8]) -> (Vec<u8>, ContentHash) {
    // Zeroed by the allocator (fresh pages for a large size), then written once.
    let mut copy = vec![0u8; src.len()];
    if src.len() < TREE_MIN_BYTES {
        let hash = ContentHash(copy_leaf(src, &mut copy));
        return (copy, hash);
    }
    let leaves = src.len().div_ceil(TREE_LEAF_BYTES);
    let mut digests = vec![[0u8; 16]; leaves];
    let per = leaves.div_ceil(tree_threads()) * TREE_LEAF_BYTES;
    std::thread::scope(|s| {
        for ((from, to), ds) in src
            .chunks(per)
            .zip(copy.chunks_mut(per))
            .zip(digests.chunks_mut(per / TREE_LEAF_BYTES))
        {
            s.spawn(move || {
                for ((f, t), d) in from
                    .chunks(TREE_LEAF_BYTES)
                    .zip(to.chunks_mut(TREE_LEAF_BYTES))
                    .zip(ds.iter_mut())
                {
                    *d = copy_leaf(f, t);
                }
            });
        }
    });
    let hash = tree_name(src.len() as u64, &digests);
    (copy, hash)
}

/// `copy_and_hash` into `dst` (as long as `src`) on the calling thread, for content
/// below `TREE_MIN_BYTES` (None for longer content): a buffer reused piece after piece
/// costs no page faults, where a new copy of 16 MiB costs 4,096.
pub fn copy_into_and_hash(src: &[u8], dst: &mut [u8]) -> Option<ContentHash> {
    (src.len() < TREE_MIN_BYTES && src.len() == dst.len()).then(|| ContentHash(copy_leaf(src, dst)))
}

/// Bytes copied at a time by `copy_leaf`: hashed while they are still in cache.
const COPY_CHUNK: usize = 256 << 10;

/// Copies `from` into `to` a chunk at a time, each chunk hashed from the copy while it is
/// in cache (one pass over memory, not a copy and then a hash): the XXH3-128 of `from`.
fn copy_leaf(from: &[u8], to: &mut [u8]) -> [u8; 16] {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (f, t) in from.chunks(COPY_CHUNK).zip(to.chunks_mut(COPY_CHUNK)) {
        t.copy_from_slice(f);
        h.update(t);
    }
    h.digest128().to_be_bytes()
}

fn tree_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, TREE_THREADS)
}

/// XXH3-128 of `TREE_TAG`, the content length (u64 LE) and each leaf's XXH3-128 in
/// order; leaves are hashed by up to `TREE_THREADS` threads.
fn tree(data: &[u8]) -> ContentHash {
    let leaves: Vec<&[u8]> = data.chunks(TREE_LEAF_BYTES).collect();
    let mut digests = vec![[0u8; 16]; leaves.len()];
    let per = leaves.len().div_ceil(tree_threads());
    std::thread::scope(|s| {
        for (ls, ds) in leaves.chunks(per).zip(digests.chunks_mut(per)) {
            s.spawn(move || {
                for (l, d) in ls.iter().zip(ds.iter_mut()) {
                    *d = xxhash_rust::xxh3::xxh3_128(l).to_be_bytes();
                }
            });
        }
    });
    tree_name(data.len() as u64, &digests)
}

/// `ContentHash::of` computed from content fed in pieces, for content known to be `len`
/// bytes long: memory stays bounded whatever the length (`--repair` verifies a blob of
/// gigabytes this way). The name is the same as `of` gives for the whole content.
pub struct StreamHash {
    len: u64,
    fed: u64,
    hasher: Box<xxhash_rust::xxh3::Xxh3>,
    /// Leaves' digests so far (tree content only).
    digests: Vec<[u8; 16]>,
}

impl StreamHash {
    pub fn new(len: u64) -> Self {
        StreamHash {
            len,
            fed: 0,
            hasher: Box::new(xxhash_rust::xxh3::Xxh3::new()),
            digests: Vec::new(),
        }
    }

    fn tree(&self) -> bool {
        self.len >= TREE_MIN_BYTES as u64
    }

    /// Feeds the next bytes (in total no more than `len`).
    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let take = if self.tree() {
                let in_leaf = (self.fed % TREE_LEAF_BYTES as u64) as usize;
                data.len().min(TREE_LEAF_BYTES - in_leaf)
            } else {
                data.len()
            };
            self.hasher.update(&data[..take]);
            self.fed += take as u64;
            data = &data[take..];
            if self.tree() && self.fed.is_multiple_of(TREE_LEAF_BYTES as u64) {
                self.digests.push(self.hasher.digest128().to_be_bytes());
                self.hasher.reset();
            }
        }
    }

    /// The name, once exactly `len` bytes were fed (None otherwise).
    pub fn finish(mut self) -> Option<ContentHash> {
        if self.fed != self.len {
            return None;
        }
        if !self.tree() {
            return Some(ContentHash(self.hasher.digest128().to_be_bytes()));
        }
        if !self.fed.is_multiple_of(TREE_LEAF_BYTES as u64) {
            self.digests.push(self.hasher.digest128().to_be_bytes());
        }
        Some(tree_name(self.len, &self.digests))
    }
}

/// The tree's name for content of `len` bytes whose leaves hash to `digests`.
pub(crate) fn tree_name(len: u64, digests: &[[u8; 16]]) -> ContentHash {
    let mut top = Vec::with_capacity(TREE_TAG.len() + 8 + 16 * digests.len());
    top.extend_from_slice(TREE_TAG);
    top.extend_from_slice(&len.to_le_bytes());
    for d in digests {
        top.extend_from_slice(d);
    }
    ContentHash(xxhash_rust::xxh3::xxh3_128(&top).to_be_bytes())
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({})", self.to_hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_refusals() {
        let h = ContentHash::of(b"hello");
        assert_eq!(ContentHash::from_hex(&h.to_hex()), Some(h));
        assert_eq!(ContentHash::from_hex("../../etc/passwd"), None);
        assert_eq!(ContentHash::from_hex(&h.to_hex().to_uppercase()), None);
        assert_eq!(
            ContentHash::from_hex(&format!("{}/", &h.to_hex()[..31])),
            None
        );
        assert_ne!(ContentHash::of(b"hello"), ContentHash::of(b"hellp"));
    }

    #[test]
    fn a_copy_is_named_as_of_names_it_whatever_its_size() {
        for n in [
            0,
            5,
            TREE_MIN_BYTES - 1,
            TREE_MIN_BYTES,
            5 * TREE_LEAF_BYTES + 17,
        ] {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + i / 4099) as u8).collect();
            let (copy, hash) = copy_and_hash(&data);
            assert!(copy == data, "{n} bytes: the copy differs");
            assert_eq!(hash, ContentHash::of(&data), "{n} bytes");
            let mut into = vec![7u8; n];
            let named = copy_into_and_hash(&data, &mut into);
            if n < TREE_MIN_BYTES {
                assert_eq!(named, Some(hash), "{n} bytes");
                assert!(into == data, "{n} bytes: the copy into differs");
            } else {
                assert_eq!(named, None, "{n} bytes: tree content");
            }
        }
    }

    #[test]
    fn large_content_is_named_by_its_leaf_tree_and_every_byte_counts() {
        let n = TREE_MIN_BYTES + TREE_LEAF_BYTES / 2 + 3;
        let mut data: Vec<u8> = (0..n).map(|i| (i * 131 + i / 7919) as u8).collect();
        let h = ContentHash::of(&data);
        // The tree, computed here leaf by leaf on one thread.
        let mut top = TREE_TAG.to_vec();
        top.extend_from_slice(&(n as u64).to_le_bytes());
        for leaf in data.chunks(TREE_LEAF_BYTES) {
            top.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(leaf).to_be_bytes());
        }
        assert_eq!(h.0, xxhash_rust::xxh3::xxh3_128(&top).to_be_bytes());
        assert_ne!(h.0, xxhash_rust::xxh3::xxh3_128(&data).to_be_bytes());
        // A byte changed in the short last leaf, or in the first, changes the name.
        data[n - 1] ^= 1;
        let last = ContentHash::of(&data);
        data[n - 1] ^= 1;
        data[0] ^= 0x80;
        let first = ContentHash::of(&data);
        assert!(h != last && h != first && last != first);
        // One byte less: a different length, a different name.
        assert_ne!(ContentHash::of(&data[..n - 1]), first);
        // Below the threshold: plain XXH3-128, as `xxhsum -H2` prints it.
        let small = &data[..TREE_MIN_BYTES - 1];
        assert_eq!(
            ContentHash::of(small).0,
            xxhash_rust::xxh3::xxh3_128(small).to_be_bytes()
        );
    }

    #[test]
    fn a_streamed_hash_names_content_as_the_whole_does() {
        for len in [
            0usize,
            5,
            4096,
            TREE_MIN_BYTES,
            TREE_MIN_BYTES + TREE_LEAF_BYTES / 2 + 3,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let mut s = StreamHash::new(len as u64);
            for piece in data.chunks(1_000_003) {
                s.update(piece);
            }
            assert_eq!(s.finish(), Some(ContentHash::of(&data)), "{len}");
        }
        let mut short = StreamHash::new(10);
        short.update(b"abc");
        assert_eq!(short.finish(), None);
    }
}
