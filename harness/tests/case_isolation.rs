//! What a case can do to the harness and what it can see, through `hrr-harness run`
//! against a small repository of host cases (no GPU, no real tools):
//! - a case printing 300 MB leaves a capped log that says what was cut, and the harness
//!   does not grow with it (it once read the whole log to report its tail: 982 MB for a
//!   1 GB case);
//! - a case's `setsid` grandchild dies with it (it survived the process group kill);
//! - credentials in the harness's environment (`GITHUB_TOKEN`, names with TOKEN, SECRET,
//!   KEY, PASSWORD) never reach a case, so its log, `results.json(l)` and `junit.xml`
//!   cannot hold them; `HRR_HARNESS_KEEP_ENV` keeps a named one; a variable off the
//!   allow-list (`DATABASE_URL` with a password) does not reach it either, and neither
//!   does the harness's own environment read through `/proc/$PPID/environ` (issue 20).

use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::write;

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");
const TOKEN: &str = "ghp_hrrTestTokenValue0123456789";
const SECRET: &str = "s3cr3t-value-of-a-case";

fn host_case(name: &str) -> String {
    format!("  - name: {name}\n    dir: {name}\n    kind: host\n    command: [sh, run.sh]\n    checks: [exit-zero]\n")
}

fn repo(root: &Path) {
    let mut cases = String::new();
    for c in ["chatty", "env_printer", "setsid_child"] {
        cases += &host_case(c);
    }
    write(
        root,
        "matrix/matrix.yaml",
        &format!(
            r#"version: 1
tools:
  build: [sh, build.sh]
  capture: "{{target_dir}}/release/libhrr_capture.so"
  replay: "{{target_dir}}/release/hrr-replay"
defaults:
  timeout: 60s
families:
  - name: sm90
    vendor: nvidia
    targets: [sm_90]
    runner: [self-hosted, sm90]
cases:
{cases}"#
        ),
    );
    write(root, "build.sh", "exit 1\n");
    write(
        root,
        "cases/chatty/run.sh",
        "head -c 300000000 /dev/zero | tr '\\0' x\necho\necho the last words\n",
    );
    write(
        root,
        "cases/env_printer/run.sh",
        "env\necho \"token: $GITHUB_TOKEN\"\ntr '\\0' '\\n' < /proc/$PPID/environ | sed 's/^/parent: /'\n",
    );
    write(
        root,
        "cases/setsid_child/run.sh",
        "setsid sleep 1000 > /dev/null 2>&1 &\necho $! > \"$GRANDCHILD_PIDFILE\"\nsleep 0.2\n",
    );
    write(
        root,
        "cases/common/README",
        "shared headers would live here\n",
    );
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("libhrr_capture.so"), b"").unwrap();
    std::fs::write(tools.join("hrr-replay"), b"").unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg("git init -q -b main . && git -c user.email=t@t -c user.name=t commit -qm init --allow-empty")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Runs the harness to its end; returns its exit code and peak resident memory (KiB).
fn run_harness(root: &Path, pidfile: &Path) -> (i32, i64) {
    let mut child = Command::new(HARNESS)
        .args([
            "run", "--family", "sm90", "--tools", "tools", "--output", "out",
        ])
        .args(["--no-progress", "--keep-archives", "--jobs", "1"])
        .current_dir(root)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("NVCC", "/nonexistent/nvcc")
        .env("HRR_HARNESS_LOG_CAP", "1M")
        .env("GRANDCHILD_PIDFILE", pidfile)
        .env("GITHUB_TOKEN", TOKEN)
        .env("MY_Api_Key", SECRET)
        .env("DB_PASSWORD", SECRET)
        .env("DATABASE_URL", format!("postgres://u:{SECRET}@db/x"))
        .env("KEPT_TOKEN", "kept-on-purpose")
        .env("HRR_HARNESS_KEEP_ENV", "KEPT_TOKEN,GRANDCHILD_PIDFILE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(root.join("harness.out")).unwrap())
        .stderr(std::fs::File::create(root.join("harness.err")).unwrap())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    // This test binary's only other children are git and sh (the test is alone in its
    // file), so the peak over waited-for children is the harness's (or a case's).
    // SAFETY: an all-zero rusage is a valid value for getrusage to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage with a valid pointer to a local.
    let r = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(r, 0);
    (status.code().unwrap_or(-1), usage.ru_maxrss)
}

#[test]
fn a_case_cannot_flood_outlive_or_read_the_harness_secrets() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    repo(&root);
    let pidfile = t.path().join("grandchild.pid");
    let (code, maxrss_kib) = run_harness(&root, &pidfile);
    let said = format!(
        "{}{}",
        std::fs::read_to_string(root.join("harness.out")).unwrap_or_default(),
        std::fs::read_to_string(root.join("harness.err")).unwrap_or_default()
    );
    assert_eq!(code, 0, "{said}");
    let out = root.join("out");
    let case_log = |c: &str| out.join(format!("cases/{c}/attempt-1/command.log"));

    // Every problem is collected, so a regression names all of them at once.
    let mut problems: Vec<String> = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };

    // 1. The flood: a capped log that keeps its end and says what was cut; the harness
    // stays small.
    let log = case_log("chatty");
    let len = std::fs::metadata(&log).unwrap().len();
    check(
        len < (1 << 20) + (80 << 10),
        format!("chatty's log is {len} bytes"),
    );
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    check(
        text.contains("bytes of output cut here"),
        "chatty's log does not say what was cut".into(),
    );
    check(
        text.ends_with("the last words\n"),
        "chatty's log lost its end".into(),
    );
    let results = std::fs::read_to_string(out.join("results.json")).unwrap();
    check(
        results.contains("command.log was cut: "),
        "results.json does not say chatty's log was cut".into(),
    );
    check(
        maxrss_kib < 100 << 10,
        format!("the harness peaked at {maxrss_kib} KiB"),
    );

    // 2. The setsid grandchild is gone.
    let gc: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive =
        std::fs::read_to_string(format!("/proc/{gc}/stat")).is_ok_and(|s| !s.contains(") Z "));
    if alive {
        // SAFETY: kill(2) of the test's own stray process, so it does not outlive us.
        unsafe { libc::kill(gc, libc::SIGKILL) };
    }
    check(
        !alive,
        format!("setsid_child's grandchild {gc} survived the run"),
    );

    // 3. No credential reached a case; the kept one did.
    let env_log = std::fs::read_to_string(case_log("env_printer")).unwrap();
    check(
        env_log.contains("KEPT_TOKEN=kept-on-purpose"),
        "HRR_HARNESS_KEEP_ENV did not keep KEPT_TOKEN".into(),
    );
    check(
        env_log.contains("token: \n"),
        "the case saw GITHUB_TOKEN".into(),
    );
    for f in [
        case_log("env_printer"),
        out.join("results.json"),
        out.join("results.jsonl"),
        out.join("junit.xml"),
    ] {
        let s = std::fs::read_to_string(&f).unwrap();
        for v in [TOKEN, SECRET] {
            check(!s.contains(v), format!("{} holds {v}", f.display()));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
