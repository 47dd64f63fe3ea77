//! `hrr-harness report publish` against a local wiremock GitHub answering with GitHub's
//! response shapes. The JUnit is the one hrr-reports writes (real `report merge` output):
//! a passing report makes one successful check run without annotations; 120 failing
//! cases make one create with 50 annotations and two updates (50, then 20), each on the
//! case's main.cpp when the checkout has it; skipped-only is neutral; a long summary is
//! cut with a note. A malformed, oversized or symlinked input is refused with a clear
//! error and nothing is posted (exit 7); a missing token or repository is a usage error
//! (exit 2), as is a GITHUB_API_URL that is not a URL. The token never appears in the
//! output.

use std::path::Path;
use std::process::{Command, Output};

use hrr_reports::{AttemptResult, CaseResult, CheckResult, RawOutcome, RunReport, Status, Totals};
use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

mod common;

fn text(o: &Output) -> (String, String) {
    common::streams_without(o, TOKEN)
}

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");
const TOKEN: &str = "ghs_secret-token-never-printed";
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const CHECK_RUNS: &str = "/repos/amd/hrr/check-runs";
const USAGE: i32 = 2;
const INFRASTRUCTURE: i32 = 7;

fn case(shard: &str, name: &str, status: Status) -> CaseResult {
    let (outcome, message) = match status {
        Status::Pass => (RawOutcome::Pass, "all checks passed".to_string()),
        Status::Crash => (RawOutcome::Crash, "SIGSEGV in hrr-replay".to_string()),
        Status::CompiledNotRun => (RawOutcome::Pass, "compiled, not run".to_string()),
        _ => (
            RawOutcome::Fail,
            format!("d2h: {name}: seq 12 cudaMemcpy offset 100: expected 0x01, found 0x00"),
        ),
    };
    CaseResult {
        family: "sm90".into(),
        shard: shard.into(),
        case: name.into(),
        status,
        duration_s: 2.0,
        message,
        attempts: vec![AttemptResult {
            outcome,
            duration_s: 2.0,
            message: String::new(),
            checks: vec![CheckResult {
                name: "d2h".into(),
                passed: status == Status::Pass,
                detail: "byte 100 differs".into(),
            }],
            output: String::new(),
            excluded: None,
            declared: None,
        }],
        artifacts: None,
    }
}

/// The JUnit `report merge` writes for these shards of sm90.
fn junit(shards: Vec<(&str, Vec<CaseResult>)>) -> String {
    let reports: Vec<RunReport> = shards
        .into_iter()
        .map(|(shard, cases)| RunReport {
            tool_version: "0.1.0".into(),
            source_revision: "0123abcd".into(),
            families: vec!["sm90".into()],
            shard: shard.into(),
            gpus: vec!["0 NVIDIA H200 (sm_90)".into()],
            hostname: "gpu-runner-3".into(),
            started_unix: 1_796_000_000,
            duration_s: 30.0,
            totals: Totals::of(&cases),
            cases,
        })
        .collect();
    hrr_reports::junit::render(&reports.iter().collect::<Vec<_>>())
}

/// A default-branch checkout: the matrix file (located, not read) and one case's source.
fn checkout() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("matrix")).unwrap();
    std::fs::write(t.path().join("matrix/matrix.yaml"), "families: []\n").unwrap();
    std::fs::create_dir_all(t.path().join("cases/case_001")).unwrap();
    std::fs::write(t.path().join("cases/case_001/main.cpp"), "int main() {}\n").unwrap();
    t
}

/// A check run as GitHub returns it (the fields octocrab's model requires).
fn check_run(server: &MockServer, id: u64, conclusion: &str) -> Value {
    let url = format!("{}{CHECK_RUNS}/{id}", server.uri());
    json!({
        "id": id,
        "node_id": format!("CR_kwDO{id}"),
        "head_sha": SHA,
        "external_id": "",
        "url": url,
        "html_url": format!("https://github.com/amd/hrr/runs/{id}"),
        "details_url": "https://github.com/amd/hrr",
        "status": "completed",
        "conclusion": conclusion,
        "started_at": "2026-12-01T05:00:00Z",
        "completed_at": "2026-12-01T05:00:00Z",
        "name": "hrr-harness gpu",
        "output": {
            "title": "failed",
            "summary": "...",
            "text": null,
            "annotations_count": 0,
            "annotations_url": format!("{url}/annotations")
        },
        "check_suite": { "id": 5 },
        "app": null,
        "pull_requests": []
    })
}

