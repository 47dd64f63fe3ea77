//! What `hrr-replay --json` writes for one archive: the verdict, the counts and every
//! failure, with the enums its string fields stand for.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::compare::Comparison;
use crate::exit::ReplayExit;
use crate::schema::SchemaVersion;

/// The whole result of one replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// First, so a reader meets it (and refuses a newer major version) before any field
    /// whose shape may have changed.
    #[serde(default)]
    pub schema_version: SchemaVersion,
    pub archive: String,
    /// The runtime the archive was captured on; None (written "") when it names none.
    #[serde(with = "vendor_or_empty")]
    pub vendor: Option<Vendor>,
    /// The runtime library replay loaded ("" when none was).
    pub runtime_library: String,
    pub verdict: Verdict,
    pub reason: String,
    pub counts: Counts,
    pub failures: Vec<Failure>,
    /// Every API the captured program called that capture does not model (schema 1.1),
    /// exempt ones included (marked): those not exempt make replay refuse the archive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodelled_apis: Vec<UnmodelledCall>,
    /// How many times the archive was replayed to learn which bytes the program itself
    /// does not reproduce (schema 1.2; `hrr-replay --stability-runs N`); 1 (left out)
    /// when it was replayed once and nothing was excluded.
    #[serde(default = "one_run", skip_serializing_if = "is_one_run")]
    pub stability_runs: u32,
    /// Every D2H check with bytes that differed between those replays (schema 1.2):
    /// excluded from the comparison, neither passed nor failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unstable: Vec<UnstableCheck>,
    /// The exit code `hrr-replay` gives this archive on its own; with several archives
    /// the process exits with the worst ([`ReplayExit::worst`]).
    #[serde(default)]
    pub exit_code: ReplayExit,
    /// The fault the captured program hit (schema 1.3): where, with which error, and
    /// whether replay hit it at the same call. Absent when the program did not fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// The comparison the replay was asked to accept besides byte equality (schema 1.4;
    /// `hrr-replay --compare`): absent for byte-exact replay, the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Every D2H check whose bytes differed from the captured ones but matched by that
    /// comparison (schema 1.4): passed, and never counted as byte-exact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared_matches: Vec<DeclaredMatch>,
    /// Kernels launched from another code object (schema 1.4; `hrr-replay
    /// --replace-kernel`), with the lookups each served: a replacement that served none
    /// is also a failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced_kernels: Vec<ReplacedKernel>,
    /// `--timing` (schema 1.4): the GPU time of each kernel and graph launched, by name,
    /// longest total first; absent without the flag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_times: Vec<KernelTime>,
}

/// The GPU time of one kernel's (or graph's) launches, from events around each.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelTime {
    pub name: String,
    pub launches: u64,
    pub total_us: u64,
    pub max_us: u64,
}

/// A kernel name whose lookups a replacement code object served.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplacedKernel {
    #[serde(flatten)]
    pub replacement: KernelReplacement,
    /// Lookups of the name it served (every process of the archive).
    pub lookups: u64,
}

/// `--replace-kernel NAME=PATH`: launch kernel NAME (its mangled name, as `--events`
/// prints it) from the code object at PATH.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelReplacement {
    pub name: String,
    pub path: String,
}

impl std::str::FromStr for KernelReplacement {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once('=') {
            Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok(KernelReplacement {
                name: name.into(),
                path: path.into(),
            }),
            _ => Err(format!(
                "{s:?} is not NAME=PATH (a kernel's mangled name, as --events prints it, and a code object file)"
            )),
        }
    }
}

/// A D2H check that matched the captured result only by the declared comparison
/// (schema 1.4): within a float tolerance, or the same elements in another order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredMatch {
    pub pid: u32,
    pub seq: u64,
    pub api: String,
    /// The check's length in bytes.
    pub bytes: u64,
    /// Elements that were not byte-equal to the captured element at the same position.
    pub elements_differing: u64,
    /// Tolerance: the most units in the last place any element differed by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ulps: Option<u64>,
}

