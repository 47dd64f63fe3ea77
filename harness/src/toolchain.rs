//! The compilers that build cases, and which offload targets each can build here. Nothing
//! is assumed from version numbers: NVIDIA targets come from `nvcc --list-gpu-code`, AMD
//! targets from compiling a small probe kernel per target (cached per compiler), first
//! fully, then with `-fgpu-rdc -nogpulib` (how HIP 5.2's clang 15 builds gfx11 code),
//! then compile-only, then compile-only with a newer clang (`other_hip_clang`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hrr_matrix::{Family, Vendor};
use serde::{Deserialize, Serialize};

/// How to get each compiler on Debian, for the "missing compiler" message.
pub fn install_hint(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Nvidia => "nvcc not found: set NVCC, put it on PATH, or install it (pip install nvidia-cuda-nvcc nvidia-cuda-cccl, or Debian's nvidia-cuda-toolkit)",
        Vendor::Amd => "hipcc not found: set HIPCC, put it on PATH, or install it (apt install hipcc libamdhip64-dev rocm-device-libs)",
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// The compiler for a vendor: `$NVCC`/`$HIPCC`, then PATH, then the usual install places.
pub fn find_compiler(vendor: Vendor) -> Option<PathBuf> {
    let (var, name, fallbacks): (&str, &str, &[&str]) = match vendor {
        Vendor::Nvidia => ("NVCC", "nvcc", &["/usr/local/cuda/bin/nvcc"]),
        Vendor::Amd => ("HIPCC", "hipcc", &["/opt/rocm/bin/hipcc"]),
    };
    if let Some(p) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        // An explicit choice that does not exist means "missing", not "look elsewhere".
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    which(name).or_else(|| fallbacks.iter().map(PathBuf::from).find(|p| p.is_file()))
}

/// One compiler's first `--version` line that names a version.
pub fn compiler_version(compiler: &Path) -> String {
    crate::process::command(compiler)
        .arg("--version")
        .output()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.lines()
                .filter(|l| l.contains("ersion") || l.contains("release"))
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}

/// How one target is built, or why it cannot be here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TargetSupport {
    /// Builds with the compiler's default flags.
    Full,
    /// Builds only with these extra flags.
    WithFlags(Vec<String>),
    /// Compiles with these flags but cannot link a runnable program (HIP 5.2's clang 15
    /// has no device libraries for gfx11): a compile check, nothing to run.
    CompileOnly(Vec<String>),
    /// Compiles (no link) only with another compiler, this path and these flags: a newer
    /// clang that knows targets hipcc 5.2 does not (gfx942, gfx1150, gfx1151, gfx12xx).
    CompileOnlyWith(String, Vec<String>),
    Unsupported(String),
}

/// The family's plan: compiler, the flags per buildable target, and what cannot be built.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub vendor: Vendor,
    pub compiler: PathBuf,
    pub version: String,
    pub targets: BTreeMap<String, TargetSupport>,
    /// The compiler is a newer clang linking HIP programs itself (stand-in builds: `-x hip`
    /// comes with the target flags; modules are built with `--offload-device-only`).
    pub hip_clang: bool,
    /// NVIDIA: how a case's program links the CUDA runtime (the family's `cuda_runtime`).
    pub cuda_runtime: hrr_matrix::CudaRuntime,
}

impl Toolchain {
    /// Targets a runnable program can be built for.
    pub fn buildable(&self) -> Vec<&str> {
        self.targets
            .iter()
            .filter(|(_, s)| matches!(s, TargetSupport::Full | TargetSupport::WithFlags(_)))
            .map(|(t, _)| t.as_str())
            .collect()
    }

    /// Targets that only compile (no link).
    pub fn compile_only(&self) -> Vec<&str> {
        self.targets
            .iter()
            .filter(|(_, s)| {
                matches!(
                    s,
                    TargetSupport::CompileOnly(_) | TargetSupport::CompileOnlyWith(..)
                )
            })
            .map(|(t, _)| t.as_str())
            .collect()
    }

