//! Running one child process the way the harness needs it: in its own process group (a
//! timeout or Ctrl-C kills the whole group, grandchildren included), output appended to a
//! log file, and a deadline. Also the SIGINT/SIGTERM flag every long loop checks.

use std::fs::OpenOptions;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, SigHandler, Signal};
use nix::unistd::Pid;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs handlers for SIGINT and SIGTERM that only set a flag; the harness then stops
/// its children, cleans up and exits 130.
pub fn install_interrupt_handler() {
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let _ = nix::sys::signal::signal(sig, SigHandler::Handler(on_signal));
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    Timeout,
    Interrupted,
}

impl Exit {
    pub fn describe(self) -> String {
        match self {
            Exit::Code(c) => format!("exit {c}"),
            Exit::Signal(s) => format!(
                "killed by signal {s} ({})",
                Signal::try_from(s).map(|s| s.as_str()).unwrap_or("?")
            ),
            Exit::Timeout => "timed out".into(),
            Exit::Interrupted => "interrupted".into(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
}

/// Runs `cmd` with stdout and stderr appended to `log`, killing its process group at
/// `deadline` (SIGTERM, then SIGKILL after two seconds) or on interruption.
pub fn run_logged(mut cmd: Command, log: &Path, deadline: Instant) -> std::io::Result<Finished> {
    let out = OpenOptions::new().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = Pid::from_raw(child.id() as i32);
    let mut killed: Option<(Exit, Instant)> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            // Stragglers the program left behind die with it.
            let _ = killpg(pgid, Signal::SIGKILL);
            let exit = match killed {
                Some((why, _)) => why,
                None => match (status.code(), status.signal()) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(s)) => Exit::Signal(s),
                    _ => Exit::Code(-1),
                },
            };
            return Ok(Finished {
                exit,
                duration: start.elapsed(),
            });
        }
        let now = Instant::now();
        match killed {
            None if interrupted() => {
                let _ = killpg(pgid, Signal::SIGTERM);
                killed = Some((Exit::Interrupted, now));
            }
            None if now >= deadline => {
                let _ = killpg(pgid, Signal::SIGTERM);
                killed = Some((Exit::Timeout, now));
            }
            Some((_, at)) if now.duration_since(at) > Duration::from_secs(2) => {
                let _ = killpg(pgid, Signal::SIGKILL);
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The last `max` bytes of a log, on a line boundary, for reports.
pub fn tail(path: &Path, max: usize) -> String {
    let Ok(data) = std::fs::read(path) else {
        return String::new();
    };
    let start = data.len().saturating_sub(max);
    let mut s = String::from_utf8_lossy(&data[start..]).into_owned();
    if start > 0 {
        if let Some(i) = s.find('\n') {
            s.drain(..=i);
        }
        s.insert_str(0, "[...]\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("log");
        let pidfile = t.path().join("grandchild");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
        let f = run_logged(cmd, &log, Instant::now() + Duration::from_millis(300)).unwrap();
        assert_eq!(f.exit, Exit::Timeout);
        assert!(f.duration < Duration::from_secs(5));
        let gc: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // The grandchild is gone (or a zombie reaped by init): signal 0 fails.
        let alive = nix::sys::signal::kill(Pid::from_raw(gc), None).is_ok()
            && !std::fs::read_to_string(format!("/proc/{gc}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        assert!(!alive, "grandchild {gc} survived the timeout");
    }

    #[test]
    fn exit_codes_signals_and_output_are_kept() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("log");
        let far = Instant::now() + Duration::from_secs(30);
        let mut c = Command::new("sh");
        c.args(["-c", "echo out; echo err >&2; exit 3"]);
        assert_eq!(run_logged(c, &log, far).unwrap().exit, Exit::Code(3));
        let mut c = Command::new("sh");
        c.args(["-c", "kill -SEGV $$"]);
        assert_eq!(run_logged(c, &log, far).unwrap().exit, Exit::Signal(11));
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("out\n") && text.contains("err\n"));
        assert_eq!(Exit::Signal(11).describe(), "killed by signal 11 (SIGSEGV)");
    }
}