async fn accept_create(server: &MockServer, conclusion: &str) {
    Mock::given(method("POST"))
        .and(path(CHECK_RUNS))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(201).set_body_json(check_run(server, 7, conclusion)))
        .mount(server)
        .await;
}

async fn accept_updates(server: &MockServer) {
    Mock::given(method("PATCH"))
        .and(path(format!("{CHECK_RUNS}/7")))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(check_run(server, 7, "failure")))
        .mount(server)
        .await;
}

/// Runs `report publish` in `dir` on the two files there.
fn publish(server: &MockServer, dir: &Path, env: &[(&str, Option<&str>)]) -> Output {
    let mut c = Command::new(HARNESS);
    c.args(["report", "publish", "--junit", "untrusted/junit.xml"])
        .args(["--summary", "untrusted/summary.md"])
        .args(["--check-name", "hrr-harness gpu", "--head-sha", SHA])
        .current_dir(dir)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "amd/hrr")
        .env("GITHUB_API_URL", server.uri())
        .env_remove("GH_TOKEN");
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.output().unwrap()
}

/// Writes the untrusted files into `dir/untrusted`.
fn artifact(dir: &Path, junit: &[u8], summary: &[u8]) {
    std::fs::create_dir_all(dir.join("untrusted")).unwrap();
    std::fs::write(dir.join("untrusted/junit.xml"), junit).unwrap();
    std::fs::write(dir.join("untrusted/summary.md"), summary).unwrap();
}