    /// Compile-check commands for the targets that cannot link here, one per compiler,
    /// each with the object file it writes into `out_dir`.
    pub fn compile_check_commands(
        &self,
        source: &Path,
        include: &Path,
        out_dir: &Path,
    ) -> Vec<(Command, PathBuf)> {
        let mut groups: BTreeMap<String, (Vec<&str>, Vec<String>)> = BTreeMap::new();
        for (t, s) in &self.targets {
            let (compiler, flags) = match s {
                TargetSupport::CompileOnly(f) => (self.compiler.to_string_lossy().into_owned(), f),
                TargetSupport::CompileOnlyWith(c, f) => (c.clone(), f),
                _ => continue,
            };
            let g = groups.entry(compiler).or_default();
            g.0.push(t);
            for x in flags {
                if !g.1.contains(x) {
                    g.1.push(x.clone());
                }
            }
        }
        groups
            .into_iter()
            .map(|(compiler, (targets, flags))| {
                let mut c = crate::process::command(&compiler);
                let other = Path::new(&compiler) != self.compiler;
                if other {
                    c.args(["-x", "hip", "--rocm-path=/usr"]);
                }
                c.args(["-O2", "-std=c++17", "-Wno-unused-result", "-c"]);
                for t in &targets {
                    c.arg(format!("--offload-arch={t}"));
                }
                c.args(&flags);
                let name = Path::new(&compiler)
                    .file_name()
                    .map(|n| {
                        n.to_string_lossy()
                            .replace(|ch: char| !ch.is_ascii_alphanumeric(), "_")
                    })
                    .unwrap_or_default();
                let obj = out_dir.join(format!("case-{name}.o"));
                c.arg("-I").arg(include).arg(source).arg("-o").arg(&obj);
                (c, obj)
            })
            .collect()
    }

    pub fn unsupported(&self) -> Vec<(String, String)> {
        self.targets
            .iter()
            .filter_map(|(t, s)| match s {
                TargetSupport::Unsupported(r) => Some((t.clone(), r.clone())),
                _ => None,
            })
            .collect()
    }

    /// The compile command for one case: every buildable target in one binary.
    pub fn compile_command(&self, source: &Path, include: &Path, out: &Path) -> Command {
        let mut c = crate::process::command(&self.compiler);
        let mut extra: Vec<String> = Vec::new();
        match self.vendor {
            Vendor::Nvidia => {
                c.args(["-cudart", self.cuda_runtime.nvcc_value()]);
                c.args(["-O2", "-std=c++17", "-x", "cu"]);
                for t in self.buildable() {
                    let n = t.trim_start_matches("sm_");
                    c.arg("-gencode")
                        .arg(format!("arch=compute_{n},code=sm_{n}"));
                }
            }
            Vendor::Amd => {
                c.args(["-O2", "-std=c++17", "-Wno-unused-result"]);
                for t in self.buildable() {
                    c.arg(format!("--offload-arch={t}"));
                    if let Some(TargetSupport::WithFlags(f)) = self.targets.get(t) {
                        for x in f {
                            if !extra.contains(x) {
                                extra.push(x.clone());
                            }
                        }
                    }
                }
            }
        }
        c.args(&extra);
        c.arg("-I").arg(include).arg(source).arg("-o").arg(out);
        c.arg("-lpthread");
        c
    }
}

impl Toolchain {
    /// The command compiling a case's `library` source into a shared library for every
    /// buildable target, with the compiler's default runtime linkage: nvcc links the
    /// static CUDA runtime into the library (a private runtime: its kernels and copies
    /// never pass through the shared one); hipcc links the shared HIP runtime.
    pub fn library_command(&self, source: &Path, include: &Path, out: &Path) -> Command {
        let mut c = crate::process::command(&self.compiler);
        let mut extra: Vec<String> = Vec::new();
        match self.vendor {
            Vendor::Nvidia => {
                c.args([
                    "-O2",
                    "-std=c++17",
                    "-x",
                    "cu",
                    "-Xcompiler",
                    "-fPIC",
                    "-shared",
                ]);
                for t in self.buildable() {
                    let n = t.trim_start_matches("sm_");
                    c.arg("-gencode")
                        .arg(format!("arch=compute_{n},code=sm_{n}"));
                }
            }
            Vendor::Amd => {
                c.args(["-O2", "-std=c++17", "-fPIC", "-shared"]);
                for t in self.buildable() {
                    c.arg(format!("--offload-arch={t}"));
                    if let Some(TargetSupport::WithFlags(f)) = self.targets.get(t) {
                        for x in f {
                            if !extra.contains(x) {
                                extra.push(x.clone());
                            }
                        }
                    }
                }
            }
        }
        c.args(&extra);
        c.arg("-I").arg(include).arg(source).arg("-o").arg(out);
        c
    }

