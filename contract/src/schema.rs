//! The result's schema version, written as "MAJOR.MINOR", and the rule readers apply.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The version of the JSON shape a result was written in.
///
/// Bump the minor version when a field or a value is added (older readers still read
/// it: unknown fields are ignored, unknown failure kinds read as `Other`); bump the major
/// version when a field is removed, renamed or changes meaning (older readers refuse it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SchemaVersion {
    pub major: u32,
    pub minor: u32,
}

impl SchemaVersion {
    /// The version this build writes, and the newest major version it reads.
    pub const CURRENT: SchemaVersion = SchemaVersion { major: 1, minor: 4 };

    /// What a result without `schema_version` is: replay's results before the field
    /// existed have exactly version 1.0's shape.
    pub const LEGACY: SchemaVersion = SchemaVersion { major: 1, minor: 0 };

    /// Parses "MAJOR.MINOR" and applies the reader's rule: a newer major version is refused.
    pub fn parse_readable(s: &str) -> Result<SchemaVersion, SchemaError> {
        let v = s.parse::<SchemaVersion>()?;
        if v.major > Self::CURRENT.major {
            return Err(SchemaError::Newer {
                found: v,
                supported: Self::CURRENT,
            });
        }
        Ok(v)
    }
}

impl Default for SchemaVersion {
    fn default() -> Self {
        Self::LEGACY
    }
}

impl fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl std::str::FromStr for SchemaVersion {
    type Err = SchemaError;
    fn from_str(s: &str) -> Result<Self, SchemaError> {
        let malformed = || SchemaError::Malformed(s.to_string());
        let (major, minor) = s.split_once('.').ok_or_else(malformed)?;
        let num = |p: &str| {
            p.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| p.parse::<u32>().ok())
                .flatten()
                .ok_or_else(malformed)
        };
        Ok(SchemaVersion {
            major: num(major)?,
            minor: num(minor)?,
        })
    }
}

/// Why a result's schema version cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("replay result schema version {found} is newer than this reader's {supported} (a different major version): use an hrr-harness built from the same source as hrr-replay")]
    Newer {
        found: SchemaVersion,
        supported: SchemaVersion,
    },
    #[error("replay result schema version {0:?} is not MAJOR.MINOR")]
    Malformed(String),
}

impl Serialize for SchemaVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SchemaVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SchemaVersion::parse_readable(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_major_dot_minor() {
        let v: SchemaVersion = "1.7".parse().unwrap();
        assert_eq!(v, SchemaVersion { major: 1, minor: 7 });
        assert_eq!(v.to_string(), "1.7");
        for bad in ["1", "1.", ".1", "a.b", "1.2.3", "+1.0", "1.-0", ""] {
            assert_eq!(
                bad.parse::<SchemaVersion>(),
                Err(SchemaError::Malformed(bad.into())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_newer_major_version_is_refused_a_newer_minor_read() {
        let next_major = format!("{}.0", SchemaVersion::CURRENT.major + 1);
        let e = SchemaVersion::parse_readable(&next_major).unwrap_err();
        assert!(matches!(e, SchemaError::Newer { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains(&next_major) && text.contains("newer"),
            "{text}"
        );
        let next_minor = format!(
            "{}.{}",
            SchemaVersion::CURRENT.major,
            SchemaVersion::CURRENT.minor + 1
        );
        assert!(SchemaVersion::parse_readable(&next_minor).is_ok());
    }
}
