//! The matrix crate against real files: the repository's own matrix, and bad files whose
//! errors must name the line and column of the problem.

use std::path::{Path, PathBuf};

use hrr_matrix::{load, load_str, resolve_family, shard, Disposition, Expectation, Shard};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

const GOOD: &str = r#"version: 1
tools:
  build: [cargo, build]
  capture: a.so
  replay: b
families:
  - name: gfx110x
    vendor: amd
    targets: [gfx1100, gfx1101]
    runner: [self-hosted, gfx110x]
    shards: 2
  - name: gfx90a
    vendor: amd
    targets: [gfx90a]
    runner: [self-hosted, gfx90a]
    timeout: 30s
  - name: sm90
    vendor: nvidia
    targets: [sm_90]
    runner: [self-hosted, sm90]
cases:
  - name: alpha
    dir: alpha
    tags: [heavy]
    checks: [roundtrip, blob-edit]
  - name: beta
    dir: beta
    timeout: 5m
    checks: [roundtrip, {processes: 2}]
  - name: gamma
    dir: gamma
    checks: [{refused: [StreamAddCallback]}]
  - name: delta
    dir: delta
    kind: host
    command: [sh, run.sh]
    checks: [exit-zero]
rules:
  - family: "gfx11*"
    tag: heavy
    skip: unsupported
    reason: too slow here
  - target: gfx90a
    case: beta
    skip: disabled
    issue: https://example.org/issues/7
  - family: "*"
    case: gamma
    expect: fail
    reason: not yet
  - family: sm90
    case: beta
    expect: flake
    reason: timing
  - family: sm90
    case: beta
    expect: fail
    reason: shadowed by the flake rule above
  - family: gfx90a
    case: delta
    skip: unsupported
    reason: the real GPU aborts
    only_on: gpu
"#;

