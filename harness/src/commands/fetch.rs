//! `hrr-harness report fetch --repo OWNER/NAME --run ID`: resolves the flags and the
//! token, shows the downloads (a byte progress bar on a terminal, plain lines otherwise
//! and always in CI), lets `crate::fetch` bring the artifacts, then merges them exactly as
//! `report merge` does (the same function, `--expect` included), into the same directory,
//! and lists the archives left to replay.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{HumanBytes, ProgressBar, ProgressStyle};

use super::Res;
use crate::cli::FetchArgs;
use crate::error::HarnessError;
use crate::exit::Exit;
use crate::fetch::{self, Event, Limits, Request};

/// How many archive paths the closing list names before saying how many more there are.
const LIST_ARCHIVES: usize = 20;

/// The downloads as the user sees them.
struct Show {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl Show {
    fn new(allow_bar: bool) -> Show {
        let ci = std::env::var_os("CI").is_some() || std::env::var_os("GITHUB_ACTIONS").is_some();
        Show {
            bar: None,
            terminal: allow_bar && !ci && std::io::stderr().is_terminal(),
        }
    }

    fn event(&mut self, e: Event<'_>) {
        match e {
            Event::Listed { artifacts } => {
                let total: u64 = artifacts.iter().map(|(_, n)| n).sum();
                eprintln!(
                    "hrr-harness: {} artifact(s), {}: {}",
                    artifacts.len(),
                    HumanBytes(total),
                    artifacts
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            Event::Downloading { name, size } => {
                if self.terminal {
                    let pb = ProgressBar::new(size);
                    pb.set_style(
                        ProgressStyle::with_template(
                            "[{bar:25}] {bytes}/{total_bytes} {bytes_per_sec} {eta} {wide_msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                    );
                    pb.set_message(name.to_string());
                    self.bar = Some(pb);
                } else {
                    eprintln!("hrr-harness: downloading {name} ({})", HumanBytes(size));
                }
            }
            Event::Received { bytes } => {
                if let Some(pb) = &self.bar {
                    // GitHub's listed size can differ from the bytes sent: follow the data.
                    if pb.length().is_some_and(|l| bytes > l) {
                        pb.set_length(bytes);
                    }
                    pb.set_position(bytes);
                }
            }
            Event::Retrying { why, wait } => {
                let line = format!(
                    "hrr-harness: {why}; trying again in {} s",
                    wait.as_secs_f64()
                );
                match &self.bar {
                    Some(pb) => pb.println(line),
                    None => eprintln!("{line}"),
                }
            }
            Event::Unpacked(f) => {
                if let Some(pb) = self.bar.take() {
                    pb.finish_and_clear();
                }
                eprintln!(
                    "hrr-harness: {}: {} zipped, {} file(s), {} in {}",
                    f.name,
                    HumanBytes(f.zip_bytes),
                    f.files,
                    HumanBytes(f.bytes),
                    f.dir.display()
                );
            }
        }
    }
}

pub fn fetch(matrix: Option<&Path>, args: &FetchArgs) -> Res {
    let (owner, repo) = args
        .repo
        .split_once('/')
        .filter(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'))
        .ok_or_else(|| HarnessError::usage(format!("--repo {}: expected OWNER/NAME", args.repo)))?;
    let token = super::github_token(
        "report fetch: GITHUB_TOKEN is not set: downloading artifacts needs a token that may read the repository's actions (e.g. `GITHUB_TOKEN=$(gh auth token)`)",
    )?;
    let api_url = super::github_api_url(args.api_url.as_deref());
    let dest = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("hrr-run-{}", args.run)));
    let req = Request {
        api_url,
        owner: owner.into(),
        repo: repo.into(),
        run: args.run,
        patterns: args.artifacts.clone(),
        dest: dest.clone(),
        limits: Limits::default(),
        timeout: std::time::Duration::from_secs(args.timeout),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| HarnessError::failed(format!("report fetch: {e}")))?;
    let mut show = Show::new(!args.no_progress);
    // Ctrl-C or SIGTERM (the flag `process` sets) cancels at once: nothing is waited for.
    let mut on_event = |e: Event<'_>| show.event(e);
    let outcome = rt.block_on(async {
        tokio::select! {
            r = fetch::fetch(&req, &token, &mut on_event) => Some(r),
            _ = until_interrupted() => None,
        }
    });
    let Some(fetched) = outcome else {
        eprintln!("hrr-harness: report fetch: interrupted");
        return Ok(Exit::Interrupted);
    };
    let fetched = fetched.map_err(|e| HarnessError::failed(format!("report fetch: {e}")))?;
    let dirs: Vec<PathBuf> = fetched.iter().map(|f| f.dir.clone()).collect();
    let code = super::merge_with(matrix, &dirs, &dest, &args.expect)?;
    list_archives(&dirs);
    Ok(code)
}

/// Returns once the harness was told to stop (SIGINT, SIGTERM).
async fn until_interrupted() {
    while !crate::process::interrupted() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Names the case archives the artifacts brought (failing cases keep theirs).
fn list_archives(dirs: &[PathBuf]) {
    let mut archives = Vec::new();
    for d in dirs {
        // <artifact>/cases/<case>/attempt-N/archive.hrrz (a failing case's, packed), or
        // an archive directory (one capture could not finish, kept as it is)
        for e in walkdir::WalkDir::new(d.join("cases"))
            .min_depth(3)
            .max_depth(3)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
        {
            let packed = e.file_type().is_file() && e.file_name() == "archive.hrrz";
            if packed || (e.file_type().is_dir() && e.file_name() == "archive") {
                archives.push(e.into_path());
            }
        }
    }
    if archives.is_empty() {
        return;
    }
    crate::out!("archives to replay (hrr-replay ARCHIVE):");
    for a in archives.iter().take(LIST_ARCHIVES) {
        crate::out!("  {}", a.display());
    }
    if archives.len() > LIST_ARCHIVES {
        crate::out!("  ... and {} more", archives.len() - LIST_ARCHIVES);
    }
}
