//! Matching a D2H result that is not byte-exact, by the comparison the case declared
//! (`--compare`: a float tolerance, or the same elements in any order), and naming the
//! likely cause of a mismatch when none was declared (float noise within a few ulps, or
//! an output whose order changed). Pure functions over the two buffers.

use hrr_contract::{Bound, Comparison, Element};

/// How a result that differs from the captured bytes matched the declared comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeclaredOutcome {
    /// Elements not byte-equal to the captured element at the same position.
    pub elements_differing: u64,
    /// Tolerance: the most units in the last place an element differed by (None for an
    /// unordered match).
    pub max_ulps: Option<u64>,
}

/// Whether `found` matches `expected` by `c` (None: it does not, or the lengths do not
/// allow the comparison; the check is then an ordinary mismatch).
pub fn matches(c: &Comparison, expected: &[u8], found: &[u8]) -> Option<DeclaredOutcome> {
    if expected.len() != found.len() {
        return None;
    }
    match *c {
        Comparison::Tolerance { element, bound } => within(element, bound, expected, found),
        Comparison::Unordered { element_bytes } => {
            let k = element_bytes as usize;
            if !expected.len().is_multiple_of(k) || !same_multiset(k, expected, found) {
                return None;
            }
            Some(DeclaredOutcome {
                elements_differing: differing_elements(k, expected, found),
                max_ulps: None,
            })
        }
    }
}

fn differing_elements(k: usize, a: &[u8], b: &[u8]) -> u64 {
    a.chunks_exact(k)
        .zip(b.chunks_exact(k))
        .filter(|(x, y)| x != y)
        .count() as u64
}

/// Each element of `found` within `bound` of the one at its position in `expected`.
fn within(
    element: Element,
    bound: Bound,
    expected: &[u8],
    found: &[u8],
) -> Option<DeclaredOutcome> {
    let k = element.bytes();
    if !expected.len().is_multiple_of(k) {
        return None;
    }
    let mut out = DeclaredOutcome {
        elements_differing: 0,
        max_ulps: Some(0),
    };
    for (a, b) in expected.chunks_exact(k).zip(found.chunks_exact(k)) {
        if a == b {
            continue;
        }
        let ulps = ulps_apart(element, a, b)?;
        let ok = match bound {
            Bound::Ulps(n) => ulps <= n,
            Bound::Rel(r) => {
                let (x, y) = (value(element, a), value(element, b));
                (x - y).abs() <= r * x.abs().max(y.abs())
            }
        };
        if !ok {
            return None;
        }
        out.elements_differing += 1;
        out.max_ulps = out.max_ulps.max(Some(ulps));
    }
    Some(out)
}

/// The element's bits, little-endian.
fn bits(b: &[u8]) -> u64 {
    b.iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
}

/// Representable values between two elements of `element` (None when either is a NaN:
/// a NaN is within no distance of anything but its own bytes).
pub fn ulps_apart(element: Element, a: &[u8], b: &[u8]) -> Option<u64> {
    let width = (element.bytes() * 8) as u32;
    let sign = 1u64 << (width - 1);
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if value(element, a).is_nan() || value(element, b).is_nan() {
        return None;
    }
    // Sign-magnitude onto one ordered line: negative values below positive ones.
    let key = |x: u64| if x & sign != 0 { !x & mask } else { x | sign };
    Some(key(bits(a)).abs_diff(key(bits(b))))
}

/// The element's value as f64.
fn value(element: Element, b: &[u8]) -> f64 {
    let x = bits(b);
    match element {
        Element::F64 => f64::from_bits(x),
        Element::F32 => f64::from(f32::from_bits(x as u32)),
        Element::Bf16 => f64::from(f32::from_bits((x as u32) << 16)),
        Element::F16 => half(x as u16),
    }
}