fn errors(text: &str) -> Vec<String> {
    match load_str(text, Path::new("m.yaml"), None) {
        Ok(_) => vec![],
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn the_repository_matrix_is_valid_and_covers_every_family() {
    let root = repo();
    let m = load(&root.join("matrix/matrix.yaml"), &root.join("cases"))
        .unwrap_or_else(|e| panic!("{e}"));
    for f in [
        "gfx90a", "gfx94x", "gfx950", "gfx103x", "gfx110x", "gfx120x", "gfx1150", "gfx1151",
        "gfx1153", "sm90",
    ] {
        assert!(m.families.iter().any(|x| x.name == f), "family {f} missing");
    }
    assert!(m.cases.len() >= 15, "only {} cases", m.cases.len());
    // Every AMD family records the oldest ROCm it runs on; the newest need 6.4.
    for f in m
        .families
        .iter()
        .filter(|f| f.vendor == hrr_matrix::Vendor::Amd)
    {
        assert!(
            f.min_rocm.is_some(),
            "AMD family {} names no min_rocm",
            f.name
        );
    }
    let min = |n: &str| {
        m.families
            .iter()
            .find(|f| f.name == n)
            .unwrap()
            .min_rocm
            .clone()
    };
    for f in ["gfx950", "gfx1150", "gfx1151", "gfx1153"] {
        assert_eq!(min(f).as_deref(), Some("6.4"), "{f}");
    }
}

#[test]
fn a_minimum_rocm_too_old_for_a_target_or_on_nvidia_is_refused() {
    let amd = GOOD.replacen(
        "    vendor: amd\n",
        "    vendor: amd\n    min_rocm: \"5.2\"\n",
        1,
    );
    assert!(errors(&amd).is_empty(), "{:?}", errors(&amd));
    let e = errors(&amd.replace("targets: [gfx1100", "targets: [gfx1151, gfx1100"));
    assert!(
        e.iter().any(|x| x.contains("min_rocm 5.2 is too old for target gfx1151: gfx115x (Strix) needs ROCm 6.4 or later (6.4)")),
        "{e:?}"
    );
    let e = errors(&amd.replace("min_rocm: \"5.2\"", "min_rocm: \"six\""));
    assert!(
        e.iter()
            .any(|x| x.contains("min_rocm `six` is not a ROCm release")),
        "{e:?}"
    );
    let e = errors(&GOOD.replace(
        "    vendor: nvidia\n",
        "    vendor: nvidia\n    min_rocm: \"6.4\"\n",
    ));
    assert!(
        e.iter()
            .any(|x| x.contains("min_rocm is for AMD families only")),
        "{e:?}"
    );
}

#[test]
fn rules_resolve_per_family_with_reasons() {
    let m = load_str(GOOD, Path::new("m.yaml"), None).unwrap_or_else(|e| panic!("{e}"));
    let fam = |n: &str| m.families.iter().find(|f| f.name == n).unwrap();
    let r = resolve_family(&m, fam("gfx110x"));
    let get = |r: &[hrr_matrix::ResolvedCase], c: &str| {
        r.iter().find(|x| x.case.name == c).unwrap().clone()
    };
    assert_eq!(
        get(&r, "alpha").disposition,
        Disposition::Skip {
            skip: hrr_matrix::SkipKind::Unsupported,
            reason: "unsupported: too slow here".into()
        }
    );
    assert_eq!(get(&r, "beta").disposition, Disposition::Run);
    assert_eq!(
        get(&r, "gamma").expectation,
        Expectation::Fail {
            reason: "not yet".into()
        }
    );
    let r = resolve_family(&m, fam("gfx90a"));
    match &get(&r, "beta").disposition {
        Disposition::Skip { skip, reason } => {
            assert_eq!(*skip, hrr_matrix::SkipKind::Disabled);
            assert!(reason.contains("https://example.org/issues/7"));
        }
        d => panic!("beta on gfx90a: {d:?}"),
    }
    // A rule for real GPUs only: the stand-in runs the case.
    assert!(matches!(
        get(&r, "delta").disposition,
        Disposition::Skip { .. }
    ));
    let on_stand_in = hrr_matrix::resolve_family_on(&m, fam("gfx90a"), hrr_matrix::RunsOn::StandIn);
    assert_eq!(get(&on_stand_in, "delta").disposition, Disposition::Run);
    // Timeouts: case beats family beats default.
    assert_eq!(get(&r, "alpha").timeout.as_secs(), 30);
    assert_eq!(get(&r, "beta").timeout.as_secs(), 300);
    let r = resolve_family(&m, fam("sm90"));
    assert_eq!(get(&r, "alpha").timeout.as_secs(), 120);
    assert_eq!(get(&r, "alpha").disposition, Disposition::Run);
    // The first expectation in the file wins.
    assert_eq!(
        get(&r, "beta").expectation,
        Expectation::Flake {
            reason: "timing".into()
        }
    );
}

#[test]
fn every_case_lands_in_exactly_one_shard() {
    let m = load_str(GOOD, Path::new("m.yaml"), None).unwrap();
    let all = resolve_family(&m, &m.families[0]);
    for n in 1..=6u32 {
        let mut seen: Vec<String> = Vec::new();
        let mut sizes = Vec::new();
        for k in 1..=n {
            let s = shard(all.clone(), Shard { index: k, count: n });
            sizes.push(s.len());
            seen.extend(s.into_iter().map(|c| c.case.name));
        }
        seen.sort();
        let mut names: Vec<String> = all.iter().map(|c| c.case.name.clone()).collect();
        names.sort();
        assert_eq!(seen, names, "{n} shards");
        assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        // Deterministic: the same split twice.
        assert_eq!(
            shard(all.clone(), Shard { index: 1, count: n })
                .iter()
                .map(|c| &c.case.name)
                .collect::<Vec<_>>(),
            shard(all.clone(), Shard { index: 1, count: n })
                .iter()
                .map(|c| &c.case.name)
                .collect::<Vec<_>>()
        );
    }
    assert!(Shard::parse("0/2").is_err());
    assert!(Shard::parse("3/2").is_err());
    assert!(Shard::parse("2").is_err());
    assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
}

#[test]
fn schema_errors_name_line_and_column() {
    let bad = GOOD.replace("    timeout: 30s\n", "    timout: 30s\n");
    let e = errors(&bad);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("m.yaml:16:5: "), "{}", e[0]);
    assert!(e[0].contains("unknown field `timout`"), "{}", e[0]);

    let bad = GOOD.replace("timeout: 5m", "timeout: 5");
    let e = errors(&bad);
    assert!(e[0].contains("no unit"), "{e:?}");
    assert!(
        e[0].starts_with("m.yaml:28:14: cases[1].timeout: "),
        "{e:?}"
    );

    let e = errors("version: 1\ntools: [\n");
    assert!(e[0].starts_with("m.yaml:"), "{e:?}");
}

#[test]
fn semantic_errors_are_located() {
    // Unknown case in a rule.
    let e = errors(&GOOD.replace("    case: gamma\n", "    case: gama\n"));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("m.yaml:48:5: rule: case `gama` matches no case (unknown case name)"),
        "{e:?}"
    );
    // A family glob that matches nothing.
    let e = errors(&GOOD.replace("family: \"gfx11*\"", "family: \"gfx12*\""));
    assert!(e[0].contains("family `gfx12*` matches no family"), "{e:?}");
    // Disabled without an issue URL; unsupported without a reason.
    let e = errors(&GOOD.replace(
        "    issue: https://example.org/issues/7\n",
        "    issue: see-chat\n",
    ));
    assert!(e[0].contains("needs an issue URL"), "{e:?}");
    let e = errors(&GOOD.replace("    reason: too slow here\n", ""));
    assert!(
        e[0].contains("`skip: unsupported` needs a `reason:`"),
        "{e:?}"
    );
    // Duplicates, bad targets, empty checks.
    let e = errors(&GOOD.replace("name: beta", "name: alpha"));
    assert!(
        e.iter()
            .any(|x| x.contains("case `alpha` is declared twice")),
        "{e:?}"
    );
    let e = errors(&GOOD.replace("targets: [sm_90]", "targets: [gfx90a]"));
    assert!(
        e[0].contains("target `gfx90a` is not an NVIDIA target"),
        "{e:?}"
    );
    let e = errors(&GOOD.replace("checks: [exit-zero]", "checks: []"));
    assert!(e[0].contains("declares no checks"), "{e:?}");
    let e = errors(&GOOD.replace("checks: [exit-zero]", "checks: [roundtrip]"));
    assert!(e[0].contains("needs a GPU case"), "{e:?}");
    let e = errors(&GOOD.replace("version: 1", "version: 2"));
    assert!(e[0].starts_with("m.yaml:1:1: matrix version 2"), "{e:?}");
    // A capture range capture would refuse is refused here, with capture's words; a
    // good one loads.
    let ranged = |r: &str| {
        GOOD.replace(
            "    tags: [heavy]\n",
            &format!("    tags: [heavy]\n    capture_range: {r}\n"),
        )
    };
    let text = ranged("\"nvtx:step:0\"");
    let line = 1 + text
        .lines()
        .position(|l| l.contains("capture_range"))
        .unwrap();
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with(&format!("m.yaml:{line}:"))
            && e[0].contains(
                "case `alpha`: capture_range: \"nvtx:step:0\" is not profiler or profiler:N"
            )
            && e[0].contains("nvtx:NAME:N"),
        "{e:?}"
    );
    for good in ["profiler:2", "nvtx:train step:3"] {
        let m = load_str(&ranged(&format!("\"{good}\"")), Path::new("m.yaml"), None).unwrap();
        let alpha = m.cases.iter().find(|c| c.name == "alpha").unwrap();
        assert_eq!(alpha.capture_range.as_deref(), Some(good));
    }
}