    /// The command compiling a case's kernel-only module source into a code object file
    /// for every buildable target: NVIDIA a fat binary (`--fatbin`), AMD an offload
    /// bundle (`--genco`). AMD modules are built without the device libraries
    /// (`-nogpulib`), which Debian's HIP 5.2 lacks for some targets: a module source uses
    /// only compiler builtins on the device.
    pub fn module_command(&self, source: &Path, include: &Path, out: &Path) -> Command {
        let mut c = crate::process::command(&self.compiler);
        match self.vendor {
            Vendor::Nvidia => {
                c.args(["-O2", "-std=c++17", "-x", "cu", "--fatbin"]);
                for t in self.buildable() {
                    let n = t.trim_start_matches("sm_");
                    c.arg("-gencode")
                        .arg(format!("arch=compute_{n},code=sm_{n}"));
                }
            }
            Vendor::Amd if self.hip_clang => {
                c.args(["-x", "hip", "--rocm-path=/usr", "-O2", "-std=c++17"]);
                c.args(["--offload-device-only", "--gpu-bundle-output", "-nogpulib"]);
                for t in self.buildable() {
                    c.arg(format!("--offload-arch={t}"));
                }
            }
            Vendor::Amd => {
                c.args(["-O2", "-std=c++17", "--genco", "-nogpulib"]);
                for t in self.buildable() {
                    c.arg(format!("--offload-arch={t}"));
                }
            }
        }
        c.arg("-I").arg(include).arg(source).arg("-o").arg(out);
        c
    }
}

/// A newer clang for HIP than hipcc's (`HRR_HIP_CLANG`, else clang++-19/18/17 on PATH).
pub fn other_hip_clang() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HRR_HIP_CLANG").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    ["clang++-19", "clang++-18", "clang++-17"]
        .iter()
        .find_map(|n| which(n))
}

