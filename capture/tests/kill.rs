//! Killing a capturing program at random moments (issue 11): a program whose threads
//! launch kernels steadily against the stand-in runtime reports, after each launch
//! returns, {thread id, count, time} on a pipe, so what it issued is known however it
//! dies. It is killed with SIGKILL at 50 random moments and with SIGTERM at 50.
//!
//! - SIGTERM loses nothing: every launch a thread reported before the signal was sent is
//!   in the archive (capture's handler writes the buffer, also when the interrupted
//!   thread held it). Launches made while the handler flushes come after the signal:
//!   capture may drop those (the log is closed), and the test counts them apart.
//! - SIGKILL loses at most the last flush interval: each launch missing from the archive
//!   was reported less than an interval (and scheduling slack) before the kill.
//! - Either way the process dies of the signal, and an archive that exists names its
//!   runtime and reads (whole records, contiguous sequence ids).

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hrr_archive::api::semantic;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

const RUNS_PER_SIGNAL: usize = 50;
const THREADS: &str = "4";
/// HRR_CAPTURE_FLUSH_MS for these runs.
const FLUSH_MS: u64 = 50;
/// What a loaded two-core machine may add to an interval before the flusher's write.
const SLACK_MS: u64 = 100;

fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A small xorshift generator: the moments are random, the seed printed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One run's figures.
struct Outcome {
    reported: u64,
    /// Launches reported before the signal was sent and missing from the archive.
    lost: u64,
    /// Launches reported after the signal was sent (made while the handler flushed) and
    /// missing from the archive.
    after_signal: u64,
    /// For SIGKILL: how long before the kill the oldest lost launch was reported (ms).
    oldest_lost_ms: u64,
}

fn run_once(s: &StandIn, n: usize, sig: i32, delay: Duration) -> Outcome {
    let out = s.path().join(format!("archive-{sig}-{n}"));
    let mut child = s
        .command(&out, &["steady", THREADS])
        .env("HRR_CAPTURE_FLUSH_MS", FLUSH_MS.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut v = String::new();
        let _ = stderr.read_to_string(&mut v);
        v
    });
    std::thread::sleep(delay);
    let killed_at = monotonic_ns();
    // SAFETY: kill(2) on our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
    let status = child.wait().unwrap();
    let reports = reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    assert_eq!(status.signal(), Some(sig), "run {n}: {status:?} {stderr}");

    // Per thread: how many launches it reported, and when each was reported.
    let mut issued: HashMap<u32, Vec<u64>> = HashMap::new();
    for r in reports.chunks_exact(16) {
        let tid = u32::from_le_bytes(r[0..4].try_into().unwrap());
        let count = u32::from_le_bytes(r[4..8].try_into().unwrap());
        let t = u64::from_le_bytes(r[8..16].try_into().unwrap());
        let v = issued.entry(tid).or_default();
        assert_eq!(
            v.len() + 1,
            count as usize,
            "run {n}: thread {tid} reports in order"
        );
        v.push(t);
    }
    let reported: u64 = issued.values().map(|v| v.len() as u64).sum();
    let mut recorded: HashMap<u32, usize> = HashMap::new();
    if out.join("manifest.json").exists() {
        let a = Archive::open(&out, Limits::default())
            .unwrap_or_else(|e| panic!("run {n} (signal {sig}): {e}\n{stderr}"));
        for p in &a.processes {
            assert_eq!(p.manifest.runtime.vendor, "cuda", "run {n}: {stderr}");
            for e in &p.events {
                if e.header.api_id == semantic::LAUNCH_KERNEL {
                    *recorded.entry(e.header.tid).or_default() += 1;
                }
            }
        }
    } else {
        assert_eq!(
            reported, 0,
            "run {n}: launches reported but no archive: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    let (mut lost, mut after_signal, mut oldest_lost_ms) = (0, 0, 0);
    for (tid, times) in &issued {
        let have = recorded.get(tid).copied().unwrap_or(0);
        for &t in times.iter().skip(have) {
            if t < killed_at {
                lost += 1;
                oldest_lost_ms = oldest_lost_ms.max((killed_at - t) / 1_000_000);
            } else {
                after_signal += 1;
            }
        }
    }
    Outcome {
        reported,
        lost,
        after_signal,
        oldest_lost_ms,
    }
}

#[test]
fn sigkill_loses_at_most_one_interval_and_sigterm_nothing() {
    let Some(s) = StandIn::build("kill", "faults.c") else {
        return;
    };
    let seed = monotonic_ns() | 1;
    eprintln!("kill test seed {seed}");
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut term_lost = Vec::new();
    let (mut kill_runs_losing, mut kill_lost_max, mut kill_oldest_max) = (0, 0, 0);
    let (mut reported_total, mut term_reported, mut term_after) = (0, 0, 0);
    for n in 0..2 * RUNS_PER_SIGNAL {
        let sig = if n % 2 == 0 {
            libc::SIGTERM
        } else {
            libc::SIGKILL
        };
        // Mostly inside the first few flush intervals, some in the program's first moments.
        let delay = Duration::from_micros(rng.below(300_000));
        let o = run_once(&s, n, sig, delay);
        reported_total += o.reported;
        if sig == libc::SIGTERM {
            term_reported += o.reported;
            term_after += o.after_signal;
            if o.lost > 0 {
                term_lost.push((n, delay, o.lost, o.reported));
            }
        } else {
            if o.lost > 0 {
                kill_runs_losing += 1;
            }
            kill_lost_max = kill_lost_max.max(o.lost);
            kill_oldest_max = kill_oldest_max.max(o.oldest_lost_ms);
        }
    }
    eprintln!(
        "{} runs in {:.1} s, {reported_total} launches reported; SIGTERM: {} of {RUNS_PER_SIGNAL} runs lost events \
         ({term_reported} reported, {term_after} made after the signal and dropped); SIGKILL: {kill_runs_losing} runs lost some, at most {kill_lost_max} launches, \
         the oldest reported {kill_oldest_max} ms before the kill (interval {FLUSH_MS} ms)",
        2 * RUNS_PER_SIGNAL,
        started.elapsed().as_secs_f64(),
        term_lost.len()
    );
    assert!(
        term_lost.is_empty(),
        "SIGTERM lost launches (run, delay, lost, reported): {term_lost:?}"
    );
    assert!(
        kill_oldest_max <= FLUSH_MS + SLACK_MS,
        "SIGKILL lost a launch reported {kill_oldest_max} ms before the kill (interval {FLUSH_MS} ms)"
    );
    assert!(reported_total > 0);
}
