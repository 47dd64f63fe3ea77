//! Archive cases' packed archives named by URL: fetched once into the runner's archive
//! cache (`HRR_HARNESS_ARCHIVE_CACHE`, else `$XDG_CACHE_HOME/hrr-harness/archives`, else
//! `~/.cache/hrr-harness/archives`), each kept under its SHA-256 (`<sha256>.hrrz`), so
//! every later run of any case naming it reads it from disk. A download is checked
//! against the SHA-256 the matrix declares before it enters the cache: a mismatch leaves
//! nothing there. One network step (the response's head, one chunk of the body) may take
//! `STEP_TIMEOUT`; a server that errs (5xx) or times out is tried again, three tries in
//! all; a body over `MAX_BYTES` is refused.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use http_body_util::BodyExt;

/// How long one network step may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest archive fetched.
pub const MAX_BYTES: u64 = 16 << 30;
const TRIES: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum ArchiveFetchError {
    #[error("the archive cache {}: {source} (set HRR_HARNESS_ARCHIVE_CACHE to a directory of yours)", path.display())]
    Cache {
        path: PathBuf,
        source: hrr_archive::ArchiveError,
    },
    #[error("fetching {url}: {why}")]
    Download { url: String, why: String },
    #[error("fetching {url}: no answer within {} s ({tries} tries)", after.as_secs())]
    TimedOut {
        url: String,
        after: Duration,
        tries: u32,
    },
    #[error("fetching {url}: more than {limit} bytes: refused")]
    TooLarge { url: String, limit: u64 },
    #[error("fetching {url}: its SHA-256 is {found}, the matrix declares {expected}: not cached, not replayed")]
    Mismatch {
        url: String,
        expected: String,
        found: String,
    },
}

/// The cache directory, from the environment.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("HRR_HARNESS_ARCHIVE_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("hrr-harness").join("archives")
}

/// The cached copy of `url`'s archive, fetched if the cache lacks it (or holds a copy
/// that no longer hashes to `sha256`).
pub fn fetch(url: &str, sha256: &str) -> Result<PathBuf, ArchiveFetchError> {
    fetch_into(&cache_dir(), url, sha256, STEP_TIMEOUT)
}

fn fetch_into(
    cache: &Path,
    url: &str,
    sha256: &str,
    timeout: Duration,
) -> Result<PathBuf, ArchiveFetchError> {
    let cache_err = |source| ArchiveFetchError::Cache {
        path: cache.to_path_buf(),
        source,
    };
    hrr_archive::safefs::ensure_dir(cache).map_err(cache_err)?;
    let dest = cache.join(format!("{sha256}.hrrz"));
    if hrr_archive::pack::file_sha256(&dest).is_ok_and(|h| h == sha256) {
        return Ok(dest);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ArchiveFetchError::Download {
            url: url.into(),
            why: format!("cannot start the HTTP client: {e}"),
        })?;
    let mut tried = 0;
    loop {
        tried += 1;
        let mut hasher = Sha256Sink::default();
        let written = hrr_archive::safefs::write_atomic_with(&dest, true, |f, tmp| {
            let got = rt.block_on(download(url, timeout, f, &mut hasher));
            got.map_err(|e| hrr_archive::ArchiveError::invalid(tmp, e.to_string()))
        });
        match (written, hasher.error.take()) {
            (Ok(()), _) => {
                let found = hasher.hex();
                if found != sha256 {
                    let _ = std::fs::remove_file(&dest);
                    return Err(ArchiveFetchError::Mismatch {
                        url: url.into(),
                        expected: sha256.into(),
                        found,
                    });
                }
                return Ok(dest);
            }
            (Err(_), Some(e)) if tried < TRIES && e.transient() => {
                std::thread::sleep(e.backoff(tried));
            }
            (Err(_), Some(Step::RateLimited { status, wait })) => {
                return Err(ArchiveFetchError::Download {
                    url: url.into(),
                    why: format!(
                        "rate-limited (answer {status}); the server asks to wait {} s",
                        wait.as_secs()
                    ),
                })
            }
            (Err(_), Some(Step::TimedOut)) => {
                return Err(ArchiveFetchError::TimedOut {
                    url: url.into(),
                    after: timeout,
                    tries: tried,
                })
            }
            (Err(_), Some(Step::TooLarge)) => {
                return Err(ArchiveFetchError::TooLarge {
                    url: url.into(),
                    limit: MAX_BYTES,
                })
            }
            (Err(_), Some(Step::Failed { why, .. })) => {
                return Err(ArchiveFetchError::Download {
                    url: url.into(),
                    why,
                })
            }
            (Err(e), None) => return Err(cache_err(e)),
        }
    }
}

