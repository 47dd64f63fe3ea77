//! `hrr-harness report fetch` against a local wiremock GitHub serving real artifact zips
//! (made here with the zip crate from real results.json and junit.xml files): the run's
//! result artifacts are listed (two pages of `per_page=100`), downloaded (one through GitHub's redirect to
//! a storage host, which never sees the token), unpacked and merged, so a failing case's archive
//! is on disk; other artifacts are not downloaded. A zip with an entry outside its
//! directory is refused and leaves nothing behind; a missing or expired artifact, a run
//! without results and a missing token each end with an error that says so. The listing
//! goes the downloads' way through a stalled server (given up, named), 502s (tried again)
//! and GitHub's rate limit (waited out as its headers ask, or given up naming the wait).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use hrr_reports::{AttemptResult, CaseResult, CheckResult, RawOutcome, RunReport, Status, Totals};
use serde_json::{json, Value};
use wiremock::matchers::{header, header_exists, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zip::write::SimpleFileOptions;

mod common;

fn text(o: &Output) -> (String, String) {
    common::streams_without(o, TOKEN)
}

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");
const TOKEN: &str = "ghs_secret-token-never-printed";
const RUN: &str = "/repos/amd/hrr/actions/runs/77/artifacts";
/// The exit status of an infrastructure error (I/O, the API, a refused download).
const INFRASTRUCTURE: i32 = 7;

fn case(shard: &str, name: &str, status: Status) -> CaseResult {
    let outcome = if status == Status::Pass {
        RawOutcome::Pass
    } else {
        RawOutcome::Fail
    };
    CaseResult {
        family: "sm90".into(),
        shard: shard.into(),
        case: name.into(),
        status,
        duration_s: 2.0,
        message: if status == Status::Pass {
            "all checks passed".into()
        } else {
            "d2h: seq 12 cudaMemcpy offset 100: expected 0x01, found 0x00".into()
        },
        attempts: vec![AttemptResult {
            outcome,
            duration_s: 2.0,
            message: String::new(),
            checks: vec![CheckResult {
                name: "d2h".into(),
                passed: status == Status::Pass,
                detail: String::new(),
            }],
            output: String::new(),
            excluded: None,
            declared: None,
        }],
        artifacts: None,
    }
}

/// The files `run` uploads for one shard: results.json, junit.xml and, for a failing
/// case, its attempt directory with logs, replay JSON and archive.
fn shard_files(shard: &str, cases: Vec<CaseResult>) -> Vec<(String, Vec<u8>)> {
    let r = RunReport {
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
    };
    let t = tempfile::tempdir().unwrap();
    r.write_json(&t.path().join("results.json")).unwrap();
    let mut files = vec![
        (
            "results.json".to_string(),
            std::fs::read(t.path().join("results.json")).unwrap(),
        ),
        (
            "junit.xml".to_string(),
            hrr_reports::junit::render(&[&r]).into_bytes(),
        ),
    ];
    for c in r.cases.iter().filter(|c| c.status != Status::Pass) {
        let a = format!("cases/{}/attempt-1", c.case);
        files.push((
            format!("{a}/capture.log"),
            b"under capture: exit 0\n".to_vec(),
        ));
        files.push((format!("{a}/replay.json"), br#"{"exit":"fail"}"#.to_vec()));
        files.push((format!("{a}/archive/manifest.json"), b"{}".to_vec()));
        files.push((format!("{a}/archive/pid-1/events.bin"), vec![7u8; 4096]));
        // A second attempt's archive, packed as the harness keeps a failing case's.
        files.push((
            format!("cases/{}/attempt-2/archive.hrrz", c.case),
            vec![0x28, 0xb5, 0x2f, 0xfd, 0],
        ));
    }
    files
}

fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in files {
        w.start_file(name.as_str(), SimpleFileOptions::default())
            .unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// An artifact as GitHub lists it.
fn artifact(server: &MockServer, id: u64, name: &str, size: usize, expired: bool) -> Value {
    let api = format!("{}/repos/amd/hrr/actions/artifacts/{id}", server.uri());
    json!({
        "id": id,
        "node_id": format!("MDg6QXJ0aWZhY3Q{id}"),
        "name": name,
        "size_in_bytes": size,
        "url": api,
        "archive_download_url": format!("{api}/zip"),
        "expired": expired,
        "created_at": "2026-12-01T05:00:00Z",
        "updated_at": "2026-12-01T05:00:00Z",
        "expires_at": "2026-12-15T05:00:00Z",
        "workflow_run": {
            "id": 77, "repository_id": 1, "head_repository_id": 1,
            "head_branch": "main", "head_sha": "0123abcd"
        }
    })
}

async fn list_artifacts(server: &MockServer, artifacts: Vec<Value>) {
    Mock::given(method("GET"))
        .and(path(RUN))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": artifacts.len(),
            "artifacts": artifacts
        })))
        .mount(server)
        .await;
}

