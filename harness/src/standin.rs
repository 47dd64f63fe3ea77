//! `run --stand-in`: a family's cases against the stand-in runtimes of `standin/` (no GPU).
//! It owns building the stand-in library with the machine's C compiler (cached by the hash
//! of its sources and the compiler), the stand-in build plan (targets that only compiled
//! become programs: HIP 5.2's `-fgpu-rdc -nogpulib` targets and clang-19's targets link
//! `standin/ockl_subset.hip`; clang-19 links against HIP 5.2's libamdhip64 with
//! `--hip-link`), the "GPU" a stand-in run uses, and the environment that puts the
//! stand-in on the loader path of the captured program and of replay.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hrr_archive::hash::ContentHash;
use hrr_matrix::{Family, Vendor};

use crate::gpu::Gpu;
use crate::toolchain::{compiler_version, TargetSupport, Toolchain};

/// The matrix tag of a GPU case whose APIs the stand-in does not model (arrays, textures,
/// ...): `run --stand-in` skips it, saying so; it is never a stand-in pass.
pub const NOT_MODELLED_TAG: &str = "stand-in-not-modelled";

/// Why the stand-in runtime could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StandInError {
    #[error("the stand-in runtimes need a C compiler (cc): {0}")]
    NoCompiler(std::io::Error),
    #[error("building the stand-in {library} failed: {log}")]
    Compile { library: &'static str, log: String },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the stand-in CUDA runtime is built against the CUDA headers next to nvcc, and no nvcc was found: {0}")]
    NoCudaHeaders(&'static str),
}

/// `standin/sources.txt`: each vendor's soname and the sources its stand-in is built from.
const SOURCES: &str = include_str!("../../standin/sources.txt");

/// The library a vendor's cases link (its soname), the sources it is built from (from
/// `standin/sources.txt`), and the compiler's definitions.
fn library(vendor: Vendor) -> (&'static str, Vec<&'static str>, &'static [&'static str]) {
    let (key, defs): (&str, &'static [&'static str]) = match vendor {
        Vendor::Amd => ("amd", &["-D__HIP_PLATFORM_AMD__"]),
        Vendor::Nvidia => ("nvidia", &[]),
    };
    let (lib, files) = sources_of(SOURCES, key).unwrap_or_else(|| {
        // The file is compiled in and checked by a test: a line is always there.
        panic!("standin/sources.txt has no line for {key}")
    });
    (lib, files, defs)
}

/// The `KEY SONAME: FILE...` line of `text` for `key`: the soname and the files.
fn sources_of<'t>(text: &'t str, key: &str) -> Option<(&'t str, Vec<&'t str>)> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| {
            let (head, files) = l.split_once(':')?;
            let mut head = head.split_whitespace();
            (head.next()? == key).then_some(())?;
            Some((head.next()?, files.split_whitespace().collect()))
        })
}

/// Builds the vendor's stand-in into `BUILD_ROOT/standin-HASH/` (reused while sources and
/// compiler are unchanged) and returns that directory.
pub fn build_runtime(
    source: &Path,
    build_root: &Path,
    vendor: Vendor,
) -> Result<PathBuf, StandInError> {
    let dir_src = source.join("standin");
    let (lib, files, defs) = library(vendor);
    // The vendor's own headers declare every exported function: a signature that differs
    // from the real runtime's does not compile.
    let mut includes: Vec<String> = Vec::new();
    if vendor == Vendor::Nvidia {
        let nvcc = crate::toolchain::find_compiler(Vendor::Nvidia).ok_or(
            StandInError::NoCudaHeaders(crate::toolchain::install_hint(Vendor::Nvidia)),
        )?;
        let inc = nvcc
            .canonicalize()
            .unwrap_or(nvcc)
            .parent()
            .and_then(Path::parent)
            .map(|d| d.join("include"))
            .filter(|d| d.join("cuda_runtime_api.h").is_file())
            .ok_or(StandInError::NoCudaHeaders(
                "no include/cuda_runtime_api.h beside nvcc",
            ))?;
        includes.push(format!("-I{}", inc.display()));
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let version = crate::process::command(&cc)
        .arg("--version")
        .output()
        .map_err(StandInError::NoCompiler)?;
    let mut buf = version.stdout.clone();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir_src)
        .map_err(|source| StandInError::Io {
            path: dir_src.clone(),
            source,
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    names.sort();
    for p in &names {
        buf.extend_from_slice(p.file_name().unwrap_or_default().as_encoded_bytes());
        buf.extend_from_slice(&std::fs::read(p).unwrap_or_default());
    }
    buf.extend_from_slice(lib.as_bytes());
    buf.extend_from_slice(includes.join(" ").as_bytes());
    let hash = ContentHash::of(&buf).to_hex();
    let out = build_root.join(format!("standin-{}", &hash[..16]));
    let so = out.join(lib);
    if so.is_file() {
        return Ok(out);
    }
    std::fs::create_dir_all(&out).map_err(|source| StandInError::Io {
        path: out.clone(),
        source,
    })?;
    let tmp = out.join(format!(".{lib}.{}.tmp", std::process::id()));
    let o = crate::process::command(&cc)
        .args(["-O2", "-g", "-fPIC", "-shared", "-Wall"])
        .args(defs)
        .args(&includes)
        .arg(format!("-Wl,-soname,{lib}"))
        .arg("-o")
        .arg(&tmp)
        .args(files.iter().map(|f| dir_src.join(f)))
        .arg("-lpthread")
        .output()
        .map_err(StandInError::NoCompiler)?;
    if !o.status.success() {
        return Err(StandInError::Compile {
            library: lib,
            log: String::from_utf8_lossy(&o.stderr)
                .chars()
                .take(2000)
                .collect(),
        });
    }
    if vendor == Vendor::Nvidia {
        // The driver entry points live in the same library: libcuda.so.1 names it for
        // replay and for capture's driver look-ups (one process state, one file). Made
        // once, never replaced (a link to `lib` already there is the same link).
        let link = out.join("libcuda.so.1");
        match std::os::unix::fs::symlink(lib, &link) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(StandInError::Io {
                    path: link,
                    source: e,
                })
            }
            _ => {}
        }
    }
    publish_once(&tmp, &so)?;
    Ok(out)
}

