//! Durations as people write them in the matrix: `250ms`, `90s`, `5m`, `1h`.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The longest duration the matrix accepts: a day. Timeouts are added to clocks and
/// multiplied by factors, so an unbounded one would overflow instead of meaning "forever".
pub const MAX: Duration = Duration::from_secs(24 * 3600);

/// A duration read from text such as `90s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TextDuration(pub Duration);

/// Why a text is not a duration; each names the text as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("`{0}` is not a duration: expected a number and a unit (ms, s, m, h), e.g. 90s")]
    NotADuration(String),
    #[error("`{0}`: number too large")]
    TooLarge(String),
    #[error("`{text}` has no unit: write {n}s, {n}m or {n}ms")]
    NoUnit { text: String, n: u64 },
    #[error("`{text}`: unknown unit `{unit}` (use ms, s, m or h)")]
    UnknownUnit { text: String, unit: String },
    #[error("`{0}`: a duration must be more than zero")]
    Zero(String),
    #[error("`{0}` is longer than the longest allowed, 24h")]
    TooLong(String),
}

/// Parses `<digits><unit>` with unit ms, s, m or h. Zero is refused: a zero timeout would
/// kill every case at once.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(DurationError::NotADuration(text.into()));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| DurationError::TooLarge(text.into()))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        "" => {
            return Err(DurationError::NoUnit {
                text: text.into(),
                n,
            })
        }
        u => {
            return Err(DurationError::UnknownUnit {
                text: text.into(),
                unit: u.into(),
            })
        }
    };
    if d.is_zero() {
        return Err(DurationError::Zero(text.into()));
    }
    if d > MAX {
        return Err(DurationError::TooLong(text.into()));
    }
    Ok(d)
}

/// Formats a duration the way `parse` reads it back.
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(3_600_000) {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

impl<'de> Deserialize<'de> for TextDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TextDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as 90s, 5m or 250ms")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TextDuration, E> {
                parse(v).map(TextDuration).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TextDuration, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit: write {v}s, {v}m or {v}ms"
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TextDuration, E> {
                Err(E::custom(format!(
                    "`{v}` is not a duration (write e.g. 90s)"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for TextDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_parse_and_round_trip() {
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("2h").unwrap(), Duration::from_secs(7200));
        for t in ["250ms", "90s", "5m", "2h"] {
            assert_eq!(format(parse(t).unwrap()), t);
        }
    }

    #[test]
    fn bad_durations_say_why() {
        let e = |t: &str| parse(t).unwrap_err();
        assert_eq!(
            e("90"),
            DurationError::NoUnit {
                text: "90".into(),
                n: 90
            }
        );
        assert_eq!(
            e("90").to_string(),
            "`90` has no unit: write 90s, 90m or 90ms"
        );
        assert_eq!(
            e("5 days"),
            DurationError::UnknownUnit {
                text: "5 days".into(),
                unit: " days".into()
            }
        );
        assert!(e("5 days").to_string().contains("unknown unit"));
        assert_eq!(e("0s"), DurationError::Zero("0s".into()));
        assert!(e("0s").to_string().contains("more than zero"));
        assert_eq!(e("s"), DurationError::NotADuration("s".into()));
        assert!(e("s").to_string().contains("not a duration"));
        assert!(matches!(
            e("99999999999999999999999s"),
            DurationError::TooLarge(_)
        ));
        assert!(e("99999999999999999999999s")
            .to_string()
            .contains("too large"));
    }
}
