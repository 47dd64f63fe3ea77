//! `hrr-harness build`: capture and replay (release) from a source tree, and every case of
//! a family for all of its offload targets the toolchain here can build, into
//! `BUILD_ROOT/<family>-<revision>/`. A case is recompiled only when its inputs (source,
//! shared headers, compiler and command line) changed; the tools' own build is cargo's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hrr_archive::ContentHash;
use hrr_matrix::{CaseKind, Family, Matrix};
use serde::Serialize;

use crate::error::HarnessError;
use crate::process::{self, Exit};
use crate::repo::SourceTree;
use crate::toolchain::{self, Toolchain};

/// What the build of one case produced.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum CaseBuild {
    Built {
        binary: PathBuf,
        /// The case's module code object (`module` in the matrix), passed to the program
        /// as HRR_MODULE_FILE.
        #[serde(skip_serializing_if = "Option::is_none")]
        module: Option<PathBuf>,
        /// The case's shared library (`library` in the matrix), passed to the program as
        /// HRR_CASE_LIBRARY.
        #[serde(skip_serializing_if = "Option::is_none")]
        library: Option<PathBuf>,
        /// The case's replacement kernel (`replace_kernel`): its name and the code object
        /// compiled from its module source, which replay launches it from.
        #[serde(skip_serializing_if = "Option::is_none")]
        replacement: Option<(String, PathBuf)>,
        reused: bool,
    },
    /// Compiled for targets that cannot link here (a compile check): nothing to run.
    CompileChecked {
        object: PathBuf,
        targets: Vec<String>,
    },
    /// Host cases run a command from the source tree; nothing to compile.
    Host,
    /// Archive cases: the packed archive to replay and the SHA-256 it must have (checked
    /// before each run of the case).
    Archive {
        hrrz: PathBuf,
        sha256: String,
    },
    /// No compiler here can build it for this family.
    Unsupported {
        reason: String,
    },
    Failed {
        message: String,
        log: PathBuf,
    },
}

#[derive(Clone, Debug, Serialize)]
pub struct Built {
    pub family: String,
    pub revision: String,
    pub dir: PathBuf,
    pub source: PathBuf,
    pub capture: PathBuf,
    pub replay: PathBuf,
    /// e.g. "nvcc: Cuda compilation tools, release 13.0 for sm_90".
    pub toolchain: String,
    /// Targets of the family no compiler here builds, with the reason.
    pub unsupported_targets: Vec<(String, String)>,
    /// Why there is no compiler for the family here (missing: the message names the
    /// package; or it cannot be asked for its targets): infrastructure. A compiler that
    /// knows none of the family's targets is not this: its cases are `Unsupported` and
    /// `unsupported_targets` says why (a compile failure).
    pub no_compiler: Option<String>,
    pub cases: BTreeMap<String, CaseBuild>,
    /// Stand-in builds: the target the programs were linked for first (the stand-in
    /// device claims it).
    pub stand_in_arch: Option<String>,
}

pub struct BuildRequest<'a> {
    pub matrix: &'a Matrix,
    pub family: &'a Family,
    pub source: &'a SourceTree,
    pub build_root: PathBuf,
    /// Prebuilt capture and replay (`--tools DIR`): no cargo build.
    pub tools_dir: Option<PathBuf>,
    /// Cargo target directory for the tools' build.
    pub cargo_target_dir: PathBuf,
    /// Only these cases (None: all of the matrix).
    pub only: Option<Vec<String>>,
    /// Print progress lines to stderr.
    pub verbose: bool,
    /// Build for a run against the stand-in runtime (`standin::plan`: programs for targets
    /// that otherwise only compile), in a build directory of its own.
    pub stand_in: bool,
}

