//! Publishing control outcomes on a pull request (`hrr-harness control --pr`): a check
//! run when the token may create one, otherwise one pull-request comment, found again by
//! a marker and edited in place on later runs (never one comment per push). The token
//! comes from `GITHUB_TOKEN` and is never printed; the API base from `GITHUB_API_URL`.
//! Every request goes through octocrab's typed API (checks, issue comments).
//!
//! (`report publish`, a pull request's results as a check run, is `report_publish`.)

use octocrab::models::CommentId;
use octocrab::params::checks::{CheckRunConclusion, CheckRunOutput, CheckRunStatus};
use serde_json::Value;

use crate::github::{answer, client, status_of, ClientError};

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

/// Why publishing failed, by the request that failed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("creating the check run: {}", answer(.0))]
    CheckRun(#[source] octocrab::Error),
    #[error("listing pull-request comments: {}", answer(.0))]
    ListComments(#[source] octocrab::Error),
    #[error("updating comment {id}: {}", answer(source))]
    UpdateComment { id: u64, source: octocrab::Error },
    #[error("creating the comment: {}", answer(.0))]
    CreateComment(#[source] octocrab::Error),
}

/// Why the pull request to publish on could not be found in GitHub Actions' environment.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("GITHUB_REPOSITORY is not set")]
    NoRepository,
    #[error("GITHUB_REPOSITORY `{0}` is not OWNER/NAME")]
    BadRepository(String),
    #[error("GITHUB_EVENT_PATH is not set")]
    NoEventPath,
    #[error("cannot read the event file {0}")]
    EventFile(String),
    #[error("{0} is not a pull_request event")]
    NotPullRequest(String),
    #[error("no head SHA in the event")]
    NoHeadSha,
}

/// Publishes `markdown`; `exit_code` 0 makes the check run succeed.
pub async fn publish(
    t: &Target,
    token: &str,
    markdown: &str,
    exit_code: u8,
) -> Result<Published, PublishError> {
    let gh = client(&t.api_url, token)?;
    let caught = exit_code == 0;
    let created = gh
        .checks(&t.owner, &t.repo)
        .create_check_run(CHECK_NAME, &t.head_sha)
        .status(CheckRunStatus::Completed)
        .conclusion(if caught {
            CheckRunConclusion::Success
        } else {
            CheckRunConclusion::Failure
        })
        .output(CheckRunOutput {
            title: if caught {
                "every control caught"
            } else {
                "controls not all caught"
            }
            .into(),
            summary: markdown.into(),
            text: None,
            annotations: vec![],
            images: vec![],
        })
        .send()
        .await;
    match created {
        Ok(run) => return Ok(Published::CheckRun(run.id.into_inner())),
        // Fork pull requests and tokens without checks:write: fall back to a comment.
        Err(e) if matches!(status_of(&e), Some(403) | Some(404)) => {}
        Err(e) => return Err(PublishError::CheckRun(e)),
    }
    let text = format!("{MARKER}\n{markdown}");
    let issues = gh.issues(&t.owner, &t.repo);
    let mut page = Some(
        issues
            .list_comments(t.pr)
            .per_page(100)
            .send()
            .await
            .map_err(PublishError::ListComments)?,
    );
    while let Some(p) = page {
        let ours = p
            .items
            .iter()
            .find(|c| c.body.as_deref().is_some_and(|b| b.starts_with(MARKER)));
        if let Some(c) = ours {
            let id: CommentId = c.id;
            issues.update_comment(id, &text).await.map_err(|source| {
                PublishError::UpdateComment {
                    id: id.into_inner(),
                    source,
                }
            })?;
            return Ok(Published::CommentUpdated(id.into_inner()));
        }
        page = gh
            .get_page(&p.next)
            .await
            .map_err(PublishError::ListComments)?;
    }
    let c = issues
        .create_comment(t.pr, &text)
        .await
        .map_err(PublishError::CreateComment)?;
    Ok(Published::CommentCreated(c.id.into_inner()))
}

/// The target from GitHub Actions' environment: GITHUB_REPOSITORY, the event file's pull
/// request number and head SHA, GITHUB_API_URL.
pub fn target_from_env() -> Result<Target, TargetError> {
    let repo = std::env::var("GITHUB_REPOSITORY").map_err(|_| TargetError::NoRepository)?;
    let (owner, name) = repo
        .split_once('/')
        .ok_or_else(|| TargetError::BadRepository(repo.clone()))?;
    let event_path = std::env::var("GITHUB_EVENT_PATH").map_err(|_| TargetError::NoEventPath)?;
    let event: Value = std::fs::read(&event_path)
        .ok()
        .and_then(|d| serde_json::from_slice(&d).ok())
        .ok_or_else(|| TargetError::EventFile(event_path.clone()))?;
    let pr = event["pull_request"]["number"]
        .as_u64()
        .ok_or_else(|| TargetError::NotPullRequest(event_path.clone()))?;
    let head_sha = event["pull_request"]["head"]["sha"]
        .as_str()
        .map(str::to_string)
        .or_else(|| std::env::var("GITHUB_SHA").ok())
        .ok_or(TargetError::NoHeadSha)?;
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
    let Some(token) = crate::process::secrets::secret("GITHUB_TOKEN") else {
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
    use serde_json::json;
    use wiremock::matchers::{body_string_contains, header, method, path, query_param};
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

    /// A check run as GitHub returns it (the fields octocrab's model requires).
    fn check_run(server: &MockServer, id: u64) -> Value {
        let url = format!("{}/repos/amd/hrr/check-runs/{id}", server.uri());
        json!({
            "id": id,
            "node_id": "CR_1",
            "head_sha": "0123abcd",
            "url": url,
            "html_url": "https://github.com/amd/hrr/runs/7",
            "details_url": null,
            "status": "completed",
            "conclusion": "failure",
            "started_at": "2026-12-01T05:00:00Z",
            "completed_at": "2026-12-01T05:00:00Z",
            "name": CHECK_NAME,
            "output": {
                "title": "controls not all caught",
                "summary": "| control | ... |",
                "text": null,
                "annotations_count": 0,
                "annotations_url": format!("{url}/annotations")
            },
            "pull_requests": []
        })
    }

    /// An issue comment as GitHub returns it.
    fn comment(server: &MockServer, id: u64, body: &str) -> Value {
        let api = server.uri();
        let user = format!("{api}/users/hrr-bot");
        json!({
            "id": id,
            "node_id": format!("IC_{id}"),
            "url": format!("{api}/repos/amd/hrr/issues/comments/{id}"),
            "html_url": format!("https://github.com/amd/hrr/pull/42#issuecomment-{id}"),
            "issue_url": format!("{api}/repos/amd/hrr/issues/42"),
            "body": body,
            "user": {
                "login": "hrr-bot", "id": 5, "node_id": "U_5",
                "avatar_url": "https://avatars.githubusercontent.com/u/5",
                "gravatar_id": "",
                "url": user,
                "html_url": "https://github.com/hrr-bot",
                "followers_url": format!("{user}/followers"),
                "following_url": format!("{user}/following"),
                "gists_url": format!("{user}/gists"),
                "starred_url": format!("{user}/starred"),
                "subscriptions_url": format!("{user}/subscriptions"),
                "organizations_url": format!("{user}/orgs"),
                "repos_url": format!("{user}/repos"),
                "events_url": format!("{user}/events"),
                "received_events_url": format!("{user}/received_events"),
                "type": "Bot",
                "site_admin": false
            },
            "created_at": "2026-12-01T05:00:00Z",
            "updated_at": "2026-12-01T05:00:00Z"
        })
    }

    async fn checks_forbidden(server: &MockServer) {
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/check-runs"))
            .respond_with(
                ResponseTemplate::new(403)
                    .set_body_json(json!({"message": "Resource not accessible by integration"})),
            )
            .mount(server)
            .await;
    }

    #[tokio::test]
    async fn a_check_run_is_created_when_the_token_allows_it() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/check-runs"))
            .and(header("authorization", "Bearer secret-token"))
            .and(body_string_contains("\"conclusion\":\"failure\""))
            .and(body_string_contains("\"status\":\"completed\""))
            .and(body_string_contains("\"head_sha\":\"0123abcd\""))
            .and(body_string_contains("\"summary\":\"| control | ... |\""))
            .respond_with(ResponseTemplate::new(201).set_body_json(check_run(&server, 7)))
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
        checks_forbidden(&server).await;
        // First run: no comment of ours yet.
        let list = Mock::given(method("GET"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .and(query_param("per_page", "100"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!([comment(&server, 1, "LGTM")])),
            )
            .expect(1)
            .mount_as_scoped(&server)
            .await;
        let create = Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .and(body_string_contains(MARKER))
            .and(body_string_contains("first run"))
            .respond_with(ResponseTemplate::new(201).set_body_json(comment(
                &server,
                99,
                &format!("{MARKER}\nfirst run"),
            )))
            .expect(1)
            .mount_as_scoped(&server)
            .await;
        let p = publish(&target(&server), "t", "first run", 0)
            .await
            .unwrap();
        assert_eq!(p, Published::CommentCreated(99));
        drop(list);
        drop(create);
        // Second run: the comment is found by its marker and edited in place (octocrab
        // sends the edit as POST, which GitHub accepts for this PATCH endpoint).
        Mock::given(method("GET"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([
                comment(&server, 1, "LGTM"),
                comment(&server, 99, &format!("{MARKER}\nfirst run"))
            ])))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/issues/comments/99"))
            .and(body_string_contains("second run"))
            .respond_with(ResponseTemplate::new(200).set_body_json(comment(
                &server,
                99,
                &format!("{MARKER}\nsecond run"),
            )))
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

    #[tokio::test]
    async fn the_comment_is_found_on_a_later_page() {
        let server = MockServer::start().await;
        checks_forbidden(&server).await;
        let next = format!(
            "<{}/repos/amd/hrr/issues/42/comments?per_page=100&page=2>; rel=\"next\"",
            server.uri()
        );
        Mock::given(method("GET"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .and(query_param("page", "2"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([comment(
                &server,
                150,
                &format!("{MARKER}\nolder run")
            )])))
            .with_priority(1)
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/repos/amd/hrr/issues/42/comments"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("link", next.as_str())
                    .set_body_json(json!([comment(&server, 1, "LGTM")])),
            )
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/issues/comments/150"))
            .respond_with(ResponseTemplate::new(200).set_body_json(comment(
                &server,
                150,
                &format!("{MARKER}\nnew run"),
            )))
            .expect(1)
            .mount(&server)
            .await;
        let p = publish(&target(&server), "t", "new run", 0).await.unwrap();
        assert_eq!(p, Published::CommentUpdated(150));
    }

    #[tokio::test]
    async fn other_check_run_failures_are_errors_without_a_comment() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/repos/amd/hrr/check-runs"))
            .respond_with(
                ResponseTemplate::new(422).set_body_json(json!({"message": "Invalid head_sha"})),
            )
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(500))
            .expect(0)
            .mount(&server)
            .await;
        let e = publish(&target(&server), "t", "md", 0).await.unwrap_err();
        assert!(matches!(e, PublishError::CheckRun(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "creating the check run: GitHub answered 422 Unprocessable Entity: Invalid head_sha"
        );
    }
}