/// The JSON bodies of the requests received, with their methods.
async fn bodies(server: &MockServer) -> Vec<(String, Value)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r: &Request| {
            (
                r.method.to_string(),
                serde_json::from_slice(&r.body).unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_passing_report_is_a_successful_check_run_without_annotations() {
    let server = MockServer::start().await;
    accept_create(&server, "success").await;
    let t = checkout();
    let xml = junit(vec![(
        "1/1",
        vec![
            case("1/1", "big_copy", Status::Pass),
            case("1/1", "streams", Status::Pass),
            case("1/1", "host_only", Status::Skip),
        ],
    )]);
    artifact(t.path(), xml.as_bytes(), b"## sm90\n| case | status |\n");
    let o = publish(&server, t.path(), &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.contains("published check run 7 `hrr-harness gpu` on amd/hrr@0123456789abcdef0123456789abcdef01234567: passed: 0 failing, 2 passed, 1 skipped of 3 cases in 1 suite(s); 0 annotation(s) in 1 request(s) (https://github.com/amd/hrr/runs/7)"),
        "{out}"
    );
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (m, body) = &sent[0];
    assert_eq!(m, "POST");
    assert_eq!(body["name"], "hrr-harness gpu");
    assert_eq!(body["head_sha"], SHA);
    assert_eq!(body["status"], "completed");
    assert_eq!(body["conclusion"], "success");
    assert_eq!(body["output"]["summary"], "## sm90\n| case | status |\n");
    assert!(body["output"].get("annotations").is_none(), "{body}");
}

#[tokio::test]
async fn failing_cases_are_annotated_fifty_per_request() {
    let server = MockServer::start().await;
    accept_create(&server, "failure").await;
    accept_updates(&server).await;
    let t = checkout();
    // 120 failing cases over two shards (one crashed), and two passing.
    let mut s1: Vec<CaseResult> = (0..60)
        .map(|i| case("1/2", &format!("case_{i:03}"), Status::Fail))
        .collect();
    s1[1] = case("1/2", "case_001", Status::Crash);
    s1.push(case("1/2", "big_copy", Status::Pass));
    let mut s2: Vec<CaseResult> = (60..120)
        .map(|i| case("2/2", &format!("case_{i:03}"), Status::Timeout))
        .collect();
    s2.push(case("2/2", "streams", Status::Pass));
    let xml = junit(vec![("1/2", s1), ("2/2", s2)]);
    artifact(t.path(), xml.as_bytes(), b"# 120 unexpected\n");
    let o = publish(&server, t.path(), &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.contains(": failed: 120 failing, 2 passed, 0 skipped of 122 cases in 2 suite(s); 120 annotation(s) in 3 request(s)"),
        "{out}"
    );
    let sent = bodies(&server).await;
    let methods: Vec<&str> = sent.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods, ["POST", "PATCH", "PATCH"]);
    let counts: Vec<usize> = sent
        .iter()
        .map(|(_, b)| b["output"]["annotations"].as_array().unwrap().len())
        .collect();
    assert_eq!(counts, [50, 50, 20]);
    assert_eq!(sent[0].1["conclusion"], "failure");
    for (_, b) in &sent[1..] {
        // Updates only add annotations; the output's title and summary stay the same.
        assert!(
            b.get("conclusion").is_none() && b.get("status").is_none(),
            "{b}"
        );
        assert_eq!(b["output"]["title"], sent[0].1["output"]["title"]);
        assert_eq!(b["output"]["summary"], "# 120 unexpected\n");
    }
    let all: Vec<&Value> = sent
        .iter()
        .flat_map(|(_, b)| b["output"]["annotations"].as_array().unwrap())
        .collect();
    let first = all[0];
    assert_eq!(first["title"], "hrr-sm90-shard-1-of-2: case_000");
    assert_eq!(first["annotation_level"], "failure");
    assert_eq!(first["path"], "matrix/matrix.yaml");
    assert_eq!(
        (first["start_line"].as_u64(), first["end_line"].as_u64()),
        (Some(1), Some(1))
    );
    let msg = first["message"].as_str().unwrap();
    assert!(
        msg.starts_with("d2h: case_000: seq 12 cudaMemcpy offset 100: expected 0x01, found 0x00\n\nattempt 1 (fail, 2.0 s)"),
        "{msg}"
    );
    assert!(msg.contains("[FAIL] d2h: byte 100 differs"), "{msg}");
    // The crashed case has its source in this checkout: the annotation goes there.
    assert_eq!(all[1]["title"], "hrr-sm90-shard-1-of-2: case_001");
    assert_eq!(all[1]["path"], "cases/case_001/main.cpp");
    assert_eq!(
        all[1]["message"].as_str().unwrap().lines().next(),
        Some("SIGSEGV in hrr-replay")
    );
    assert_eq!(all[119]["title"], "hrr-sm90-shard-2-of-2: case_119");
}

#[tokio::test]
async fn skipped_only_is_neutral_and_a_long_summary_is_cut() {
    let server = MockServer::start().await;
    accept_create(&server, "neutral").await;
    let t = checkout();
    let xml = junit(vec![(
        "1/1",
        vec![
            case("1/1", "big_copy", Status::CompiledNotRun),
            case("1/1", "streams", Status::CompiledNotRun),
        ],
    )]);
    let md = "| sm90 | big_copy | compiled-not-run |\n".repeat(3000);
    assert!(md.len() > 100_000);
    artifact(t.path(), xml.as_bytes(), md.as_bytes());
    let o = publish(&server, t.path(), &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1);
    let body = &sent[0].1;
    assert_eq!(body["conclusion"], "neutral");
    assert!(body["output"]["title"]
        .as_str()
        .unwrap()
        .starts_with("compiled, not run (no GPU): 0 failing, 0 passed, 2 skipped"));
    let summary = body["output"]["summary"].as_str().unwrap();
    assert!(summary.len() <= 65_535, "{}", summary.len());
    let (kept, note) = summary.split_once("\n\n---\n").unwrap();
    assert!(
        md.starts_with(kept) && kept.len() > 65_000,
        "{}",
        kept.len()
    );
    assert_eq!(
        note,
        format!("**The summary was cut here**: it has {} bytes and a check run shows 65535. The whole summary.md is in the run's artifacts.\n", md.len())
    );
}

#[tokio::test]
async fn malformed_oversized_or_linked_inputs_post_nothing() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    let t = checkout();
    let good = junit(vec![("1/1", vec![case("1/1", "a", Status::Pass)])]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"<testsuites><testsuite name=\"x\"><testcase name=\"a\"></testsuite></testsuites>".to_vec(),
            "report publish: --junit untrusted/junit.xml: malformed XML at byte",
        ),
        (
            format!("<testsuites>{}", "<x>".repeat(100)).into_bytes(),
            "elements nested deeper than 32",
        ),
        (
            br#"<!DOCTYPE lol [<!ENTITY lol "lol">]><testsuites/>"#.to_vec(),
            "a DOCTYPE at byte 0",
        ),
        (
            vec![b' '; (32 << 20) + 1],
            "untrusted/junit.xml: larger than the 33554432 bytes it may have; nothing was published",
        ),
    ];
    for (xml, want) in cases {
        artifact(t.path(), &xml, b"summary");
        let o = publish(&server, t.path(), &[]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{out}\n{err}");
        assert!(err.contains(want), "{want}: {err}");
    }
    // A summary that links elsewhere (/proc/self/environ holds the token) is not read.
    artifact(t.path(), good.as_bytes(), b"");
    std::fs::remove_file(t.path().join("untrusted/summary.md")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", t.path().join("untrusted/summary.md"))
        .unwrap();
    let o = publish(&server, t.path(), &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{err}");
    assert!(
        err.contains("untrusted/summary.md: a symbolic link"),
        "{err}"
    );
    assert!(bodies(&server).await.is_empty());
}

#[tokio::test]
async fn a_missing_token_or_repository_is_a_usage_error() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    let t = checkout();
    let xml = junit(vec![("1/1", vec![case("1/1", "a", Status::Fail)])]);
    artifact(t.path(), xml.as_bytes(), b"summary");
    let o = publish(&server, t.path(), &[("GITHUB_TOKEN", None)]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(USAGE), "{err}");
    assert!(
        err.contains("report publish: GITHUB_TOKEN is not set: creating a check run needs a token with checks: write"),
        "{err}"
    );
    let o = publish(&server, t.path(), &[("GITHUB_REPOSITORY", Some("amd"))]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(USAGE), "{err}");
    assert!(
        err.contains("GITHUB_REPOSITORY `amd` is not OWNER/NAME"),
        "{err}"
    );
    assert!(bodies(&server).await.is_empty());
}

#[tokio::test]
async fn githubs_refusal_is_an_infrastructure_error_with_its_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(CHECK_RUNS))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let t = checkout();
    let xml = junit(vec![("1/1", vec![case("1/1", "a", Status::Fail)])]);
    artifact(t.path(), xml.as_bytes(), b"summary");
    let o = publish(&server, t.path(), &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{err}");
    assert!(
        err.contains("report publish: creating the check run: GitHub answered 403 Forbidden: Resource not accessible by integration"),
        "{err}"
    );
}

/// A stand-in run's report is published neutral, titled as such, never as a success
/// (issue 25: "success ... 35 passed"); so is a compile-only run whose host case passed.
#[tokio::test]
async fn runs_without_a_gpu_are_published_neutral() {
    for (statuses, words) in [
        (
            vec![Status::StandIn, Status::StandIn],
            "stand-in, no GPU: 0 failing, 2 passed",
        ),
        (
            vec![Status::Pass, Status::CompiledNotRun],
            "compiled, not run (no GPU): 0 failing, 1 passed, 1 skipped",
        ),
    ] {
        let server = MockServer::start().await;
        accept_create(&server, "neutral").await;
        let t = checkout();
        let cases = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| case("1/1", &format!("case_{i}"), *s))
            .collect();
        let xml = junit(vec![("1/1", cases)]);
        artifact(t.path(), xml.as_bytes(), b"# summary");
        let o = publish(&server, t.path(), &[]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
        let sent = bodies(&server).await;
        assert_eq!(sent.len(), 1);
        let body = &sent[0].1;
        assert_eq!(body["conclusion"], "neutral", "{body}");
        let title = body["output"]["title"].as_str().unwrap();
        assert!(title.starts_with(words), "{title}");
    }
}