/// Serves artifact `id`'s zip directly from the API endpoint.
async fn serve_zip(server: &MockServer, id: u64, zip: Vec<u8>) {
    Mock::given(method("GET"))
        .and(path(format!("/repos/amd/hrr/actions/artifacts/{id}/zip")))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(zip))
        .expect(1)
        .mount(server)
        .await;
}

fn fetch(server: &MockServer, out: &Path, extra: &[&str]) -> Output {
    Command::new(HARNESS)
        .args(["report", "fetch", "--repo", "amd/hrr", "--run", "77"])
        .arg("--api-url")
        .arg(server.uri())
        .arg("--output")
        .arg(out)
        .args(extra)
        .env("GITHUB_TOKEN", TOKEN)
        .env("CI", "true")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
}

#[tokio::test]
async fn the_runs_result_artifacts_are_downloaded_unpacked_and_merged() {
    let server = MockServer::start().await;
    let shard1 = zip_of(&shard_files(
        "1/2",
        vec![
            case("1/2", "big_copy", Status::Pass),
            case("1/2", "graph_launch", Status::Fail),
        ],
    ));
    let shard2 = zip_of(&shard_files(
        "2/2",
        vec![case("2/2", "streams", Status::Pass)],
    ));
    // Two pages of artifacts (GitHub's are 100 long; total_count says a second one
    // follows); only the hrr-results-* ones are fetched.
    Mock::given(method("GET"))
        .and(path(RUN))
        .and(query_param("per_page", "100"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 3,
            "artifacts": [artifact(&server, 12, "hrr-results-sm90-shard-2", shard2.len(), false)]
        })))
        .with_priority(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(RUN))
        .and(query_param("per_page", "100"))
        .and(query_param("page", "1"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 3,
            "artifacts": [
                artifact(&server, 11, "hrr-results-sm90-shard-1", shard1.len(), false),
                artifact(&server, 13, "hrr-tools", 112_000_000, false)
            ]
        })))
        .expect(1)
        .mount(&server)
        .await;
    // Shard 1 as GitHub serves it: a redirect to a storage host (another server here),
    // which must not get the token.
    let storage = MockServer::start().await;
    let blob = format!("{}/storage/blob-11.zip?sig=abc", storage.uri());
    Mock::given(method("GET"))
        .and(path("/repos/amd/hrr/actions/artifacts/11/zip"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(302).insert_header("location", blob.as_str()))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(header_exists("authorization"))
        .respond_with(ResponseTemplate::new(403))
        .with_priority(1)
        .expect(0)
        .mount(&storage)
        .await;
    Mock::given(method("GET"))
        .and(path("/storage/blob-11.zip"))
        .and(query_param("sig", "abc"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(shard1))
        .expect(1)
        .mount(&storage)
        .await;
    serve_zip(&server, 12, shard2).await;
    Mock::given(method("GET"))
        .and(path("/repos/amd/hrr/actions/artifacts/13/zip"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;

    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run-77");
    let o = fetch(&server, &out, &[]);
    let (stdout, stderr) = text(&o);
    // The merge's verdict: a case failed.
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("2 artifact(s)") && stderr.contains("downloading hrr-results-sm90-shard-1"),
        "{stderr}"
    );
    let archive = out.join("hrr-results-sm90-shard-1/cases/graph_launch/attempt-1/archive");
    assert_eq!(
        std::fs::read(archive.join("pid-1/events.bin")).unwrap(),
        vec![7u8; 4096]
    );
    assert!(stdout.contains(&archive.display().to_string()), "{stdout}");
    let packed = out.join("hrr-results-sm90-shard-1/cases/graph_launch/attempt-2/archive.hrrz");
    assert!(packed.is_file());
    assert!(stdout.contains(&packed.display().to_string()), "{stdout}");
    assert!(out.join("hrr-results-sm90-shard-2/results.json").is_file());
    assert!(!out.join("hrr-tools").exists());
    // No download leftovers.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with('.')), "{names:?}");
    // Merged as `report merge` merges: each shard's suite, totals over both.
    let merged = RunReport::read_json(&out.join("results.json")).unwrap();
    assert_eq!(merged.totals.cases, 3);
    assert_eq!(merged.totals.count(Status::Fail), 1);
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("hrr-sm90-shard-1-of-2") && junit.contains("hrr-sm90-shard-2-of-2"));
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("href=\"hrr-results-sm90-shard-1/cases/graph_launch/attempt-1/capture.log\""),
        "the page links to the fetched log in place"
    );
}

