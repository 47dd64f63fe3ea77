//! The `unchanged` check, run for every GPU case: capture never changes what a program
//! does. The captured run must end as the native run does (exit code or signal) and
//! print the same standard output, line for line; a line the case declares as varying
//! from run to run (`stdout_varies` globs: a timing, say) is compared by its pattern.
//!
//! The native run is made once per build of a case and kept beside the build
//! (`native/CASE.json` and `native/CASE.stdout`), keyed by the binary's size and
//! modification time and the family's environment: retries and re-runs reuse it. The
//! cache is read as untrusted input: anything malformed, oversized or stale means a new
//! native run, never a verdict.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use hrr_matrix::glob;
use hrr_reports::CheckResult;
use serde::{Deserialize, Serialize};

use crate::process::{Exit, Stdout, STDOUT_KEEP};

/// One run of a case's program as the check sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub exit: Exit,
    pub stdout: Stdout,
}

/// How many characters of a differing line the check's detail quotes.
const QUOTE: usize = 160;

fn quote(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let mut q: String = s.chars().take(QUOTE).collect();
    if s.chars().count() > QUOTE {
        q.push('…');
    }
    format!("{q:?}")
}

/// Whether two lines are the same for the check: equal, or both matching one varying
/// pattern.
fn same_line(a: &[u8], b: &[u8], varies: &[String]) -> bool {
    if a == b {
        return true;
    }
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    varies
        .iter()
        .any(|p| glob::matches(p, &a) && glob::matches(p, &b))
}

/// The check, from the two runs (pure).
pub fn compare(captured: &Seen, native: &Seen, varies: &[String]) -> CheckResult {
    let fail = |detail: String| CheckResult {
        name: "unchanged".into(),
        passed: false,
        detail,
    };
    if captured.exit != native.exit {
        return fail(format!(
            "capture changed how the program ends: {} under capture, {} natively",
            captured.exit.describe(),
            native.exit.describe()
        ));
    }
    let lines = |s: &Stdout| -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = s.head.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        // A final newline ends the last line rather than starting an empty one.
        if v.last().is_some_and(Vec::is_empty) {
            v.pop();
        }
        v
    };
    let (c, n) = (lines(&captured.stdout), lines(&native.stdout));
    for i in 0..c.len().max(n.len()) {
        match (c.get(i), n.get(i)) {
            (Some(a), Some(b)) if same_line(a, b, varies) => {}
            (Some(a), Some(b)) => {
                return fail(format!(
                    "capture changed the program's output: stdout line {} is {} under capture, {} natively",
                    i + 1,
                    quote(a),
                    quote(b)
                ))
            }
            (Some(a), None) => {
                return fail(format!(
                    "capture changed the program's output: under capture stdout has a line {} ({}) the native run does not print",
                    i + 1,
                    quote(a)
                ))
            }
            (None, Some(b)) => {
                return fail(format!(
                    "capture changed the program's output: stdout ends after {} line(s) under capture; natively line {} is {}",
                    i,
                    i + 1,
                    quote(b)
                ))
            }
            (None, None) => {}
        }
    }
    if captured.stdout.cut() || native.stdout.cut() {
        if captured.stdout.len != native.stdout.len {
            return fail(format!(
                "capture changed the program's output: {} bytes of stdout under capture, {} natively",
                captured.stdout.len, native.stdout.len
            ));
        }
        return CheckResult {
            name: "unchanged".into(),
            passed: true,
            detail: format!(
                "{} under capture and natively; the first {STDOUT_KEEP} bytes of stdout are the same and both runs printed {} bytes (the rest was not compared)",
                captured.exit.describe(),
                captured.stdout.len
            ),
        };
    }
    CheckResult {
        name: "unchanged".into(),
        passed: true,
        detail: format!(
            "{} under capture and natively, the same {} line(s) of stdout{}",
            captured.exit.describe(),
            c.len(),
            if varies.is_empty() {
                String::new()
            } else {
                format!(" ({} stdout_varies pattern(s))", varies.len())
            }
        ),
    }
}

