//! Compile checks of every case with the toolchains this machine has (CI installs hipcc
//! from Debian and nvcc from pip): `hrr-harness build --family F` must build every GPU case
//! for each target its compiler knows, and say why for the targets no compiler here knows.
//! A family whose compiler is missing is skipped through `hrr_testkit`, saying so (a
//! failure under `CI=true` or `HRR_REQUIRE_ALL=1`); `build` of a family with a target no
//! compiler here builds exits 1 (a compile failure).

use std::path::Path;
use std::process::Command;

use hrr_testkit::{tools, Need};

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");

fn build(family: &str, build_dir: &Path, tools: &Path) -> (i32, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cmd = Command::new(HARNESS);
    if let Some(n) = hrr_testkit::find(&tools::NVCC) {
        cmd.env("NVCC", n);
    }
    let o = cmd
        .args(["build", "--family", family, "--tools"])
        .arg(tools)
        .arg("--build-dir")
        .arg(build_dir)
        .current_dir(root)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// Every file under `dir` (not the directories).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(walkdir::DirEntry::into_path)
        .collect()
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    // The tools are not under test here: placeholders satisfy `--tools`.
    let tools = t.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("libhrr_capture.so"), b"").unwrap();
    std::fs::write(tools.join("hrr-replay"), b"").unwrap();
    (t, tools)
}

#[test]
fn cases_compile_for_nvidia_sm90() {
    if hrr_testkit::tool(&tools::NVCC).is_none() {
        return;
    }
    let (t, tools) = setup();
    let (code, out) = build("sm90", &t.path().join("b"), &tools);
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains("FAILED") && !out.contains("not built"),
        "{out}"
    );
    assert!(out.matches("built      ").count() >= 18, "{out}");
}

#[test]
fn cases_compile_for_amd_families_hipcc_knows() {
    if hrr_testkit::tool(&tools::HIPCC).is_none() {
        return;
    }
    let (t, tools) = setup();
    // gfx90a builds runnable programs.
    let (code, out) = build("gfx90a", &t.path().join("b"), &tools);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("FAILED"), "{out}");
    assert!(out.matches("built      ").count() >= 18, "{out}");
    // module_launch's module.hip became an offload bundle whose AMDGPU metadata (read by
    // the parser capture uses) lists scale_add with its four explicit arguments.
    let module = walk(&t.path().join("b"))
        .into_iter()
        .find(|p| p.ends_with("module_launch/module.co"))
        .unwrap_or_else(|| panic!("no module_launch/module.co was built: {out}"));
    assert!(out.contains("(module "), "{out}");
    let kernels =
        hrr_archive::amdgpu::kernels_of_code_object(&std::fs::read(&module).unwrap()).unwrap();
    let k = kernels
        .iter()
        .find(|k| k.name == "scale_add")
        .unwrap_or_else(|| panic!("{kernels:?}"));
    assert_eq!(k.explicit_params(), vec![(0, 8), (8, 8), (16, 4), (20, 4)]);
    // HIP 5.2's clang 15 compiles gfx11 code with -fgpu-rdc -nogpulib but cannot link it
    // (no device libraries): every case is compile-checked.
    let (code, out) = build("gfx110x", &t.path().join("b"), &tools);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("FAILED"), "{out}");
    assert!(
        out.matches("compile check for gfx1100").count() >= 18,
        "{out}"
    );
    // clang-19 (Debian) knows gfx1200/gfx1201 but has no device libraries for them here:
    // every case is compile-checked with it.
    if hrr_testkit::find(&tools::CLANG19).is_some() {
        let (code, out) = build("gfx120x", &t.path().join("b"), &tools);
        assert_eq!(code, 0, "{out}");
        assert!(!out.contains("FAILED"), "{out}");
        assert!(
            out.matches("compile check for gfx1200, gfx1201").count() >= 18,
            "{out}"
        );
    } else {
        hrr_testkit::skip(
            Need::Tool,
            format!("the gfx120x compile checks: {}", tools::CLANG19.missing()),
        );
    }
    // Nothing here knows gfx950: the build says so for that target, per case, and fails
    // (a target the compilers cannot build is a compile failure; the matrix marks targets
    // the project does not support with skip rules).
    let (code, out) = build("gfx950", &t.path().join("b"), &tools);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("target gfx950 not built") && out.contains("cannot build gfx950"),
        "{out}"
    );
    assert!(out.contains("not built:"), "{out}");
}
