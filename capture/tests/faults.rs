//! Capture under faults, against the stand-in runtime (no GPU): each test reproduces a
//! defect once reported (issue 11) and holds capture to its contract.
//!
//! - The runtime vendor is on disk from the first call: a capture killed right after it
//!   still names its runtime (replay refuses an archive that names none).
//! - A relative `HRR_CAPTURE_OUTPUT` names the directory it named when the program
//!   started, whatever directory the program changes to.
//! - A bad setting turns capture off with one line naming the variable; the program is
//!   unchanged.
//! - A forked child's directory holds the code objects its launches name; an exec'd
//!   program gets a directory of its own.
//! - On a full disk (a 4 MiB tmpfs in a private mount namespace, where unprivileged
//!   user namespaces are allowed) what fits is kept and the stop reason is written.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hrr_archive::api::{fid, id, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

fn open(root: &Path) -> Archive {
    Archive::open(root, Limits::default()).unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

#[test]
fn the_vendor_is_on_disk_at_the_first_call() {
    let Some(s) = StandIn::build("first-call", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let mut child = s
        .command(&out, &["first"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the program's one runtime call, then kill it well inside the first flush
    // interval (250 ms).
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "called");
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    let a = open(&out);
    assert_eq!(a.processes.len(), 1);
    let p = &a.processes[0];
    assert_eq!(p.manifest.runtime.vendor, "cuda");
    assert!(!p.is_complete());
}

#[test]
fn a_relative_output_is_resolved_when_the_program_starts() {
    let Some(s) = StandIn::build("relative", "faults.c") else {
        return;
    };
    std::fs::create_dir(s.path().join("elsewhere")).unwrap();
    let run = s
        .command(Path::new("rel-archive"), &["chdir", "elsewhere"])
        .current_dir(s.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(!s.path().join("elsewhere/rel-archive").exists(), "{stderr}");
    let a = open(&s.path().join("rel-archive"));
    assert!(a.is_complete(), "{stderr}");
    let ids: Vec<u16> = a.processes[0]
        .events
        .iter()
        .map(|e| e.header.api_id)
        .collect();
    assert_eq!(ids, [id::Malloc, id::Memcpy, id::Memcpy, id::Free]);
}

#[test]
fn each_bad_setting_turns_capture_off_with_one_line_naming_it() {
    let Some(s) = StandIn::build("bad-setting", "faults.c") else {
        return;
    };
    for (var, value) in [
        ("HRR_CAPTURE_PINNED_SNAPSHOT_MAX", "lots"),
        ("HRR_CAPTURE_PINNED_SNAPSHOT_MAX", "99999999999999G"),
        ("HRR_CAPTURE_MAPPED_OUTPUT_MAX", "lots"),
        ("HRR_CAPTURE_DISK_RESERVE", "much"),
        ("HRR_CAPTURE_FLUSH_MS", "soon"),
        ("HRR_CAPTURE_FSYNC", "sometimes"),
        ("HRR_CAPTURE_COMPRESS", "lz5"),
    ] {
        let out = s.path().join("archive");
        let run = s
            .command(&out, &["plain"])
            .env(var, value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{var}={value}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{var}={value}: {stderr}");
        assert!(
            lines[0].starts_with("hrr-capture: capture off: ")
                && lines[0].contains(var)
                && lines[0].contains(value),
            "{var}={value}: {stderr}"
        );
        assert!(!out.exists(), "{var}={value}: an archive was written");
    }
}

/// The code object a launch record names.
fn launched_code_object(p: &hrr_archive::ProcessArchive) -> String {
    let launch = p
        .events
        .iter()
        .find(|e| e.header.api_id == semantic::LAUNCH_KERNEL)
        .unwrap_or_else(|| panic!("pid {}: no launch", p.entry.pid));
    Payload::parse(&launch.payload)
        .unwrap()
        .str(fid::CODE_OBJECT, "code object")
        .unwrap()
        .to_string()
}

#[test]
fn a_forked_childs_directory_holds_the_code_objects_it_launches() {
    let Some(s) = StandIn::build("fork", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let run = s.command(&out, &["fork"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let a = open(&out);
    assert!(a.is_complete(), "{stderr}");
    assert_eq!(a.processes.len(), 2, "{stderr}");
    for p in &a.processes {
        let co = launched_code_object(p);
        let bytes = p
            .load_code_object(&co)
            .unwrap_or_else(|e| panic!("pid {}: {e}", p.entry.pid));
        assert!(!bytes.is_empty());
    }
    // The child made no registration call of its own: its code object came from the
    // parent's registration.
    let child = a
        .processes
        .iter()
        .find(|p| a.processes.iter().any(|q| q.entry.pid == p.entry.ppid))
        .expect("a child process");
    assert!(child
        .events
        .iter()
        .all(|e| e.header.api_id != semantic::REGISTER_FAT_BINARY));
}

#[test]
fn a_child_leaving_through_underscore_exit_keeps_every_event() {
    let Some(s) = StandIn::build("forkexit", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let run = s.command(&out, &["forkexit"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let a = open(&out);
    assert_eq!(a.processes.len(), 2, "{stderr}");
    let parent = a
        .processes
        .iter()
        .find(|p| p.is_complete())
        .expect("the parent finished");
    let child = a
        .processes
        .iter()
        .find(|p| p.entry.ppid == parent.entry.pid)
        .expect("a child process");
    // _exit skips atexit: no trailer, but everything the child appended is on disk (before,
    // the child's whole last flush interval, here all of it, was lost).
    assert!(!child.is_complete());
    let apis = |p: &hrr_archive::ProcessArchive| -> Vec<u16> {
        p.events
            .iter()
            .map(|e| e.header.api_id)
            .filter(|&id| id != semantic::REGISTER_FAT_BINARY && id != semantic::REGISTER_FUNCTION)
            .collect()
    };
    let (mut cp, mut pp) = (apis(child), apis(parent));
    pp.retain(|id| cp.contains(id));
    cp.retain(|id| pp.contains(id));
    assert!(cp.len() >= 4, "child events: {:?}\n{stderr}", apis(child));
    assert_eq!(
        cp, pp,
        "the child recorded what the parent did after the fork"
    );
}

#[test]
fn a_program_execd_after_recording_records_beside_it() {
    let Some(s) = StandIn::build("recexec", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let run = s.command(&out, &["recexec"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(!stderr.contains("capture off"), "{stderr}");
    let a = open(&out);
    assert_eq!(a.processes.len(), 2, "{stderr}");
    let (first, second) = (&a.processes[0], &a.processes[1]);
    assert_eq!(first.entry.pid, second.entry.pid);
    assert_eq!(second.entry.dir, format!("{}.2", first.entry.dir));
    // The exec'd image finished its own directory; the first image's last interval went
    // with the exec (exec skips atexit), but its directory still names its runtime.
    assert!(second.is_complete(), "{stderr}");
    assert!(second.events.len() >= 4, "{stderr}");
    assert_eq!(first.manifest.runtime.vendor, "cuda");
}

#[test]
fn an_execd_child_records_into_a_directory_of_its_own() {
    let Some(s) = StandIn::build("forkexec", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let run = s.command(&out, &["forkexec"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{stderr}");
    assert!(!stderr.contains("capture off"), "{stderr}");
    let child: u32 = stdout
        .trim()
        .strip_prefix("child=")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    let a = open(&out);
    assert_eq!(a.processes.len(), 2, "{stderr}");
    assert!(a.is_complete(), "{stderr}");
    let p = a
        .processes
        .iter()
        .find(|p| p.entry.pid == child)
        .expect("the exec'd child's directory");
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    assert_eq!(ids, [id::Malloc, id::Memcpy, id::Memcpy, id::Free]);
    assert_eq!(p.manifest.runtime.vendor, "cuda");
}

/// Runs `cmd` inside a private user and mount namespace with a `size` tmpfs mounted
/// at `at`; None when this machine does not allow unprivileged user namespaces.
fn in_small_tmpfs(at: &Path, size: &str, cmd: &str) -> Option<std::process::Output> {
    let probe = Command::new("unshare")
        .args(["-Urm", "true"])
        .stderr(Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        return None;
    }
    let script = format!(
        "mount -t tmpfs -o size={size} tmpfs '{}' && {cmd}",
        at.display()
    );
    Some(
        Command::new("unshare")
            .args(["-Urm", "sh", "-c", &script])
            .output()
            .unwrap(),
    )
}

#[test]
fn a_full_disk_keeps_what_fits_and_says_why() {
    let Some(s) = StandIn::build("disk-full", "faults.c") else {
        return;
    };
    let mnt = s.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    // 200 copies of 64 KiB (12.5 MiB of distinct blobs) into a 4 MiB file system, with
    // the default reserve (15% of it) and none at all; and 100,000 launches (events only,
    // some 35 MiB of log) with none.
    for (reserve, program, says) in [
        ("default", "blobs 200", "copies=200"),
        ("0", "blobs 200", "copies=200"),
        ("0", "launches 100000", "launches=100000"),
    ] {
        let out = mnt.join("archive");
        let copy = s.path().join(format!("copy-{reserve}-{}", program.len()));
        let cmd = format!(
            "HRR_CAPTURE_OUTPUT='{}' HRR_CAPTURE_DISK_RESERVE={reserve} HRR_CAPTURE_FLUSH_MS=20 \
             LD_PRELOAD='{}' '{}' {program} && cp -r '{}' '{}'",
            out.display(),
            common::capture_so().display(),
            s.exe.display(),
            out.display(),
            copy.display()
        );
        let started = Instant::now();
        let Some(run) = in_small_tmpfs(&mnt, "4m", &cmd) else {
            hrr_testkit::skip(
                hrr_testkit::Need::Machine,
                "unprivileged user namespaces are not allowed here (`unshare -Urm` failed): \
                 no small tmpfs to fill",
            );
            return;
        };
        let stderr = String::from_utf8_lossy(&run.stderr);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "reserve {reserve}: {stdout}{stderr}");
        assert!(started.elapsed() < Duration::from_secs(30));
        // The program saw every call succeed: capture never changes what it does.
        assert_eq!(stdout.trim(), says, "reserve {reserve}: {stderr}");
        let a = open(&copy);
        let p = &a.processes[0];
        let why = p
            .manifest
            .stop_reason
            .as_deref()
            .unwrap_or_else(|| panic!("reserve {reserve}: no stop reason on disk: {stderr}"));
        assert!(
            why.contains("disk reserve") || why.contains("space"),
            "{why}"
        );
        assert!(!p.is_complete());
        // What was appended before the stop is on disk: the exit notice's count.
        let notice = stderr
            .lines()
            .find_map(|l| {
                l.split("recorded ")
                    .nth(1)?
                    .split(" events")
                    .next()?
                    .parse::<usize>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no exit notice: {stderr}"));
        assert!(p.events.len() > 1, "reserve {reserve}: {stderr}");
        assert_eq!(p.events.len(), notice, "reserve {reserve}: {stderr}");
        assert_eq!(p.manifest.runtime.vendor, "cuda");
    }
}

/// A program whose kernel faulted and that dies by a signal right after (issue 26): the
/// crash path keeps the fault's records, so the archive still holds the launch and the
/// synchronisation that returned the sticky error, which replay reproduces.
#[test]
fn a_fault_then_a_signal_keeps_the_fault_in_the_archive() {
    let Some(s) = StandIn::build("fault-abort", "faults.c") else {
        return;
    };
    let out = s.path().join("archive");
    let o = s
        .command(&out, &["fault_abort"])
        .env("HRR_STAND_IN_FAULT", "700")
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.signal(), Some(libc::SIGABRT));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "synchronize 700");
    let a = open(&out);
    let p = &a.processes[0];
    let apis: Vec<(u16, i32)> = p
        .events
        .iter()
        .map(|e| (e.header.api_id, e.header.ret))
        .collect();
    assert!(apis.contains(&(semantic::LAUNCH_KERNEL, 0)), "{apis:?}");
    assert_eq!(apis.last(), Some(&(id::DeviceSynchronize, 700)), "{apis:?}");
}
