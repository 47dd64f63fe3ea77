//! A declared comparison: how replay may match a D2H result that is not byte-exact. The
//! default is byte-exact; a case (or `hrr-replay --compare`) declares one of these for a
//! program whose outputs are float noise or a set, and every check that matched only by it
//! is listed as such ([`crate::DeclaredMatch`]), never counted as byte-exact.
//!
//! Written on the command line and in the serve protocol as one string:
//! `f64:ulps=4`, `f32:ulps=2`, `bf16:rel=1e-2`, `f16:rel=5e-3`, `unordered:4`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A floating-point element type a tolerance reads a result as (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    F16,
    Bf16,
    F32,
    F64,
}

impl Element {
    pub fn as_str(self) -> &'static str {
        match self {
            Element::F16 => "f16",
            Element::Bf16 => "bf16",
            Element::F32 => "f32",
            Element::F64 => "f64",
        }
    }

    pub fn parse(s: &str) -> Option<Element> {
        Some(match s {
            "f16" => Element::F16,
            "bf16" => Element::Bf16,
            "f32" => Element::F32,
            "f64" => Element::F64,
            _ => return None,
        })
    }

    /// Its size in bytes.
    pub fn bytes(self) -> usize {
        match self {
            Element::F16 | Element::Bf16 => 2,
            Element::F32 => 4,
            Element::F64 => 8,
        }
    }
}

/// How far a replayed element may lie from the captured one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// At most this many units in the last place (representable values between them).
    Ulps(u64),
    /// `|replayed - captured| <= rel * max(|replayed|, |captured|)`.
    Rel(f64),
}

// A relative bound is never NaN (parsing refuses one), so equality is an equivalence.
impl Eq for Bound {}

/// The comparison a case declares for its D2H checks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Comparison {
    /// Each element within `bound` of the captured one, read as `element`.
    Tolerance { element: Element, bound: Bound },
    /// The result as a multiset of `element_bytes`-byte elements: the same elements, in
    /// any order (an output whose positions depend on the order of atomics).
    Unordered { element_bytes: u32 },
}

impl Eq for Comparison {}

/// The largest element an unordered comparison takes.
pub const MAX_UNORDERED_ELEMENT: u32 = 4096;
/// The widest bound in ulps a tolerance takes (2^32: beyond that nothing is compared).
pub const MAX_ULPS: u64 = 1 << 32;

/// A declared comparison that does not parse, with what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("comparison {text:?}: {why} (expected TYPE:ulps=N or TYPE:rel=X with TYPE f16, bf16, f32 or f64, or unordered:BYTES)")]
pub struct ComparisonError {
    pub text: String,
    pub why: String,
}

impl FromStr for Comparison {
    type Err = ComparisonError;

    fn from_str(s: &str) -> Result<Comparison, ComparisonError> {
        let fail = |why: String| ComparisonError {
            text: s.to_string(),
            why,
        };
        let (head, rest) = s.split_once(':').ok_or_else(|| fail("no ':'".into()))?;
        if head == "unordered" {
            let n: u32 = rest
                .parse()
                .map_err(|_| fail(format!("element size {rest:?} is not a number")))?;
            if n == 0 || n > MAX_UNORDERED_ELEMENT {
                return Err(fail(format!(
                    "element size {n} must be 1 to {MAX_UNORDERED_ELEMENT} bytes"
                )));
            }
            return Ok(Comparison::Unordered { element_bytes: n });
        }
        let element =
            Element::parse(head).ok_or_else(|| fail(format!("unknown element type {head:?}")))?;
        let (key, value) = rest
            .split_once('=')
            .ok_or_else(|| fail("no bound (ulps=N or rel=X)".into()))?;
        let bound = match key {
            "ulps" => {
                let n: u64 = value
                    .parse()
                    .map_err(|_| fail(format!("ulps {value:?} is not a whole number")))?;
                if n == 0 || n > MAX_ULPS {
                    return Err(fail(format!("ulps {n} must be 1 to {MAX_ULPS}")));
                }
                Bound::Ulps(n)
            }
            "rel" => {
                let x: f64 = value
                    .parse()
                    .map_err(|_| fail(format!("rel {value:?} is not a number")))?;
                if !(x > 0.0 && x < 1.0) {
                    return Err(fail(format!(
                        "rel {value} must lie strictly between 0 and 1"
                    )));
                }
                Bound::Rel(x)
            }
            other => return Err(fail(format!("unknown bound {other:?}"))),
        };
        Ok(Comparison::Tolerance { element, bound })
    }
}

impl fmt::Display for Comparison {
    /// The flag's spelling, which parses back to the same comparison.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Comparison::Tolerance {
                element,
                bound: Bound::Ulps(n),
            } => write!(f, "{}:ulps={n}", element.as_str()),
            Comparison::Tolerance {
                element,
                bound: Bound::Rel(x),
            } => write!(f, "{}:rel={x}", element.as_str()),
            Comparison::Unordered { element_bytes } => write!(f, "unordered:{element_bytes}"),
        }
    }
}

impl Comparison {
    /// In words, for a verdict line: "f64 within 4 ulps", "a multiset of 4-byte elements".
    pub fn describe(&self) -> String {
        match self {
            Comparison::Tolerance {
                element,
                bound: Bound::Ulps(n),
            } => format!("{} within {n} ulps", element.as_str()),
            Comparison::Tolerance {
                element,
                bound: Bound::Rel(x),
            } => format!("{} within relative error {x}", element.as_str()),
            Comparison::Unordered { element_bytes } => {
                format!("a multiset of {element_bytes}-byte elements")
            }
        }
    }
}

impl Serialize for Comparison {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Comparison {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_and_prints_back() {
        for s in [
            "f64:ulps=4",
            "f32:ulps=1",
            "bf16:rel=0.01",
            "f16:rel=0.005",
            "unordered:4",
            "unordered:12",
        ] {
            let c: Comparison = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
            assert_eq!(c.to_string().parse::<Comparison>().unwrap(), c);
        }
        assert_eq!(
            "bf16:rel=1e-2".parse::<Comparison>().unwrap(),
            Comparison::Tolerance {
                element: Element::Bf16,
                bound: Bound::Rel(0.01)
            }
        );
    }

    #[test]
    fn bad_forms_say_what_is_wrong() {
        for (s, why) in [
            ("f64", "no ':'"),
            ("f128:ulps=1", "unknown element type \"f128\""),
            ("f64:ulps=0", "ulps 0 must be 1"),
            ("f64:ulps=-1", "not a whole number"),
            ("f64:rel=2", "strictly between 0 and 1"),
            ("f64:rel=NaN", "strictly between 0 and 1"),
            ("f64:abs=1", "unknown bound \"abs\""),
            ("f64:4", "no bound"),
            ("unordered:0", "element size 0"),
            ("unordered:x", "not a number"),
        ] {
            let e = s.parse::<Comparison>().unwrap_err();
            assert!(e.to_string().contains(why), "{s}: {e}");
        }
    }

    #[test]
    fn serde_uses_the_flag_spelling() {
        let c: Comparison = "unordered:8".parse().unwrap();
        let j = serde_json::to_string(&c).unwrap();
        assert_eq!(j, "\"unordered:8\"");
        assert_eq!(serde_json::from_str::<Comparison>(&j).unwrap(), c);
        assert!(serde_json::from_str::<Comparison>("\"f64:ulps=x\"").is_err());
    }
}
