//! What `hrr-replay --json` writes: the verdict, the counts and every failure. The harness
//! reads it with these same types, so the two can never drift apart (the harness never
//! parses replay's text output).

use serde::{Deserialize, Serialize};

/// The whole result of one replay.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub archive: String,
    pub vendor: String,
    pub runtime_library: String,
    /// "PASS" or "FAIL".
    pub verdict: String,
    pub reason: String,
    pub counts: Counts,
    pub failures: Vec<Failure>,
    /// The exit code `hrr-replay` gives this archive on its own (0 pass, 1 fail,
    /// 2 invalid, 3 no GPU); with several archives the process exits with the worst.
    #[serde(default)]
    pub exit_code: u8,
}

/// One failed check or event, with everything a person needs to find it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub pid: u32,
    pub seq: u64,
    pub api: String,
    /// "d2h_mismatch", "return_code", "unreplayable", "error"
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differing_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_differing_offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_hex: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub events_total: u64,
    pub events_replayed: u64,
    pub kernels_launched: u64,
    pub d2h_pass: u64,
    pub d2h_fail: u64,
    pub d2h_skipped: u64,
    pub failed_as_captured: u64,
    pub untranslated_pointers: u64,
    pub unreplayable_refused: u64,
}
