//! The disk-space reserve: capture never takes the last of a file system.
//!
//! The reserve defaults to the smaller of 15% of the file system and 4 GiB. Capture
//! refuses to start when free space is already under it, and stops recording (marking
//! the archive incomplete) when a write would cut into it.

use std::path::Path;

use crate::{ArchiveError, Result};

pub const DEFAULT_RESERVE_PERCENT: u64 = 15;
pub const DEFAULT_RESERVE_CAP: u64 = 4 << 30;

/// How the reserve is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReservePolicy {
    /// min(15% of the file system, 4 GiB)
    Default,
    Bytes(u64),
}

/// Why a size (`HRR_CAPTURE_DISK_RESERVE`, `HRR_CAPTURE_PINNED_SNAPSHOT_MAX`) was refused;
/// each names the text as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("{0:?} is not a size (expected bytes, or a number with K, M or G)")]
    NotASize(String),
    #[error("{0:?} is too large")]
    TooLarge(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub total: u64,
    /// Bytes available to an unprivileged writer.
    pub available: u64,
}

pub fn space(path: &Path) -> Result<Space> {
    let st = nix::sys::statvfs::statvfs(path)
        .map_err(|e| ArchiveError::io(path, "statvfs", std::io::Error::from(e)))?;
    let frsize = st.fragment_size() as u64;
    Ok(Space {
        total: (st.blocks() as u64).saturating_mul(frsize),
        available: (st.blocks_available() as u64).saturating_mul(frsize),
    })
}

impl ReservePolicy {
    pub fn reserve_bytes(&self, total: u64) -> u64 {
        match self {
            ReservePolicy::Default => {
                (total / 100 * DEFAULT_RESERVE_PERCENT).min(DEFAULT_RESERVE_CAP)
            }
            ReservePolicy::Bytes(b) => *b,
        }
    }

    /// Parses `HRR_CAPTURE_DISK_RESERVE`-style values: empty or `default`, bytes, or a
    /// number with a K/M/G suffix.
    pub fn parse(s: &str) -> std::result::Result<ReservePolicy, SizeError> {
        let t = s.trim();
        if t.is_empty() || t == "default" {
            return Ok(ReservePolicy::Default);
        }
        parse_size(t).map(ReservePolicy::Bytes)
    }
}

/// Parses "123", "64K", "16M", "4G" (powers of 1024).
pub fn parse_size(t: &str) -> std::result::Result<u64, SizeError> {
    let (num, mult) = match t.as_bytes().last() {
        Some(b'K' | b'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some(b'M' | b'm') => (&t[..t.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| SizeError::NotASize(t.into()))?;
    n.checked_mul(mult)
        .ok_or_else(|| SizeError::TooLarge(t.into()))
}

/// Checks that writing `needed` more bytes under `path` leaves the reserve intact.
pub fn check(path: &Path, policy: ReservePolicy, needed: u64) -> Result<()> {
    let s = space(path)?;
    let reserve = policy.reserve_bytes(s.total);
    if s.available < reserve.saturating_add(needed) {
        return Err(ArchiveError::DiskReserve {
            path: path.to_path_buf(),
            free: s.available,
            needed,
            reserve,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_reserve_is_smaller_of_percent_and_cap() {
        assert_eq!(ReservePolicy::Default.reserve_bytes(100 << 30), 4 << 30);
        assert_eq!(
            ReservePolicy::Default.reserve_bytes(10 << 30),
            (10u64 << 30) / 100 * 15
        );
    }

    #[test]
    fn sizes_parse_and_bad_ones_are_named() {
        assert_eq!(ReservePolicy::parse("").unwrap(), ReservePolicy::Default);
        assert_eq!(
            ReservePolicy::parse("64M").unwrap(),
            ReservePolicy::Bytes(64 << 20)
        );
        assert_eq!(
            ReservePolicy::parse("1000").unwrap(),
            ReservePolicy::Bytes(1000)
        );
        let err = ReservePolicy::parse("lots").unwrap_err();
        assert_eq!(err, SizeError::NotASize("lots".into()));
        assert!(err.to_string().contains("\"lots\""), "{err}");
        assert_eq!(
            parse_size("20000000000G"),
            Err(SizeError::TooLarge("20000000000G".into()))
        );
    }

    #[test]
    fn a_reserve_larger_than_the_disk_refuses() {
        let dir = std::env::temp_dir();
        let err = check(&dir, ReservePolicy::Bytes(u64::MAX / 2), 1).unwrap_err();
        assert!(matches!(err, ArchiveError::DiskReserve { .. }), "{err}");
        check(&dir, ReservePolicy::Bytes(0), 1).unwrap();
    }
}
