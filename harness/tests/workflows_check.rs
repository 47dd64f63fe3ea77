//! `hrr-harness workflows check --repo OWNER/NAME` against a local wiremock GitHub: the
//! environment fork pull requests wait in must exist with required reviewers (missing or
//! unprotected: exit 1, saying what to set); each family's runners are reported
//! ephemeral, not, or "cannot tell" where the API does not say or the token may not list
//! them. The token is never printed. The step the generated approval job runs (the same
//! check, with the job's token) fails the run on an unprotected environment.

use std::process::{Command, Output};

use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

mod common;
use common::workspace;

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");
const TOKEN: &str = "ghs_workflows-check-token";
const ENV: &str = "/repos/amd/hrr/environments/gpu-fork-pull-requests";
const RUNNERS: &str = "/repos/amd/hrr/actions/runners";

fn run(server: &MockServer) -> (i32, String, String) {
    let o: Output = Command::new(HARNESS)
        .current_dir(workspace())
        .args(["workflows", "check", "--repo", "amd/hrr", "--api-url"])
        .arg(server.uri())
        .args(["--timeout", "5"])
        .env("GITHUB_TOKEN", TOKEN)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        !out.contains(TOKEN) && !err.contains(TOKEN),
        "the token was printed"
    );
    (o.status.code().unwrap_or(-1), out, err)
}

fn runner(name: &str, labels: &[&str], ephemeral: Option<bool>) -> serde_json::Value {
    let mut r = json!({
        "id": 1, "name": name, "os": "linux", "status": "online", "busy": false,
        "labels": labels.iter().map(|l| json!({"id": 1, "name": l, "type": "custom"})).collect::<Vec<_>>(),
    });
    if let Some(e) = ephemeral {
        r["ephemeral"] = json!(e);
    }
    r
}

async fn mount(server: &MockServer, env: ResponseTemplate, runners: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(ENV))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(env)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path(RUNNERS))
        .respond_with(runners)
        .mount(server)
        .await;
}

fn server() -> (tokio::runtime::Runtime, MockServer) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let s = rt.block_on(MockServer::start());
    (rt, s)
}

#[test]
fn a_protected_environment_passes_and_runners_are_described() {
    let (rt, s) = server();
    let protected = json!({
        "id": 1, "name": "gpu-fork-pull-requests", "can_admins_bypass": false,
        "protection_rules": [{"id": 2, "type": "required_reviewers",
            "reviewers": [{"type": "User", "reviewer": {"login": "maintainer"}}]}]
    });
    let runners = json!({"total_count": 3, "runners": [
        runner("sm90-a", &["self-hosted", "linux", "sm90"], Some(true)),
        runner("gfx90a-a", &["self-hosted", "linux", "gfx90a"], Some(false)),
        runner("gfx94x-a", &["self-hosted", "linux", "gfx94x"], None),
    ]});
    rt.block_on(mount(
        &s,
        ResponseTemplate::new(200).set_body_json(protected),
        ResponseTemplate::new(200).set_body_json(runners),
    ));
    let (code, out, err) = run(&s);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains(
            "ok: amd/hrr: environment gpu-fork-pull-requests requires reviewers (1 named)"
        ),
        "{out}"
    );
    assert!(
        out.contains("ok: sm90: 1 runner(s) with labels [self-hosted, linux, sm90], all ephemeral"),
        "{out}"
    );
    assert!(out.contains("warning: gfx90a: runner(s) with labels [self-hosted, linux, gfx90a] are not ephemeral (gfx90a-a)"), "{out}");
    assert!(out.contains("note: gfx94x: cannot tell whether the runners with labels [self-hosted, linux, gfx94x] are ephemeral: the API does not say for 1 of 1"), "{out}");
    assert!(
        out.contains("note: gfx950: no runner has the labels"),
        "{out}"
    );
}

#[test]
fn a_missing_or_unprotected_environment_fails_saying_what_to_set() {
    let (rt, s) = server();
    rt.block_on(mount(
        &s,
        ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
        ResponseTemplate::new(403).set_body_json(json!({"message": "Resource not accessible"})),
    ));
    let (code, out, err) = run(&s);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("FAIL: amd/hrr: environment gpu-fork-pull-requests does not exist: GitHub would create it unprotected"), "{out}");
    assert!(out.contains("cannot tell whether the runners with labels [self-hosted, linux, sm90] are ephemeral: listing the repository's runners answered 403"), "{out}");

    let (rt, s) = server();
    rt.block_on(mount(
        &s,
        ResponseTemplate::new(200).set_body_json(
            json!({"id": 1, "name": "gpu-fork-pull-requests", "protection_rules": []}),
        ),
        ResponseTemplate::new(200).set_body_json(json!({"total_count": 0, "runners": []})),
    ));
    let (code, out, _) = run(&s);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL: amd/hrr: environment gpu-fork-pull-requests has no required reviewers"),
        "{out}"
    );
}