/// What went wrong in one try, kept beside the bytes' hash.
#[derive(Debug)]
enum Step {
    TimedOut,
    TooLarge,
    Failed {
        why: String,
        transient: bool,
    },
    /// A rate limit (429, or 403 with none left) asking to wait this long.
    RateLimited {
        status: u16,
        wait: Duration,
    },
}

/// The longest rate-limit wait honoured before giving up.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

impl Step {
    fn transient(&self) -> bool {
        match self {
            Step::TimedOut
            | Step::Failed {
                transient: true, ..
            } => true,
            Step::RateLimited { wait, .. } => *wait <= MAX_RATE_LIMIT_WAIT,
            _ => false,
        }
    }

    /// How long to wait before the next try after try `tried` failed so.
    fn backoff(&self, tried: u32) -> Duration {
        match self {
            Step::RateLimited { wait, .. } => *wait,
            _ => Duration::from_secs(1 << (tried - 1)),
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Step::TimedOut => f.write_str("timed out"),
            Step::TooLarge => f.write_str("too large"),
            Step::Failed { why, .. } => f.write_str(why),
            Step::RateLimited { status, wait } => {
                write!(f, "rate-limited ({status}, wait {} s)", wait.as_secs())
            }
        }
    }
}

/// The SHA-256 of what was written, and the error of the try.
#[derive(Default)]
struct Sha256Sink {
    hash: sha2::Sha256,
    error: Option<Step>,
}

