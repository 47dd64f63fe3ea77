use super::*;

fn family() -> Family {
    Family {
        name: "sm90".into(),
        vendor: hrr_matrix::Vendor::Nvidia,
        targets: vec!["sm_90".into()],
        runner: vec![],
        gpus_per_runner: 1,
        shards: 1,
        timeout: None,
        env: Default::default(),
        min_rocm: None,
        cuda_runtime: None,
    }
}

fn here(no_gpu: bool, reason: &str) -> Here<'_> {
    Here {
        no_gpu,
        no_gpu_reason: reason,
        compile_only: false,
        no_compiler: None,
        unsupported_targets: &[],
        stand_in: false,
    }
}

#[test]
fn compile_only_compiles_gpu_cases_runs_host_cases_and_never_passes() {
    let f = family();
    fn co(unsupported: &[(String, String)]) -> Here<'_> {
        Here {
            compile_only: true,
            unsupported_targets: unsupported,
            ..here(true, "no GPU")
        }
    }
    let built = CaseBuild::Built {
        binary: "/b/case".into(),
        module: None,
        library: None,
        replacement: None,
        reused: false,
    };
    assert_eq!(
        readiness(Some(&built), co(&[]), &f),
        Readiness::Compiled("compiled for sm_90; not run: compile-only".into())
    );
    assert_eq!(
        readiness(Some(&CaseBuild::Host), co(&[]), &f),
        Readiness::Run { binary: None }
    );
    let checked = CaseBuild::CompileChecked {
        object: "/b/o".into(),
        targets: vec!["gfx1200".into()],
    };
    assert!(matches!(
        readiness(Some(&checked), co(&[]), &f),
        Readiness::Compiled(m) if m.starts_with("compiled for gfx1200 (compile check")
    ));
    // A compile failure, a target nothing here builds, a case nothing builds: failures.
    let failed = CaseBuild::Failed {
        message: "nvcc exit 1".into(),
        log: "/b/case.log".into(),
    };
    assert!(matches!(
        readiness(Some(&failed), co(&[]), &f),
        Readiness::Broken(_)
    ));
    let gfx950 = [("gfx950".to_string(), "hipcc does not know it".to_string())];
    assert_eq!(
        readiness(Some(&built), co(&gfx950), &f),
        Readiness::Broken("not compiled for gfx950: hipcc does not know it".into())
    );
    let unsupported = CaseBuild::Unsupported {
        reason: "no target".into(),
    };
    assert!(matches!(
        readiness(Some(&unsupported), co(&[]), &f),
        Readiness::Broken(_)
    ));
    // No compiler at all: not run (infrastructure), in either mode when it should run.
    let missing = Here {
        no_compiler: Some("nvcc not found"),
        ..co(&[])
    };
    assert_eq!(
        readiness(Some(&unsupported), missing, &f),
        Readiness::NotRun("nvcc not found".into())
    );
    let gpu_here = Here {
        no_compiler: Some("nvcc not found"),
        ..here(false, "")
    };
    assert_eq!(
        readiness(Some(&unsupported), gpu_here, &f),
        Readiness::NotRun("nvcc not found".into())
    );
}

#[test]
fn a_built_case_runs_and_a_failed_build_is_a_failure() {
    let f = family();
    let built = CaseBuild::Built {
        binary: "/b/case".into(),
        module: None,
        library: None,
        replacement: None,
        reused: false,
    };
    assert_eq!(
        readiness(Some(&built), here(false, ""), &f),
        Readiness::Run {
            binary: Some("/b/case".into())
        }
    );
    assert_eq!(
        readiness(Some(&CaseBuild::Host), here(false, ""), &f),
        Readiness::Run { binary: None }
    );
    let failed = CaseBuild::Failed {
        message: "nvcc exit 1".into(),
        log: "/b/case.log".into(),
    };
    // A failed build fails with or without a GPU here.
    for no_gpu in [false, true] {
        assert_eq!(
            readiness(Some(&failed), here(no_gpu, "no GPU"), &f),
            Readiness::Broken("build failed: nvcc exit 1 (log: /b/case.log)".into())
        );
    }
    assert_eq!(
        readiness(None, here(false, ""), &f),
        Readiness::Broken("the case was not built".into())
    );
}

#[test]
fn without_a_gpu_a_case_is_skipped_with_what_was_built() {
    let f = family();
    let built = CaseBuild::Built {
        binary: "/b/case".into(),
        module: None,
        library: None,
        replacement: None,
        reused: true,
    };
    assert_eq!(
        readiness(Some(&built), here(true, "no sm90 GPU"), &f),
        Readiness::Skip("no sm90 GPU; compiled for sm_90".into())
    );
    let unsupported = CaseBuild::Unsupported {
        reason: "no nvcc".into(),
    };
    assert_eq!(
        readiness(Some(&unsupported), here(true, "no sm90 GPU"), &f),
        Readiness::Skip("no sm90 GPU; and no compiler here builds it: no nvcc".into())
    );
    // With the GPU here, an unsupported build is a failure.
    assert_eq!(
        readiness(Some(&unsupported), here(false, ""), &f),
        Readiness::Broken("cannot build for sm90 here: no nvcc".into())
    );
    let checked = CaseBuild::CompileChecked {
        object: "/b/o".into(),
        targets: vec!["gfx1200".into()],
    };
    assert!(matches!(
        readiness(Some(&checked), here(true, "x"), &f),
        Readiness::Skip(_)
    ));
    assert!(matches!(
        readiness(Some(&checked), here(false, "x"), &f),
        Readiness::Broken(_)
    ));
}

#[test]
fn the_message_follows_the_status() {
    let a = |outcome, message: &str| AttemptResult {
        outcome,
        duration_s: 0.0,
        message: message.into(),
        checks: vec![],
        output: String::new(),
        excluded: None,
        declared: None,
    };
    let pass_fail = [
        a(RawOutcome::Pass, "ok"),
        a(RawOutcome::Fail, "roundtrip: x"),
    ];
    assert_eq!(
        case_message(Status::Flake, &pass_fail, ""),
        "passed on one attempt, not the other: roundtrip: x"
    );
    assert_eq!(case_message(Status::Pass, &pass_fail[..1], ""), "ok");
    assert_eq!(
        case_message(Status::ExpectedFail, &pass_fail[1..], "bug 7"),
        "expected failure (bug 7): roundtrip: x"
    );
    assert_eq!(
        case_message(Status::UnexpectedPass, &pass_fail[..1], "bug 7"),
        "expected to fail (bug 7) but passed on its only attempt"
    );
}
