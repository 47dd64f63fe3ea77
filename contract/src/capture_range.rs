//! `HRR_CAPTURE_RANGE`, the one capture setting the matrix may give a case
//! (`capture_range:`): its grammar is here so that the matrix refuses at load what capture
//! would refuse at run time, with the same words.

/// The grammar in words, for errors.
pub const CAPTURE_RANGE_FORMS: &str = "profiler or profiler:N (the N-th range between \
    cudaProfilerStart/cuProfilerStart/hipProfilerStart and the matching stop, N >= 1); \
    NVTX ranges are not supported";

/// A value that is not `profiler` or `profiler:N`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not {CAPTURE_RANGE_FORMS}")]
pub struct CaptureRangeError(pub String);

/// The profiler range to record: `profiler` is the first, `profiler:N` the N-th.
pub fn parse_capture_range(v: &str) -> Result<u32, CaptureRangeError> {
    match v.split_once(':') {
        None if v == "profiler" => Ok(1),
        Some(("profiler", n)) if n.bytes().all(|b| b.is_ascii_digit()) => match n.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(CaptureRangeError(v.to_string())),
        },
        _ => Err(CaptureRangeError(v.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiler_ranges_parse_and_everything_else_is_named() {
        assert_eq!(parse_capture_range("profiler"), Ok(1));
        assert_eq!(parse_capture_range("profiler:3"), Ok(3));
        for bad in [
            "",
            "profiler:",
            "profiler:0",
            "profiler:+2",
            "profiler:x",
            "nvtx:step",
            "Profiler",
        ] {
            let e = parse_capture_range(bad).unwrap_err();
            assert_eq!(e.0, bad);
            assert!(
                e.to_string().contains("NVTX ranges are not supported"),
                "{e}"
            );
        }
    }
}
