//! `hrr-harness workflows check --repo OWNER/NAME`: what the generated workflows rely on
//! and only the repository's settings provide. The GPU workflows run a fork's pull
//! request after the `approval` job in the environment `gpu-fork-pull-requests`; if that
//! environment does not exist, GitHub creates it, unprotected, at the first run, and fork
//! code reaches the self-hosted GPU runners. So the environment must exist with required
//! reviewers. The runners of each family's labels should be ephemeral (a job cannot leave
//! anything for the next); the REST API says so only for some runners, so where it does
//! not, the check says it cannot tell rather than guessing.

use std::time::Duration;

use http_body_util::BodyExt;
use serde::Deserialize;

/// What the check found, turned into text and an exit code only at the edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Findings {
    pub environment: Environment,
    /// Per family: its labels and what the runners with all of them are.
    pub families: Vec<(String, Vec<String>, Runners)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Environment {
    /// Exists, with required reviewers (their count), admins able to bypass or not.
    Protected {
        reviewers: usize,
        admins_bypass: bool,
    },
    /// Exists without required reviewers: fork code runs unreviewed.
    Unprotected,
    /// Does not exist: GitHub creates it unprotected at the first run.
    Missing,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runners {
    /// Every matching runner says it is ephemeral.
    Ephemeral(usize),
    /// Some matching runners say they are not (their names).
    Persistent(Vec<String>),
    /// The API does not say for some (their count), or the token may not list runners.
    CannotTell(String),
    /// No runner has all the family's labels.
    None,
}

impl Findings {
    /// Whether fork code is kept off the GPU runners until a maintainer approves.
    pub fn safe(&self) -> bool {
        matches!(self.environment, Environment::Protected { .. })
    }

    /// One line per finding.
    pub fn lines(&self, repo: &str) -> Vec<String> {
        let env = hrr_workflows::steps::ENVIRONMENT;
        let mut out = vec![match &self.environment {
            Environment::Protected { reviewers, admins_bypass } => format!(
                "ok: {repo}: environment {env} requires reviewers ({reviewers} named){}",
                if *admins_bypass { "; administrators may bypass it" } else { "" }
            ),
            Environment::Unprotected => format!(
                "FAIL: {repo}: environment {env} has no required reviewers: a fork's pull request runs on the GPU runners unreviewed. Settings > Environments > {env} > Required reviewers"
            ),
            Environment::Missing => format!(
                "FAIL: {repo}: environment {env} does not exist: GitHub would create it unprotected at the first fork pull request, whose code would then reach the GPU runners. Create it (Settings > Environments > New environment) with required reviewers"
            ),
        }];
        for (family, labels, r) in &self.families {
            let l = labels.join(", ");
            out.push(match r {
                Runners::Ephemeral(n) => format!("ok: {family}: {n} runner(s) with labels [{l}], all ephemeral"),
                Runners::Persistent(names) => format!(
                    "warning: {family}: runner(s) with labels [{l}] are not ephemeral ({}): a job can leave files or processes for the next; register them with --ephemeral",
                    names.join(", ")
                ),
                Runners::CannotTell(why) => format!("note: {family}: cannot tell whether the runners with labels [{l}] are ephemeral: {why}"),
                Runners::None => format!("note: {family}: no runner has the labels [{l}]: its jobs would wait"),
            });
        }
        out
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RepoCheckError {
    #[error("{what}: no answer within {} s", after.as_secs())]
    TimedOut { what: String, after: Duration },
    #[error("{what}: {why}")]
    Api { what: String, why: String },
}

#[derive(Deserialize)]
struct EnvironmentJson {
    #[serde(default)]
    protection_rules: Vec<Rule>,
    #[serde(default)]
    can_admins_bypass: bool,
}

#[derive(Deserialize)]
struct Rule {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    reviewers: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct RunnerPage {
    #[serde(default)]
    total_count: u64,
    #[serde(default)]
    runners: Vec<RunnerJson>,
}

#[derive(Deserialize)]
struct RunnerJson {
    name: String,
    #[serde(default)]
    labels: Vec<Label>,
    /// Not in every API version's answer: absent means the API does not say.
    #[serde(default)]
    ephemeral: Option<bool>,
}

#[derive(Deserialize)]
struct Label {
    name: String,
}

/// GETs `route`: (status, body), within `timeout` for the head and each chunk.
async fn get(
    gh: &octocrab::Octocrab,
    route: &str,
    timeout: Duration,
) -> Result<(u16, Vec<u8>), RepoCheckError> {
    let timed_out = || RepoCheckError::TimedOut {
        what: format!("GET {route}"),
        after: timeout,
    };
    let api = |e: octocrab::Error| RepoCheckError::Api {
        what: format!("GET {route}"),
        why: e.to_string(),
    };
    let r = tokio::time::timeout(timeout, gh._get(route))
        .await
        .map_err(|_| timed_out())?
        .map_err(api)?;
    let status = r.status().as_u16();
    let mut body = r.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = tokio::time::timeout(timeout, body.frame())
        .await
        .map_err(|_| timed_out())?
    {
        if let Ok(d) = frame.map_err(api)?.into_data() {
            bytes.extend_from_slice(&d);
            if bytes.len() > 16 << 20 {
                return Err(RepoCheckError::Api {
                    what: format!("GET {route}"),
                    why: "an answer over 16 MiB".into(),
                });
            }
        }
    }
    Ok((status, bytes))
}

/// Checks `owner/repo`'s environment and the runners of each `(family, labels)`.
pub async fn check(
    gh: &octocrab::Octocrab,
    owner: &str,
    repo: &str,
    families: &[(String, Vec<String>)],
    timeout: Duration,
) -> Result<Findings, RepoCheckError> {
    let env = hrr_workflows::steps::ENVIRONMENT;
    let route = format!("/repos/{owner}/{repo}/environments/{env}");
    let (status, body) = get(gh, &route, timeout).await?;
    let environment = match status {
        404 => Environment::Missing,
        200 => {
            let e: EnvironmentJson =
                serde_json::from_slice(&body).map_err(|e| RepoCheckError::Api {
                    what: format!("GET {route}"),
                    why: format!("not an environment: {e}"),
                })?;
            let reviewers: usize = e
                .protection_rules
                .iter()
                .filter(|r| r.kind == "required_reviewers")
                .map(|r| r.reviewers.len())
                .sum();
            if reviewers > 0 {
                Environment::Protected {
                    reviewers,
                    admins_bypass: e.can_admins_bypass,
                }
            } else {
                Environment::Unprotected
            }
        }
        s => {
            return Err(RepoCheckError::Api {
                what: format!("GET {route}"),
                why: format!("the server answered {s}"),
            })
        }
    };
    let mut runners = Vec::new();
    let mut listed: Result<(), String> = Ok(());
    for page in 1..=50u32 {
        let route = format!("/repos/{owner}/{repo}/actions/runners?per_page=100&page={page}");
        let (status, body) = get(gh, &route, timeout).await?;
        if status != 200 {
            listed = Err(format!(
                "listing the repository's runners answered {status} (it needs a token with administration read access)"
            ));
            break;
        }
        let p: RunnerPage = serde_json::from_slice(&body).map_err(|e| RepoCheckError::Api {
            what: format!("GET {route}"),
            why: format!("not a runner list: {e}"),
        })?;
        let n = p.runners.len();
        runners.extend(p.runners);
        if n < 100 || runners.len() as u64 >= p.total_count {
            break;
        }
    }
    let families = families
        .iter()
        .map(|(name, labels)| {
            let r = match &listed {
                Err(why) => Runners::CannotTell(why.clone()),
                Ok(()) => runners_state(&runners, labels),
            };
            (name.clone(), labels.clone(), r)
        })
        .collect();
    Ok(Findings {
        environment,
        families,
    })
}

fn runners_state(all: &[RunnerJson], labels: &[String]) -> Runners {
    let mine: Vec<&RunnerJson> = all
        .iter()
        .filter(|r| labels.iter().all(|l| r.labels.iter().any(|x| &x.name == l)))
        .collect();
    if mine.is_empty() {
        return Runners::None;
    }
    let persistent: Vec<String> = mine
        .iter()
        .filter(|r| r.ephemeral == Some(false))
        .map(|r| r.name.clone())
        .collect();
    let unknown = mine.iter().filter(|r| r.ephemeral.is_none()).count();
    if !persistent.is_empty() {
        Runners::Persistent(persistent)
    } else if unknown > 0 {
        Runners::CannotTell(format!(
            "the API does not say for {unknown} of {} runner(s)",
            mine.len()
        ))
    } else {
        Runners::Ephemeral(mine.len())
    }
}
