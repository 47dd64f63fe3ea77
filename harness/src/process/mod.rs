//! Running one child process the way the harness needs it: in its own process group (a
//! timeout or Ctrl-C kills the whole group), every descendant killed after it, `setsid`
//! or not (`reap`), no credential in its environment (`secrets`), output appended to a
//! log file with a cap (`log`), and a deadline. Also the SIGINT/SIGTERM flag every long
//! loop checks.

mod log;
mod reap;
pub mod secrets;

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, SigHandler, Signal};
use nix::unistd::Pid;

pub use log::tail;
pub use reap::Marked;

/// How long the harness waits for a run's killed descendants to die.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// Prepares `cmd` as every child of the harness starts: credentials withheld, marked
/// so that its descendants can be found after it (the harness a child subreaper), in a
/// process group of its own. Returns the run's mark.
/// A command for a tool the harness runs on its own behalf (git, a compiler or its probe,
/// `nvidia-smi`, the stand-in's `cc`): the environment a case gets (the allow-list of
/// `secrets`, never a credential), without a case's process group and reaping. Every
/// child the harness starts comes from here or from [`prepare`]
/// (`tests/one_spawn_path.rs` holds the code to it).
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(program);
    secrets::SecretFilter::from_env().scrub(&mut c);
    c
}

pub fn prepare(cmd: &mut Command) -> Marked {
    reap::become_subreaper();
    secrets::SecretFilter::from_env().scrub(cmd);
    let mark = reap::new_mark();
    cmd.env(reap::MARK_VAR, &mark).process_group(0);
    Marked::new(mark)
}

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

#[derive(Clone, Debug)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
    /// Bytes of output the log's cap cut (0: the log holds all of it).
    pub log_cut: u64,
    /// Descendants still running after the child ended, killed then.
    pub stragglers: usize,
    /// The standard output, kept apart from the log to compare runs
    /// ([`run_logged_keeping_stdout`]); None from [`run_logged`].
    pub stdout: Option<Stdout>,
}

/// What the harness keeps of a step's standard output to compare two runs of one
/// program: its first [`STDOUT_KEEP`] bytes and its length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stdout {
    pub head: Vec<u8>,
    pub len: u64,
}

/// How much of a step's standard output is kept for comparison.
pub const STDOUT_KEEP: usize = 1 << 20;

impl Stdout {
    /// Whether output past [`STDOUT_KEEP`] went uncompared.
    pub fn cut(&self) -> bool {
        self.len > self.head.len() as u64
    }
}

/// Copies a child's standard output into the log pipe, keeping its head; write errors
/// on the log side are ignored (the child must never block on a full pipe), reading
/// goes on to the end.
fn tee_stdout(mut from: std::io::PipeReader, mut to: std::io::PipeWriter) -> Stdout {
    let mut buf = vec![0u8; 64 << 10];
    let mut out = Stdout::default();
    let mut log_ok = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let keep = n.min(STDOUT_KEEP - out.head.len());
        out.head.extend_from_slice(&buf[..keep]);
        out.len += n as u64;
        log_ok = log_ok && to.write_all(&buf[..n]).is_ok();
    }
    out
}

/// Runs `cmd` with stdout and stderr appended to `log` (capped: `HRR_HARNESS_LOG_CAP`,
/// default 64 MiB), killing its process group at `deadline` (SIGTERM, then SIGKILL
/// after two seconds) or on interruption, and every descendant still running once it
/// has ended.
pub fn run_logged(cmd: Command, log: &Path, deadline: Instant) -> std::io::Result<Finished> {
    run(cmd, log, deadline, false)
}

/// As [`run_logged`], and the standard output is also kept apart ([`Finished::stdout`]):
/// it passes through a thread that keeps its head on its way into the same log.
pub fn run_logged_keeping_stdout(
    cmd: Command,
    log: &Path,
    deadline: Instant,
) -> std::io::Result<Finished> {
    run(cmd, log, deadline, true)
}

fn run(
    mut cmd: Command,
    log: &Path,
    deadline: Instant,
    keep_stdout: bool,
) -> std::io::Result<Finished> {
    let out = OpenOptions::new().create(true).append(true).open(log)?;
    let (reader, writer) = std::io::pipe()?;
    let err = writer.try_clone()?;
    let mut tee = None;
    let stdout = if keep_stdout {
        let (out_reader, out_writer) = std::io::pipe()?;
        tee = Some((out_reader, writer));
        Stdio::from(out_writer)
    } else {
        Stdio::from(writer)
    };
    let mut marked = prepare(&mut cmd);
    cmd.stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::from(err));
    let start = Instant::now();
    let spawned = cmd.spawn();
    // The parent's ends of the pipes' write sides went with `cmd`: drop it, so the
    // copier sees the end of input when the last descendant closes its end (and the
    // tee, which holds the log pipe's last other write end, ends).
    drop(cmd);
    let mut child = spawned?;
    let cap = log::cap_from_env();
    let copier = std::thread::spawn(move || log::copy_capped(reader, out, cap));
    let tee = tee.map(|(from, to)| std::thread::spawn(move || tee_stdout(from, to)));
    let pgid = Pid::from_raw(child.id() as i32);
    let mut killed: Option<(Exit, Instant)> = None;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        marked.scan(Duration::from_millis(250));
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
    };
    // Stragglers the program left behind die with it: its group, and every process
    // carrying its mark (one that called setsid too).
    let _ = killpg(pgid, Signal::SIGKILL);
    let stragglers = marked.kill_all(KILL_WAIT);
    let stdout = tee.and_then(join_within);
    let log_cut = join_within(copier).and_then(Result::ok).unwrap_or(0);
    let exit = match killed {
        Some((why, _)) => why,
        None => match (status.code(), status.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(s)) => Exit::Signal(s),
            _ => Exit::Code(-1),
        },
    };
    Ok(Finished {
        exit,
        duration: start.elapsed(),
        log_cut,
        stragglers,
        stdout,
    })
}