#[test]
fn case_directories_and_the_matrix_must_agree() {
    let t = tempfile::tempdir().unwrap();
    let cases = t.path().join("cases");
    for d in ["alpha", "beta", "gamma", "delta", "stray"] {
        std::fs::create_dir_all(cases.join(d)).unwrap();
    }
    for d in ["alpha", "beta"] {
        std::fs::write(cases.join(d).join("main.cpp"), "int main(){}").unwrap();
    }
    std::fs::create_dir_all(cases.join("common")).unwrap();
    let e = match load_str(GOOD, Path::new("m.yaml"), Some(&cases)) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
    };
    assert!(
        e.iter()
            .any(|x| x.contains("gpu case `gamma`") && x.contains("has no main.cpp")),
        "{e:?}"
    );
    assert!(
        e.iter()
            .any(|x| x.contains("cases/stray exists but no case in the matrix uses it")),
        "{e:?}"
    );
    assert_eq!(e.len(), 2, "{e:?}");
    std::fs::remove_dir_all(cases.join("alpha")).unwrap();
    let e = load_str(GOOD, Path::new("m.yaml"), Some(&cases))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("case `alpha`: directory") && e.contains("does not exist"),
        "{e}"
    );
}

#[test]
fn a_case_module_must_be_a_file_of_its_gpu_case() {
    let t = tempfile::tempdir().unwrap();
    let cases = t.path().join("cases");
    for d in ["alpha", "beta", "gamma", "delta"] {
        std::fs::create_dir_all(cases.join(d)).unwrap();
        std::fs::write(cases.join(d).join("main.cpp"), "int main(){}").unwrap();
    }
    std::fs::create_dir_all(cases.join("common")).unwrap();
    let with_module = |m: &str| {
        GOOD.replacen(
            "    dir: alpha\n",
            &format!("    dir: alpha\n    module: {m}\n"),
            1,
        )
    };
    std::fs::write(cases.join("alpha").join("kernels.hip"), "").unwrap();
    let m = load_str(
        &with_module("kernels.hip"),
        Path::new("m.yaml"),
        Some(&cases),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.cases[0].module.as_deref(), Some("kernels.hip"));
    for bad in ["missing.hip", "../beta/main.cpp"] {
        let e = load_str(&with_module(bad), Path::new("m.yaml"), Some(&cases))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("m.yaml:") && e.contains("module source") && e.contains(bad),
            "{bad}: {e}"
        );
    }
}

