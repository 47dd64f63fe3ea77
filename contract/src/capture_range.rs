//! `HRR_CAPTURE_RANGE`, the one capture setting the matrix may give a case
//! (`capture_range:`): its grammar is here so that the matrix refuses at load what capture
//! would refuse at run time, with the same words.

/// The grammar in words, for errors.
pub const CAPTURE_RANGE_FORMS: &str = "profiler or profiler:N (the N-th range between \
    cudaProfilerStart/cuProfilerStart/hipProfilerStart and the matching stop), or nvtx:NAME \
    or nvtx:NAME:N (the N-th NVTX range named NAME, pushed or started, to its pop or end; \
    roctx on AMD); N >= 1";

/// A value that is none of [`CAPTURE_RANGE_FORMS`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not {CAPTURE_RANGE_FORMS}")]
pub struct CaptureRangeError(pub String);

/// Which range a range capture records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureRange {
    /// The `occurrence`-th profiler range (1 = the first).
    Profiler { occurrence: u32 },
    /// The `occurrence`-th NVTX (or roctx) range whose message is `name`.
    Nvtx { name: String, occurrence: u32 },
}

impl CaptureRange {
    pub fn occurrence(&self) -> u32 {
        match self {
            CaptureRange::Profiler { occurrence } | CaptureRange::Nvtx { occurrence, .. } => {
                *occurrence
            }
        }
    }
}

impl std::fmt::Display for CaptureRange {
    /// The value that asks for it, occurrence written out (`profiler:1`, `nvtx:step:3`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureRange::Profiler { occurrence } => write!(f, "profiler:{occurrence}"),
            CaptureRange::Nvtx { name, occurrence } => write!(f, "nvtx:{name}:{occurrence}"),
        }
    }
}

/// `N` of a `:N` suffix: digits only, at least 1.
fn occurrence(n: &str) -> Option<u32> {
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse::<u32>().ok().filter(|&n| n >= 1)
}

/// Parses `profiler`, `profiler:N`, `nvtx:NAME` or `nvtx:NAME:N`. A NAME may hold `:`;
/// a last `:` followed by digits only is the occurrence.
pub fn parse_capture_range(v: &str) -> Result<CaptureRange, CaptureRangeError> {
    let bad = || CaptureRangeError(v.to_string());
    if v == "profiler" {
        return Ok(CaptureRange::Profiler { occurrence: 1 });
    }
    if let Some(n) = v.strip_prefix("profiler:") {
        return occurrence(n)
            .map(|occurrence| CaptureRange::Profiler { occurrence })
            .ok_or_else(bad);
    }
    let Some(rest) = v.strip_prefix("nvtx:") else {
        return Err(bad());
    };
    let (name, occ) = match rest.rsplit_once(':') {
        Some((name, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (name, occurrence(n).ok_or_else(bad)?)
        }
        _ => (rest, 1),
    };
    if name.is_empty() || name.len() > 256 || name.chars().any(char::is_control) {
        return Err(bad());
    }
    Ok(CaptureRange::Nvtx {
        name: name.to_string(),
        occurrence: occ,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiler_and_nvtx_ranges_parse_and_everything_else_is_named() {
        let p = |occurrence| CaptureRange::Profiler { occurrence };
        let n = |name: &str, occurrence| CaptureRange::Nvtx {
            name: name.into(),
            occurrence,
        };
        assert_eq!(parse_capture_range("profiler"), Ok(p(1)));
        assert_eq!(parse_capture_range("profiler:3"), Ok(p(3)));
        assert_eq!(parse_capture_range("nvtx:step"), Ok(n("step", 1)));
        assert_eq!(parse_capture_range("nvtx:step:10"), Ok(n("step", 10)));
        assert_eq!(parse_capture_range("nvtx:a:b"), Ok(n("a:b", 1)));
        assert_eq!(
            parse_capture_range("nvtx:train step 3"),
            Ok(n("train step 3", 1))
        );
        assert_eq!(n("step", 10).to_string(), "nvtx:step:10");
        for bad in [
            "",
            "profiler:",
            "profiler:0",
            "profiler:+2",
            "profiler:x",
            "Profiler",
            "nvtx",
            "nvtx:",
            "nvtx::2",
            "nvtx:step:0",
            "nvtx:a\nb",
            "roctx:step",
        ] {
            let e = parse_capture_range(bad).unwrap_err();
            assert_eq!(e.0, bad);
            assert!(e.to_string().contains("nvtx:NAME:N"), "{e}");
        }
        assert!(parse_capture_range(&format!("nvtx:{}", "x".repeat(257))).is_err());
    }
}
