//! `report publish`'s check run: a JUnit report's verdict as one completed check run on
//! a commit, its Markdown summary as the output (cut to GitHub's limit with a note), and
//! one failure annotation per failing testcase, on the case's source file when this
//! checkout has it. GitHub takes at most 50 annotations per request: the first 50 go with
//! the create, the rest with updates of the same check run, 50 at a time (GitHub appends
//! them). Through octocrab's typed checks API; the token is never printed.

use std::path::Path;

use super::junit::{Conclusion, FailedBy, Junit};
use crate::github::{answer, client, ClientError};
use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
    CheckRunStatus,
};

/// GitHub's limit on a check run's `output.summary` (and `output.text`).
pub const SUMMARY_LIMIT: usize = 65_535;
/// GitHub's limit on an annotation's message ("64 KB"), kept one byte under 64 KiB.
pub const MESSAGE_LIMIT: usize = 65_535;
/// GitHub's limit on an annotation's title.
pub const TITLE_CHARS: usize = 255;
/// Annotations GitHub accepts in one create or update request.
pub const PER_REQUEST: usize = 50;
/// Failing testcases annotated at most (20 requests); the title says when there are more.
pub const MAX_ANNOTATIONS: usize = 1000;

/// Where and what to publish.
#[derive(Clone, Debug)]
pub struct Target {
    pub api_url: String,
    pub owner: String,
    pub repo: String,
    pub head_sha: String,
    /// The check run's name.
    pub name: String,
}

/// One annotation, before it becomes octocrab's request type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub path: String,
    pub title: String,
    pub message: String,
}

/// The whole check run, ready to send.
#[derive(Clone, Debug)]
pub struct CheckRun {
    pub conclusion: Conclusion,
    pub title: String,
    pub summary: String,
    pub notes: Vec<Note>,
}

/// What was published, for the log line.
#[derive(Debug, PartialEq, Eq)]
pub struct Posted {
    pub id: u64,
    pub html_url: Option<String>,
    /// The create plus the updates.
    pub requests: usize,
    pub annotations: usize,
}

/// Why publishing failed, by the request that failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckRunError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("creating the check run: {}", answer(.0))]
    Create(#[source] octocrab::Error),
    #[error(
        "check run {id} was created, but adding annotations {from}..{to} of {total} failed: {}",
        answer(source)
    )]
    Update {
        id: u64,
        from: usize,
        to: usize,
        total: usize,
        source: octocrab::Error,
    },
}

/// The one-line verdict.
pub fn title(j: &Junit) -> String {
    let word = match j.conclusion() {
        Conclusion::Success => "passed",
        Conclusion::Neutral if j.compiled_not_run > 0 => "compiled, not run (no GPU)",
        Conclusion::Neutral if j.stand_in > 0 => "stand-in, no GPU",
        Conclusion::Neutral => "nothing ran",
        Conclusion::Failure if j.total() == 0 => "no test cases in the report",
        Conclusion::Failure => "failed",
    };
    let mut t = format!(
        "{word}: {} failing, {} passed{}, {} skipped of {} cases in {} suite(s)",
        j.failing.len(),
        j.passed,
        if j.flaky > 0 {
            format!(" ({} flaky)", j.flaky)
        } else {
            String::new()
        },
        j.skipped,
        j.total(),
        j.suites
    );
    if j.failing.len() > MAX_ANNOTATIONS {
        t.push_str(&format!("; the first {MAX_ANNOTATIONS} annotated"));
    }
    t
}

