//! `hrr-harness report fetch`: a workflow run's result artifacts brought to this machine.
//! Every request goes through one path (`get`): the response's head and each chunk of its
//! body within `Request::timeout` (a server that never answers, or stops sending, is
//! named), GitHub's rate limit read from the answer's headers (`retry-after`,
//! `x-ratelimit-reset` with `x-ratelimit-remaining: 0`, on a 429 or 403) and waited out up
//! to a minute, a server error (5xx), 429 or timeout tried again (`TRIES`, 1 s then 2 s
//! apart). The artifacts are listed 100 a page (`?per_page=100&page=N`, each page its own
//! tries) until `total_count` are in; each zip is streamed to
//! disk frame by frame (so a progress bar can follow it) from the artifact's download
//! endpoint and its one redirect, then unpacked, refusing any entry that could land
//! outside the artifact's directory (an absolute path, `..`, a backslash, a symbolic link)
//! and bounding the entries and bytes unpacked. A zip is unpacked into a hidden staging
//! directory that is renamed into place only when every entry is out, so a refused or
//! broken artifact leaves nothing behind. Merging is the caller's (`report merge`'s code),
//! and so is Ctrl-C (it drops the fetch's future: nothing is waited for). The token is
//! never printed.

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use http_body_util::BodyExt;
use octocrab::Octocrab;
use serde::Deserialize;

/// Where to fetch from and what.
#[derive(Clone, Debug)]
pub struct Request {
    pub api_url: String,
    pub owner: String,
    pub repo: String,
    pub run: u64,
    /// Artifact name globs (`hrr-results-*`); an artifact matching none is not fetched.
    pub patterns: Vec<String>,
    /// Each artifact lands in `dest/<artifact name>/` (replacing an earlier fetch).
    pub dest: PathBuf,
    pub limits: Limits,
    /// How long one network step may take (a listing page, a response's head, one chunk
    /// of a body) before it is given up: a server that never answers is named, never
    /// waited for.
    pub timeout: Duration,
}

/// The tries of one idempotent request (a listing page, a download) that timed out, got a
/// server error or was rate-limited, with 1 s, then 2 s (or what the rate limit asks)
/// between them.
const TRIES: u32 = 3;

/// Artifacts per listing page: GitHub's most.
const PER_PAGE: usize = 100;

/// The most bytes one listing page may be (100 artifacts are some 100 KB).
const MAX_PAGE_BYTES: usize = 16 << 20;

/// An artifact as GitHub lists it (the fields used; the others are ignored).
#[derive(Clone, Debug, Deserialize)]
pub struct Artifact {
    pub id: u64,
    pub name: String,
    pub size_in_bytes: u64,
    #[serde(default)]
    pub expired: bool,
}

/// One page of `GET /repos/{owner}/{repo}/actions/runs/{run}/artifacts`.
#[derive(Debug, Deserialize)]
struct ArtifactPage {
    total_count: u64,
    artifacts: Vec<Artifact>,
}

/// Bounds on what one artifact may bring: its zip's size, the bytes it unpacks to and its
/// number of entries.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: u64,
    pub max_entries: usize,
}

impl Default for Limits {
    /// A results artifact with failing cases' archives can be several GB (a copy-heavy
    /// case's archive is 5 GB); 64 GiB and a million entries leave room for that while
    /// still stopping a zip bomb.
    fn default() -> Self {
        Limits {
            max_bytes: 64 << 30,
            max_entries: 1_000_000,
        }
    }
}

/// What the caller shows while fetching.
#[derive(Debug)]
pub enum Event<'a> {
    /// The artifacts that will be fetched, with their sizes as GitHub lists them.
    Listed {
        artifacts: &'a [(String, u64)],
    },
    Downloading {
        name: &'a str,
        size: u64,
    },
    /// Bytes received so far for the current artifact.
    Received {
        bytes: u64,
    },
    /// A try failed with `why` (a timeout, a server error, a rate limit); the next comes
    /// after `wait`.
    Retrying {
        why: &'a str,
        wait: Duration,
    },
    Unpacked(&'a Fetched),
}

/// One artifact on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    pub name: String,
    pub dir: PathBuf,
    pub zip_bytes: u64,
    pub files: usize,
    pub bytes: u64,
}

