//! The matrix file's types. Every struct refuses unknown keys, so a typo (`timout:`) is an
//! error with its line and column, never a silently ignored setting.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::duration::TextDuration;

/// The whole matrix file (`matrix/matrix.yaml`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// Schema version; this crate reads version 1.
    pub version: u32,
    /// How capture and replay are built from a source tree.
    pub tools: Tools,
    #[serde(default)]
    pub defaults: Defaults,
    pub families: Vec<Family>,
    pub cases: Vec<Case>,
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub controls: Vec<Control>,
}

/// The command that builds capture and replay, run in the source tree, and where its two
/// outputs land. `{target_dir}` in an output path is the cargo target directory the
/// harness chose (`CARGO_TARGET_DIR` is set for the command).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Tools {
    pub build: Vec<String>,
    pub capture: String,
    pub replay: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Per-case time limit when neither the case nor its family sets one.
    #[serde(default)]
    pub timeout: Option<TextDuration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Amd,
    Nvidia,
}

impl Vendor {
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Amd => "amd",
            Vendor::Nvidia => "nvidia",
        }
    }
    /// The variable that pins a process to one GPU.
    pub fn visible_devices_var(self) -> &'static str {
        match self {
            Vendor::Amd => "HIP_VISIBLE_DEVICES",
            Vendor::Nvidia => "CUDA_VISIBLE_DEVICES",
        }
    }
}

/// One GPU family: a CI job, and what `hrr-harness run --family NAME` means.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub name: String,
    pub vendor: Vendor,
    /// Offload targets the cases are built for: `gfx1100` (AMD) or `sm_90` (NVIDIA).
    pub targets: Vec<String>,
    /// Runner labels of the CI job (`runs-on`).
    pub runner: Vec<String>,
    #[serde(default = "one")]
    pub gpus_per_runner: u32,
    #[serde(default = "one")]
    pub shards: u32,
    #[serde(default)]
    pub timeout: Option<TextDuration>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// AMD: the oldest ROCm release the family runs on ("6.4"), at least what each of its
    /// targets needs (`rocm::required`); the stand-in HIP runtime reports it. NVIDIA: none.
    #[serde(default)]
    pub min_rocm: Option<String>,
    /// NVIDIA: how the cases link the CUDA runtime: `shared` (`-cudart shared`, the
    /// default) or `static` (nvcc's own default, the way most programs are built: capture
    /// sees them only at the driver). AMD: none.
    #[serde(default)]
    pub cuda_runtime: Option<CudaRuntime>,
}

/// How a CUDA program links the runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CudaRuntime {
    /// `libcudart.so`: capture records the runtime's own entry points.
    #[default]
    Shared,
    /// `libcudart_static.a` inside the program: capture records what it asks of the driver.
    Static,
}

impl CudaRuntime {
    /// nvcc's `-cudart` value.
    pub fn nvcc_value(self) -> &'static str {
        match self {
            CudaRuntime::Shared => "shared",
            CudaRuntime::Static => "static",
        }
    }
}

impl Family {
    /// The CUDA runtime linkage of an NVIDIA family's cases (`shared` unless it says).
    pub fn cuda_runtime(&self) -> CudaRuntime {
        self.cuda_runtime.unwrap_or_default()
    }
}