/// The first error `load_str` gives for GOOD with `from` replaced by `to`.
fn first_error(from: &str, to: &str) -> hrr_matrix::MatrixError {
    assert!(GOOD.contains(from), "{from}");
    let text = GOOD.replacen(from, to, 1);
    load_str(&text, Path::new("m.yaml"), None)
        .unwrap_err()
        .0
        .remove(0)
}

#[test]
fn hostile_values_are_refused_with_their_place() {
    // An overflowing timeout once passed `matrix check` and made `run` panic.
    let e = first_error("timeout: 5m", "timeout: 18446744073709551615s");
    assert!(
        e.message.contains("number too large") || e.message.contains("longer than"),
        "{e}"
    );
    let e = first_error("timeout: 5m", "timeout: 25h");
    assert!(
        e.message.contains("longer than the longest allowed, 24h"),
        "{e}"
    );
    // A blank timeout was read as "no timeout".
    let e = first_error("timeout: 5m", "timeout:");
    assert!(e.message.contains("`timeout` has no value"), "{e}");
    assert_eq!((e.line, e.column), (28, 5));
    // Exit statuses are 0..255.
    let e = first_error("    kind: host\n", "    kind: host\n    exit_code: 300\n");
    assert!(
        e.message.contains("exit_code 300 is not an exit status"),
        "{e}"
    );
    // stdout_varies: gpu cases only, one line each, bounded.
    let e = first_error(
        "    kind: host\n",
        "    kind: host\n    stdout_varies: [\"x *\"]\n",
    );
    assert!(
        e.message.contains("`stdout_varies` is for gpu cases"),
        "{e}"
    );
    let e = first_error("tags: [heavy]", "tags: [heavy]\n    stdout_varies: [\"\"]");
    assert!(e.message.contains("must be one line of 1 to 200"), "{e}");
    let many = vec!["\"a\""; 33].join(", ");
    let e = first_error(
        "tags: [heavy]",
        &format!("tags: [heavy]\n    stdout_varies: [{many}]"),
    );
    assert!(
        e.message.contains("33 stdout_varies patterns, at most 32"),
        "{e}"
    );
    let e = first_error("tags: [heavy]", "tags: !custom [heavy]");
    assert!(e.message.contains("YAML tags"), "{e}");
    assert_eq!(e.line, 24);
    let e = first_error("tools:", "---\nversion: 1\ntools:");
    assert!(e.message.contains("second YAML document"), "{e}");
    assert_eq!(e.line, 2);
}