/// Puts the built library at `so` unless another build of the same inputs got there
/// first, whose file then stays: a process already running on it finds its driver by
/// name (`libcuda.so.1`) as the same file, which a replaced one would not be (tests
/// building the stand-in at once saw capture's driver look-up fail).
fn publish_once(tmp: &Path, so: &Path) -> Result<(), StandInError> {
    let r = std::fs::hard_link(tmp, so);
    let _ = std::fs::remove_file(tmp);
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(StandInError::Io {
            path: so.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// The stand-in build plan: every target some compiler here can link a program for, with
/// the device-library subset where the real one is missing; `Unsupported` stays.
pub fn plan(tc: &Toolchain, source: &Path) -> Toolchain {
    if tc.vendor == Vendor::Nvidia {
        return tc.clone();
    }
    let ockl = source.join("standin/ockl_subset.hip");
    let ockl_hash = ContentHash::of(&std::fs::read(&ockl).unwrap_or_default()).to_hex();
    let with_ockl = |mut f: Vec<String>| {
        for x in ["-fgpu-rdc", "-nogpulib"] {
            if !f.iter().any(|y| y == x) {
                f.push(x.into());
            }
        }
        // The subset's content is part of the command, so the input hash follows it.
        f.push(format!("-DHRR_OCKL_SUBSET={}", &ockl_hash[..16]));
        f.push(ockl.to_string_lossy().into_owned());
        f
    };
    let hipcc_links = tc.targets.values().any(|s| {
        matches!(
            s,
            TargetSupport::Full | TargetSupport::WithFlags(_) | TargetSupport::CompileOnly(_)
        )
    });
    let mut out = tc.clone();
    if hipcc_links {
        // One hipcc program; clang-19-only targets keep their compile check.
        let rdc = tc
            .targets
            .values()
            .any(|s| matches!(s, TargetSupport::CompileOnly(_)));
        out.targets = tc
            .targets
            .iter()
            .map(|(t, s)| {
                let s = match s {
                    TargetSupport::CompileOnly(f) => TargetSupport::WithFlags(with_ockl(f.clone())),
                    // -fgpu-rdc is one choice for the whole program.
                    TargetSupport::Full if rdc => TargetSupport::WithFlags(with_ockl(vec![])),
                    other => other.clone(),
                };
                (t.clone(), s)
            })
            .collect();
        return out;
    }
    // Only a newer clang compiles these targets: it links the program against HIP 5.2's
    // libamdhip64 (whose soname the stand-in has).
    let Some(clang) = tc.targets.values().find_map(|s| match s {
        TargetSupport::CompileOnlyWith(c, _) => Some(c.clone()),
        _ => None,
    }) else {
        return out;
    };
    out.compiler = PathBuf::from(&clang);
    out.version = compiler_version(&out.compiler);
    out.hip_clang = true;
    out.targets = tc
        .targets
        .iter()
        .map(|(t, s)| {
            let s = match s {
                TargetSupport::CompileOnlyWith(c, _) if *c == clang => {
                    let mut f: Vec<String> = ["-x", "hip", "--rocm-path=/usr"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                    f = with_ockl(f);
                    f.extend(
                        ["--hip-link", "-L/usr/lib/x86_64-linux-gnu", "-lamdhip64"]
                            .iter()
                            .map(|s| s.to_string()),
                    );
                    TargetSupport::WithFlags(f)
                }
                other => other.clone(),
            };
            (t.clone(), s)
        })
        .collect();
    out
}

/// The target the stand-in device claims: the first the program was built for.
pub fn device_arch(tc: &Toolchain) -> Option<String> {
    tc.buildable().first().map(|t| t.to_string())
}

/// The stand-in "GPU" a run's workers use: index 0 of the stand-in runtime.
pub fn gpu(family: &Family, arch: &str) -> Gpu {
    Gpu {
        index: 0,
        vendor: family.vendor,
        name: "stand-in runtime (no GPU)".into(),
        arch: arch.into(),
        exclusive: false,
        uuid: None,
        select: "0".into(),
    }
}

/// The family as a stand-in run sees it: its environment plus the stand-in on the loader
/// path (captured program and replay alike), `HRR_STAND_IN=1` (cases skip checks of kernel
/// results), the device's target, replay pointed at the stand-in library, and a log of
/// what each process did (`HRR_STAND_IN_LOG`, a JSON line per process), and for AMD the
/// HIP version the stand-in reports (the family's `min_rocm`).
pub fn family(f: &Family, runtime_dir: &Path, arch: &str, log: &Path) -> Family {
    let (lib, _, _) = library(f.vendor);
    let mut env: BTreeMap<String, String> = f.env.clone();
    let ld = match std::env::var("LD_LIBRARY_PATH") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", runtime_dir.display()),
        _ => runtime_dir.display().to_string(),
    };
    env.insert("LD_LIBRARY_PATH".into(), ld);
    env.insert("HRR_STAND_IN".into(), "1".into());
    env.insert("HRR_STAND_IN_ARCH".into(), arch.into());
    env.insert("HRR_STAND_IN_LOG".into(), log.display().to_string());
    // The stand-in HIP runtime reports the family's minimum ROCm (hipRuntimeGetVersion),
    // so families needing ROCm 6+ run the R0600 and _spt paths and the others HIP 5's.
    if let (Vendor::Amd, Some(v)) = (f.vendor, f.min_rocm.as_deref()) {
        env.entry("HRR_STAND_IN_HIP_VERSION".into())
            .or_insert_with(|| v.to_string());
    }
    let var = match f.vendor {
        Vendor::Amd => "HRR_REPLAY_AMDHIP",
        Vendor::Nvidia => "HRR_REPLAY_CUDART",
    };
    env.insert(var.into(), runtime_dir.join(lib).display().to_string());
    let mut g = f.clone();
    g.env = env;
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_build_of_the_same_inputs_leaves_the_first_library_in_place() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let so = dir.path().join("libcudart.so.13");
        let (a, b) = (dir.path().join(".a.tmp"), dir.path().join(".b.tmp"));
        std::fs::write(&a, b"first").unwrap();
        std::fs::write(&b, b"second").unwrap();
        publish_once(&a, &so).unwrap();
        let ino = std::fs::metadata(&so).unwrap().ino();
        publish_once(&b, &so).unwrap();
        assert_eq!(std::fs::metadata(&so).unwrap().ino(), ino, "not replaced");
        assert_eq!(std::fs::read(&so).unwrap(), b"first");
        assert!(!a.exists() && !b.exists(), "no temporary left");
    }

    #[test]
    fn every_stand_in_source_is_listed_once_per_vendor_and_exists() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../standin");
        let mut listed = std::collections::BTreeSet::new();
        for vendor in [Vendor::Amd, Vendor::Nvidia] {
            let (lib, files, _) = library(vendor);
            assert!(lib.starts_with("lib") && lib.contains(".so."), "{lib}");
            let unique: std::collections::BTreeSet<_> = files.iter().collect();
            assert_eq!(unique.len(), files.len(), "{vendor:?} lists a file twice");
            for f in &files {
                assert!(
                    dir.join(f).is_file(),
                    "standin/sources.txt names {f}, absent"
                );
                listed.insert(f.to_string());
            }
        }
        // A C source no stand-in is built from is a file someone forgot to list.
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".c") {
                assert!(
                    listed.contains(&name),
                    "standin/{name} is in no build's list"
                );
            }
        }
        assert_eq!(
            sources_of("# x\nk a.so: x.c y.c\n", "k"),
            Some(("a.so", vec!["x.c", "y.c"]))
        );
        assert_eq!(sources_of("k a.so: x.c\n", "other"), None);
    }
}
