//! Every descendant of a run dies with it, `setsid` or not.
//!
//! A process group kill misses a descendant that left the group (`setsid`, `setpgid`),
//! and once the run's first process has exited its orphans are no longer linked to it
//! by their parent ids. So each run is marked: its first process gets
//! `HRR_HARNESS_RUN=<unique id>` in its environment, which every descendant inherits
//! whatever session or group it moves to. After the run, `/proc/*/environ` names the
//! processes still carrying the mark; they are killed and, being orphans reparented to
//! the harness (a child subreaper, `PR_SET_CHILD_SUBREAPER`), reaped here. Marked
//! processes seen while the run went on (`Marked::scan`) are reaped too when they exited
//! on their own, so zombies do not pile up over a long run. Only processes seen with the
//! mark are ever reaped: the harness's other children are waited for by their owners.
//!
//! Not covered: a descendant that clears its environment *and* leaves the session is
//! not found by the mark (a cgroup per run would catch it; CI runners rarely delegate
//! one to the job).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

/// The environment variable carrying a run's mark.
pub const MARK_VAR: &str = "HRR_HARNESS_RUN";

/// Makes the harness the reaper of its orphaned descendants (once per process).
pub fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) sets a flag of this process; the
        // remaining arguments are unused and zero.
        let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
        if r != 0 {
            eprintln!(
                "hrr-harness: warning: cannot become a child subreaper ({}); orphans of cases are still killed",
                std::io::Error::last_os_error()
            );
        }
    });
}

/// A fresh mark for one run.
pub fn new_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The processes (other than this one) whose environment carries `mark`.
pub fn marked(mark: &str) -> Vec<i32> {
    let needle = format!("{MARK_VAR}={mark}");
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// (state, parent) of `pid` from /proc/PID/stat, None once it is gone.
fn state_and_parent(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: parse after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((state, ppid))
}

/// The processes one run's mark was seen on, for killing and reaping them after it.
#[derive(Debug)]
pub struct Marked {
    mark: String,
    seen: HashSet<i32>,
    last_scan: Option<Instant>,
}

impl Marked {
    pub fn new(mark: String) -> Marked {
        Marked {
            mark,
            seen: HashSet::new(),
            last_scan: None,
        }
    }

    /// Notes the processes carrying the mark now, at most every `every`.
    pub fn scan(&mut self, every: Duration) {
        if self.last_scan.is_some_and(|t| t.elapsed() < every) {
            return;
        }
        self.last_scan = Some(Instant::now());
        self.seen.extend(marked(&self.mark));
    }

    /// Kills every process carrying the mark and reaps every marked process that is
    /// (or becomes) this process's zombie child; returns how many were killed. Gives up
    /// waiting after `within`.
    pub fn kill_all(&mut self, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        let mut killed: HashSet<i32> = HashSet::new();
        let me = std::process::id() as i32;
        loop {
            // A dying process may have forked: scan until no marked process is alive.
            let found = marked(&self.mark);
            for &pid in &found {
                if kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                    killed.insert(pid);
                }
            }
            self.seen.extend(&found);
            self.reap();
            // Killed processes still dying, or dead and about to be reparented to us.
            let dying = killed
                .iter()
                .any(|&p| state_and_parent(p).is_some_and(|(s, ppid)| s != 'Z' || ppid == me));
            if (found.is_empty() && !dying) || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        killed.len()
    }

    /// Reaps the marked processes that are zombie children of this process; forgets
    /// the ones that are gone.
    fn reap(&mut self) {
        let me = std::process::id() as i32;
        self.seen.retain(|&pid| match state_and_parent(pid) {
            None => false,
            Some(('Z', ppid)) if ppid == me => {
                let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
                false
            }
            Some(_) => true,
        });
    }
}
