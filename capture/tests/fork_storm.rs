//! Forks from a busy multi-threaded program never hang a child (HRR issue 20): eight
//! threads make runtime calls without pause (allocations, copies, asynchronous copies back
//! with their synchronisations, launches) while the main thread forks 240 children, each
//! making calls of its own: a third leave with exit, a third start a thread that makes
//! them, a third leave with _exit. The program kills a child not done within 20 s and
//! counts it hung; the whole run has a watchdog. Every child must finish, and each one's
//! calls must be in its own process directory (complete, unless it left with _exit).

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hrr_archive::api::id;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

const THREADS: &str = "8";
const FORKS: usize = 240;

#[test]
fn children_forked_from_busy_threads_never_hang() {
    let Some(s) = StandIn::build("forkstorm", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let mut child = s
        .command(&out, &["forkstorm", THREADS, &FORKS.to_string()])
        .env("HRR_CAPTURE_DISK_RESERVE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the fork storm did not end within 300 s: a child or the parent hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let tail: String = stderr.lines().rev().take(20).collect::<Vec<_>>().join("\n");
    assert!(
        status.success() && stdout.contains(&format!("forks={FORKS} hung=0 failed=0")),
        "{status:?}: {stdout}\n{tail}"
    );
    let a = Archive::open(&out, Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    let parent = a
        .processes
        .iter()
        .find(|p| !a.processes.iter().any(|q| q.entry.pid == p.entry.ppid))
        .expect("the parent's directory");
    let children: Vec<_> = a
        .processes
        .iter()
        .filter(|p| p.entry.ppid == parent.entry.pid)
        .collect();
    assert_eq!(children.len(), FORKS, "one directory per child\n{tail}");
    // Children leaving with exit finish their logs; _exit skips that (every event is
    // still written: the calls below are counted in every child).
    let complete = children.iter().filter(|c| c.is_complete()).count();
    assert_eq!(complete, FORKS - FORKS / 3, "complete child directories");
    for c in children {
        // plain(): an allocation, two copies and a free, none of them the parent's.
        let apis: Vec<u16> = c.events.iter().map(|e| e.header.api_id).collect();
        assert_eq!(
            apis.iter().filter(|&&a| a == id::Malloc).count(),
            1,
            "pid {}: {apis:?}",
            c.entry.pid
        );
        assert_eq!(
            apis.iter().filter(|&&a| a == id::Memcpy).count(),
            2,
            "pid {}: {apis:?}",
            c.entry.pid
        );
    }
}