/// What the cache keeps of a native run, beside its stdout file.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug)]
struct Entry {
    binary_len: u64,
    binary_mtime_ns: u64,
    /// The family's environment and GPU selection the run had, as one string.
    env: String,
    /// `code` or `signal`, with `value`.
    ends_by: String,
    value: i32,
    stdout_len: u64,
}

/// The cache entry of one case's native run in a build.
pub struct NativeCache {
    json: PathBuf,
    stdout: PathBuf,
    key: Option<(u64, u64)>,
    env: String,
}

/// Largest cache JSON read back.
const MAX_ENTRY: u64 = 4096;

impl NativeCache {
    /// `env`: everything about the run's environment that a new build or family would
    /// change, as one string.
    pub fn new(build_dir: &Path, case: &str, binary: &Path, env: String) -> NativeCache {
        let dir = build_dir.join("native");
        let key = std::fs::metadata(binary).ok().and_then(|m| {
            let t = m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
            Some((m.len(), u64::try_from(t.as_nanos()).ok()?))
        });
        NativeCache {
            json: dir.join(format!("{case}.json")),
            stdout: dir.join(format!("{case}.stdout")),
            key,
            env,
        }
    }

    /// The cached run, when there is a valid one for this binary and environment.
    pub fn load(&self) -> Option<Seen> {
        let (len, mtime) = self.key?;
        let mut text = String::new();
        std::fs::File::open(&self.json)
            .ok()?
            .take(MAX_ENTRY)
            .read_to_string(&mut text)
            .ok()?;
        let e: Entry = serde_json::from_str(&text).ok()?;
        if e.binary_len != len || e.binary_mtime_ns != mtime || e.env != self.env {
            return None;
        }
        let exit = match e.ends_by.as_str() {
            "code" => Exit::Code(e.value),
            "signal" => Exit::Signal(e.value),
            _ => return None,
        };
        let mut head = Vec::new();
        std::fs::File::open(&self.stdout)
            .ok()?
            .take(STDOUT_KEEP as u64 + 1)
            .read_to_end(&mut head)
            .ok()?;
        let expect = e.stdout_len.min(STDOUT_KEEP as u64);
        if head.len() as u64 != expect {
            return None;
        }
        Some(Seen {
            exit,
            stdout: Stdout {
                head,
                len: e.stdout_len,
            },
        })
    }