/// Why an artifact zip was not unpacked.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("not a readable zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("entry `{0}` would land outside the artifact's directory (an absolute path, `..`, a backslash or an empty name): refused")]
    UnsafePath(String),
    #[error("entry `{0}` is a symbolic link: refused")]
    Symlink(String),
    #[error("more than {0} entries: refused")]
    TooManyEntries(usize),
    #[error("unpacks to more than {0} bytes: refused")]
    TooLarge(u64),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why the run's artifacts could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("--api-url {url}: {}", answer(source))]
    ApiUrl {
        url: String,
        source: octocrab::Error,
    },
    #[error("GitHub client: {}", answer(.0))]
    Client(#[source] octocrab::Error),
    #[error("listing the artifacts of run {run}: {}", answer(source))]
    List { run: u64, source: octocrab::Error },
    #[error("listing the artifacts of run {run}: page {page} is not an artifact list: {why}")]
    BadListing { run: u64, page: u32, why: String },
    #[error("run {run} has no artifact matching {}{}", patterns.join(" or "), available_text(available))]
    NoneMatching {
        run: u64,
        patterns: Vec<String>,
        available: Vec<String>,
    },
    #[error("artifact `{name}` of run {run} has expired (GitHub deleted it at the end of its retention period)")]
    Expired { run: u64, name: String },
    #[error("artifact name `{0}` is not a plain file name: refused")]
    BadName(String),
    #[error("downloading artifact `{name}` (id {id}): {}", answer(source))]
    Download {
        name: String,
        id: u64,
        source: octocrab::Error,
    },
    #[error("{what}: no answer within {} s (tried {tries} times)", after.as_secs_f64())]
    TimedOut {
        what: String,
        after: Duration,
        tries: u32,
    },
    /// GitHub's rate limit (429, or 403 with no requests left): `wait` is what its
    /// `retry-after` or `x-ratelimit-reset` header asks for; `what` the request
    /// ("listing the artifacts of run N", "downloading artifact `NAME`").
    #[error("{what}: rate-limited by GitHub (answer {status}); it asks to wait {} s", wait.as_secs())]
    RateLimited {
        what: String,
        status: u16,
        wait: Duration,
    },
    #[error("downloading artifact `{name}`: the redirect's Location is not a URL")]
    BadRedirect { name: String },
    #[error("downloading artifact `{name}`: more than {limit} bytes: refused")]
    DownloadTooLarge { name: String, limit: u64 },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("artifact `{name}`: {source}")]
    Unpack { name: String, source: UnpackError },
}

fn available_text(names: &[String]) -> String {
    if names.is_empty() {
        " (it has no artifacts: none were uploaded, or they expired)".into()
    } else {
        format!(" (it has: {})", names.join(", "))
    }
}

/// GitHub's own answer (status and message) when there is one, else the client's error.
fn answer(e: &octocrab::Error) -> String {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            format!("GitHub answered {}: {}", source.status_code, source.message)
        }
        other => other.to_string(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError + '_ {
    move |source| FetchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether `e` may go away on its own: a timeout, or the server's error (5xx) or rate
/// limit (429) on an idempotent request.
fn transient(e: &FetchError) -> bool {
    let status = |source: &octocrab::Error| match source {
        octocrab::Error::GitHub { source, .. } => {
            let s = source.status_code.as_u16();
            s >= 500 || s == 429
        }
        _ => false,
    };
    match e {
        FetchError::TimedOut { .. } => true,
        FetchError::List { source, .. } | FetchError::Download { source, .. } => status(source),
        _ => false,
    }
}

/// The longest rate-limit wait honoured before giving up (the error says how long GitHub
/// asked for).
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// How long a rate-limited answer asks to wait: `retry-after` (seconds), else
/// `x-ratelimit-reset` (a Unix time) when no request is left, else a minute; None when
/// the answer is not a rate limit (pure, but for the clock `now_unix`).
pub fn rate_limit_wait(status: u16, headers: &http::HeaderMap, now_unix: u64) -> Option<Duration> {
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).map(str::trim);
    let exhausted = header("x-ratelimit-remaining") == Some("0");
    if !(status == 429 || (status == 403 && (exhausted || header("retry-after").is_some()))) {
        return None;
    }
    if let Some(s) = header("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(s));
    }
    if let Some(reset) = header("x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(reset.saturating_sub(now_unix)));
    }
    Some(Duration::from_secs(60))
}