/// `unstable:` declares a case's known nondeterminism: bounded, for gpu cases, held by
/// the `stability` check (and that check needs it); unknown keys refused.
#[test]
fn declared_instability_is_bounded_and_checked() {
    let ok = GOOD.replacen(
        "    checks: [roundtrip, blob-edit]",
        "    unstable: {runs: 3, max_bytes: 12}\n    checks: [roundtrip, blob-edit, stability]",
        1,
    );
    let m = load_str(&ok, Path::new("m.yaml"), None).unwrap();
    let alpha = &m.cases[0];
    assert_eq!(
        alpha.unstable,
        Some(hrr_matrix::Unstable {
            runs: 3,
            max_bytes: 12
        })
    );
    assert!(alpha.checks.contains(&hrr_matrix::Check::Stability));
    let with = |decl: &str, checks: &str| {
        let text = GOOD.replacen(
            "    checks: [roundtrip, blob-edit]",
            &format!("{decl}    checks: [{checks}]"),
            1,
        );
        errors(&text)
    };
    let e = with(
        "    unstable: {runs: 1, max_bytes: 12}\n",
        "roundtrip, stability",
    );
    assert!(e[0].contains("unstable runs 1 must be 2 to 16"), "{e:?}");
    assert!(e[0].starts_with("m.yaml:25:5:"), "{e:?}");
    let e = with(
        "    unstable: {runs: 17, max_bytes: 12}\n",
        "roundtrip, stability",
    );
    assert!(e[0].contains("unstable runs 17 must be 2 to 16"), "{e:?}");
    let e = with(
        "    unstable: {runs: 3, max_bytes: 0}\n",
        "roundtrip, stability",
    );
    assert!(e[0].contains("max_bytes 0 must be 1 to 1048576"), "{e:?}");
    let e = with(
        "    unstable: {runs: 3, max_bytes: 99999999999}\n",
        "roundtrip, stability",
    );
    assert!(e[0].contains("must be 1 to 1048576"), "{e:?}");
    let e = with("    unstable: {runs: 3, max_bytes: 4}\n", "roundtrip");
    assert!(
        e[0].contains("declares `unstable` without the `stability` check"),
        "{e:?}"
    );
    let e = with("", "roundtrip, stability");
    assert!(e[0].contains("check `stability` needs `unstable:"), "{e:?}");
    let e = with(
        "    unstable: {runs: 3, bytes: 4}\n",
        "roundtrip, stability",
    );
    assert!(e[0].contains("unknown field `bytes`"), "{e:?}");
    let e = with(
        "    unstable: {runs: -3, max_bytes: 4}\n",
        "roundtrip, stability",
    );
    assert!(!e.is_empty(), "{e:?}");
    let host = GOOD.replacen(
        "    checks: [exit-zero]",
        "    unstable: {runs: 3, max_bytes: 4}\n    checks: [exit-zero]",
        1,
    );
    let e = errors(&host);
    assert!(
        e.iter()
            .any(|e| e.contains("host case `delta`: `unstable` is for gpu cases")),
        "{e:?}"
    );
}

#[test]
fn patch_paths_stay_inside_the_repository() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path();
    std::fs::create_dir_all(repo.join("cases/alpha")).unwrap();
    std::fs::write(repo.join("cases/alpha/main.cpp"), "int main() {}\n").unwrap();
    std::fs::write(repo.join("ok.patch"), "").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", repo.join("link.patch")).unwrap();
    let base = "version: 1\ntools:\n  build: [cargo]\n  capture: a\n  replay: b\nfamilies:\n  - name: f\n    vendor: amd\n    targets: [gfx90a]\n    runner: [x]\ncases:\n  - name: alpha\n    dir: alpha\n    checks: [roundtrip]\ncontrols:\n  - name: c\n    description: d\n    guards: [alpha]\n    patch: PATCH\n";
    for (patch, want) in [
        ("../../../etc/passwd", "climbs out with `..`"),
        ("/etc/passwd", "is absolute"),
        ("link.patch", "leads outside the repository"),
    ] {
        let text = base.replace("PATCH", patch);
        let e = load_str(&text, Path::new("m.yaml"), Some(&repo.join("cases")))
            .unwrap_err()
            .0
            .into_iter()
            .find(|e| e.message.contains("patch"))
            .unwrap_or_else(|| panic!("{patch} was accepted"));
        assert!(e.message.contains(want), "{patch}: {e}");
        assert_eq!(e.line, 19, "{e}");
    }
    let text = base.replace("PATCH", "ok.patch");
    load_str(&text, Path::new("m.yaml"), Some(&repo.join("cases"))).unwrap();
}

#[test]
fn a_controls_families_must_name_families_of_the_matrix() {
    let base = "version: 1\ntools:\n  build: [cargo]\n  capture: a\n  replay: b\nfamilies:\n  - name: gfx90a\n    vendor: amd\n    targets: [gfx90a]\n    runner: [x]\n  - name: sm90\n    vendor: nvidia\n    targets: [sm_90]\n    runner: [y]\ncases:\n  - name: alpha\n    dir: alpha\n    checks: [roundtrip]\ncontrols:\n  - name: c\n    description: d\n    guards: [alpha]\n    revert: abc123\n    families: FAMILIES\n";
    let m = load_str(
        &base.replace("FAMILIES", "[\"sm*\"]"),
        Path::new("m.yaml"),
        None,
    )
    .unwrap();
    let c = &m.controls[0];
    assert!(c.applies_to("sm90") && !c.applies_to("gfx90a"));
    let every = load_str(&base.replace("FAMILIES", "[]"), Path::new("m.yaml"), None).unwrap();
    assert!(
        every.controls[0].applies_to("gfx90a"),
        "empty: every family"
    );
    let e = load_str(
        &base.replace("FAMILIES", "[gfx11*]"),
        Path::new("m.yaml"),
        None,
    )
    .unwrap_err()
    .0;
    assert!(
        e.iter().any(|e| e
            .message
            .contains("control `c`: `gfx11*` matches no family")),
        "{e:?}"
    );
}