/// Waits for an output thread (the log copier, the stdout tee: every writer is dead by
/// now, so it sees the end of input at once), at most `KILL_WAIT`: a writer the kill
/// could not reach must not hang the harness. None when it did not finish in time.
fn join_within<T>(thread: std::thread::JoinHandle<T>) -> Option<T> {
    let until = Instant::now() + KILL_WAIT;
    while !thread.is_finished() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    if !thread.is_finished() {
        return None;
    }
    thread.join().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_is_kept_apart_and_still_reaches_the_log() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("log");
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("echo out-1; echo err-1 >&2; echo out-2");
        let f =
            run_logged_keeping_stdout(cmd, &log, Instant::now() + Duration::from_secs(10)).unwrap();
        assert_eq!(f.exit, Exit::Code(0));
        let out = f.stdout.expect("stdout kept");
        assert_eq!(out.head, b"out-1\nout-2\n");
        assert_eq!(out.len, 12);
        assert!(!out.cut());
        let logged = std::fs::read_to_string(&log).unwrap();
        for line in ["out-1", "err-1", "out-2"] {
            assert!(logged.contains(line), "{line} missing from {logged:?}");
        }
        // Without keeping, nothing is kept.
        let f = run_logged(
            Command::new("true"),
            &log,
            Instant::now() + Duration::from_secs(10),
        )
        .unwrap();
        assert!(f.stdout.is_none());
    }

    #[test]
    fn stdout_past_the_kept_head_is_counted_not_kept() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("log");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("head -c {} /dev/zero", STDOUT_KEEP + 10));
        let f =
            run_logged_keeping_stdout(cmd, &log, Instant::now() + Duration::from_secs(10)).unwrap();
        let out = f.stdout.unwrap();
        assert_eq!(out.head.len(), STDOUT_KEEP);
        assert_eq!(out.len, STDOUT_KEEP as u64 + 10);
        assert!(out.cut());
    }

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

    /// Whether `pid` still runs (a zombie counts as gone).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    }

    fn pid_in(path: &Path) -> i32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// A grandchild in a session of its own survives a process group kill: the run's
    /// mark finds it. The run itself ends normally here (no timeout).
    #[test]
    fn a_setsid_grandchild_dies_with_the_run() {
        let t = tempfile::tempdir().unwrap();
        let pidfile = t.path().join("grandchild");
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!(
            "setsid sleep 1000 > /dev/null 2>&1 & echo $! > {}; sleep 0.2; exit 0",
            pidfile.display()
        ));
        let far = Instant::now() + Duration::from_secs(30);
        let f = run_logged(cmd, &t.path().join("log"), far).unwrap();
        assert_eq!(f.exit, Exit::Code(0));
        let gc = pid_in(&pidfile);
        assert!(!alive(gc), "setsid grandchild {gc} survived the run");
        assert_eq!(f.stragglers, 1);
        // A double fork out of the session, after a timeout, dies too.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!(
            "(setsid sh -c 'sleep 1000 & echo $! > {}; wait' &) ; sleep 30",
            pidfile.display()
        ));
        let f = run_logged(
            cmd,
            &t.path().join("log"),
            Instant::now() + Duration::from_millis(500),
        )
        .unwrap();
        assert_eq!(f.exit, Exit::Timeout);
        let gc = pid_in(&pidfile);
        assert!(!alive(gc), "double-forked {gc} survived the timeout");
    }

    #[test]
    fn a_log_is_capped_and_says_how_much_was_cut() {
        // The default cap (64 MiB) is exercised by the harness's integration test; the
        // unit test of the copier uses a small one.
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("log");
        let mut c = Command::new("sh");
        c.args([
            "-c",
            "head -c 300000 /dev/zero | tr '\\0' x; echo; echo last words",
        ]);
        let f = run_logged(c, &log, Instant::now() + Duration::from_secs(30)).unwrap();
        assert_eq!((f.exit, f.log_cut), (Exit::Code(0), 0));
        assert_eq!(std::fs::metadata(&log).unwrap().len(), 300_000 + 12);
        assert!(tail(&log, 100).ends_with("last words\n"));
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