/// After try number `tried` failed with `e`: how long to wait before the next (1 s, then
/// 2 s; a rate limit: what GitHub asked for, up to `MAX_RATE_LIMIT_WAIT`) while `e` is
/// transient and tries are left, else the error to give up with (a timeout says how many
/// tries it took).
fn next_try(e: FetchError, tried: u32) -> Result<Duration, FetchError> {
    match e {
        FetchError::RateLimited { wait, .. } if tried < TRIES && wait <= MAX_RATE_LIMIT_WAIT => {
            Ok(wait)
        }
        e if tried < TRIES && transient(&e) => Ok(Duration::from_secs(1 << (tried - 1))),
        FetchError::TimedOut { what, after, .. } => Err(FetchError::TimedOut {
            what,
            after,
            tries: tried,
        }),
        e => Err(e),
    }
}

/// After try number `tried` failed with `e`: the wait before the next, told through
/// `on_event`, or the error to give up with (`next_try`).
fn retry_after(
    e: FetchError,
    tried: u32,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Duration, FetchError> {
    let why = match &e {
        FetchError::TimedOut { what, after, .. } => {
            format!("{what}: no answer within {} s", after.as_secs_f64())
        }
        e => e.to_string(),
    };
    let wait = next_try(e, tried)?;
    on_event(Event::Retrying { why: &why, wait });
    Ok(wait)
}

/// `fut` within `req.timeout`, else a `TimedOut` naming `what`.
async fn within<T>(
    req: &Request,
    what: impl FnOnce() -> String,
    fut: impl std::future::Future<Output = T>,
) -> Result<T, FetchError> {
    tokio::time::timeout(req.timeout, fut)
        .await
        .map_err(|_| FetchError::TimedOut {
            what: what(),
            after: req.timeout,
            tries: 1,
        })
}

/// Fetches and unpacks every artifact of the run that matches the patterns, in name order.
pub async fn fetch(
    req: &Request,
    token: &str,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<Fetched>, FetchError> {
    let gh = Octocrab::builder()
        .base_uri(req.api_url.as_str())
        .map_err(|source| FetchError::ApiUrl {
            url: req.api_url.clone(),
            source,
        })?
        .personal_token(token.to_string())
        .build()
        .map_err(FetchError::Client)?;
    let all = list(&gh, req, on_event).await?;
    let mut wanted: Vec<&Artifact> = all
        .iter()
        .filter(|a| {
            req.patterns
                .iter()
                .any(|p| hrr_matrix::glob::matches(p, &a.name))
        })
        .collect();
    wanted.sort_by(|a, b| a.name.cmp(&b.name));
    if wanted.is_empty() {
        let mut available: Vec<String> = all.iter().map(|a| a.name.clone()).collect();
        available.sort();
        return Err(FetchError::NoneMatching {
            run: req.run,
            patterns: req.patterns.clone(),
            available,
        });
    }
    for a in &wanted {
        if !plain_name(&a.name) {
            return Err(FetchError::BadName(a.name.clone()));
        }
        if a.expired {
            return Err(FetchError::Expired {
                run: req.run,
                name: a.name.clone(),
            });
        }
    }
    let listed: Vec<(String, u64)> = wanted
        .iter()
        .map(|a| (a.name.clone(), a.size_in_bytes))
        .collect();
    on_event(Event::Listed { artifacts: &listed });
    std::fs::create_dir_all(&req.dest).map_err(io(&req.dest))?;
    let mut out = Vec::new();
    for a in wanted {
        let zip = req.dest.join(format!(".{}.zip.part", a.name));
        let mut tried = 0;
        let result = loop {
            tried += 1;
            match download(&gh, req, a, &zip, on_event).await {
                Ok(bytes) => break Ok(bytes),
                Err(e) => match retry_after(e, tried, on_event) {
                    Ok(wait) => tokio::time::sleep(wait).await,
                    Err(e) => break Err(e),
                },
            }
        };
        let fetched = result.and_then(|zip_bytes| {
            let dir = req.dest.join(&a.name);
            let (files, bytes) =
                unpack_into(&zip, &dir, &req.limits).map_err(|source| FetchError::Unpack {
                    name: a.name.clone(),
                    source,
                })?;
            Ok(Fetched {
                name: a.name.clone(),
                dir,
                zip_bytes,
                files,
                bytes,
            })
        });
        let _ = std::fs::remove_file(&zip);
        let fetched = fetched?;
        on_event(Event::Unpacked(&fetched));
        out.push(fetched);
    }
    Ok(out)
}

/// One GET (`uri`: an API route or a full URL) within `req.timeout`, the one path of every
/// request `report fetch` makes: a redirect as it came when `redirect` allows one, a rate
/// limit as `RateLimited` (naming `what`), any other error answer as GitHub's error through
/// `err`; else the successful response, its body still to read (each chunk within
/// `req.timeout` too: `within`).
async fn get(
    gh: &Octocrab,
    req: &Request,
    uri: String,
    redirect: bool,
    what: &dyn Fn() -> String,
    err: &dyn Fn(octocrab::Error) -> FetchError,
) -> Result<
    http::Response<impl BodyExt<Data: AsRef<[u8]>, Error = octocrab::Error> + Unpin>,
    FetchError,
> {
    let response = within(req, what, gh._get(uri)).await?.map_err(err)?;
    if redirect && response.status().is_redirection() {
        return Ok(response);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let status = response.status().as_u16();
    if let Some(wait) = rate_limit_wait(status, response.headers(), now) {
        return Err(FetchError::RateLimited {
            what: what(),
            status,
            wait,
        });
    }
    within(req, what, octocrab::map_github_error(response))
        .await?
        .map_err(err)
}

/// Every artifact of the run: page after page of `PER_PAGE`, each page tried as
/// `next_try` says, until `total_count` are listed or a page comes back empty.
async fn list(
    gh: &Octocrab,
    req: &Request,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<Artifact>, FetchError> {
    let mut all: Vec<Artifact> = Vec::new();
    for page in 1u32.. {
        let mut tried = 0;
        let p = loop {
            tried += 1;
            match list_page(gh, req, page).await {
                Ok(p) => break p,
                Err(e) => tokio::time::sleep(retry_after(e, tried, on_event)?).await,
            }
        };
        let n = p.artifacts.len();
        all.extend(p.artifacts);
        if n == 0 || all.len() as u64 >= p.total_count {
            break;
        }
    }
    Ok(all)
}

/// Page `page` of the run's artifacts.
async fn list_page(gh: &Octocrab, req: &Request, page: u32) -> Result<ArtifactPage, FetchError> {
    let what = || format!("listing the artifacts of run {}", req.run);
    let err = |source| FetchError::List {
        run: req.run,
        source,
    };
    let route = format!(
        "/repos/{}/{}/actions/runs/{}/artifacts?per_page={PER_PAGE}&page={page}",
        req.owner, req.repo, req.run
    );
    let response = get(gh, req, route, false, &what, &err).await?;
    let bad = |why: String| FetchError::BadListing {
        run: req.run,
        page,
        why,
    };
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = within(req, what, body.frame()).await? {
        if let Ok(data) = frame.map_err(err)?.into_data() {
            bytes.extend_from_slice(data.as_ref());
            if bytes.len() > MAX_PAGE_BYTES {
                return Err(bad(format!("over {MAX_PAGE_BYTES} bytes")));
            }
        }
    }
    serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))
}

/// Streams an artifact's zip into `to`; its size in bytes.
async fn download(
    gh: &Octocrab,
    req: &Request,
    a: &Artifact,
    to: &Path,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<u64, FetchError> {
    let err = |source| FetchError::Download {
        name: a.name.clone(),
        id: a.id,
        source,
    };
    on_event(Event::Downloading {
        name: &a.name,
        size: a.size_in_bytes,
    });
    // octocrab's `download_artifact` collects the whole body into memory and returns an
    // error page as if it were the zip; this is the same request, streamed and checked.
    let route = format!(
        "/repos/{}/{}/actions/artifacts/{}/zip",
        req.owner, req.repo, a.id
    );
    let what = || format!("downloading artifact `{}`", a.name);
    let mut response = get(gh, req, route, true, &what, &err).await?;
    // GitHub answers 302 with a short-lived storage URL; octocrab sends the token only to
    // GitHub's API host, never to the storage host.
    if response.status().is_redirection() {
        let location = response
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| FetchError::BadRedirect {
                name: a.name.clone(),
            })?;
        response = get(gh, req, location, false, &what, &err).await?;
    }
    let mut body = response.into_body();
    let mut file = std::fs::File::create(to).map_err(io(to))?;
    let mut received = 0u64;
    while let Some(frame) = within(req, what, body.frame()).await? {
        let frame = frame.map_err(err)?;
        if let Ok(data) = frame.into_data() {
            received += data.as_ref().len() as u64;
            if received > req.limits.max_bytes {
                return Err(FetchError::DownloadTooLarge {
                    name: a.name.clone(),
                    limit: req.limits.max_bytes,
                });
            }
            file.write_all(data.as_ref()).map_err(io(to))?;
            on_event(Event::Received { bytes: received });
        }
    }
    file.sync_all().map_err(io(to))?;
    Ok(received)
}

/// Whether an artifact name is one plain path component.
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
}

/// A zip entry's name as a relative path inside the artifact, or `None` when it could
/// land anywhere else: absolute, `..`, a backslash (a Windows separator), a NUL, empty.
fn safe_relative(name: &str) -> Option<PathBuf> {
    if name.starts_with('/') || name.contains(['\\', '\0']) {
        return None;
    }
    let mut p = PathBuf::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            c => p.push(c),
        }
    }
    (!p.as_os_str().is_empty()).then_some(p)
}