    /// Keeps a native run that ended by itself (a timeout or interruption says nothing
    /// about the program); a failure to write only costs a new run next time.
    pub fn store(&self, seen: &Seen) {
        let Some((binary_len, binary_mtime_ns)) = self.key else {
            return;
        };
        let (ends_by, value) = match seen.exit {
            Exit::Code(c) => ("code", c),
            Exit::Signal(s) => ("signal", s),
            Exit::Timeout | Exit::Interrupted => return,
        };
        let e = Entry {
            binary_len,
            binary_mtime_ns,
            env: self.env.clone(),
            ends_by: ends_by.into(),
            value,
            stdout_len: seen.stdout.len,
        };
        let Some(dir) = self.json.parent() else {
            return;
        };
        let Ok(text) = serde_json::to_string(&e) else {
            return;
        };
        // The stdout first: an entry never points at a stdout file not yet written.
        let _ = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&self.stdout, &seen.stdout.head))
            .and_then(|()| std::fs::write(&self.json, text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(exit: Exit, out: &str) -> Seen {
        Seen {
            exit,
            stdout: Stdout {
                head: out.as_bytes().to_vec(),
                len: out.len() as u64,
            },
        }
    }

    #[test]
    fn the_same_exit_and_output_pass() {
        let a = seen(Exit::Code(0), "x: ok\n");
        let r = compare(&a, &a.clone(), &[]);
        assert!(r.passed, "{}", r.detail);
        assert_eq!(
            r.detail,
            "exit 0 under capture and natively, the same 1 line(s) of stdout"
        );
    }

    #[test]
    fn a_different_exit_fails_naming_both() {
        let r = compare(&seen(Exit::Code(1), ""), &seen(Exit::Code(0), ""), &[]);
        assert!(!r.passed);
        assert_eq!(
            r.detail,
            "capture changed how the program ends: exit 1 under capture, exit 0 natively"
        );
        let r = compare(&seen(Exit::Signal(11), ""), &seen(Exit::Code(0), ""), &[]);
        assert!(r.detail.contains("killed by signal 11"), "{}", r.detail);
    }

    #[test]
    fn a_different_line_fails_quoting_it() {
        let r = compare(
            &seen(Exit::Code(0), "a\nsum 41\n"),
            &seen(Exit::Code(0), "a\nsum 42\n"),
            &[],
        );
        assert!(!r.passed);
        assert_eq!(
            r.detail,
            "capture changed the program's output: stdout line 2 is \"sum 41\" under capture, \"sum 42\" natively"
        );
        let r = compare(
            &seen(Exit::Code(0), "a\n"),
            &seen(Exit::Code(0), "a\nb\n"),
            &[],
        );
        assert!(
            r.detail.contains("ends after 1 line(s) under capture"),
            "{}",
            r.detail
        );
        let r = compare(
            &seen(Exit::Code(0), "a\nb\n"),
            &seen(Exit::Code(0), "a\n"),
            &[],
        );
        assert!(r.detail.contains("a line 2 (\"b\")"), "{}", r.detail);
    }

    #[test]
    fn varying_lines_compare_by_their_pattern_only() {
        let varies = vec!["events: ok (* ms)".to_string()];
        let r = compare(
            &seen(Exit::Code(0), "events: ok (1.250 ms)\n"),
            &seen(Exit::Code(0), "events: ok (0.981 ms)\n"),
            &varies,
        );
        assert!(r.passed, "{}", r.detail);
        // The pattern must match both lines: a changed word still fails.
        let r = compare(
            &seen(Exit::Code(0), "events: FAILED (1.250 ms)\n"),
            &seen(Exit::Code(0), "events: ok (0.981 ms)\n"),
            &varies,
        );
        assert!(!r.passed);
    }

    #[test]
    fn output_past_the_kept_head_compares_by_length() {
        let mut a = seen(Exit::Code(0), "x\n");
        a.stdout.len = STDOUT_KEEP as u64 + 5;
        let mut b = a.clone();
        assert!(compare(&a, &b, &[]).passed);
        b.stdout.len += 1;
        let r = compare(&a, &b, &[]);
        assert!(!r.passed);
        assert!(r.detail.contains("bytes of stdout"), "{}", r.detail);
    }

    #[test]
    fn the_cache_returns_what_it_stored_only_for_the_same_binary_and_env() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("prog");
        std::fs::write(&bin, b"binary").unwrap();
        let c = NativeCache::new(t.path(), "case", &bin, "A=1".into());
        assert!(c.load().is_none());
        let s = seen(Exit::Code(3), "hello\n");
        c.store(&s);
        assert_eq!(c.load(), Some(s.clone()));
        // Another environment: not this entry.
        assert!(NativeCache::new(t.path(), "case", &bin, "A=2".into())
            .load()
            .is_none());
        // A rebuilt binary (another size): stale.
        std::fs::write(&bin, b"binary, rebuilt").unwrap();
        assert!(NativeCache::new(t.path(), "case", &bin, "A=1".into())
            .load()
            .is_none());
        // A timeout is never kept.
        let c = NativeCache::new(t.path(), "other", &bin, String::new());
        c.store(&seen(Exit::Timeout, ""));
        assert!(c.load().is_none());
    }

    #[test]
    fn a_tampered_cache_is_ignored() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("prog");
        std::fs::write(&bin, b"binary").unwrap();
        let c = NativeCache::new(t.path(), "case", &bin, String::new());
        c.store(&seen(Exit::Code(0), "ok\n"));
        // The stdout file no longer has the recorded length.
        std::fs::write(t.path().join("native/case.stdout"), b"ok, but longer\n").unwrap();
        assert!(c.load().is_none());
        // Not JSON, or an unknown ending.
        std::fs::write(t.path().join("native/case.json"), b"{").unwrap();
        assert!(c.load().is_none());
        c.store(&seen(Exit::Code(0), "ok\n"));
        let text = std::fs::read_to_string(t.path().join("native/case.json")).unwrap();
        std::fs::write(
            t.path().join("native/case.json"),
            text.replace("\"code\"", "\"exploded\""),
        )
        .unwrap();
        assert!(c.load().is_none());
    }
}