/// Whether the element is a normal value of its own type (not zero, subnormal, infinite
/// or NaN).
fn normal(element: Element, b: &[u8]) -> bool {
    let x = bits(b);
    match element {
        Element::F64 => f64::from_bits(x).is_normal(),
        Element::F32 => f32::from_bits(x as u32).is_normal(),
        Element::Bf16 => f32::from_bits((x as u32) << 16).is_normal(),
        Element::F16 => !matches!((x >> 10) & 0x1f, 0 | 31),
    }
}

/// An IEEE binary16 value.
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Whether the two buffers hold the same `k`-byte elements, counted with multiplicity.
fn same_multiset(k: usize, a: &[u8], b: &[u8]) -> bool {
    fn sorted<T: Ord>(v: impl Iterator<Item = T>) -> Vec<T> {
        let mut v: Vec<T> = v.collect();
        v.sort_unstable();
        v
    }
    match k {
        4 => {
            let w = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap_or([0; 4]));
            sorted(a.chunks_exact(4).map(w)) == sorted(b.chunks_exact(4).map(w))
        }
        8 => {
            let w = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or([0; 8]));
            sorted(a.chunks_exact(8).map(w)) == sorted(b.chunks_exact(8).map(w))
        }
        _ => sorted(a.chunks_exact(k)) == sorted(b.chunks_exact(k)),
    }
}

/// The largest result whose mismatch replay examines for a cause it can name.
const CAUSE_MAX_BYTES: usize = 256 << 20;
/// The widest float noise named as such, in ulps.
const NOISE_MAX_ULPS: u64 = 64;