/// Unpacks `zip` into `dir` (replacing it) through a staging directory beside it; the
/// number of files and bytes written.
pub fn unpack_into(zip: &Path, dir: &Path, limits: &Limits) -> Result<(usize, u64), UnpackError> {
    let staging = dir.with_file_name(format!(
        ".{}.partial",
        dir.file_name().unwrap_or_default().to_string_lossy()
    ));
    let uio = |path: &Path| {
        let path = path.to_path_buf();
        move |source| UnpackError::Io { path, source }
    };
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(uio(&staging))?;
    }
    std::fs::create_dir_all(&staging).map_err(uio(&staging))?;
    let unpacked = unpack(zip, &staging, limits);
    if unpacked.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        return unpacked;
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(uio(dir))?;
    }
    std::fs::rename(&staging, dir).map_err(uio(dir))?;
    unpacked
}

/// Unpacks `zip` into the existing, empty `dir`. Every entry is checked before anything
/// is written; sizes are checked again while writing (a header may lie).
pub fn unpack(zip: &Path, dir: &Path, limits: &Limits) -> Result<(usize, u64), UnpackError> {
    let uio = |path: &Path| {
        let path = path.to_path_buf();
        move |source| UnpackError::Io { path, source }
    };
    let f = std::fs::File::open(zip).map_err(uio(zip))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(f))?;
    if archive.len() > limits.max_entries {
        return Err(UnpackError::TooManyEntries(limits.max_entries));
    }
    let mut declared = 0u64;
    for i in 0..archive.len() {
        let e = archive.by_index_raw(i)?;
        let name = String::from_utf8_lossy(e.name_raw()).into_owned();
        if safe_relative(&name).is_none() {
            return Err(UnpackError::UnsafePath(name));
        }
        if e.is_symlink() {
            return Err(UnpackError::Symlink(name));
        }
        declared = declared.saturating_add(e.size());
        if declared > limits.max_bytes {
            return Err(UnpackError::TooLarge(limits.max_bytes));
        }
    }
    let (mut files, mut written) = (0usize, 0u64);
    for i in 0..archive.len() {
        let mut e = archive.by_index(i)?;
        let name = String::from_utf8_lossy(e.name_raw()).into_owned();
        let rel = safe_relative(&name).ok_or_else(|| UnpackError::UnsafePath(name.clone()))?;
        let path = dir.join(&rel);
        if e.is_dir() {
            std::fs::create_dir_all(&path).map_err(uio(&path))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(uio(parent))?;
        }
        // create_new: an entry named twice is an error, not a silent overwrite.
        let mut out = std::fs::File::create_new(&path).map_err(uio(&path))?;
        let room = limits.max_bytes - written;
        let n = std::io::copy(&mut (&mut e).take(room + 1), &mut out).map_err(uio(&path))?;
        if n > room {
            return Err(UnpackError::TooLarge(limits.max_bytes));
        }
        written += n;
        files += 1;
    }
    Ok((files, written))
}

#[cfg(test)]
mod tests;
