//! Reader limits: every size read from an archive is checked against one of these before
//! memory is allocated for it. Zero refuses everything; there is no "unlimited" value.

/// Limits a reader enforces on untrusted archives. A missing field (in a replay request)
/// takes its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest file (event log, manifest, blob, code object) the reader will open.
    pub max_file_bytes: u64,
    /// Most events read from one process's log.
    pub max_events: u64,
    /// Most host bytes (decompressed blob and code object content) held at once by a consumer.
    pub max_host_bytes: u64,
}

impl Default for Limits {
    /// Sized to the machine: one file or one host buffer may take at most half of its
    /// physical memory (between 1 GiB and 64 GiB), so a hostile archive is refused by a
    /// limit before it can push the machine into swap or the OOM killer.
    fn default() -> Self {
        let share = memory_share(physical_memory());
        Limits {
            max_file_bytes: share,
            max_events: 50_000_000,
            max_host_bytes: share,
        }
    }
}

/// The machine's physical memory in bytes (0 when the system does not say).
pub fn physical_memory() -> u64 {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page <= 0 {
        return 0;
    }
    (pages as u64).saturating_mul(page as u64)
}

/// The default per-file and per-buffer limit for a machine with `memory` bytes: half of
/// it, at least 1 GiB (also when the memory is unknown), at most 64 GiB.
pub fn memory_share(memory: u64) -> u64 {
    (memory / 2).clamp(1 << 30, 64 << 30)
}

impl Limits {
    /// Checks `value` against a limit; a zero limit refuses every value.
    pub fn check(
        path: &std::path::Path,
        limit: &'static str,
        value: u64,
        max: u64,
    ) -> crate::Result<()> {
        if max == 0 || value > max {
            return Err(crate::ArchiveError::LimitExceeded {
                path: path.to_path_buf(),
                limit,
                value,
                max,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_machine_within_bounds() {
        assert_eq!(memory_share(0), 1 << 30);
        assert_eq!(memory_share(24 << 30), 12 << 30);
        assert_eq!(memory_share(1 << 40), 64 << 30);
        let d = Limits::default();
        assert_eq!(d.max_file_bytes, memory_share(physical_memory()));
        assert!(d.max_host_bytes <= physical_memory().max(2 << 30));
    }
}
