//! `hrr-harness report publish --junit FILE --summary FILE --check-name NAME --head-sha SHA`:
//! the publishing step of the `workflow_run` workflow. It runs the default branch's
//! harness on a pull request's artifacts, so both files are untrusted data: read with a
//! size cap, never through a symlink, the JUnit parsed with bounds, nothing in them run.
//! Flags and environment (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL) are checked
//! first (usage, exit 2), then the files are read and parsed, and only then is anything
//! posted: a refused file (exit 7) posts nothing. Publishing ends with exit 0 whatever
//! the verdict: the verdict is the check run's conclusion.

use std::path::Path;

use super::Res;
use crate::cli::PublishArgs;
use crate::error::HarnessError;
use crate::exit::Exit;
use crate::github::ClientError;
use crate::repo::SourceTree;
use crate::report_publish::check_run::{self, CheckRunError, Target, MESSAGE_LIMIT};
use crate::report_publish::junit::{self, Limits};
use crate::report_publish::untrusted;

/// The largest JUnit read (a merged report of every family is a few MiB at most).
pub const JUNIT_CAP: u64 = 32 << 20;
/// The largest summary read (GitHub shows 64 KiB of it).
pub const SUMMARY_CAP: u64 = 1 << 20;
/// JUnit nests five deep; anything far deeper is not a report.
const MAX_DEPTH: usize = 32;

/// A commit SHA as GitHub writes it: 40 (SHA-1) or 64 (SHA-256) hex digits.
fn full_sha(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub fn publish(matrix: Option<&Path>, args: &PublishArgs) -> Res {
    let usage = |s: String| HarnessError::usage(format!("report publish: {s}"));
    let token = crate::process::secrets::secret("GITHUB_TOKEN").ok_or_else(|| {
        usage(
            "GITHUB_TOKEN is not set: creating a check run needs a token with checks: write".into(),
        )
    })?;
    let repository = env("GITHUB_REPOSITORY")
        .ok_or_else(|| usage("GITHUB_REPOSITORY (OWNER/NAME) is not set".into()))?;
    let (owner, repo) = repository
        .split_once('/')
        .filter(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'))
        .ok_or_else(|| {
            usage(format!(
                "GITHUB_REPOSITORY `{repository}` is not OWNER/NAME"
            ))
        })?;
    if !full_sha(&args.head_sha) {
        return Err(usage(format!(
            "--head-sha `{}`: expected a full commit SHA (40 or 64 hex digits)",
            args.head_sha
        )));
    }
    if args.check_name.trim().is_empty() {
        return Err(usage("--check-name is empty".into()));
    }
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        HarnessError::failed(format!(
            "report publish: {what}: {e}; nothing was published"
        ))
    };
    let xml = untrusted::read(&args.junit, JUNIT_CAP).map_err(|e| failed("--junit", &e))?;
    let report = junit::parse(
        &xml,
        Limits {
            max_depth: MAX_DEPTH,
            max_text: MESSAGE_LIMIT,
        },
    )
    .map_err(|e| failed(&format!("--junit {}", args.junit.display()), &e))?;
    drop(xml);
    let md = untrusted::read(&args.summary, SUMMARY_CAP).map_err(|e| failed("--summary", &e))?;
    let md = String::from_utf8_lossy(&md);
    // Annotations name the case files of this checkout (the default branch's), if any.
    let root = SourceTree::locate(matrix).ok().map(|t| t.root);
    let run = check_run::check_run(&report, &md, root.as_deref());
    let target = Target {
        api_url: env("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
        owner: owner.into(),
        repo: repo.into(),
        head_sha: args.head_sha.clone(),
        name: args.check_name.clone(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| HarnessError::failed(format!("report publish: {e}")))?;
    let posted = rt
        .block_on(check_run::post(&target, &token, &run))
        .map_err(|e| match e {
            // A GITHUB_API_URL that is not a URL is the caller's mistake, not GitHub's.
            CheckRunError::Client(ClientError::ApiUrl { .. }) => {
                HarnessError::usage(format!("report publish: {e}"))
            }
            _ => HarnessError::failed(format!("report publish: {e}")),
        })?;
    crate::out!(
        "published check run {} `{}` on {}/{}@{}: {}; {} annotation(s) in {} request(s){}",
        posted.id,
        target.name,
        target.owner,
        target.repo,
        target.head_sha,
        run.title,
        posted.annotations,
        posted.requests,
        posted
            .html_url
            .map(|u| format!(" ({u})"))
            .unwrap_or_default()
    );
    Ok(Exit::Ok)
}
