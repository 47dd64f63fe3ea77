//! The files `report.html` links to: for each case, the logs and replay results of its
//! attempts, found next to the `results.json` the case came from. A report inside the
//! page's directory is linked in place (archives too); any other report's logs and JSON
//! results (never its archives, which may be gigabytes) are copied under
//! `cases/<suite>/<case>/attempt-N/`, so the page's directory holds everything it links to.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use super::{io_err, HtmlError};
use crate::result::RunReport;

/// A copied log larger than this keeps only its last this-many bytes (the end of a log
/// says why it failed; the shard's own artifact has the whole file).
pub const COPY_LIMIT_BYTES: u64 = 4 << 20;

/// One file of one attempt, as the page links to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLink {
    /// 1-based attempt number.
    pub attempt: u32,
    /// The file's name in the attempt directory (`capture.log`, `replay.json`, `archive/`).
    pub name: String,
    /// Relative to the page, percent-encoded.
    pub href: String,
}

/// The files found for each (family, case).
#[derive(Clone, Debug, Default)]
pub struct CaseFiles {
    by_case: BTreeMap<(String, String), Vec<FileLink>>,
    /// Where the archives of a case whose logs were copied still are (not copied).
    archives_at: BTreeMap<(String, String), PathBuf>,
}

impl CaseFiles {
    pub fn of(&self, family: &str, case: &str) -> &[FileLink] {
        self.by_case
            .get(&(family.to_string(), case.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The log a cell links to: the last attempt's capture log, else its first log.
    pub fn log(&self, family: &str, case: &str) -> Option<&FileLink> {
        self.last_attempt(family, case, |n| n == "capture.log")
            .or_else(|| self.last_attempt(family, case, |n| n.ends_with(".log")))
    }

    /// Where a case's archives are when its logs were copied (archives never are).
    pub fn archives_at(&self, family: &str, case: &str) -> Option<&Path> {
        self.archives_at
            .get(&(family.to_string(), case.to_string()))
            .map(PathBuf::as_path)
    }

    /// The replay result a cell links to: the last attempt's `replay.json`.
    pub fn replay(&self, family: &str, case: &str) -> Option<&FileLink> {
        self.last_attempt(family, case, |n| n == "replay.json")
    }

    fn last_attempt(
        &self,
        family: &str,
        case: &str,
        want: impl Fn(&str) -> bool,
    ) -> Option<&FileLink> {
        self.of(family, case)
            .iter()
            .filter(|f| want(&f.name))
            .max_by_key(|f| f.attempt)
    }
}

/// A name from a report used as one path component: refused unless it is exactly one
/// normal component (a hostile `results.json` cannot make the page link outside its dir).
fn one_component(s: &str) -> bool {
    let mut c = Path::new(s).components();
    matches!((c.next(), c.next()), (Some(Component::Normal(n)), None) if n == s)
}

/// Finds each case's files next to the `results.json` it came from (`sources`: the path
/// of each `results.json` and its report), copying those outside `out_dir` into it.
pub fn gather(out_dir: &Path, sources: &[(&Path, &RunReport)]) -> Result<CaseFiles, HtmlError> {
    let out = out_dir.canonicalize().map_err(io_err(out_dir))?;
    let mut files = CaseFiles::default();
    for (results_json, report) in sources {
        let Some(dir) = results_json.parent() else {
            continue;
        };
        let Ok(dir) = dir.canonicalize() else {
            continue;
        };
        let in_place = dir.strip_prefix(&out).ok().map(Path::to_path_buf);
        for c in &report.cases {
            if !one_component(&c.case) || !one_component(&c.family) {
                continue;
            }
            let case_dir = dir.join("cases").join(&c.case);
            if !case_dir.is_dir() {
                continue;
            }
            let key = (c.family.clone(), c.case.clone());
            let links = match &in_place {
                Some(rel) => link_in_place(&case_dir, &rel.join("cases").join(&c.case))?,
                None => {
                    let rel = Path::new("cases")
                        .join(RunReport::suite_name(&c.family, &c.shard))
                        .join(&c.case);
                    let copied = copy_case(&case_dir, &out.join(&rel), &rel)?;
                    if has_archive(&case_dir) {
                        files.archives_at.insert(key.clone(), case_dir.clone());
                    }
                    copied
                }
            };
            files.by_case.insert(key, links);
        }
    }
    Ok(files)
}

/// `attempt-N` directories of a case, by N.
fn attempts(case_dir: &Path) -> Result<Vec<(u32, PathBuf)>, HtmlError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(case_dir).map_err(io_err(case_dir))? {
        let e = e.map_err(io_err(case_dir))?;
        let name = e.file_name();
        let n = name
            .to_str()
            .and_then(|s| s.strip_prefix("attempt-"))
            .and_then(|n| n.parse::<u32>().ok());
        if let (Some(n), Ok(t)) = (n, e.file_type()) {
            if t.is_dir() {
                out.push((n, e.path()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The logs and JSON results of an attempt directory (regular files only), by name.
fn attempt_files(dir: &Path) -> Result<Vec<String>, HtmlError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let e = e.map_err(io_err(dir))?;
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let regular = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if regular && (name.ends_with(".log") || name.ends_with(".json")) {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

fn has_archive(case_dir: &Path) -> bool {
    attempts(case_dir)
        .unwrap_or_default()
        .iter()
        .any(|(_, d)| d.join("archive").is_dir())
}

fn link_in_place(case_dir: &Path, rel: &Path) -> Result<Vec<FileLink>, HtmlError> {
    let mut links = Vec::new();
    for (n, dir) in attempts(case_dir)? {
        let attempt_rel = rel.join(format!("attempt-{n}"));
        for name in attempt_files(&dir)? {
            links.push(FileLink {
                attempt: n,
                href: href(&attempt_rel.join(&name)),
                name,
            });
        }
        if dir.join("archive").is_dir() {
            links.push(FileLink {
                attempt: n,
                name: "archive/".into(),
                href: href(&attempt_rel.join("archive")) + "/",
            });
        }
    }
    Ok(links)
}

/// Copies a case's logs and replay JSON to `to` (replacing what an earlier merge left).
fn copy_case(case_dir: &Path, to: &Path, rel: &Path) -> Result<Vec<FileLink>, HtmlError> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(io_err(to))?;
    }
    let mut links = Vec::new();
    for (n, dir) in attempts(case_dir)? {
        let names = attempt_files(&dir)?;
        if names.is_empty() {
            continue;
        }
        let attempt = format!("attempt-{n}");
        let dest = to.join(&attempt);
        std::fs::create_dir_all(&dest).map_err(io_err(&dest))?;
        for name in names {
            copy_tail(&dir.join(&name), &dest.join(&name))?;
            links.push(FileLink {
                attempt: n,
                href: href(&rel.join(&attempt).join(&name)),
                name,
            });
        }
    }
    Ok(links)
}

/// Copies `from`, or only its last `COPY_LIMIT_BYTES` after a line saying so.
fn copy_tail(from: &Path, to: &Path) -> Result<(), HtmlError> {
    let mut f = std::fs::File::open(from).map_err(io_err(from))?;
    let len = f.metadata().map_err(io_err(from))?.len();
    let mut data = Vec::new();
    if len > COPY_LIMIT_BYTES {
        let _ = writeln!(
            Buf(&mut data),
            "[hrr-harness report merge: the first {} of {len} bytes are left out; {} has them all]",
            len - COPY_LIMIT_BYTES,
            from.display()
        );
        f.seek(SeekFrom::Start(len - COPY_LIMIT_BYTES))
            .map_err(io_err(from))?;
    }
    f.take(COPY_LIMIT_BYTES)
        .read_to_end(&mut data)
        .map_err(io_err(from))?;
    std::fs::write(to, data).map_err(io_err(to))
}

/// `fmt::Write` into a byte vector.
struct Buf<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A relative path as a URL path: each component percent-encoded, joined with `/`.
fn href(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(percent(&s.to_string_lossy())),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn percent(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}
