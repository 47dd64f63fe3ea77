//! One `hrr-replay --serve` process per worker: it starts the GPU runtime once and replays
//! every case's archives the worker sends it, instead of one replay process per case.
//!
//! Measured on two H200s: creating a CUDA context takes about a quarter of a second and
//! the driver serialises it across GPUs, so per-case processes, not GPU work, bounded how
//! far `--jobs 2` could beat `--jobs 1`. With the service a case starts one process (the
//! captured program) instead of two. The service also keeps the GPU's context open for
//! the whole run, which spares each captured program the device's cold start.
//!
//! The service is started as every child of the harness is (`process::prepare`: no
//! credentials in its environment, marked so that whatever it leaves behind dies with
//! it). A service that misses a case's deadline is killed with its process group and
//! every descendant (the case times out); one that dies, or reports its device unusable after a request, is
//! dropped; the next request starts a fresh one. A GPU in an exclusive compute mode
//! admits one process, so it gets no service: its cases run `hrr-replay` per case.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use hrr_contract::{ServeAnswer, ServeReply, ServeRequest};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Why a request got no reply. Each names the end of the service's log where it helps.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No answer before the deadline: the service was killed.
    #[error("no answer before the deadline")]
    Timeout,
    #[error("cannot send the request: {source}; {log}")]
    Send { source: std::io::Error, log: String },
    #[error("unreadable answer {line:?}: {source}")]
    Unreadable {
        line: String,
        source: serde_json::Error,
    },
    /// The service could not replay the request (unreadable, or its log not created).
    #[error("the service refused: {0}")]
    Refused(String),
    #[error("the replay service ended ({status}); {log}")]
    Ended { status: String, log: String },
}

/// Why a service could not be started (the worker's cases then replay in their own
/// processes).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create {}: {source}", path.display())]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start {} --serve: {source}", program.display())]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
    #[error("no stdout pipe")]
    NoStdout,
}

pub struct ReplayService {
    child: Child,
    /// The mark its descendants carry (see `process::prepare`).
    marked: crate::process::Marked,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<String>,
    log: PathBuf,
}

impl ReplayService {
    /// Starts `replay --serve VENDOR` with `envs`; its stderr goes to `log`.
    pub fn start(
        replay: &Path,
        vendor: &str,
        envs: &[(String, String)],
        log: PathBuf,
    ) -> Result<ReplayService, StartError> {
        let err = std::fs::File::create(&log).map_err(|source| StartError::Log {
            path: log.clone(),
            source,
        })?;
        let mut cmd = crate::process::command(replay);
        cmd.args(["--serve", vendor])
            .envs(envs.iter().map(|(k, v)| (k, v)));
        let marked = crate::process::prepare(&mut cmd);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .map_err(|source| StartError::Spawn {
                program: replay.to_path_buf(),
                source,
            })?;
        let stdout = child.stdout.take().ok_or(StartError::NoStdout)?;
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(l) = line else { return };
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        Ok(ReplayService {
            stdin: child.stdin.take(),
            child,
            marked,
            replies,
            log,
        })
    }

    /// Sends one request and waits for the answer until `deadline`.
    pub fn request(
        &mut self,
        request: &ServeRequest,
        deadline: Instant,
    ) -> Result<ServeReply, ServiceError> {
        let line = serde_json::to_string(request).map_err(std::io::Error::other);
        let sent = match (self.stdin.as_mut(), line) {
            (Some(s), Ok(line)) => writeln!(s, "{line}").and_then(|_| s.flush()),
            (_, Err(e)) => Err(e),
            (None, _) => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the service's input is closed",
            )),
        };
        if let Err(source) = sent {
            return Err(ServiceError::Send {
                source,
                log: self.log_tail(),
            });
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.replies.recv_timeout(wait) {
            Ok(line) => match serde_json::from_str::<ServeAnswer>(&line) {
                Ok(ServeAnswer::Replied(reply)) => Ok(reply),
                Ok(ServeAnswer::Refused { error }) => Err(ServiceError::Refused(error)),
                Err(source) => Err(ServiceError::Unreadable { line, source }),
            },
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.kill();
                Err(ServiceError::Timeout)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(ServiceError::Ended {
                    status,
                    log: self.log_tail(),
                })
            }
        }
    }

    fn log_tail(&self) -> String {
        let tail = crate::process::tail(&self.log, 400);
        if tail.trim().is_empty() {
            format!("its log {} is empty", self.log.display())
        } else {
            format!(
                "its log {} ends: {}",
                self.log.display(),
                tail.replace('\n', " | ")
            )
        }
    }

    fn kill(&mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
        self.marked.kill_all(std::time::Duration::from_secs(2));
    }
}

impl Drop for ReplayService {
    /// Closes the service's input (it ends after the request in hand) and waits; the
    /// caller drops a service that failed, which is then killed.
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            let deadline = Instant::now() + std::time::Duration::from_secs(10);
            while Instant::now() < deadline {
                if !matches!(self.child.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        } else {
            // Whatever it started dies with it.
            self.marked.kill_all(std::time::Duration::from_secs(2));
        }
    }
}

