//! Stream-ordered memory pools: the layout of `cudaMemPoolProps` / `hipMemPoolProps`
//! (88 bytes on x86-64 in both; CUDA's tail after the Windows security pointer is
//! `maxSize`, `usage` and reserved bytes, HIP's is reserved bytes) and the width of each
//! pool attribute's value (`cudaMemPoolAttr` / `hipMemPoolAttr`, the same numbers).

pub const PROPS_SIZE: usize = 88;
/// `{int allocType; int handleTypes; {int type; int id} location; void* win32...}`.
pub const ALLOC_TYPE: usize = 0;
pub const HANDLE_TYPES: usize = 4;
pub const LOCATION_TYPE: usize = 8;
pub const LOCATION_ID: usize = 12;
/// A host pointer of the captured process (Windows only; must be null elsewhere).
pub const WIN32_SECURITY_ATTRIBUTES: usize = 16;

/// The pool properties replay passes: as captured, with the captured process's Windows
/// security pointer cleared (it means nothing in another process, and must be null on
/// Linux).
pub fn props_for_replay(captured: &[u8; PROPS_SIZE]) -> [u8; PROPS_SIZE] {
    let mut b = *captured;
    b[WIN32_SECURITY_ATTRIBUTES..WIN32_SECURITY_ATTRIBUTES + 8].fill(0);
    b
}

/// The device a pool's properties place it on (location type 1 is a device).
pub fn props_device(props: &[u8; PROPS_SIZE]) -> Option<i32> {
    let word =
        |at: usize| i32::from_le_bytes([props[at], props[at + 1], props[at + 2], props[at + 3]]);
    (word(LOCATION_TYPE) == 1).then(|| word(LOCATION_ID))
}

/// A pool attribute's name and the width of its value in bytes: the reuse flags are
/// `int`, the thresholds and counters `cuuint64_t`.
pub fn pool_attribute(attr: u64) -> Option<(&'static str, usize)> {
    Some(match attr {
        1 => ("ReuseFollowEventDependencies", 4),
        2 => ("ReuseAllowOpportunistic", 4),
        3 => ("ReuseAllowInternalDependencies", 4),
        4 => ("ReleaseThreshold", 8),
        5 => ("ReservedMemCurrent", 8),
        6 => ("ReservedMemHigh", 8),
        7 => ("UsedMemCurrent", 8),
        8 => ("UsedMemHigh", 8),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn props_keep_everything_but_the_host_pointer() {
        let mut p = [0u8; PROPS_SIZE];
        p[ALLOC_TYPE] = 1;
        p[LOCATION_TYPE] = 1;
        p[LOCATION_ID] = 3;
        p[WIN32_SECURITY_ATTRIBUTES..WIN32_SECURITY_ATTRIBUTES + 8].fill(0x77);
        p[24] = 9; // CUDA maxSize / HIP reserved: kept
        let r = props_for_replay(&p);
        assert_eq!(
            r[WIN32_SECURITY_ATTRIBUTES..WIN32_SECURITY_ATTRIBUTES + 8],
            [0; 8]
        );
        assert_eq!((r[ALLOC_TYPE], r[24]), (1, 9));
        assert_eq!(props_device(&r), Some(3));
        p[LOCATION_TYPE] = 0;
        assert_eq!(props_device(&p), None);
    }

    #[test]
    fn attribute_widths() {
        assert_eq!(pool_attribute(1), Some(("ReuseFollowEventDependencies", 4)));
        assert_eq!(pool_attribute(4), Some(("ReleaseThreshold", 8)));
        assert_eq!(pool_attribute(0), None);
        assert_eq!(pool_attribute(9), None);
    }
}