fn clang_compiles(clang: &Path, target: &str, src: &Path, work: &Path) -> bool {
    crate::process::command(clang)
        .args([
            "-x",
            "hip",
            "--rocm-path=/usr",
            "-nogpulib",
            "-fgpu-rdc",
            "-c",
        ])
        .arg(format!("--offload-arch={target}"))
        .arg(src)
        .arg("-o")
        .arg(work.join("probe-clang.o"))
        .env("TMPDIR", work)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The AMD probe program. It uses threadIdx, as every case does: that needs the device
/// libraries at link time.
const AMD_PROBE: &str = "#include <hip/hip_runtime.h>\n__global__ void k(int* p) { p[threadIdx.x + blockIdx.x * blockDim.x] = 1; }\nint main() { hipLaunchKernelGGL(k, dim3(1), dim3(1), 0, 0, nullptr); return 0; }\n";

/// Why no build plan could be made for a family.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No compiler for the vendor here; the message says how to get one.
    #[error("{}", install_hint(*.0))]
    MissingCompiler(Vendor),
    /// `nvcc --list-gpu-code` could not be run.
    #[error("{}: {source}", .compiler.display())]
    ListTargets {
        compiler: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The AMD probe cache directory could not be made.
    #[error("{}: {source}", .dir.display())]
    CacheDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Works out how each of `family`'s targets builds. `cache_dir` keeps AMD probe results
/// per compiler version so a probe runs once per machine.
pub fn plan(family: &Family, cache_dir: &Path) -> Result<Toolchain, PlanError> {
    let compiler = find_compiler(family.vendor).ok_or(PlanError::MissingCompiler(family.vendor))?;
    let version = compiler_version(&compiler);
    let mut targets = BTreeMap::new();
    match family.vendor {
        Vendor::Nvidia => {
            let out = crate::process::command(&compiler)
                .arg("--list-gpu-code")
                .output()
                .map_err(|source| PlanError::ListTargets {
                    compiler: compiler.clone(),
                    source,
                })?;
            let known: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect();
            for t in &family.targets {
                let s = if known.contains(t) {
                    TargetSupport::Full
                } else {
                    TargetSupport::Unsupported(format!(
                        "{} ({version}) does not list {t} in --list-gpu-code",
                        compiler.display()
                    ))
                };
                targets.insert(t.clone(), s);
            }
        }
        Vendor::Amd => {
            std::fs::create_dir_all(cache_dir).map_err(|source| PlanError::CacheDir {
                dir: cache_dir.to_path_buf(),
                source,
            })?;
            let cache_file = cache_dir.join("amd-target-probes.json");
            let mut cache: BTreeMap<String, TargetSupport> = std::fs::read(&cache_file)
                .ok()
                .and_then(|d| serde_json::from_slice(&d).ok())
                .unwrap_or_default();
            for t in &family.targets {
                let other = other_hip_clang()
                    .map(|c| format!("{} ({})", c.display(), compiler_version(&c)));
                let key = format!(
                    "{}|{version}|{}|{t}",
                    compiler.display(),
                    other.unwrap_or_default()
                );
                let s = match cache.get(&key) {
                    Some(s) => s.clone(),
                    None => {
                        let s = probe_amd(&compiler, &version, t, cache_dir);
                        cache.insert(key, s.clone());
                        s
                    }
                };
                targets.insert(t.clone(), s);
            }
            if let Ok(d) = serde_json::to_vec_pretty(&cache) {
                let _ = std::fs::write(&cache_file, d);
            }
        }
    }
    Ok(Toolchain {
        vendor: family.vendor,
        compiler,
        version,
        targets,
        hip_clang: false,
        cuda_runtime: family.cuda_runtime(),
    })
}

fn probe_amd(compiler: &Path, version: &str, target: &str, dir: &Path) -> TargetSupport {
    let work = dir.join(format!("probe-{target}"));
    let _ = std::fs::create_dir_all(&work);
    let src = work.join("probe.hip");
    if std::fs::write(&src, AMD_PROBE).is_err() {
        return TargetSupport::Unsupported(format!("cannot write {}", src.display()));
    }
    let attempt = |flags: &[&str]| {
        crate::process::command(compiler)
            .arg(format!("--offload-arch={target}"))
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(work.join(if flags.contains(&"-c") {
                "probe.o"
            } else {
                "probe"
            }))
            .env("TMPDIR", &work)
            .output()
    };
    let result = match attempt(&[]) {
        Ok(o) if o.status.success() => TargetSupport::Full,
        first => match attempt(&["-fgpu-rdc", "-nogpulib"]) {
            Ok(o) if o.status.success() => {
                TargetSupport::WithFlags(vec!["-fgpu-rdc".into(), "-nogpulib".into()])
            }
            _ if matches!(attempt(&["-c", "-fgpu-rdc", "-nogpulib"]), Ok(ref o) if o.status.success()) => {
                TargetSupport::CompileOnly(vec!["-fgpu-rdc".into(), "-nogpulib".into()])
            }
            _ if other_hip_clang()
                .is_some_and(|clang| clang_compiles(&clang, target, &src, &work)) =>
            {
                TargetSupport::CompileOnlyWith(
                    other_hip_clang()
                        .map(|c| c.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    vec!["-nogpulib".into(), "-fgpu-rdc".into()],
                )
            }
            _ => {
                let why = first
                    .map(|o| {
                        String::from_utf8_lossy(&o.stderr)
                            .lines()
                            .find(|l| l.contains("error"))
                            .unwrap_or("compile failed")
                            .trim()
                            .to_string()
                    })
                    .unwrap_or_else(|e| e.to_string());
                TargetSupport::Unsupported(format!(
                    "{} ({version}) cannot build {target}: {why}",
                    compiler.display()
                ))
            }
        },
    };
    let _ = std::fs::remove_dir_all(&work);
    result
}