#[tokio::test]
async fn a_zip_with_an_entry_outside_its_directory_is_refused() {
    let server = MockServer::start().await;
    let mut files = shard_files("1/1", vec![case("1/1", "big_copy", Status::Pass)]);
    files.push(("cases/../../escaped.txt".into(), b"pwned".to_vec()));
    let hostile = zip_of(&files);
    list_artifacts(
        &server,
        vec![artifact(
            &server,
            21,
            "hrr-results-sm90-shard-1",
            hostile.len(),
            false,
        )],
    )
    .await;
    serve_zip(&server, 21, hostile).await;
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let o = fetch(&server, &out, &[]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{stderr}");
    assert!(
        stderr.contains("artifact `hrr-results-sm90-shard-1`: entry `cases/../../escaped.txt` would land outside the artifact's directory"),
        "{stderr}"
    );
    assert!(!t.path().join("escaped.txt").exists());
    assert!(!out.join("escaped.txt").exists());
    // Nothing of the refused artifact is left: no directory, no staging, no zip.
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn a_missing_artifact_is_a_clear_error() {
    let server = MockServer::start().await;
    list_artifacts(
        &server,
        vec![artifact(
            &server,
            31,
            "hrr-results-sm90-shard-1",
            1000,
            false,
        )],
    )
    .await;
    Mock::given(method("GET"))
        .and(path("/repos/amd/hrr/actions/artifacts/31/zip"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest/actions/artifacts#download-an-artifact"
        })))
        .expect(1)
        .mount(&server)
        .await;
    let t = tempfile::tempdir().unwrap();
    let o = fetch(&server, &t.path().join("out"), &[]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{stderr}");
    assert!(
        stderr.contains("downloading artifact `hrr-results-sm90-shard-1` (id 31): GitHub answered 404 Not Found: Not Found"),
        "{stderr}"
    );
}

#[tokio::test]
async fn runs_without_matching_or_live_artifacts_say_so() {
    let server = MockServer::start().await;
    list_artifacts(
        &server,
        vec![
            artifact(&server, 41, "hrr-tools", 1000, false),
            artifact(&server, 42, "hrr-results-gfx90a-shard-1", 1000, true),
        ],
    )
    .await;
    let t = tempfile::tempdir().unwrap();
    let o = fetch(
        &server,
        &t.path().join("a"),
        &["--artifact", "hrr-results-sm90-*"],
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{stderr}");
    assert!(
        stderr.contains("run 77 has no artifact matching hrr-results-sm90-* (it has: hrr-results-gfx90a-shard-1, hrr-tools)"),
        "{stderr}"
    );
    let o = fetch(&server, &t.path().join("b"), &[]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{stderr}");
    assert!(
        stderr.contains("artifact `hrr-results-gfx90a-shard-1` of run 77 has expired"),
        "{stderr}"
    );
}

#[test]
fn without_a_token_nothing_is_requested() {
    let t = tempfile::tempdir().unwrap();
    let o = Command::new(HARNESS)
        .args(["report", "fetch", "--repo", "amd/hrr", "--run", "77"])
        .args(["--api-url", "http://127.0.0.1:9", "--output"])
        .arg(t.path().join("out"))
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("GITHUB_TOKEN is not set"));
    let o = Command::new(HARNESS)
        .args(["report", "fetch", "--repo", "amd", "--run", "77"])
        .env("GITHUB_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--repo amd: expected OWNER/NAME"));
}

/// The run's listing answers only after a minute: a server that seems never to answer.
async fn stall_listing(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path(RUN))
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(std::time::Duration::from_secs(60))
                .set_body_json(json!({"total_count": 0, "artifacts": []})),
        )
        .mount(server)
        .await;
}