impl DeclaredMatch {
    /// One line for a log: "seq 85 cudaMemcpy: 1 of 1 f64 element(s) differ, within 1 ulps".
    pub fn describe(&self, comparison: Option<&Comparison>) -> String {
        let (unit, what) = match comparison {
            Some(Comparison::Tolerance { element, .. }) => {
                (element.bytes() as u64, element.as_str().to_string())
            }
            Some(Comparison::Unordered { element_bytes }) => {
                (u64::from(*element_bytes), format!("{element_bytes}-byte"))
            }
            None => (1, "byte".into()),
        };
        let how = match self.max_ulps {
            Some(n) => format!("matched within {n} ulps"),
            None => "the same elements in other positions".into(),
        };
        format!(
            "seq {} {}: {} of {} {what} element(s) differ, {how}",
            self.seq,
            self.api,
            self.elements_differing,
            self.bytes / unit.max(1)
        )
    }
}

/// A sticky error the captured program hit (a kernel's illegal address or instruction,
/// a device-side assert, a launch failure): the first call that returned it at capture,
/// the launch before it, and whether replay returned the same error there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// The error code (the runtime's and the driver's number, e.g. 715).
    pub code: i32,
    /// Its name in the captured runtime (`cudaErrorIllegalInstruction`).
    pub error: String,
    /// The process and sequence id of the first call that returned it.
    pub pid: u32,
    pub seq: u64,
    /// That call's API.
    pub api: String,
    /// The last kernel launched before it, `(seq, kernel name)`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<(u64, String)>,
    /// Whether replay returned the same error at the same call (every other event as
    /// captured too: then the verdict is REPRODUCED).
    pub reproduced: bool,
}

impl ReplayResult {
    /// A failed result for `archive` that has found nothing yet: the replay fills in
    /// counts and failures, and sets the verdict and exit code last.
    pub fn failed(archive: String, exit_code: ReplayExit, reason: String) -> ReplayResult {
        ReplayResult {
            schema_version: SchemaVersion::CURRENT,
            archive,
            vendor: None,
            runtime_library: String::new(),
            verdict: Verdict::Fail,
            reason,
            counts: Counts::default(),
            failures: Vec::new(),
            unmodelled_apis: Vec::new(),
            stability_runs: 1,
            unstable: Vec::new(),
            exit_code,
            fault: None,
            comparison: None,
            declared_matches: Vec::new(),
            replaced_kernels: Vec::new(),
            kernel_times: Vec::new(),
        }
    }
}

fn one_run() -> u32 {
    1
}

fn is_one_run(n: &u32) -> bool {
    *n == 1
}

/// One D2H check whose bytes were not all the same in every replay (schema 1.2): the
/// bytes that differed between replays are excluded from its comparison with the
/// captured bytes; every other byte was compared as always.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnstableCheck {
    pub pid: u32,
    pub seq: u64,
    pub api: String,
    /// The check's length in bytes.
    pub bytes: u64,
    /// Bytes that differed between replays (excluded).
    pub unstable_bytes: u64,
    /// The unstable bytes as ranges of consecutive offsets, the first
    /// [`UNSTABLE_RANGES_LISTED`] of them; `ranges_total` counts them all.
    pub ranges: Vec<ByteRange>,
    pub ranges_total: u64,
    /// What became of the check: its stable bytes matched, one differed (a failure), or
    /// it had none.
    pub verdict: UnstableVerdict,
}

/// The most ranges of unstable bytes one check lists.
pub const UNSTABLE_RANGES_LISTED: usize = 16;

/// Consecutive offsets `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteRange {
    pub start: u64,
    pub len: u64,
}

impl fmt::Display for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.len {
            1 => write!(f, "{}", self.start),
            n => write!(f, "{}..{}", self.start, self.start + n),
        }
    }
}

