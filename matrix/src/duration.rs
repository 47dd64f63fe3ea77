//! Durations as people write them in the matrix: `250ms`, `90s`, `5m`, `1h`.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A duration read from text such as `90s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TextDuration(pub Duration);

/// Parses `<digits><unit>` with unit ms, s, m or h. Zero is refused: a zero timeout would
/// kill every case at once.
pub fn parse(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "`{text}` is not a duration: expected a number and a unit (ms, s, m, h), e.g. 90s"
        ));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{text}`: number too large"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        "" => return Err(format!("`{text}` has no unit: write {n}s, {n}m or {n}ms")),
        u => return Err(format!("`{text}`: unknown unit `{u}` (use ms, s, m or h)")),
    };
    if d.is_zero() {
        return Err(format!("`{text}`: a duration must be more than zero"));
    }
    Ok(d)
}

/// Formats a duration the way `parse` reads it back.
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 3_600_000 == 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms % 60_000 == 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
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
        assert!(parse("90").unwrap_err().contains("no unit"));
        assert!(parse("5 days").unwrap_err().contains("unknown unit"));
        assert!(parse("0s").unwrap_err().contains("more than zero"));
        assert!(parse("s").unwrap_err().contains("not a duration"));
        assert!(parse("99999999999999999999999s")
            .unwrap_err()
            .contains("too large"));
    }
}
