//! Publishing control outcomes on a pull request (`hrr-harness control --pr`): a check
//! run when the token may create one, otherwise one pull-request comment, found again by
//! a marker and edited in place on later runs (never one comment per push). The token
//! comes from `GITHUB_TOKEN` and is never printed; the API base from `GITHUB_API_URL`.

use serde_json::{json, Value};

/// Finds our comment among a pull request's comments.
pub const MARKER: &str = "<!-- hrr-harness negative controls -->";
pub const CHECK_NAME: &str = "hrr-harness negative controls";

/// Where to publish.
#[derive(Clone, Debug)]
pub struct Target {
    pub api_url: String,
    pub owner: String,
    pub repo: String,
    pub pr: u64,
    pub head_sha: String,
}

/// What happened, for the log line.
#[derive(Debug, PartialEq, Eq)]
pub enum Published {
    CheckRun(u64),
    CommentCreated(u64),
    CommentUpdated(u64),
}

fn client(t: &Target, token: &str) -> Result<octocrab::Octocrab, String> {
    octocrab::Octocrab::builder()
        .base_uri(t.api_url.as_str())
        .map_err(|e| format!("GITHUB_API_URL {}: {e}", t.api_url))?
        .personal_token(token.to_string())
        .build()
        .map_err(|e| format!("GitHub client: {e}"))
}

fn status_of(e: &octocrab::Error) -> Option<u16> {
    match e {
        octocrab::Error::GitHub { source, .. } => Some(source.status_code.as_u16()),
        _ => None,
    }
}

/// Publishes `markdown`; `exit_code` 0 makes the check run succeed.
pub async fn publish(
    t: &Target,
    token: &str,
    markdown: &str,
    exit_code: u8,
) -> Result<Published, String> {
    let gh = client(t, token)?;
    let body = json!({
        "name": CHECK_NAME,
        "head_sha": t.head_sha,
        "status": "completed",
        "conclusion": if exit_code == 0 { "success" } else { "failure" },
        "output": {
            "title": if exit_code == 0 { "every control caught" } else { "controls not all caught" },
            "summary": markdown,
        }
    });
    let route = format!("/repos/{}/{}/check-runs", t.owner, t.repo);
    match gh.post::<_, Value>(route, Some(&body)).await {
        Ok(v) => return Ok(Published::CheckRun(v["id"].as_u64().unwrap_or(0))),
        Err(e) if matches!(status_of(&e), Some(403) | Some(404)) => {
            // Fork pull requests and tokens without checks:write: fall back to a comment.
        }
        Err(e) => return Err(format!("creating the check run: {}", describe(&e))),
    }
    let text = format!("{MARKER}\n{markdown}");
    let mut page = 1u32;
    loop {
        let route = format!(
            "/repos/{}/{}/issues/{}/comments?per_page=100&page={page}",
            t.owner, t.repo, t.pr
        );
        let comments: Vec<Value> = gh
            .get(route, None::<&()>)
            .await
            .map_err(|e| format!("listing pull-request comments: {}", describe(&e)))?;
        if let Some(c) = comments
            .iter()
            .find(|c| c["body"].as_str().is_some_and(|b| b.starts_with(MARKER)))
        {
            let id = c["id"].as_u64().unwrap_or(0);
            let route = format!("/repos/{}/{}/issues/comments/{id}", t.owner, t.repo);
            gh.patch::<Value, _, _>(route, Some(&json!({ "body": text })))
                .await
                .map_err(|e| format!("updating comment {id}: {}", describe(&e)))?;
            return Ok(Published::CommentUpdated(id));
        }
        if comments.len() < 100 {
            break;
        }
        page += 1;
    }
    let route = format!("/repos/{}/{}/issues/{}/comments", t.owner, t.repo, t.pr);
    let v: Value = gh
        .post(route, Some(&json!({ "body": text })))
        .await
        .map_err(|e| format!("creating the comment: {}", describe(&e)))?;
    Ok(Published::CommentCreated(v["id"].as_u64().unwrap_or(0)))
}

fn describe(e: &octocrab::Error) -> String {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            format!("GitHub answered {}: {}", source.status_code, source.message)
        }
        other => other.to_string(),
    }
}

