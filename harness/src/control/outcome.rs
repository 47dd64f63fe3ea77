//! The records a control run produces (`outcomes.json` is these, serialised): each
//! control's outcome, its guard results, and the baseline.

use hrr_reports::Status;
use serde::{Deserialize, Serialize};

use super::spec::Removal;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every guard case failed without the fix.
    Caught,
    /// Some guard case still passed: the fix is untested by it.
    Missed,
    /// The fix could not be removed (conflict) or the tree did not build without it.
    Unviable,
    /// A guard case ran past its limit (scaled from the baseline).
    Timeout,
    /// Something else went wrong (the harness could not run the control).
    Error,
    /// `--build-only`: built without the fix and copied out for `--prebuilt`; no case ran,
    /// so nothing is proven yet (and nothing failed).
    Built,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Caught => "caught",
            Outcome::Missed => "missed",
            Outcome::Unviable => "unviable",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
            Outcome::Built => "built",
        }
    }
}

/// One case's result in a control (or in the baseline).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GuardResult {
    pub case: String,
    pub status: Status,
    pub message: String,
}

impl From<&hrr_reports::CaseResult> for GuardResult {
    fn from(r: &hrr_reports::CaseResult) -> Self {
        GuardResult {
            case: r.case.clone(),
            status: r.status,
            message: r.message.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ControlResult {
    pub name: String,
    pub removal: Removal,
    pub outcome: Outcome,
    /// One line: what failed, what still passed, or why it could not run.
    pub summary: String,
    pub guards: Vec<GuardResult>,
    /// keep_passing cases that failed without the fix (the control is not narrow).
    pub collateral: Vec<GuardResult>,
    pub duration_s: f64,
    /// Logs, the removed diff and the build of this control.
    pub dir: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcomes {
    pub family: String,
    pub source_revision: String,
    pub baseline: Vec<GuardResult>,
    pub baseline_passed: bool,
    pub controls: Vec<ControlResult>,
}