fn one() -> u32 {
    1
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseKind {
    /// A GPU program (`main.cpp` in the case directory) run natively, under capture and
    /// replayed.
    #[default]
    Gpu,
    /// A command that needs no GPU (tool checks); it passes when it exits 0.
    Host,
    /// A stored archive (`archive:`), replayed on the family's GPUs with the tools under
    /// test and checked like a GPU case: a captured workload kept as a regression test.
    Archive,
}

impl CaseKind {
    /// Whether the case runs on the family's GPUs (or the stand-in runtime): GPU and
    /// archive cases.
    pub fn needs_gpu(self) -> bool {
        matches!(self, CaseKind::Gpu | CaseKind::Archive)
    }
}

/// What the harness verifies about a case.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The captured run exits as the case expects (the program checks its own results;
    /// when it does not, a native run tells a broken program from a capture that changed
    /// its behaviour), and replay of the archive passes.
    Roundtrip,
    /// One byte of one expected output is changed; replay must fail exactly that check.
    BlobEdit,
    /// At least one call failed at capture and failed the same way at replay.
    FailedCall,
    /// Replay must refuse these APIs by name (unreplayable calls), and nothing else fail.
    Refused(Vec<String>),
    /// The archive holds exactly this many processes (fork and spawn cases).
    Processes(u32),
    /// Host cases: the command exits 0.
    ExitZero,
    /// The case's declared instability (`unstable:`) holds: replayed `runs` times, the
    /// bytes that differ between the replays number at most `max_bytes`, and no D2H
    /// check is unstable in every byte. More, or any in a case that declares none, fails
    /// naming them.
    Stability,
    /// The program is meant to fault: `reproduces: {error: illegal_address}`. Its
    /// archive must replay to the same sticky error at the same call, every other event
    /// as captured (replay's REPRODUCED).
    Reproduces(Reproduces),
}

/// What a `reproduces` check expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reproduces {
    pub error: FaultError,
}

/// A sticky error a kernel fault leaves (the CUDA runtime's, the driver's and HIP's
/// numbers are the same: `hrr_archive::api::faults`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultError {
    IllegalAddress,
    LaunchTimeout,
    Assert,
    HardwareStackError,
    IllegalInstruction,
    MisalignedAddress,
    InvalidAddressSpace,
    InvalidPc,
    LaunchFailure,
}

impl FaultError {
    /// The error's number.
    pub fn code(self) -> i32 {
        match self {
            FaultError::IllegalAddress => 700,
            FaultError::LaunchTimeout => 702,
            FaultError::Assert => 710,
            FaultError::HardwareStackError => 714,
            FaultError::IllegalInstruction => 715,
            FaultError::MisalignedAddress => 716,
            FaultError::InvalidAddressSpace => 717,
            FaultError::InvalidPc => 718,
            FaultError::LaunchFailure => 719,
        }
    }

    /// Every one, for tests and listings.
    pub const ALL: [FaultError; 9] = [
        FaultError::IllegalAddress,
        FaultError::LaunchTimeout,
        FaultError::Assert,
        FaultError::HardwareStackError,
        FaultError::IllegalInstruction,
        FaultError::MisalignedAddress,
        FaultError::InvalidAddressSpace,
        FaultError::InvalidPc,
        FaultError::LaunchFailure,
    ];
}

