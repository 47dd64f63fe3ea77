//! The D2H check: replayed bytes against the captured ones, and the failure that
//! names where they first differ.

use std::borrow::Cow;

use hrr_archive::fill::Fill;
use hrr_contract::{Failure, FailureKind};

/// The captured bytes a result is compared with: loaded bytes, or a fill compared as it
/// is (its unit), never expanded into a buffer on the way.
#[derive(Clone, Copy, Debug)]
pub enum Want<'x> {
    Bytes(&'x [u8]),
    Fill(&'x Fill),
}

impl<'x> Want<'x> {
    pub fn len(&self) -> usize {
        match self {
            Want::Bytes(b) => b.len(),
            Want::Fill(f) => f.len as usize,
        }
    }

    /// The bytes themselves (a fill expanded: the rare paths that need every byte, the
    /// stability runs' judgement).
    pub fn bytes(&self) -> Cow<'x, [u8]> {
        match *self {
            Want::Bytes(b) => Cow::Borrowed(b),
            Want::Fill(f) => {
                let mut v = vec![0u8; f.len as usize];
                f.expand_into(&mut v);
                Cow::Owned(v)
            }
        }
    }

    fn byte(&self, i: usize) -> u8 {
        match self {
            Want::Bytes(b) => b[i],
            Want::Fill(f) => f.byte(i),
        }
    }

    /// Whether `found` holds exactly these bytes.
    fn equal(&self, found: &[u8]) -> bool {
        match self {
            Want::Bytes(b) => equal(b, found),
            Want::Fill(f) => f.matches(found),
        }
    }
}

/// How a replayed result differs from the captured one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Bytes that differ, counting a length difference as differing bytes.
    pub differing: u64,
    /// Offset of the first differing byte.
    pub first: u64,
    /// Up to 16 bytes from `first` on, in hex.
    pub expected_hex: String,
    pub found_hex: String,
    /// What explains the difference, where replay can name it (`declared::name_cause`):
    /// a clause appended to the failure's message.
    pub cause: Option<String>,
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether two buffers hold the same bytes; large ones are compared by several threads
/// (one thread compares at a fraction of memory bandwidth).
fn equal(a: &[u8], b: &[u8]) -> bool {
    const PARALLEL_BYTES: usize = 8 << 20;
    if a.len() != b.len() {
        return false;
    }
    if a.len() < PARALLEL_BYTES {
        return a == b;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let step = a.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = a
            .chunks(step)
            .zip(b.chunks(step))
            .map(|(x, y)| s.spawn(move || x == y))
            .collect();
        parts.into_iter().all(|h| h.join().unwrap_or(false))
    })
}

/// Compares replayed bytes with the captured expectation; None when equal.
pub fn compare(expected: &[u8], found: &[u8]) -> Option<Mismatch> {
    compare_want(Want::Bytes(expected), found)
}

/// `compare` with the captured bytes as loaded bytes or a fill.
pub fn compare_want(expected: Want<'_>, found: &[u8]) -> Option<Mismatch> {
    if expected.equal(found) {
        return None;
    }
    let n = expected.len().min(found.len());
    let first = (0..n).find(|&i| expected.byte(i) != found[i]).unwrap_or(n);
    let differing = (0..n).filter(|&i| expected.byte(i) != found[i]).count()
        + expected.len().abs_diff(found.len());
    let window = first..(first + 16);
    let want: Vec<u8> = window
        .clone()
        .take_while(|&i| i < expected.len())
        .map(|i| expected.byte(i))
        .collect();
    let got = &found[first.min(found.len())..window.end.min(found.len())];
    Some(Mismatch {
        differing: differing as u64,
        first: first as u64,
        expected_hex: hex(&want),
        found_hex: hex(got),
        cause: None,
    })
}

/// The failure a D2H mismatch of call `api` at `seq` reports.
pub fn mismatch_failure(
    pid: u32,
    seq: u64,
    api: String,
    expected_len: usize,
    m: Mismatch,
) -> Failure {
    Failure {
        pid,
        seq,
        message: format!(
            "D2H check failed at seq {seq} {api}: {} of {expected_len} bytes differ, first at offset {}: expected {}, found {}{}",
            m.differing, m.first, m.expected_hex, m.found_hex,
            m.cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
        ),
        api,
        kind: FailureKind::D2hMismatch,
        bytes: Some(expected_len as u64),
        differing_bytes: Some(m.differing),
        first_differing_offset: Some(m.first),
        expected_hex: Some(m.expected_hex),
        found_hex: Some(m.found_hex),
        after_unmodelled_call: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_names_first_offset_and_bytes() {
        assert_eq!(compare(b"abcd", b"abcd"), None);
        let m = compare(b"abcdef", b"abXdeY").unwrap();
        assert_eq!((m.differing, m.first), (2, 2));
        assert_eq!(m.expected_hex, hex(b"cdef"));
        assert_eq!(m.found_hex, hex(b"XdeY"));
        let m = compare(b"abc", b"ab").unwrap();
        assert_eq!((m.differing, m.first), (1, 2));
    }

    #[test]
    fn large_buffers_are_compared_whole() {
        let a = vec![7u8; (64 << 20) + 3];
        let mut b = a.clone();
        assert_eq!(compare(&a, &b), None);
        let last = b.len() - 1;
        b[last] = 8;
        let m = compare(&a, &b).unwrap();
        assert_eq!((m.differing, m.first), (1, last as u64));
    }

    #[test]
    fn a_fill_is_compared_as_its_bytes_would_be() {
        let unit = *b"0123456789abcdef";
        for len in [4096usize, (8 << 20) + 5] {
            let fill = Fill {
                unit,
                len: len as u64,
            };
            let mut bytes = vec![0u8; len];
            fill.expand_into(&mut bytes);
            assert_eq!(compare_want(Want::Fill(&fill), &bytes), None);
            for found in [
                {
                    let mut b = bytes.clone();
                    b[len - 3] ^= 0xff;
                    b[7] = b'Z';
                    b
                },
                bytes[..len - 1].to_vec(),
                vec![0xa5; len + 2],
            ] {
                assert_eq!(
                    compare_want(Want::Fill(&fill), &found),
                    compare(&bytes, &found),
                    "len {len}"
                );
            }
        }
    }

    #[test]
    fn a_mismatch_reports_as_d2h_mismatch_with_its_position() {
        let m = compare(&[1, 2, 3, 4], &[1, 2, 9, 4]).unwrap();
        let f = mismatch_failure(5, 40, "cudaMemcpy".into(), 4, m);
        assert_eq!(f.kind, FailureKind::D2hMismatch);
        assert_eq!(
            (
                f.pid,
                f.seq,
                f.bytes,
                f.differing_bytes,
                f.first_differing_offset
            ),
            (5, 40, Some(4), Some(1), Some(2))
        );
        assert_eq!(
            f.message,
            "D2H check failed at seq 40 cudaMemcpy: 1 of 4 bytes differ, first at offset 2: expected 0304, found 0904"
        );
    }
}