#[test]
fn counts_the_harness_sizes_memory_by_are_bounded() {
    // issue 20: 4294967295 shards passed the check, then `run --list` asked for 32 GiB.
    let e = errors(&GOOD.replace("    shards: 2\n", "    shards: 4294967295\n"));
    assert!(
        e.iter()
            .any(|m| m.contains("shards must be 1 to 256") && m.contains("4294967295")),
        "{e:?}"
    );
    assert!(errors(&GOOD.replace("    shards: 2\n", "    shards: 256\n")).is_empty());
    let e = errors(&GOOD.replace(
        "    shards: 2\n",
        "    shards: 2\n    gpus_per_runner: 100000\n",
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("gpus_per_runner must be 1 to 64")),
        "{e:?}"
    );
    // An anchor whose name starts with `_` is refused like any other.
    let e = errors(&GOOD.replace("version: 1\n", "version: 1\nx: &_t [1]\n"));
    assert!(e.iter().any(|m| m.contains("anchors and aliases")), "{e:?}");
    // A family of AMD that names a CUDA runtime linkage.
    let e = errors(&GOOD.replacen(
        "    vendor: amd\n",
        "    vendor: amd\n    cuda_runtime: static\n",
        1,
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("cuda_runtime is for NVIDIA families only")),
        "{e:?}"
    );
}

/// `tolerance:` and `compare:` become the contract's `Comparison` (what replay's
/// `--compare` takes); a bad element type, bound or size, both at once, or either on a
/// host case is an error at its line.
#[test]
fn declared_comparisons_are_checked_at_load() {
    let with = |decl: &str| {
        GOOD.replacen(
            "    checks: [roundtrip, blob-edit]",
            &format!("{decl}    checks: [roundtrip, blob-edit]"),
            1,
        )
    };
    let m = load_str(
        &with("    tolerance: {type: f64, ulps: 4}\n"),
        Path::new("m.yaml"),
        None,
    )
    .unwrap();
    let c = m.cases[0].comparison().unwrap().unwrap();
    assert_eq!(c.to_string(), "f64:ulps=4");
    let m = load_str(
        &with("    tolerance: {type: bf16, rel: 1e-2}\n"),
        Path::new("m.yaml"),
        None,
    )
    .unwrap();
    assert_eq!(
        m.cases[0].comparison().unwrap().unwrap().to_string(),
        "bf16:rel=0.01"
    );
    let m = load_str(
        &with("    compare: {unordered: 4}\n"),
        Path::new("m.yaml"),
        None,
    )
    .unwrap();
    assert_eq!(
        m.cases[0].comparison().unwrap().unwrap().to_string(),
        "unordered:4"
    );
    assert_eq!(
        load_str(GOOD, Path::new("m.yaml"), None).unwrap().cases[0]
            .comparison()
            .unwrap(),
        None
    );
    for (decl, why) in [
        (
            "    tolerance: {type: f128, ulps: 4}\n",
            "unknown element type \"f128\"",
        ),
        ("    tolerance: {type: f64, ulps: 0}\n", "ulps 0 must be 1"),
        (
            "    tolerance: {type: f64, rel: 1.5}\n",
            "strictly between 0 and 1",
        ),
        (
            "    tolerance: {type: f64}\n",
            "exactly one of `ulps` and `rel`",
        ),
        (
            "    tolerance: {type: f64, ulps: 2, rel: 0.1}\n",
            "exactly one of `ulps` and `rel`",
        ),
        ("    compare: {unordered: 0}\n", "element size 0"),
        (
            "    compare: {unordered: 4}\n    tolerance: {type: f32, ulps: 2}\n",
            "declares both `tolerance` and `compare`",
        ),
        ("    compare: {sorted: 4}\n", "unknown field `sorted`"),
    ] {
        let e = errors(&with(decl));
        assert!(e.iter().any(|m| m.contains(why)), "{decl}: {e:?}");
    }
    let host = GOOD.replacen(
        "    checks: [exit-zero]",
        "    compare: {unordered: 4}\n    checks: [exit-zero]",
        1,
    );
    let e = errors(&host);
    assert!(
        e.iter()
            .any(|e| e.contains("host case `delta`: `compare` is for gpu cases")),
        "{e:?}"
    );
}