/// An archive case's packed archive: its file in the case directory, or its URL's copy in
/// the runner's archive cache (fetched once: `crate::archives`).
fn archive_case(req: &BuildRequest, c: &hrr_matrix::Case) -> CaseBuild {
    let failed = |message: String| CaseBuild::Failed {
        message,
        log: PathBuf::new(),
    };
    let Some(a) = &c.archive else {
        return failed("an archive case without `archive:` (the matrix refuses it)".into());
    };
    match (&a.file, &a.url) {
        (Some(f), _) => CaseBuild::Archive {
            hrrz: req.source.root.join("cases").join(&c.dir).join(f),
            sha256: a.sha256.clone(),
        },
        (None, Some(url)) => match crate::archives::fetch(url, &a.sha256) {
            Ok(hrrz) => CaseBuild::Archive {
                hrrz,
                sha256: a.sha256.clone(),
            },
            Err(e) => failed(e.to_string()),
        },
        (None, None) => failed("`archive:` names neither a file nor a url".into()),
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `{target_dir}` in a tools output path.
fn expand(path: &str, source: &Path, target_dir: &Path) -> PathBuf {
    let p = path.replace("{target_dir}", &target_dir.to_string_lossy());
    let p = PathBuf::from(p);
    if p.is_absolute() {
        p
    } else {
        source.join(p)
    }
}

fn copy_exec(from: &Path, to: &Path) -> Result<(), HarnessError> {
    if !from.is_file() {
        return Err(HarnessError::failed(format!(
            "expected build output {} does not exist",
            from.display()
        )));
    }
    // A name of this process's own: two harness runs of one family (shards, tests side
    // by side) copy the same tools at once, and a shared temporary name let one rename
    // the other's copy away.
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = to.with_extension(format!("tmp-{}-{n}", std::process::id()));
    std::fs::copy(from, &tmp)
        .and_then(|_| std::fs::rename(&tmp, to))
        .map_err(|e| {
            HarnessError::failed(format!("copy {} -> {}: {e}", from.display(), to.display()))
        })
}

pub fn build_tools(req: &BuildRequest, dir: &Path) -> Result<(PathBuf, PathBuf), HarnessError> {
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools)
        .map_err(|e| HarnessError::failed(format!("{}: {e}", tools.display())))?;
    let capture = tools.join("libhrr_capture.so");
    let replay = tools.join("hrr-replay");
    if let Some(t) = &req.tools_dir {
        copy_exec(&t.join("libhrr_capture.so"), &capture)?;
        copy_exec(&t.join("hrr-replay"), &replay)?;
        return Ok((capture, replay));
    }
    let spec = &req.matrix.tools;
    let log = dir.join("tools-build.log");
    let _ = std::fs::remove_file(&log);
    if req.verbose {
        eprintln!(
            "hrr-harness: building capture and replay in {}: {}",
            req.source.root.display(),
            spec.build.join(" ")
        );
    }
    let mut cmd = crate::process::command(&spec.build[0]);
    cmd.args(&spec.build[1..])
        .current_dir(&req.source.root)
        .env("CARGO_TARGET_DIR", &req.cargo_target_dir);
    let f = process::run_logged(cmd, &log, Instant::now() + Duration::from_secs(3600))
        .map_err(|e| HarnessError::failed(format!("cannot run `{}`: {e}", spec.build[0])))?;
    match f.exit {
        Exit::Code(0) => {
            if req.verbose {
                eprintln!(
                    "hrr-harness: capture and replay built in {:.1} s",
                    f.duration.as_secs_f64()
                );
            }
        }
        Exit::Interrupted => return Err(HarnessError::Interrupted),
        e => {
            return Err(HarnessError::failed(format!(
                "building capture and replay failed ({}); log: {}\n{}",
                e.describe(),
                log.display(),
                process::tail(&log, 3000)
            )))
        }
    }
    copy_exec(
        &expand(&spec.capture, &req.source.root, &req.cargo_target_dir),
        &capture,
    )?;
    copy_exec(
        &expand(&spec.replay, &req.source.root, &req.cargo_target_dir),
        &replay,
    )?;
    Ok((capture, replay))
}

/// Hash of everything that decides a case binary: the compiler's version, the command
/// lines, and every file under the case's directory and `cases/common`, subdirectories
/// included. Files are visited in sorted order and named by their path relative to their
/// root, each followed by its length and bytes, so the hash is deterministic and a change
/// in any file (or a file added, removed or renamed) changes it.
fn input_hash(compiler_version: &str, commands: &str, case_dir: &Path, common: &Path) -> String {
    let mut buf = Vec::new();
    buf.extend_from_slice(compiler_version.as_bytes());
    buf.push(0);
    buf.extend_from_slice(commands.as_bytes());
    buf.push(0);
    for (label, dir) in [("case", case_dir), ("common", common)] {
        let files = walkdir::WalkDir::new(dir)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file());
        for f in files {
            let rel = f.path().strip_prefix(dir).unwrap_or(f.path());
            // An unreadable file hashes as empty; its compile fails and says why.
            let data = std::fs::read(f.path()).unwrap_or_default();
            buf.extend_from_slice(label.as_bytes());
            buf.push(b'/');
            buf.extend_from_slice(rel.to_string_lossy().as_bytes());
            buf.push(0);
            buf.extend_from_slice(&(data.len() as u64).to_le_bytes());
            buf.extend_from_slice(&data);
        }
    }
    ContentHash::of(&buf).to_hex()
}

