//! The ROCm release each AMD family needs: a family's `min_rocm` ("6.4") parsed, and the
//! oldest release that supports each AMD target, so the matrix cannot claim a family runs
//! on a ROCm too old for its targets (gfx950 and gfx115x need 6.4 or later).

use std::fmt;

/// A ROCm release as the matrix writes it (`major.minor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rocm {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for Rocm {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a `min_rocm` is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RocmError {
    #[error("`{0}` is not a ROCm release: write major.minor, e.g. 6.4")]
    NotARelease(String),
    #[error("`{0}`: the HIP runtimes replay supports start at ROCm 5.0")]
    TooOld(String),
}

/// Parses `major.minor` (5.0 or later: replay loads libamdhip64.so.5 and newer).
pub fn parse(text: &str) -> Result<Rocm, RocmError> {
    let bad = || RocmError::NotARelease(text.to_string());
    let (a, b) = text.trim().split_once('.').ok_or_else(bad)?;
    let num = |s: &str| {
        (!s.is_empty() && s.len() <= 3 && s.chars().all(|c| c.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let r = Rocm {
        major: num(a).ok_or_else(bad)?,
        minor: num(b).ok_or_else(bad)?,
    };
    if r.major < 5 {
        return Err(RocmError::TooOld(text.to_string()));
    }
    Ok(r)
}

/// The oldest ROCm release supporting `target`, and why, for the targets that need more
/// than 5.0 (`../shared/reference/ROCM.md`: gfx950 and gfx115x need 6.4 or later; RDNA4
/// (gfx12xx) came with 6.4; MI300 (gfx94x) with 6.0).
pub fn required(target: &str) -> Option<(Rocm, &'static str)> {
    let r64 = Rocm { major: 6, minor: 4 };
    if target == "gfx950" {
        return Some((r64, "gfx950 (MI350) needs ROCm 6.4 or later"));
    }
    if target.starts_with("gfx115") {
        return Some((r64, "gfx115x (Strix) needs ROCm 6.4 or later"));
    }
    if target.starts_with("gfx12") {
        return Some((r64, "gfx12xx (RDNA4) needs ROCm 6.4 or later"));
    }
    if target.starts_with("gfx94") {
        return Some((
            Rocm { major: 6, minor: 0 },
            "gfx94x (MI300) needs ROCm 6.0 or later",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_targets_have_floors() {
        assert_eq!(parse("6.4"), Ok(Rocm { major: 6, minor: 4 }));
        assert_eq!(parse("7.10").unwrap().to_string(), "7.10");
        assert!(matches!(parse("6"), Err(RocmError::NotARelease(_))));
        assert!(matches!(parse("6.x"), Err(RocmError::NotARelease(_))));
        assert!(matches!(parse("4.5"), Err(RocmError::TooOld(_))));
        assert_eq!(required("gfx950").unwrap().0, parse("6.4").unwrap());
        assert_eq!(required("gfx1151").unwrap().0, parse("6.4").unwrap());
        assert_eq!(required("gfx942").unwrap().0, parse("6.0").unwrap());
        assert_eq!(required("gfx90a"), None);
    }
}