impl Sha256Sink {
    fn hex(&self) -> String {
        use sha2::Digest;
        self.hash
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

async fn download(
    url: &str,
    timeout: Duration,
    mut file: &std::fs::File,
    sink: &mut Sha256Sink,
) -> Result<(), Step> {
    use sha2::Digest;
    let r = go(url, timeout, &mut file, &mut sink.hash).await;
    if let Err(e) = &r {
        sink.error = Some(match e {
            Step::TimedOut => Step::TimedOut,
            Step::TooLarge => Step::TooLarge,
            Step::Failed { why, transient } => Step::Failed {
                why: why.clone(),
                transient: *transient,
            },
            Step::RateLimited { status, wait } => Step::RateLimited {
                status: *status,
                wait: *wait,
            },
        });
    }
    // A failed try's partial bytes are discarded with its file.
    if r.is_err() {
        sink.hash = sha2::Sha256::new();
    }
    r
}

async fn go(
    url: &str,
    timeout: Duration,
    file: &mut &std::fs::File,
    hash: &mut sha2::Sha256,
) -> Result<(), Step> {
    use sha2::Digest;
    async fn within<T>(
        timeout: Duration,
        fut: impl std::future::Future<Output = T>,
    ) -> Result<T, Step> {
        tokio::time::timeout(timeout, fut)
            .await
            .map_err(|_| Step::TimedOut)
    }
    let client = octocrab::Octocrab::builder()
        .build()
        .map_err(|e| Step::Failed {
            why: e.to_string(),
            transient: false,
        })?;
    let failed = |e: octocrab::Error| Step::Failed {
        why: e.to_string(),
        transient: false,
    };
    let mut response = within(timeout, client._get(url)).await?.map_err(failed)?;
    // One redirect (a release asset's storage host); no token is ever sent.
    if response.status().is_redirection() {
        let location = response
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| Step::Failed {
                why: "a redirect without a location".into(),
                transient: false,
            })?;
        response = within(timeout, client._get(location.as_str()))
            .await?
            .map_err(failed)?;
    }
    let status = response.status();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if let Some(wait) = crate::fetch::rate_limit_wait(status.as_u16(), response.headers(), now) {
        return Err(Step::RateLimited {
            status: status.as_u16(),
            wait,
        });
    }
    if !status.is_success() {
        return Err(Step::Failed {
            why: format!("the server answered {status}"),
            transient: status.is_server_error() || status.as_u16() == 429,
        });
    }
    let mut body = response.into_body();
    let mut received = 0u64;
    while let Some(frame) = within(timeout, body.frame()).await? {
        let frame = frame.map_err(failed)?;
        if let Ok(data) = frame.into_data() {
            received += data.len() as u64;
            if received > MAX_BYTES {
                return Err(Step::TooLarge);
            }
            hash.update(&data);
            file.write_all(&data).map_err(|e| Step::Failed {
                why: format!("writing the cache: {e}"),
                transient: false,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn sha(b: &[u8]) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    }

    fn server() -> (tokio::runtime::Runtime, MockServer) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let s = rt.block_on(MockServer::start());
        (rt, s)
    }

    #[test]
    fn an_archive_is_fetched_once_and_checked_against_its_sha256() {
        let (rt, s) = server();
        let body = b"packed archive bytes".repeat(1000);
        rt.block_on(
            Mock::given(method("GET"))
                .and(path("/a.hrrz"))
                .respond_with(ResponseTemplate::new(200).set_body_bytes(body.clone()))
                // Once for the right SHA-256 (then cached), once for the wrong one.
                .expect(2)
                .mount(&s),
        );
        let cache = tempfile::tempdir().unwrap();
        let url = format!("{}/a.hrrz", s.uri());
        let want = sha(&body);
        let got = fetch_into(cache.path(), &url, &want, Duration::from_secs(5)).unwrap();
        assert_eq!(std::fs::read(&got).unwrap(), body);
        assert_eq!(got, cache.path().join(format!("{want}.hrrz")));
        // The second time from the cache: the server is asked once in all.
        let again = fetch_into(cache.path(), &url, &want, Duration::from_secs(5)).unwrap();
        assert_eq!(again, got);
        // Another SHA-256 for the same bytes: fetched, refused, nothing cached.
        let other = "0".repeat(64);
        let e = fetch_into(cache.path(), &url, &other, Duration::from_secs(5)).unwrap_err();
        assert!(matches!(e, ArchiveFetchError::Mismatch { .. }), "{e}");
        assert!(e.to_string().contains(&want), "{e}");
        assert!(!cache.path().join(format!("{other}.hrrz")).exists());
    }

    #[test]
    fn a_rate_limit_is_waited_out_as_the_server_asks() {
        let (rt, s) = server();
        let body = b"bytes".to_vec();
        rt.block_on(async {
            Mock::given(path("/limited.hrrz"))
                .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
                .up_to_n_times(1)
                .expect(1)
                .mount(&s)
                .await;
            Mock::given(path("/limited.hrrz"))
                .respond_with(ResponseTemplate::new(200).set_body_bytes(body.clone()))
                .expect(1)
                .mount(&s)
                .await;
        });
        let cache = tempfile::tempdir().unwrap();
        let start = std::time::Instant::now();
        let got = fetch_into(
            cache.path(),
            &format!("{}/limited.hrrz", s.uri()),
            &sha(&body),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(std::fs::read(got).unwrap(), body);
        assert!(start.elapsed() >= Duration::from_secs(1));
        rt.block_on(s.verify());
    }

    #[test]
    fn errors_name_the_url_and_what_the_server_did() {
        let (rt, s) = server();
        rt.block_on(async {
            Mock::given(path("/missing.hrrz"))
                .respond_with(ResponseTemplate::new(404))
                .expect(1)
                .mount(&s)
                .await;
            Mock::given(path("/flaky.hrrz"))
                .respond_with(ResponseTemplate::new(502))
                .expect(3)
                .mount(&s)
                .await;
            Mock::given(path("/stalled.hrrz"))
                .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
                .mount(&s)
                .await;
        });
        let cache = tempfile::tempdir().unwrap();
        let sha = "1".repeat(64);
        let e = fetch_into(
            cache.path(),
            &format!("{}/missing.hrrz", s.uri()),
            &sha,
            Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(e.to_string().contains("404"), "{e}");
        let e = fetch_into(
            cache.path(),
            &format!("{}/flaky.hrrz", s.uri()),
            &sha,
            Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(e.to_string().contains("502"), "{e}");
        let start = std::time::Instant::now();
        let e = fetch_into(
            cache.path(),
            &format!("{}/stalled.hrrz", s.uri()),
            &sha,
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(
            matches!(e, ArchiveFetchError::TimedOut { tries: 3, .. }),
            "{e}"
        );
        assert!(start.elapsed() < Duration::from_secs(20));
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
        rt.block_on(s.verify());
    }
}