impl Check {
    pub fn name(&self) -> &'static str {
        match self {
            Check::Roundtrip => "roundtrip",
            Check::BlobEdit => "blob-edit",
            Check::FailedCall => "failed-call",
            Check::Refused(_) => "refused",
            Check::Processes(_) => "processes",
            Check::ExitZero => "exit-zero",
            Check::Stability => "stability",
            Check::Reproduces(_) => "reproduces",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    /// Directory under `cases/`.
    pub dir: String,
    #[serde(default)]
    pub kind: CaseKind,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub timeout: Option<TextDuration>,
    /// Host cases: the command, run in the case directory.
    #[serde(default)]
    pub command: Vec<String>,
    /// Gpu cases: the exit code the program itself must return (default 0).
    #[serde(default)]
    pub exit_code: i32,
    /// Gpu cases: a kernel-only source file in the case directory that the harness
    /// compiles into a code object for the family's targets (AMD: `--genco`, an offload
    /// bundle; NVIDIA: `--fatbin`) and names to the program in `HRR_MODULE_FILE`, for
    /// programs that load their kernels through the module API.
    #[serde(default)]
    pub module: Option<String>,
    /// Gpu cases: a source file in the case directory that the harness compiles into a
    /// shared library with the compiler's default runtime linkage (nvcc: the static CUDA
    /// runtime inside the library, a runtime capture never sees; hipcc: the shared HIP
    /// runtime) and names to the program in `HRR_CASE_LIBRARY`, for programs that load
    /// a library carrying GPU code of its own.
    #[serde(default)]
    pub library: Option<String>,
    /// Gpu cases: flags added to the program's compile under nvcc (NVIDIA families), for
    /// a program built as some programs are (`[--default-stream, per-thread]`).
    #[serde(default)]
    pub nvcc_flags: Vec<String>,
    /// Gpu cases: globs (`*`, `?`) of the lines of standard output that legitimately
    /// differ from run to run (a timing, say). Every case's captured run must exit and
    /// print as its native run does (the `unchanged` check); a line matching one of these
    /// in both runs is compared by the pattern, not byte for byte.
    #[serde(default)]
    pub stdout_varies: Vec<String>,
    /// Gpu cases: the nondeterminism the program legitimately has (a float sum by
    /// atomics): replay runs `runs` times and excludes the bytes that differ between its
    /// replays, at most `max_bytes` of them (an upper bound: fewer, none included,
    /// passes). Checked by `stability`.
    #[serde(default)]
    pub unstable: Option<Unstable>,
    /// Gpu cases whose outputs are float noise: each D2H result may match the captured
    /// one within this bound, read as this element type (`{type: f64, ulps: 4}`,
    /// `{type: bf16, rel: 1e-2}`). Such checks are reported as matched within a
    /// tolerance, never as byte-exact; the default is byte-exact.
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    /// Gpu cases whose outputs are a set: `{unordered: 4}` compares each D2H result as a
    /// multiset of 4-byte elements (positions that depend on the order of atomics).
    #[serde(default)]
    pub compare: Option<Compare>,
    /// Gpu cases: replay launches `kernel` (its mangled name) from `module`, a
    /// kernel-only source in the case directory compiled like `module` (`hrr-replay
    /// --replace-kernel`): the captured inputs through a rebuilt kernel.
    #[serde(default)]
    pub replace_kernel: Option<KernelSwap>,
    /// Gpu cases: the program is captured with `HRR_CAPTURE_RANGE` set to this
    /// (`profiler` or `profiler:N`): the archive holds one profiler range, after a snapshot
    /// of the memory live at its start, and replay checks that range alone.
    #[serde(default)]
    pub capture_range: Option<String>,
    /// Archive cases: the stored archive, a packed file (`hrr-replay --pack`) in the
    /// case directory or at a URL, with its SHA-256.
    #[serde(default)]
    pub archive: Option<ArchiveSource>,
    /// Written as `[roundtrip, blob-edit, {processes: 2}]`.
    #[serde(with = "serde_norway::with::singleton_map_recursive")]
    pub checks: Vec<Check>,
}

/// A case's declared instability (`unstable: {runs: 3, max_bytes: 12}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Unstable {
    /// Replays that learn which bytes are unstable (2 to `MAX_UNSTABLE_RUNS`).
    pub runs: u32,
    /// The most bytes that may differ between them, over all the case's D2H checks (1 to
    /// `MAX_UNSTABLE_BYTES`).
    pub max_bytes: u64,
}

/// A case's kernel replacement (`replace_kernel: {kernel: _Z5scalePiPKiii, module: k.hip}`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSwap {
    pub kernel: String,
    pub module: String,
}

/// Where an archive case's packed archive is: `file` in the case directory, or `url`
/// (fetched once into the runner's archive cache), and the SHA-256 it must have: a
/// mismatch fails the case before replay.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// 64 lowercase hex digits.
    pub sha256: String,
}

impl ArchiveSource {
    /// What is wrong with the declaration, if anything (the file's presence is checked
    /// where the case directory is known).
    pub fn problem(&self) -> Option<String> {
        let hex = self.sha256.len() == 64
            && self
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Some(format!(
                "sha256 {:?} is not 64 lowercase hex digits",
                self.sha256
            ));
        }
        match (&self.file, &self.url) {
            (Some(_), Some(_)) | (None, None) => {
                Some("needs exactly one of `file` (in the case directory) and `url`".into())
            }
            (None, Some(u)) => {
                let local = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"];
                let ok = (u.starts_with("https://") || local.iter().any(|l| u.starts_with(l)))
                    && u.len() <= 2048
                    && !u.chars().any(|c| c.is_whitespace() || c.is_control());
                (!ok).then(|| {
                    format!("url {u:?} must be https:// (http:// only to this machine), one line")
                })
            }
            (Some(_), None) => None,
        }
    }
}