#[test]
fn a_server_that_never_answers_is_named() {
    let (rt, s) = server();
    rt.block_on(mount(
        &s,
        ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(60)),
        ResponseTemplate::new(200),
    ));
    let start = std::time::Instant::now();
    let (code, out, err) = run(&s);
    assert_eq!(code, 7, "{out}\n{err}");
    assert!(err.contains("no answer within 5 s"), "{err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

/// The step gpu.yml's and controls.yml's approval job runs before any fork code (the
/// committed files hold it), run as GitHub runs it (bash -e, the job's token in
/// GITHUB_TOKEN, GITHUB_API_URL, the harness in `$CARGO_TARGET_DIR/debug`): an environment
/// missing or without required reviewers fails it with the check's message and an error
/// annotation, so the jobs after it never run; a protected one passes although the job's
/// token may not list the runners (they are "cannot tell", not a failure).
#[test]
fn the_approval_jobs_check_step_fails_the_run_on_an_unprotected_environment() {
    let script = hrr_workflows::steps::repo_check_script();
    let indented: String = script.lines().map(|l| format!("          {l}\n")).collect();
    for file in [
        hrr_workflows::GPU_WORKFLOW,
        hrr_workflows::CONTROLS_WORKFLOW,
    ] {
        let committed = std::fs::read_to_string(workspace().join(file)).unwrap();
        assert!(committed.contains(&indented), "{file} lacks the check step");
        assert!(committed.contains("          GITHUB_TOKEN: ${{ github.token }}\n          REPO: ${{ github.repository }}\n        run: |\n"));
    }
    let target = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(target.path().join("debug")).unwrap();
    std::os::unix::fs::symlink(HARNESS, target.path().join("debug/hrr-harness")).unwrap();
    let step = |s: &MockServer| -> (i32, String) {
        let o = Command::new("bash")
            .args(["-e", "-c", &script])
            .current_dir(workspace())
            .env("GITHUB_TOKEN", TOKEN)
            .env("REPO", "amd/hrr")
            .env("GITHUB_API_URL", s.uri())
            .env("CARGO_TARGET_DIR", target.path())
            .output()
            .unwrap();
        let (out, err) = common::streams_without(&o, TOKEN);
        (o.status.code().unwrap_or(-1), format!("{out}{err}"))
    };
    // What a job token gets from the runner listing: no administration permission.
    let no_admin = || {
        ResponseTemplate::new(403).set_body_json(json!({
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest/actions/self-hosted-runners#list-self-hosted-runners-for-a-repository"
        }))
    };
    for (env, said) in [
        (
            ResponseTemplate::new(200).set_body_json(
                json!({"id": 1, "name": "gpu-fork-pull-requests", "protection_rules": []}),
            ),
            "FAIL: amd/hrr: environment gpu-fork-pull-requests has no required reviewers",
        ),
        (
            ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
            "FAIL: amd/hrr: environment gpu-fork-pull-requests does not exist",
        ),
    ] {
        let (rt, s) = server();
        rt.block_on(mount(&s, env, no_admin()));
        let (code, out) = step(&s);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains(said), "{out}");
        assert!(
            out.contains("::error::hrr-harness workflows check --repo amd/hrr failed (its lines above say why)"),
            "{out}"
        );
    }
    let (rt, s) = server();
    let protected = json!({
        "id": 1, "name": "gpu-fork-pull-requests", "can_admins_bypass": true,
        "protection_rules": [{"id": 2, "type": "required_reviewers",
            "reviewers": [{"type": "Team", "reviewer": {"slug": "gpu-maintainers"}}]}]
    });
    rt.block_on(mount(
        &s,
        ResponseTemplate::new(200).set_body_json(protected),
        no_admin(),
    ));
    let (code, out) = step(&s);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "ok: amd/hrr: environment gpu-fork-pull-requests requires reviewers (1 named)"
        ),
        "{out}"
    );
    assert!(out.contains("note: sm90: cannot tell whether the runners with labels [self-hosted, linux, sm90] are ephemeral: listing the repository's runners answered 403"), "{out}");
    assert!(!out.contains("::error::"), "{out}");
}
