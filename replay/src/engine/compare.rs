//! The D2H check: replayed bytes against the captured ones, and the failure that
//! names where they first differ.

use hrr_contract::{Failure, FailureKind};

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
    if equal(expected, found) {
        return None;
    }
    let n = expected.len().min(found.len());
    let first = (0..n).find(|&i| expected[i] != found[i]).unwrap_or(n);
    let differing =
        (0..n).filter(|&i| expected[i] != found[i]).count() + expected.len().abs_diff(found.len());
    let end = |v: &[u8]| v[first.min(v.len())..(first + 16).min(v.len())].to_vec();
    Some(Mismatch {
        differing: differing as u64,
        first: first as u64,
        expected_hex: hex(&end(expected)),
        found_hex: hex(&end(found)),
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
            "D2H check failed at seq {seq} {api}: {} of {expected_len} bytes differ, first at offset {}: expected {}, found {}",
            m.differing, m.first, m.expected_hex, m.found_hex
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