/// The target from GitHub Actions' environment: GITHUB_REPOSITORY, the event file's pull
/// request number and head SHA, GITHUB_API_URL.
pub fn target_from_env() -> Result<Target, String> {
    let repo = std::env::var("GITHUB_REPOSITORY")
        .map_err(|_| "GITHUB_REPOSITORY is not set".to_string())?;
    let (owner, name) = repo
        .split_once('/')
        .ok_or_else(|| format!("GITHUB_REPOSITORY `{repo}` is not OWNER/NAME"))?;
    let event_path = std::env::var("GITHUB_EVENT_PATH")
        .map_err(|_| "GITHUB_EVENT_PATH is not set".to_string())?;
    let event: Value = std::fs::read(&event_path)
        .ok()
        .and_then(|d| serde_json::from_slice(&d).ok())
        .ok_or_else(|| format!("cannot read the event file {event_path}"))?;
    let pr = event["pull_request"]["number"]
        .as_u64()
        .ok_or_else(|| format!("{event_path} is not a pull_request event"))?;
    let head_sha = event["pull_request"]["head"]["sha"]
        .as_str()
        .map(str::to_string)
        .or_else(|| std::env::var("GITHUB_SHA").ok())
        .ok_or("no head SHA in the event")?;
    Ok(Target {
        api_url: std::env::var("GITHUB_API_URL")
            .unwrap_or_else(|_| "https://api.github.com".into()),
        owner: owner.into(),
        repo: name.into(),
        pr,
        head_sha,
    })
}

/// `--pr`: publish when a token is present; without one, say so (the Markdown is printed
/// by the caller either way).
pub fn publish_from_env(markdown: &str, exit_code: u8) {
    let Some(token) = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty()) else {
        eprintln!("hrr-harness: --pr: GITHUB_TOKEN is not set: printing the outcome instead of publishing it");
        return;
    };
    let target = match target_from_env() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("hrr-harness: --pr: cannot publish: {e}");
            return;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hrr-harness: --pr: {e}");
            return;
        }
    };
    match rt.block_on(publish(&target, &token, markdown, exit_code)) {
        Ok(p) => eprintln!(
            "hrr-harness: published on {}/{} pull request {}: {p:?}",
            target.owner, target.repo, target.pr
        ),
        Err(e) => eprintln!("hrr-harness: --pr: publishing failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::{body_string_contains, header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn target(server: &MockServer) -> Target {
        Target {
            api_url: server.uri(),
            owner: "amd".into(),
            repo: "hrr".into(),
            pr: 42,
            head_sha: "0123abcd".into(),
        }
    }

    #[tokio::test]
    async fn a_check_run_is_created_when_the_token_allows_it() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/check-runs"))
            .and(header("authorization", "Bearer secret-token"))
            .and(body_string_contains("\"conclusion\":\"failure\""))
            .and(body_string_contains("\"head_sha\":\"0123abcd\""))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 7})))
            .expect(1)
            .mount(&server)
            .await;
        let p = publish(&target(&server), "secret-token", "| control | ... |", 3)
            .await
            .unwrap();
        assert_eq!(p, Published::CheckRun(7));
    }

    #[tokio::test]
    async fn without_checks_permission_one_comment_is_created_then_updated() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/check-runs"))
            .respond_with(
                ResponseTemplate::new(403)
                    .set_body_json(json!({"message": "Resource not accessible by integration"})),
            )
            .mount(&server)
            .await;
        // First run: no comment of ours yet.
        let list = Mock::given(method("GET"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!([{"id": 1, "body": "LGTM"}])),
            )
            .expect(1)
            .mount_as_scoped(&server)
            .await;
        let create = Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .and(body_string_contains(MARKER))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 99})))
            .expect(1)
            .mount_as_scoped(&server)
            .await;
        let p = publish(&target(&server), "t", "first run", 0)
            .await
            .unwrap();
        assert_eq!(p, Published::CommentCreated(99));
        drop(list);
        drop(create);
        // Second run: the comment is found by its marker and edited in place.
        Mock::given(method("GET"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([
                {"id": 1, "body": "LGTM"},
                {"id": 99, "body": format!("{MARKER}\nfirst run")}
            ])))
            .mount(&server)
            .await;
        Mock::given(method("PATCH"))
            .and(path("/repos/amd/hrr/issues/comments/99"))
            .and(body_string_contains("second run"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 99})))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .respond_with(ResponseTemplate::new(500))
            .expect(0)
            .mount(&server)
            .await;
        let p = publish(&target(&server), "t", "second run", 3)
            .await
            .unwrap();
        assert_eq!(p, Published::CommentUpdated(99));
    }
}