/// The longest prefix of `s` of at most `limit` bytes, on a character boundary.
fn prefix(s: &str, limit: usize) -> &str {
    if s.len() <= limit {
        return s;
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The summary within GitHub's limit; when cut, a note at its end says so.
pub fn summary(markdown: &str) -> String {
    if markdown.len() <= SUMMARY_LIMIT {
        return markdown.to_string();
    }
    let note = format!(
        "\n\n---\n**The summary was cut here**: it has {} bytes and a check run shows {SUMMARY_LIMIT}. The whole summary.md is in the run's artifacts.\n",
        markdown.len()
    );
    let mut s = prefix(markdown, SUMMARY_LIMIT - note.len()).to_string();
    s.push_str(&note);
    s
}

/// A case name that can be a directory under `cases/` (no separators, no `..`).
fn plain_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The file an annotation goes on: the case's `cases/<case>/main.cpp` when the checkout
/// at `root` has it, else the matrix.
pub fn path_for(root: Option<&Path>, case: &str) -> String {
    let main = format!("cases/{case}/main.cpp");
    match root {
        Some(r) if plain_name(case) && r.join(&main).is_file() => main,
        _ => "matrix/matrix.yaml".into(),
    }
}

/// The check run for a report: `root` is the checkout whose case files annotations name.
pub fn check_run(j: &Junit, markdown: &str, root: Option<&Path>) -> CheckRun {
    let notes = j
        .failing
        .iter()
        .take(MAX_ANNOTATIONS)
        .map(|f| {
            let mut title = format!("{}: {}", f.suite, f.case);
            if let Some((i, _)) = title.char_indices().nth(TITLE_CHARS) {
                title.truncate(i);
            }
            let mut message = prefix(&f.message, MESSAGE_LIMIT).to_string();
            if message.trim().is_empty() {
                message = match f.kind {
                    FailedBy::Failure => "failed",
                    FailedBy::Error => "errored",
                    FailedBy::Rerun => "failed on every attempt",
                }
                .into();
            }
            Note {
                path: path_for(root, &f.case),
                title,
                message,
            }
        })
        .collect();
    CheckRun {
        conclusion: j.conclusion(),
        title: title(j),
        summary: summary(markdown),
        notes,
    }
}

fn output(c: &CheckRun, notes: &[Note]) -> CheckRunOutput {
    CheckRunOutput {
        title: c.title.clone(),
        summary: c.summary.clone(),
        text: None,
        annotations: notes
            .iter()
            .map(|n| CheckRunOutputAnnotation {
                path: n.path.clone(),
                start_line: 1,
                end_line: 1,
                start_column: None,
                end_column: None,
                annotation_level: CheckRunOutputAnnotationLevel::Failure,
                message: n.message.clone(),
                title: Some(n.title.clone()),
                raw_details: None,
            })
            .collect(),
        images: vec![],
    }
}

/// Creates the check run with the first 50 annotations, then adds the rest 50 at a time.
pub async fn post(t: &Target, token: &str, c: &CheckRun) -> Result<Posted, CheckRunError> {
    let gh = client(&t.api_url, token)?;
    let checks = gh.checks(&t.owner, &t.repo);
    let mut batches = c.notes.chunks(PER_REQUEST);
    let first = batches.next().unwrap_or(&[]);
    let created = checks
        .create_check_run(t.name.as_str(), t.head_sha.as_str())
        .status(CheckRunStatus::Completed)
        .conclusion(match c.conclusion {
            Conclusion::Success => CheckRunConclusion::Success,
            Conclusion::Failure => CheckRunConclusion::Failure,
            Conclusion::Neutral => CheckRunConclusion::Neutral,
        })
        .output(output(c, first))
        .send()
        .await
        .map_err(CheckRunError::Create)?;
    let id = created.id;
    let mut requests = 1;
    let mut done = first.len();
    for batch in batches {
        checks
            .update_check_run(id)
            .output(output(c, batch))
            .send()
            .await
            .map_err(|source| CheckRunError::Update {
                id: id.into_inner(),
                from: done + 1,
                to: done + batch.len(),
                total: c.notes.len(),
                source,
            })?;
        requests += 1;
        done += batch.len();
    }
    Ok(Posted {
        id: id.into_inner(),
        html_url: created.html_url,
        requests,
        annotations: done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report_publish::junit::Failing;

    fn failing(n: usize) -> Junit {
        Junit {
            suites: 2,
            passed: 3,
            flaky: 1,
            skipped: 1,
            failing: (0..n)
                .map(|i| Failing {
                    suite: "hrr-sm90-shard-1-of-2".into(),
                    case: format!("case_{i}"),
                    kind: FailedBy::Failure,
                    message: String::new(),
                    cut: false,
                })
                .collect(),
            ..Junit::default()
        }
    }

    #[test]
    fn titles_say_the_verdict_in_one_line() {
        assert_eq!(
            title(&failing(2)),
            "failed: 2 failing, 3 passed (1 flaky), 1 skipped of 6 cases in 2 suite(s)"
        );
        assert_eq!(
            title(&failing(0)),
            "passed: 0 failing, 3 passed (1 flaky), 1 skipped of 4 cases in 2 suite(s)"
        );
        assert!(title(&failing(1001)).ends_with("; the first 1000 annotated"));
        assert!(title(&Junit::default()).starts_with("no test cases in the report: "));
        let stand_in = Junit {
            suites: 1,
            passed: 35,
            stand_in: 35,
            ..Junit::default()
        };
        assert!(
            title(&stand_in).starts_with("stand-in, no GPU: "),
            "{}",
            title(&stand_in)
        );
        let compiled = Junit {
            suites: 1,
            passed: 1,
            skipped: 36,
            compiled_not_run: 36,
            ..Junit::default()
        };
        assert!(title(&compiled).starts_with("compiled, not run (no GPU): "));
    }

    #[test]
    fn annotations_name_the_case_file_when_the_checkout_has_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("cases/case_1")).unwrap();
        std::fs::write(d.path().join("cases/case_1/main.cpp"), "int main() {}").unwrap();
        let c = check_run(&failing(3), "# sum", Some(d.path()));
        let paths: Vec<&str> = c.notes.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "matrix/matrix.yaml",
                "cases/case_1/main.cpp",
                "matrix/matrix.yaml"
            ]
        );
        assert_eq!(c.notes[1].title, "hrr-sm90-shard-1-of-2: case_1");
        assert_eq!(c.notes[1].message, "failed");
        // A name that is not a plain directory name is never looked up.
        assert_eq!(
            path_for(Some(d.path()), "../cases/case_1"),
            "matrix/matrix.yaml"
        );
        let long = Junit {
            failing: vec![Failing {
                suite: "s".repeat(300),
                case: "c".into(),
                kind: FailedBy::Error,
                message: "m".into(),
                cut: false,
            }],
            ..Junit::default()
        };
        assert_eq!(
            check_run(&long, "", None).notes[0].title.chars().count(),
            TITLE_CHARS
        );
    }

    #[test]
    fn a_long_summary_is_cut_with_a_note() {
        assert_eq!(summary("short"), "short");
        let md = "| case | ✓ |\n".repeat(10_000);
        let s = summary(&md);
        assert!(s.len() <= SUMMARY_LIMIT, "{}", s.len());
        assert!(s.len() > SUMMARY_LIMIT - 4, "{}", s.len());
        assert!(s.ends_with(&format!(
            "**The summary was cut here**: it has {} bytes and a check run shows 65535. The whole summary.md is in the run's artifacts.\n",
            md.len()
        )));
        assert!(md.starts_with(s.split("\n\n---\n**The summary").next().unwrap()));
    }
}