/// The verdict on a check with unstable bytes: never a pass.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnstableVerdict {
    /// Every stable byte equals the captured one; the unstable ones were not compared
    /// ("stable_bytes_match"). A stable byte that differs makes the check a failure
    /// (a `d2h_mismatch`), never this.
    StableBytesMatch,
    /// A stable byte differs from the captured one: the check failed (its failure is a
    /// `d2h_mismatch` in `failures`), and these unstable bytes were excluded besides
    /// ("stable_bytes_differ").
    StableBytesDiffer,
    /// No byte was the same in every replay: nothing of the check was verified
    /// ("all_unstable").
    AllUnstable,
    /// A verdict from a newer minor schema version, kept as written.
    Other(String),
}

impl UnstableVerdict {
    pub fn as_str(&self) -> &str {
        match self {
            UnstableVerdict::StableBytesMatch => "stable_bytes_match",
            UnstableVerdict::StableBytesDiffer => "stable_bytes_differ",
            UnstableVerdict::AllUnstable => "all_unstable",
            UnstableVerdict::Other(s) => s,
        }
    }
}

impl fmt::Display for UnstableVerdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for UnstableVerdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for UnstableVerdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| match s.as_str() {
            "stable_bytes_match" => UnstableVerdict::StableBytesMatch,
            "stable_bytes_differ" => UnstableVerdict::StableBytesDiffer,
            "all_unstable" => UnstableVerdict::AllUnstable,
            _ => UnstableVerdict::Other(s),
        })
    }
}

/// An API capture passed through without modelling it, as one process called it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnmodelledCall {
    pub pid: u32,
    pub api: String,
    pub library: String,
    /// Calls counted at capture; None when the manifest has no count (a process killed
    /// before capture wrote it: at least one call, the recorded one).
    pub count: Option<u64>,
    /// Sequence id of the record of its first call.
    pub first_seq: u64,
    /// Why replay does not refuse it, when the API table exempts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exempt: Option<String>,
}

/// Replay's verdict on one archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// Every event replayed as captured and at least one D2H check passed.
    #[serde(rename = "PASS")]
    Pass,
    /// A check or event failed, nothing was verified, or the replay could not run.
    #[serde(rename = "FAIL")]
    Fail,
    /// The program faulted at capture and replay faulted the same way at the same call,
    /// every other event as captured (schema 1.3; `ReplayResult::reproduced` says how).
    #[serde(rename = "REPRODUCED")]
    Reproduced,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Reproduced => "REPRODUCED",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A GPU runtime an archive was captured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    Cuda,
    Hip,
}

impl Vendor {
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Cuda => "cuda",
            Vendor::Hip => "hip",
        }
    }
    pub fn parse(s: &str) -> Option<Vendor> {
        match s {
            "cuda" => Some(Vendor::Cuda),
            "hip" => Some(Vendor::Hip),
            _ => None,
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `Option<Vendor>` as the string replay always wrote: "cuda", "hip", or "" for none.
mod vendor_or_empty {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<Vendor>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.map_or("", Vendor::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vendor>, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Ok(None);
        }
        Vendor::parse(&s).map(Some).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown vendor {s:?} (expected cuda, hip or \"\")"))
        })
    }
}

/// What kind of failure a [`Failure`] is; the harness's checks decide by this, never by
/// a message's text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// A device-to-host result differs from the captured bytes ("d2h_mismatch").
    D2hMismatch,
    /// A call returned a code other than capture's ("return_code").
    ReturnCode,
    /// A call capture recorded as unreplayable was refused ("unreplayable").
    Unreplayable,
    /// The program called an API capture does not model and the API table does not
    /// exempt: replay refuses the archive ("unmodelled"; schema 1.1).
    Unmodelled,
    /// The event could not be replayed at all ("error").
    Error,
    /// A kind from a newer minor schema version, kept as written.
    Other(String),
}