/// A mismatch's likely cause when no comparison was declared, as a clause for the
/// failure's message: the same elements in other positions (order-dependent output), or
/// every differing element a few ulps from the captured one (float noise). None when
/// neither explains it.
pub fn name_cause(expected: &[u8], found: &[u8]) -> Option<String> {
    let n = expected.len();
    if n != found.len() || n == 0 || n > CAUSE_MAX_BYTES {
        return None;
    }
    for k in [4usize, 8] {
        if n.is_multiple_of(k) && n > k && same_multiset(k, expected, found) {
            return Some(format!(
                "the same {k}-byte elements as at capture, {} of {} in other positions: an output whose order depends on the run; declare `compare: {{unordered: {k}}}` if it is a set",
                differing_elements(k, expected, found),
                n / k
            ));
        }
    }
    for element in [Element::F64, Element::F32] {
        let bound = Bound::Ulps(NOISE_MAX_ULPS);
        // Integers read as floats are subnormal or zero: only normal values count as noise.
        let k = element.bytes();
        let normal = n.is_multiple_of(k)
            && expected
                .chunks_exact(k)
                .zip(found.chunks_exact(k))
                .filter(|(a, b)| a != b)
                .all(|(a, b)| normal(element, a) && normal(element, b));
        if let Some(o) = within(element, bound, expected, found).filter(|_| normal) {
            let ulps = o.max_ulps.unwrap_or(0);
            return Some(format!(
                "every differing element is within {ulps} ulps of the captured one read as {e}: float noise? declare `tolerance: {{type: {e}, ulps: {ulps}}}` if the program's float order may change",
                e = element.as_str()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn next_up(x: f64, n: u64) -> f64 {
        f64::from_bits(x.to_bits() + n)
    }

    #[test]
    fn ulps_count_representable_values_across_zero() {
        let e = Element::F64;
        let one = 1.0f64.to_le_bytes();
        assert_eq!(ulps_apart(e, &one, &next_up(1.0, 3).to_le_bytes()), Some(3));
        assert_eq!(
            ulps_apart(e, &0.0f64.to_le_bytes(), &(-0.0f64).to_le_bytes()),
            Some(1)
        );
        let tiny = f64::from_bits(1);
        assert_eq!(
            ulps_apart(e, &tiny.to_le_bytes(), &(-tiny).to_le_bytes()),
            Some(3)
        );
        assert_eq!(ulps_apart(e, &f64::NAN.to_le_bytes(), &one), None);
        let f = Element::F32;
        assert_eq!(
            ulps_apart(
                f,
                &1.0f32.to_le_bytes(),
                &f32::from_bits(1.0f32.to_bits() + 2).to_le_bytes()
            ),
            Some(2)
        );
        // bf16: 1.0 is 0x3f80; the next value up is 0x3f81.
        assert_eq!(
            ulps_apart(Element::Bf16, &[0x80, 0x3f], &[0x81, 0x3f]),
            Some(1)
        );
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0xc000), -2.0);
        assert_eq!(half(0x0001), 2f64.powi(-24));
        assert!(half(0x7e00).is_nan());
    }

    #[test]
    fn a_tolerance_matches_within_its_bound_and_reports_the_widest() {
        let c: Comparison = "f64:ulps=4".parse().unwrap();
        let want = f64s(&[1.0, 2.0, 3.0]);
        let got = f64s(&[next_up(1.0, 2), 2.0, next_up(3.0, 4)]);
        assert_eq!(
            matches(&c, &want, &got),
            Some(DeclaredOutcome {
                elements_differing: 2,
                max_ulps: Some(4)
            })
        );
        let far = f64s(&[next_up(1.0, 5), 2.0, 3.0]);
        assert_eq!(matches(&c, &want, &far), None);
        // A length that is no whole number of elements, or another length: no match.
        assert_eq!(matches(&c, &want[..23], &got[..23]), None);
        assert_eq!(matches(&c, &want, &got[..16]), None);
        let rel: Comparison = "f32:rel=0.01".parse().unwrap();
        assert!(matches(&rel, &f32s(&[100.0]), &f32s(&[100.9])).is_some());
        assert!(matches(&rel, &f32s(&[100.0]), &f32s(&[102.0])).is_none());
        assert!(matches(&rel, &f32s(&[f32::NAN]), &f32s(&[1.0])).is_none());
    }

    #[test]
    fn an_unordered_comparison_matches_a_permutation_only() {
        let c: Comparison = "unordered:4".parse().unwrap();
        let want: Vec<u8> = [1u32, 2, 3, 3]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let got: Vec<u8> = [3u32, 1, 3, 2]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(
            matches(&c, &want, &got),
            Some(DeclaredOutcome {
                elements_differing: 3,
                max_ulps: None
            })
        );
        let lost: Vec<u8> = [3u32, 1, 2, 2]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(matches(&c, &want, &lost), None);
        // Any element size: 3-byte elements.
        let c3: Comparison = "unordered:3".parse().unwrap();
        assert!(matches(&c3, b"abcdefghi", b"ghiabcdef").is_some());
        assert!(matches(&c3, b"abcdefghi", b"bcadefghi").is_none());
    }

    #[test]
    fn a_mismatch_names_reordering_or_float_noise() {
        let want: Vec<u8> = (0u32..64).flat_map(|x| x.to_le_bytes()).collect();
        let got: Vec<u8> = (0u32..64).rev().flat_map(|x| x.to_le_bytes()).collect();
        let why = name_cause(&want, &got).unwrap();
        assert!(
            why.starts_with("the same 4-byte elements as at capture, 64 of 64 in other positions"),
            "{why}"
        );
        let want = f64s(&[0.5, 0.25]);
        let got = f64s(&[next_up(0.5, 1), 0.25]);
        let why = name_cause(&want, &got).unwrap();
        assert!(
            why.contains("within 1 ulps of the captured one read as f64"),
            "{why}"
        );
        assert!(why.contains("tolerance: {type: f64, ulps: 1}"), "{why}");
        // An edited byte far from noise, and unrelated data: no cause named.
        let mut edited = f64s(&[0.5, 0.25]);
        edited[6] ^= 0xff;
        assert_eq!(name_cause(&f64s(&[0.5, 0.25]), &edited), None);
        assert_eq!(name_cause(b"abcdefgh", b"abcdefgX"), None);
        // Counters one apart are not float noise (subnormal read as floats).
        let ints = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        assert_eq!(name_cause(&ints(&[1000, 7]), &ints(&[1001, 7])), None);
    }
}