/// The lock file of a case's build directory.
const BUILD_LOCK: &str = ".build-lock";

/// An exclusive lock on `dir`'s build, held until dropped (released at exit too).
fn lock_build_dir(dir: &Path) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        // A link planted at the lock's name is refused, not followed.
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(dir.join(BUILD_LOCK))?;
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| std::io::Error::from(e))
}

fn build_case(
    tc: &Toolchain,
    source: &SourceTree,
    case: &hrr_matrix::Case,
    out_dir: &Path,
    tmp: &Path,
) -> CaseBuild {
    let case_dir_name = case.dir.as_str();
    let src_dir = source.cases_dir().join(case_dir_name);
    let common = source.cases_dir().join("common");
    let runnable = !tc.buildable().is_empty();
    let binary = out_dir.join("case");
    let log = out_dir.join("build.log");
    if let Err(e) = std::fs::create_dir_all(out_dir) {
        return CaseBuild::Failed {
            message: format!("{}: {e}", out_dir.display()),
            log,
        };
    }
    // Another harness process building the same case (a second shard, a test beside
    // this one) waits here, then finds the build up to date: never two compilers
    // writing one binary.
    let _lock = match lock_build_dir(out_dir) {
        Ok(l) => l,
        Err(e) => {
            return CaseBuild::Failed {
                message: format!("locking {}: {e}", out_dir.join(BUILD_LOCK).display()),
                log,
            }
        }
    };
    let source_file = src_dir.join("main.cpp");
    if !source_file.is_file() {
        return CaseBuild::Failed {
            message: format!("{} does not exist in this tree", source_file.display()),
            log,
        };
    }
    // The runnable program for the targets that link here, then a compile check (object
    // file) per compiler for the targets that only compile.
    let mut steps: Vec<(Command, PathBuf)> = Vec::new();
    let module = case
        .module
        .as_ref()
        .filter(|_| runnable)
        .map(|_| out_dir.join("module.co"));
    let library = case
        .library
        .as_ref()
        .filter(|_| runnable)
        .map(|_| out_dir.join("libcase_library.so"));
    let replacement = case
        .replace_kernel
        .as_ref()
        .filter(|_| runnable)
        .map(|r| (r.kernel.clone(), out_dir.join("replacement.co")));
    if runnable {
        let mut compile = tc.compile_command(&source_file, &common, &binary);
        if tc.vendor == hrr_matrix::Vendor::Nvidia {
            compile.args(&case.nvcc_flags);
        }
        steps.push((compile, binary.clone()));
        if let (Some(src), Some(out)) = (&case.module, &module) {
            steps.push((
                tc.module_command(&src_dir.join(src), &common, out),
                out.clone(),
            ));
        }
        if let (Some(src), Some(out)) = (&case.library, &library) {
            steps.push((
                tc.library_command(&src_dir.join(src), &common, out),
                out.clone(),
            ));
        }
        if let (Some(r), Some((_, out))) = (&case.replace_kernel, &replacement) {
            steps.push((
                tc.module_command(&src_dir.join(&r.module), &common, out),
                out.clone(),
            ));
        }
    }
    steps.extend(tc.compile_check_commands(&source_file, &common, out_dir));
    let checked: Vec<String> = tc.compile_only().iter().map(|s| s.to_string()).collect();
    let done = |reused: bool, steps: &[(Command, PathBuf)]| {
        if runnable {
            CaseBuild::Built {
                binary: binary.clone(),
                module: module.clone(),
                library: library.clone(),
                replacement: replacement.clone(),
                reused,
            }
        } else {
            CaseBuild::CompileChecked {
                object: steps.first().map(|(_, o)| o.clone()).unwrap_or_default(),
                targets: checked.clone(),
            }
        }
    };
    let stamp = out_dir.join(".inputs");
    let hash = input_hash(
        &tc.version,
        &steps
            .iter()
            .map(|(c, _)| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join("\n"),
        &src_dir,
        &common,
    );
    if steps.iter().all(|(_, o)| o.is_file())
        && std::fs::read_to_string(&stamp).ok().as_deref() == Some(hash.as_str())
    {
        return done(true, &steps);
    }
    let _ = std::fs::remove_file(&stamp);
    let _ = std::fs::write(&log, "");
    let summary: Vec<(String, PathBuf)> = steps
        .iter()
        .map(|(c, o)| (format!("{c:?}"), o.clone()))
        .collect();
    for ((mut cmd, out), (text, _)) in steps.into_iter().zip(summary.iter()) {
        let _ = std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{text}\n").as_bytes()));
        cmd.current_dir(&src_dir).env("TMPDIR", tmp);
        match process::run_logged(cmd, &log, Instant::now() + Duration::from_secs(900)) {
            Ok(f) if f.exit == Exit::Code(0) && out.is_file() => {}
            Ok(f) => {
                return CaseBuild::Failed {
                    message: format!(
                        "compiling cases/{case_dir_name}/{} failed ({}): {}",
                        if Some(&out) == module.as_ref() {
                            case.module.as_deref().unwrap_or("its module")
                        } else if Some(&out) == library.as_ref() {
                            case.library.as_deref().unwrap_or("its library")
                        } else if Some(&out) == replacement.as_ref().map(|(_, p)| p) {
                            case.replace_kernel
                                .as_ref()
                                .map_or("its replacement kernel", |r| r.module.as_str())
                        } else {
                            "main.cpp"
                        },
                        f.exit.describe(),
                        process::tail(&log, 600)
                            .lines()
                            .filter(|l| l.contains("error"))
                            .take(3)
                            .collect::<Vec<_>>()
                            .join(" | ")
                    ),
                    log,
                }
            }
            Err(e) => {
                return CaseBuild::Failed {
                    message: format!("cannot run the compiler ({text}): {e}"),
                    log,
                }
            }
        }
    }
    let _ = std::fs::write(&stamp, &hash);
    done(false, &[])
}

/// What building a family's GPU cases found: the toolchain (in words), the targets it
/// cannot build and why, the reason no compiler was found, the stand-in's architecture,
/// and each case's build.
#[derive(Default)]
struct GpuBuilds {
    toolchain: String,
    unsupported_targets: Vec<(String, String)>,
    no_compiler: Option<String>,
    stand_in_arch: Option<String>,
    cases: Vec<(String, CaseBuild)>,
}

/// Plans the family's toolchain and builds `gpu_cases` with it on the worker pool; a
/// toolchain that cannot build any target makes every case unsupported, saying why.
fn build_gpu_cases(
    req: &BuildRequest,
    dir: &Path,
    gpu_cases: &[&&hrr_matrix::Case],
) -> Result<GpuBuilds, HarnessError> {
    let mut out = GpuBuilds::default();
    let unsupported = |reason: &str| -> Vec<(String, CaseBuild)> {
        gpu_cases
            .iter()
            .map(|c| {
                let reason = reason.to_string();
                (c.name.clone(), CaseBuild::Unsupported { reason })
            })
            .collect()
    };
    let planned = toolchain::plan(req.family, &req.build_root.join("toolchain"));
    let tc = match (planned, req.stand_in) {
        (Ok(tc), true) => {
            let tc = crate::standin::plan(&tc, &req.source.root);
            out.stand_in_arch = crate::standin::device_arch(&tc);
            tc
        }
        (Ok(tc), false) => tc,
        (Err(e), _) => {
            let hint = e.to_string();
            out.toolchain = hint.clone();
            out.no_compiler = Some(hint.clone());
            out.cases = unsupported(&hint);
            return Ok(out);
        }
    };
    out.unsupported_targets = tc.unsupported();
    let buildable = tc.buildable();
    let checkable = tc.compile_only();
    out.toolchain = format!(
        "{} ({}) for {}{}",
        tc.compiler.display(),
        tc.version,
        if buildable.is_empty() {
            "no runnable target".into()
        } else {
            buildable.join(", ")
        },
        if checkable.is_empty() {
            String::new()
        } else {
            format!("; compile check only for {}", checkable.join(", "))
        }
    );
    if buildable.is_empty() && checkable.is_empty() {
        let reason = out
            .unsupported_targets
            .iter()
            .map(|(_, r)| r.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        out.cases = unsupported(&reason);
        return Ok(out);
    }
    let tmp = dir.join("tmp");
    let _ = std::fs::create_dir_all(&tmp);
    let to_build: Vec<&hrr_matrix::Case> = gpu_cases.iter().map(|c| **c).collect();
    crate::pool::run(
        &to_build,
        None,
        crate::pool::cpu_workers(8),
        process::interrupted,
        |_| (),
        |_, _, case| {
            build_case(
                &tc,
                req.source,
                case,
                &dir.join("cases").join(&case.name),
                &tmp,
            )
        },
        |e| {
            let crate::pool::Event::Finished(i, b) = e else {
                return;
            };
            let name = &to_build[i].name;
            if req.verbose {
                match &b {
                    CaseBuild::Built { reused: true, .. } => {
                        eprintln!("hrr-harness: {name}: up to date")
                    }
                    CaseBuild::Built { .. } => eprintln!("hrr-harness: {name}: built"),
                    CaseBuild::Failed { message, .. } => {
                        eprintln!("hrr-harness: {name}: {message}")
                    }
                    _ => {}
                }
            }
            out.cases.push((name.clone(), b));
        },
    );
    if process::interrupted() {
        return Err(HarnessError::Interrupted);
    }
    Ok(out)
}

/// Builds tools and cases. Case compile failures are reported per case, not as an error.
pub fn build(req: &BuildRequest) -> Result<Built, HarnessError> {
    let revision = req.source.revision();
    // Stand-in builds keep one directory per family across revisions: each case is
    // rebuilt only when its input hash changes (sources, headers, compiler, command), so a
    // commit that touches no case compiles nothing (CI runs every family each time).
    let dir = if req.stand_in {
        req.build_root.join(format!("{}-stand-in", req.family.name))
    } else {
        req.build_root.join(format!(
            "{}-{}",
            req.family.name,
            sanitize(&req.source.build_key())
        ))
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| HarnessError::failed(format!("{}: {e}", dir.display())))?;
    let (capture, replay) = build_tools(req, &dir)?;
    let wanted: Vec<&hrr_matrix::Case> = req
        .matrix
        .cases
        .iter()
        .filter(|c| req.only.as_ref().is_none_or(|o| o.contains(&c.name)))
        .collect();
    let mut cases = BTreeMap::new();
    let gpu_cases: Vec<&&hrr_matrix::Case> =
        wanted.iter().filter(|c| c.kind == CaseKind::Gpu).collect();
    for c in wanted.iter().filter(|c| c.kind == CaseKind::Host) {
        cases.insert(c.name.clone(), CaseBuild::Host);
    }
    for c in wanted.iter().filter(|c| c.kind == CaseKind::Archive) {
        cases.insert(c.name.clone(), archive_case(req, c));
    }
    let gpu = if gpu_cases.is_empty() {
        GpuBuilds::default()
    } else {
        build_gpu_cases(req, &dir, &gpu_cases)?
    };
    cases.extend(gpu.cases);
    let built = Built {
        family: req.family.name.clone(),
        revision,
        dir: dir.clone(),
        source: req.source.root.clone(),
        capture,
        replay,
        toolchain: gpu.toolchain,
        unsupported_targets: gpu.unsupported_targets,
        no_compiler: gpu.no_compiler,
        cases,
        stand_in_arch: gpu.stand_in_arch,
    };
    if let Ok(j) = serde_json::to_vec_pretty(&built) {
        let _ = std::fs::write(dir.join("build.json"), j);
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, data: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }

    /// A case directory and cases/common, each with a source in a subdirectory.
    fn tree(root: &Path) -> (PathBuf, PathBuf) {
        let case = root.join("cases/saxpy");
        let common = root.join("cases/common");
        write(&case.join("main.cpp"), "#include \"kernels/saxpy.h\"\n");
        write(&case.join("kernels/saxpy.h"), "__global__ void saxpy();\n");
        write(&common.join("hrr_gpu.h"), "#pragma once\n");
        write(&common.join("detail/check.h"), "#define CHECK(x) x\n");
        (case, common)
    }

    #[test]
    fn a_file_in_a_subdirectory_changes_the_hash() {
        let t = tempfile::tempdir().unwrap();
        let (case, common) = tree(t.path());
        let hash = || input_hash("nvcc 13.0", "nvcc main.cpp", &case, &common);
        let before = hash();
        assert_eq!(before, hash(), "the same inputs hash the same");
        write(
            &case.join("kernels/saxpy.h"),
            "__global__ void saxpy(int);\n",
        );
        let after_case = hash();
        assert_ne!(before, after_case, "an edit in cases/saxpy/kernels/");
        write(&common.join("detail/check.h"), "#define CHECK(x) (x)\n");
        let after_common = hash();
        assert_ne!(after_case, after_common, "an edit in cases/common/detail/");
        write(&case.join("kernels/new.h"), "");
        assert_ne!(after_common, hash(), "a new (even empty) file");
    }

    #[test]
    fn the_hash_names_files_relative_to_their_root() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let (case_a, common_a) = tree(a.path());
        let (case_b, common_b) = tree(b.path());
        assert_eq!(
            input_hash("v", "cmd", &case_a, &common_a),
            input_hash("v", "cmd", &case_b, &common_b)
        );
        assert_ne!(
            input_hash("v", "cmd", &case_a, &common_a),
            input_hash("v2", "cmd", &case_a, &common_a),
            "the compiler version is an input"
        );
        // Moving a file to another directory is a change, though no byte changed.
        std::fs::rename(case_b.join("kernels/saxpy.h"), case_b.join("saxpy.h")).unwrap();
        assert_ne!(
            input_hash("v", "cmd", &case_a, &common_a),
            input_hash("v", "cmd", &case_b, &common_b)
        );
    }
}
