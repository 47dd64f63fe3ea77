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
    fn default() -> Self {
        Limits {
            max_file_bytes: 64 << 30,
            max_events: 50_000_000,
            max_host_bytes: 64 << 30,
        }
    }
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
