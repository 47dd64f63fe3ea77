//! hrr-contract: the machine-readable contract between `hrr-replay` and `hrr-harness`,
//! as nextest-metadata is for nextest.
//!
//! `hrr-replay --json` writes a [`ReplayResult`] (one, or an array with several
//! archives); `hrr-replay --serve` reads [`ServeRequest`]s and answers each with a
//! [`ServeAnswer`]; the process exits with a [`ReplayExit`]. The harness reads all three with these same
//! types and never parses replay's text. Verdicts, failure kinds, vendors and exit codes
//! are enums here; their JSON spellings are those replay wrote before the enums existed
//! ("PASS", "d2h_mismatch", "cuda", 0..3), so older results still read.
//!
//! Every result carries a [`SchemaVersion`]. A reader accepts its own major version and
//! older ones (a result without the field is version 1.0, the shape before it existed)
//! and refuses a newer major version with an error that names both; a newer minor
//! version only adds, so it reads (an unknown failure kind reads as
//! [`FailureKind::Other`]).

mod capture_range;
mod compare;
mod exit;
mod result;
mod schema;
mod serve;

pub use capture_range::{
    parse_capture_range, CaptureRange, CaptureRangeError, CAPTURE_RANGE_FORMS,
};
pub use compare::{Bound, Comparison, ComparisonError, Element, MAX_ULPS, MAX_UNORDERED_ELEMENT};
pub use exit::{ReplayExit, UnknownExitCode};
pub use result::{
    ByteRange, Counts, DeclaredMatch, Failure, FailureKind, Fault, KernelReplacement, KernelTime,
    ReplacedKernel, ReplayResult, UnmodelledCall, UnstableCheck, UnstableVerdict, Vendor, Verdict,
    UNSTABLE_RANGES_LISTED,
};
pub use schema::{SchemaError, SchemaVersion};
pub use serve::{LimitOverrides, ServeAnswer, ServeReply, ServeRequest};