/// A server that never answers: each network step is given up after `--timeout` and
/// tried again (3 tries, 1 s and 2 s apart), then named; the fetch ends in seconds, not
/// when the server closes.
#[tokio::test]
async fn a_stalled_server_is_given_up_after_the_timeout_and_named() {
    let server = MockServer::start().await;
    stall_listing(&server).await;
    let t = tempfile::tempdir().unwrap();
    let began = std::time::Instant::now();
    let o = fetch(&server, &t.path().join("out"), &["--timeout", "1"]);
    let took = began.elapsed();
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{stderr}");
    assert!(took.as_secs() < 15, "{took:?}: {stderr}");
    assert!(
        stderr.contains("listing the artifacts of run 77: no answer within 1 s (tried 3 times)"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("listing the artifacts of run 77: no answer within 1 s; trying again in 1 s"),
        "{stderr}"
    );
    let asked = server.received_requests().await.unwrap_or_default();
    assert_eq!(asked.len(), 3, "{asked:?}");
}

/// One passing shard listed and served: a fetch that gets through exits 0.
async fn one_passing_shard(server: &MockServer) {
    let shard = zip_of(&shard_files(
        "1/1",
        vec![case("1/1", "big_copy", Status::Pass)],
    ));
    list_artifacts(
        server,
        vec![artifact(
            server,
            51,
            "hrr-results-sm90-shard-1",
            shard.len(),
            false,
        )],
    )
    .await;
    serve_zip(server, 51, shard).await;
}

/// The first `n` listing requests answered `answer` (before `one_passing_shard`'s).
async fn listing_answers_first(server: &MockServer, n: u64, answer: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(RUN))
        .respond_with(answer)
        .up_to_n_times(n)
        .with_priority(1)
        .expect(n)
        .mount(server)
        .await;
}

/// A 502 is a server's passing trouble: the listing is asked again (twice, 1 s and 2 s
/// later), saying so, and goes on.
#[tokio::test]
async fn a_server_error_is_retried() {
    let server = MockServer::start().await;
    listing_answers_first(
        &server,
        2,
        ResponseTemplate::new(502).set_body_json(json!({
            "message": "Bad Gateway",
            "documentation_url": "https://docs.github.com/rest"
        })),
    )
    .await;
    one_passing_shard(&server).await;
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let o = fetch(&server, &out, &["--timeout", "5"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        stderr
            .matches("listing the artifacts of run 77: GitHub answered 502 Bad Gateway: Bad Gateway; trying again in")
            .count(),
        2,
        "{stderr}"
    );
    assert!(out.join("hrr-results-sm90-shard-1/results.json").is_file());
}

/// GitHub's rate limit on the listing (403 with no requests left, `x-ratelimit-reset` a
/// moment ahead) is waited out, then the fetch goes on; a reset an hour ahead is given up
/// on at once, naming the wait.
#[tokio::test]
async fn a_rate_limited_listing_waits_as_github_asks() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let limited = |reset: u64| {
        ResponseTemplate::new(403)
            .insert_header("x-ratelimit-limit", "5000")
            .insert_header("x-ratelimit-remaining", "0")
            .insert_header("x-ratelimit-reset", reset.to_string().as_str())
            .set_body_json(json!({
                "message": "API rate limit exceeded for installation ID 1.",
                "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"
            }))
    };
    let server = MockServer::start().await;
    listing_answers_first(&server, 1, limited(now + 2)).await;
    one_passing_shard(&server).await;
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let began = std::time::Instant::now();
    let o = fetch(&server, &out, &["--timeout", "5"]);
    let took = began.elapsed();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "listing the artifacts of run 77: rate-limited by GitHub (answer 403); it asks to wait"
        ),
        "{stderr}"
    );
    // The reset was 2 s ahead in whole seconds: at least 1 s waited, not the 60 s default.
    assert!(took.as_millis() >= 1000 && took.as_secs() < 15, "{took:?}");
    assert!(out.join("hrr-results-sm90-shard-1/results.json").is_file());

    let server = MockServer::start().await;
    listing_answers_first(&server, 1, limited(now + 3600)).await;
    let began = std::time::Instant::now();
    let o = fetch(&server, &t.path().join("far"), &["--timeout", "5"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(INFRASTRUCTURE), "{stderr}");
    assert!(began.elapsed().as_secs() < 10, "{:?}", began.elapsed());
    assert!(
        stderr.contains("report fetch: listing the artifacts of run 77: rate-limited by GitHub (answer 403); it asks to wait 3"),
        "{stderr}"
    );
}

/// Ctrl-C while the server says nothing: the fetch stops at once, exit 130.
#[tokio::test]
async fn an_interrupt_cancels_a_fetch_at_once() {
    let server = MockServer::start().await;
    stall_listing(&server).await;
    let t = tempfile::tempdir().unwrap();
    let mut child = Command::new(HARNESS)
        .args([
            "report",
            "fetch",
            "--repo",
            "amd/hrr",
            "--run",
            "77",
            "--timeout",
            "60",
        ])
        .arg("--api-url")
        .arg(server.uri())
        .arg("--output")
        .arg(t.path().join("out"))
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let began = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(began.elapsed().as_secs() < 10, "still running after SIGINT");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(130));
    assert!(began.elapsed().as_secs() < 3, "{:?}", began.elapsed());
}