impl FailureKind {
    pub fn as_str(&self) -> &str {
        match self {
            FailureKind::D2hMismatch => "d2h_mismatch",
            FailureKind::ReturnCode => "return_code",
            FailureKind::Unreplayable => "unreplayable",
            FailureKind::Unmodelled => "unmodelled",
            FailureKind::Error => "error",
            FailureKind::Other(s) => s,
        }
    }
    pub fn parse(s: &str) -> FailureKind {
        match s {
            "d2h_mismatch" => FailureKind::D2hMismatch,
            "return_code" => FailureKind::ReturnCode,
            "unreplayable" => FailureKind::Unreplayable,
            "unmodelled" => FailureKind::Unmodelled,
            "error" => FailureKind::Error,
            other => FailureKind::Other(other.to_string()),
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FailureKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailureKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| FailureKind::parse(&s))
    }
}

/// One failed check or event, with everything a person needs to find it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub pid: u32,
    pub seq: u64,
    pub api: String,
    pub kind: FailureKind,
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
    /// The check or event came after the process's first call of an API capture does not
    /// model (replayed under `--continue-on-error`): what that call did is missing from
    /// the replay, so the failure may be its consequence (schema 1.1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_unmodelled_call: bool,
}

impl Failure {
    /// A failure of event `seq` of process `pid` with no byte comparison behind it (a
    /// return code, a refusal, an error), not marked as after an unmodelled call.
    pub fn event(
        pid: u32,
        seq: u64,
        api: impl Into<String>,
        kind: FailureKind,
        message: impl Into<String>,
    ) -> Failure {
        Failure {
            pid,
            seq,
            api: api.into(),
            kind,
            message: message.into(),
            bytes: None,
            differing_bytes: None,
            first_differing_offset: None,
            expected_hex: None,
            found_hex: None,
            after_unmodelled_call: false,
        }
    }
}

/// What a replay did, summed over an archive's processes.
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
    /// D2H checks (passed or failed) made after a process's first unmodelled call
    /// (schema 1.1).
    #[serde(default)]
    pub checks_after_unmodelled: u64,
    /// D2H checks with bytes that differed between replays whose stable bytes all
    /// matched (schema 1.2): neither passed nor failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub d2h_unstable: u64,
    /// D2H checks with no byte the same in every replay (schema 1.2): nothing verified.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub d2h_all_unstable: u64,
    /// Bytes excluded from D2H comparisons because they differed between replays
    /// (schema 1.2), over all checks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unstable_bytes: u64,
    /// D2H checks that were not byte-exact but matched by the declared comparison
    /// (schema 1.4; `ReplayResult::declared_matches` lists them): not in `d2h_pass`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub d2h_declared_match: u64,
    /// Kernel launches `--kernel-filter` left out (schema 1.4).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kernels_filtered: u64,
    /// D2H checks after the first launch left out, skipped (schema 1.4; also counted in
    /// `d2h_skipped`): their results may depend on it, so they are never passed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub d2h_after_filtered: u64,
    /// Bytes a range capture's snapshot wrote into replay's allocations before its range
    /// replayed (schema 1.4, additive).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub range_restored_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    /// Adds another process's counts to these.
    pub fn add(&mut self, c: &Counts) {
        self.events_total += c.events_total;
        self.events_replayed += c.events_replayed;
        self.kernels_launched += c.kernels_launched;
        self.d2h_pass += c.d2h_pass;
        self.d2h_fail += c.d2h_fail;
        self.d2h_skipped += c.d2h_skipped;
        self.failed_as_captured += c.failed_as_captured;
        self.untranslated_pointers += c.untranslated_pointers;
        self.unreplayable_refused += c.unreplayable_refused;
        self.checks_after_unmodelled += c.checks_after_unmodelled;
        self.d2h_unstable += c.d2h_unstable;
        self.d2h_all_unstable += c.d2h_all_unstable;
        self.unstable_bytes += c.unstable_bytes;
        self.d2h_declared_match += c.d2h_declared_match;
        self.kernels_filtered += c.kernels_filtered;
        self.d2h_after_filtered += c.d2h_after_filtered;
        self.range_restored_bytes += c.range_restored_bytes;
    }
}

#[cfg(test)]
mod tests;