/// A worker's service: started when the worker starts, replaced after a failure, absent
/// where none may run (no GPU, an exclusive-mode GPU).
pub struct ServiceSlot {
    service: Option<ReplayService>,
    start: Option<Box<dyn Fn() -> Result<ReplayService, StartError> + Send>>,
    /// Why the last start failed (the cases then replay in their own processes).
    pub start_error: Option<StartError>,
}

impl ServiceSlot {
    /// No service: every replay is its own process.
    pub fn none() -> ServiceSlot {
        ServiceSlot {
            service: None,
            start: None,
            start_error: None,
        }
    }

    pub fn new(start: impl Fn() -> Result<ReplayService, StartError> + Send + 'static) -> Self {
        let mut slot = ServiceSlot {
            service: None,
            start: Some(Box::new(start)),
            start_error: None,
        };
        slot.get();
        slot
    }

    /// The running service, started now if needed; None where there is none.
    pub fn get(&mut self) -> Option<&mut ReplayService> {
        if self.service.is_none() {
            if let Some(start) = &self.start {
                match start() {
                    Ok(s) => {
                        self.service = Some(s);
                        self.start_error = None;
                    }
                    Err(e) => self.start_error = Some(e),
                }
            }
        }
        self.service.as_mut()
    }

    /// Drops the service (after a failure); the next `get` starts another.
    pub fn discard(&mut self) {
        self.service = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_contract::ReplayExit;
    use std::time::Duration;

    /// A stand-in for `hrr-replay --serve`: answers by the request's first archive name.
    fn fake_service(dir: &Path) -> PathBuf {
        let script = dir.join("fake-replay");
        std::fs::write(
            &script,
            r#"#!/bin/sh
[ "$1" = --serve ] || exit 9
echo "serving $2" >&2
while read -r line; do
  case "$line" in
    *hang*) sleep 30 ;;
    *die*) echo "replay crashed" >&2; exit 139 ;;
    *broken*) echo '{"exit_code": 1, "healthy": false}'; exit 1 ;;
    *refuse*) echo '{"error": "bad request: x"}' ;;
    *garbage*) echo '{"exit_code": 9}' ;;
    *) echo '{"exit_code": 0, "healthy": true}' ;;
  esac
done
"#,
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    fn req(name: &str) -> ServeRequest {
        ServeRequest {
            archives: vec![name.into()],
            ..ServeRequest::default()
        }
    }

    #[test]
    fn answers_timeouts_and_deaths_are_told_apart() {
        let t = tempfile::tempdir().unwrap();
        let script = fake_service(t.path());
        let start = |n: &str| {
            ReplayService::start(&script, "cuda", &[], t.path().join(format!("{n}.log"))).unwrap()
        };
        let soon = || Instant::now() + Duration::from_secs(10);
        let mut s = start("a");
        assert_eq!(
            s.request(&req("ok"), soon()).unwrap(),
            ServeReply {
                exit_code: ReplayExit::Pass,
                healthy: true
            }
        );
        assert_eq!(
            s.request(&req("ok-again"), soon()).unwrap().exit_code,
            ReplayExit::Pass
        );
        // A refusal is told apart from an unreadable answer; the service goes on.
        match s.request(&req("refuse"), soon()).unwrap_err() {
            ServiceError::Refused(m) => assert_eq!(m, "bad request: x"),
            e => panic!("{e:?}"),
        }
        assert!(matches!(
            s.request(&req("garbage"), soon()).unwrap_err(),
            ServiceError::Unreadable { .. }
        ));
        let r = s.request(&req("broken"), soon()).unwrap();
        assert!(!r.healthy);
        // A service that hangs is killed at the deadline, its process group with it.
        let mut s = start("b");
        let t0 = Instant::now();
        let e = s
            .request(&req("hang"), Instant::now() + Duration::from_millis(300))
            .unwrap_err();
        assert!(matches!(e, ServiceError::Timeout), "{e:?}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        // A service that dies is reported with the end of its log.
        let mut s = start("c");
        match s.request(&req("die"), soon()).unwrap_err() {
            e @ ServiceError::Ended { .. } => {
                assert!(e.to_string().contains("replay crashed"), "{e}")
            }
            e => panic!("{e:?}"),
        }
        // A service that cannot start says why.
        let missing = t.path().join("no-such-replay");
        match ReplayService::start(&missing, "cuda", &[], t.path().join("d.log")) {
            Err(e @ StartError::Spawn { .. }) => {
                assert!(e.to_string().contains("--serve"), "{e}")
            }
            other => panic!("{:?}", other.err()),
        }
    }

    #[test]
    fn a_slot_restarts_a_discarded_service() {
        let t = tempfile::tempdir().unwrap();
        let script = fake_service(t.path());
        let log = t.path().join("slot.log");
        let mut slot =
            ServiceSlot::new(move || ReplayService::start(&script, "hip", &[], log.clone()));
        let first = slot.get().unwrap().child.id();
        slot.discard();
        let second = slot.get().unwrap().child.id();
        assert_ne!(first, second);
        assert!(ServiceSlot::none().get().is_none());
    }
}