/// A case's float tolerance (`tolerance: {type: f64, ulps: 4}`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// f16, bf16, f32 or f64.
    #[serde(rename = "type")]
    pub element: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ulps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel: Option<f64>,
}

/// A case's declared comparison of its outputs as sets (`compare: {unordered: 4}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    /// The element size in bytes.
    pub unordered: u32,
}

impl Case {
    /// The comparison replay is asked to accept for this case (`hrr-replay --compare`),
    /// or None for byte-exact; Err names what is wrong with the declaration.
    pub fn comparison(&self) -> Result<Option<hrr_contract::Comparison>, String> {
        let text = match (&self.tolerance, &self.compare) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(
                    "declares both `tolerance` and `compare`: a check matches by one".into(),
                )
            }
            (Some(t), None) => match (t.ulps, t.rel) {
                (Some(n), None) => format!("{}:ulps={n}", t.element),
                (None, Some(x)) => format!("{}:rel={x}", t.element),
                _ => return Err("`tolerance` needs exactly one of `ulps` and `rel`".into()),
            },
            (None, Some(c)) => format!("unordered:{}", c.unordered),
        };
        text.parse()
            .map(Some)
            .map_err(|e: hrr_contract::ComparisonError| e.why)
    }
}

/// Bounds of `unstable:` (each run is a whole replay of the archive).
pub const MAX_UNSTABLE_RUNS: u32 = 16;
pub const MAX_UNSTABLE_BYTES: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipKind {
    /// The family cannot run it (hardware or toolchain); needs a reason.
    Unsupported,
    /// Turned off on purpose; needs an issue URL.
    Disabled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectKind {
    /// The case is known to fail here.
    Fail,
    /// The case is known to fail sometimes here.
    Flake,
}

/// A rule selects families or targets (globs) and cases (name or tag globs) and either
/// skips them or sets an expectation.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(default)]
    pub family: Option<String>,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub case: Option<String>,
    #[serde(default)]
    pub tag: Option<String>,
    #[serde(default)]
    pub skip: Option<SkipKind>,
    #[serde(default)]
    pub expect: Option<ExpectKind>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub issue: Option<String>,
    /// Only where the cases run on this: `gpu` (real GPUs, not the stand-in runtime) or
    /// `stand-in`; left out, both.
    #[serde(default)]
    pub only_on: Option<RunsOn>,
}

/// What a family's cases run on: real GPUs, or the stand-in runtime (`run --stand-in`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunsOn {
    #[default]
    Gpu,
    StandIn,
}

/// A negative control: the tree with one fix removed, and the guard cases that must then
/// fail.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A commit whose change is the fix: the control is `git revert --no-commit COMMIT`.
    #[serde(default)]
    pub revert: Option<String>,
    /// A patch file (relative to the matrix file) that removes the fix when applied, or,
    /// with `reverse: true`, the fix itself, applied in reverse.
    #[serde(default)]
    pub patch: Option<String>,
    #[serde(default)]
    pub reverse: bool,
    pub guards: Vec<String>,
    /// Cases that must keep passing with the fix removed (the control is narrow).
    #[serde(default)]
    pub keep_passing: Vec<String>,
    /// The families (names or globs) on which the guards can catch the removal; empty:
    /// every family. A fix only one vendor's path exercises (a HIP entry-point lookup)
    /// is not "missed" on the other's.
    #[serde(default)]
    pub families: Vec<String>,
}

impl Control {
    /// Whether this control's guards can catch the removal on `family`.
    pub fn applies_to(&self, family: &str) -> bool {
        self.families.is_empty()
            || self
                .families
                .iter()
                .any(|p| crate::glob::matches(p, family))
    }
}
