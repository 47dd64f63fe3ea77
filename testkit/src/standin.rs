//! The repository's one stand-in runtime (`standin/`), built by the tests that run programs
//! or replays without a GPU: from the file list `standin/sources.txt`, read when the test
//! runs (as the harness reads it when it builds one), so a source added there is in every
//! build. The CUDA stand-in is compiled against CUDA 13's headers ([`CUDA_HEADERS`]) with
//! `-Wall -Werror`; without them (or a C compiler) the calling test skips through
//! [`tools`](crate::tools()) (a failure under `CI=true`).
//!
//! [`CUDA_HEADERS`]: crate::tools::CUDA_HEADERS

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tools::{workspace, CC, CUDA_HEADERS};

/// The `VENDOR SONAME: FILE...` line of `standin/sources.txt` for `vendor` ("nvidia",
/// "amd"): the soname and the sources, as paths.
pub fn sources(vendor: &str) -> (String, Vec<PathBuf>) {
    let root = workspace();
    let list =
        std::fs::read_to_string(root.join("standin/sources.txt")).expect("standin/sources.txt");
    list.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| {
            let (head, files) = l.split_once(':')?;
            let mut head = head.split_whitespace();
            (head.next()? == vendor).then_some(())?;
            let soname = head.next()?.to_string();
            let files = files
                .split_whitespace()
                .map(|f| root.join("standin").join(f))
                .collect();
            Some((soname, files))
        })
        .unwrap_or_else(|| panic!("no {vendor} line in standin/sources.txt"))
}

/// What [`cuda`] builds: the library and how programs link it.
#[derive(Debug, Clone)]
pub struct Cuda {
    /// The directory holding the library (rpath and `-L` of programs, loader path of
    /// replay).
    pub dir: PathBuf,
    /// The library file (`dir/<soname>`), which `HRR_REPLAY_CUDART` names.
    pub lib: PathBuf,
    /// The headers it was built against (`CUDART_VERSION` there is what it reports).
    pub include: PathBuf,
}

impl Cuda {
    /// `CUDART_VERSION` of the headers the stand-in was built against: the runtime and
    /// driver version it reports.
    pub fn version(&self) -> u32 {
        let h = std::fs::read_to_string(self.include.join("cuda_runtime_api.h"))
            .expect("cuda_runtime_api.h");
        h.lines()
            .find_map(|l| l.trim().strip_prefix("#define CUDART_VERSION"))
            .and_then(|v| v.trim().parse().ok())
            .expect("#define CUDART_VERSION in cuda_runtime_api.h")
    }

    /// `-L`, `-l:` and rpath arguments that link a program against the library.
    pub fn link_args(&self) -> Vec<String> {
        vec![
            format!("-L{}", self.dir.display()),
            format!("-l:{}", self.lib.file_name().unwrap().to_string_lossy()),
            format!("-Wl,-rpath,{}", self.dir.display()),
        ]
    }
}

/// Builds the stand-in CUDA runtime and driver into `dir` as `soname` (the file list's
/// `libcudart.so.13` when None; `libcuda.so.1` for a driver-only program), with `defines`
/// (`-DNAME` arguments standin/ documents) added; beside it, `libcuda.so.1` and
/// `libcudart.so.13` name the same file, as the harness's build does (one process state
/// for the runtime and the driver). None after a skip for want of cc or the headers; a
/// build that fails fails the test.
#[track_caller]
pub fn cuda(dir: &Path, soname: Option<&str>, defines: &[&str]) -> Option<Cuda> {
    let [cc, include] = crate::tools([&CC, &CUDA_HEADERS])?;
    let (listed, files) = sources("nvidia");
    let soname = soname.unwrap_or(&listed).to_string();
    std::fs::create_dir_all(dir).expect("stand-in directory");
    let lib = dir.join(&soname);
    let o = Command::new(cc)
        .args([
            "-O1", "-g", "-fPIC", "-shared", "-Wall", "-Werror", "-pthread",
        ])
        .arg(format!("-I{}", include.display()))
        .args(defines)
        .arg(format!("-Wl,-soname,{soname}"))
        .arg("-o")
        .arg(&lib)
        .args(&files)
        .output()
        .expect("cc");
    assert!(
        o.status.success(),
        "building the stand-in ({soname}) failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for other in ["libcudart.so.13", "libcuda.so.1"] {
        if other != soname {
            let link = dir.join(other);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&soname, &link).expect("stand-in link");
        }
    }
    Some(Cuda {
        dir: dir.to_path_buf(),
        lib,
        include,
    })
}
