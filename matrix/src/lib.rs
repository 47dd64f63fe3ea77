//! hrr-matrix owns the one YAML file that says what runs where: GPU families, cases, the
//! rules that skip or expect results per family or target, and the negative controls.
//! The harness and the workflow generator both read it through this crate, so they can
//! never disagree.
//!
//! - `schema`: the serde types (unknown keys are errors).
//! - `error`: a problem in a matrix file (file, line, column, message), and all of them.
//! - `prescan`: size, depth, one document, no tags or aliases, no blank values, before parsing.
//! - `load`: reading and validating, with errors that name file, line and column.
//! - `rocm`: the ROCm release an AMD family needs (`min_rocm`), checked against its targets.
//! - `resolve`: what a family runs (skip and expectation per case, with reasons) and sharding.

pub mod duration;
pub mod error;
pub mod glob;
pub mod load;
pub mod prescan;
pub mod resolve;
pub mod rocm;
pub mod schema;

pub use load::{load, load_str, MatrixError};
pub use resolve::{
    resolve_family, resolve_family_on, shard, Disposition, Expectation, ResolvedCase, Shard,
};
pub use schema::{
    ArchiveSource, Case, CaseKind, Check, Compare, Control, CudaRuntime, ExpectKind, Family,
    FaultError, KernelSwap, Matrix, Reproduces, Rule, RunsOn, SkipKind, Tolerance, Unstable,
    Vendor, MAX_UNSTABLE_BYTES, MAX_UNSTABLE_RUNS,
};
