//! hrr-replay's GPU-free modes and exit codes, run as a user would run them.

mod common;

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;

fn replay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
}

/// A small archive like capture writes: a malloc and a D2H copy with its expected bytes.
fn sample(root: &Path, finish: bool) {
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), 0x7000_0000)
        .u64(ApiDesc::field_id(1), 64);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let out = w.put_blob(&[7u8; 64]).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, 0x1234)
        .devptr(2, 0x7000_0000)
        .u64(3, 64)
        .u64(4, 2)
        .blob(BLOB_FIELD | 1, out)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    if finish {
        w.finish().unwrap();
    } else {
        w.emergency_flush();
    }
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn info_text_and_json() {
    let d = tempfile::tempdir().unwrap();
    sample(d.path(), true);
    let (code, out, _) = run(replay().arg("--info").arg(d.path()));
    assert_eq!(code, 0);
    assert!(out.contains("state          complete"), "{out}");
    assert!(out.contains("Memcpy") && out.contains("Malloc"), "{out}");
    assert!(out.contains("1 files, "), "{out}");
    let (code, out, _) = run(replay().arg("--info").arg("--json").arg(d.path()));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["complete"], true);
    assert_eq!(v["processes"][0]["events"], 2);
    assert_eq!(v["processes"][0]["events_per_api"]["Memcpy"], 1);
}

#[test]
fn events_lines_and_json_lines() {
    let d = tempfile::tempdir().unwrap();
    sample(d.path(), true);
    let (code, out, _) = run(replay().arg("--events").arg(d.path()));
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].contains("Malloc") && lines[0].contains("size=64"),
        "{out}"
    );
    let (_, out, _) = run(replay().arg("--events").arg("--json").arg(d.path()));
    let v: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(v["api"], "Memcpy");
    assert_eq!(v["seq"], 1);
}

#[test]
fn repair_keeps_an_unfinished_archive_incomplete_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    sample(d.path(), false);
    let (_, out, _) = run(replay().arg("--info").arg(d.path()));
    assert!(out.contains("NOT complete"), "{out}");
    let (code, out, _) = run(replay().arg("--repair").arg(d.path()));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("was incomplete, kept 2 events"), "{out}");
    // Nothing was torn, but the process never wrote its trailer: later events may be
    // missing, so the archive is not called complete.
    assert!(
        out.contains("still incomplete: the process ended without its trailer"),
        "{out}"
    );
    assert!(out.contains("original log kept as"), "{out}");
    let (_, out, _) = run(replay().arg("--info").arg(d.path()));
    assert!(
        out.contains("NOT complete") && out.contains("repaired"),
        "{out}"
    );
    // A torn tail is dropped and named.
    let d = tempfile::tempdir().unwrap();
    sample(d.path(), true);
    let log = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("pid-"))
        .unwrap()
        .path()
        .join("events.bin");
    let len = std::fs::metadata(&log).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let (code, out, _) = run(replay().arg("--repair").arg(d.path()));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("was truncated, kept 2 events"), "{out}");
    assert!(
        out.contains("dropped 47 bytes after the last whole record; still incomplete: the log's end was torn"),
        "{out}"
    );
}

#[test]
fn invalid_archives_and_limits_exit_2_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run(replay().arg("--info").arg(d.path()));
    assert_eq!(code, 2);
    assert!(err.contains("manifest.json"), "{err}");
    sample(d.path(), true);
    let (code, _, err) = run(replay().args(["--info", "--max-events", "1"]).arg(d.path()));
    assert_eq!(code, 2);
    assert!(err.contains("max-events"), "{err}");
    let (code, _, err) = run(replay()
        .args(["--max-file-bytes", "lots", "--info"])
        .arg(d.path()));
    assert_eq!(code, 2);
    assert!(err.contains("max-file-bytes"), "{err}");
}

#[test]
fn version_names_tool_format_and_revision() {
    for flag in ["--version", "-V"] {
        let (code, out, err) = run(replay().arg(flag));
        assert_eq!(code, 0, "{flag}: {err}");
        assert!(
            out.starts_with(&format!("hrr-replay {}\n", hrr_archive::TOOL_VERSION))
                && out.contains(&format!(
                    "archive format version {}\n",
                    hrr_archive::FORMAT_VERSION
                ))
                && out.contains("source revision"),
            "{flag}: {out}"
        );
    }
}

#[test]
fn edit_expected_changes_one_byte_and_keeps_the_archive_valid() {
    let d = tempfile::tempdir().unwrap();
    sample(d.path(), true);
    let (code, out, err) = run(replay().args(["--edit-expected", "5"]).arg(d.path()));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("seq 1: expected output byte 5 changed 0x07 -> 0xf8"),
        "{out}"
    );
    let a = hrr_archive::Archive::open(d.path(), hrr_archive::Limits::default()).unwrap();
    assert!(a.is_complete());
    let p = hrr_archive::payload::Payload::parse(&a.processes[0].events[1].payload)
        .unwrap()
        .blob(BLOB_FIELD | 1, "b")
        .unwrap();
    let data = a.processes[0].load_blob(&p).unwrap();
    assert_eq!(data[5], 0xf8);
    assert_eq!(data.iter().filter(|&&b| b != 7).count(), 1);
}

#[test]
fn replay_without_a_gpu_exits_3_and_names_why() {
    if Path::new("/dev/nvidia0").exists() || Path::new("/dev/kfd").exists() {
        hrr_testkit::skip(
            hrr_testkit::Need::Gpu,
            "this machine has a GPU (/dev/nvidia0 or /dev/kfd): the no-GPU path is tested on \
             machines without one",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    sample(d.path(), true);
    let json = d.path().join("result.json");
    let (code, out, _) = run(replay().arg(d.path()).arg("--json").arg(&json));
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("FAIL:")
            && (out.contains("no cuda runtime") || out.contains("no cuda device")),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["verdict"], "FAIL");
}

#[test]
fn several_archives_give_one_result_each_in_order_and_the_worst_exit_code() {
    let a = tempfile::tempdir().unwrap();
    let not_an_archive = tempfile::tempdir().unwrap();
    sample(a.path(), true);
    let json = a.path().join("results.json");
    let (code, out, _) = run(replay()
        .arg(a.path())
        .arg(not_an_archive.path())
        .arg("--json")
        .arg(&json));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let results = v
        .as_array()
        .expect("an array of results for several archives");
    assert_eq!(results.len(), 2, "{v}");
    assert_eq!(results[0]["archive"], a.path().display().to_string());
    // The harness reads them back with the contract's types, in the current schema.
    let typed: Vec<hrr_contract::ReplayResult> = serde_json::from_value(v.clone()).unwrap();
    assert!(typed
        .iter()
        .all(|r| r.schema_version == hrr_contract::SchemaVersion::CURRENT));
    assert_eq!(results[0]["schema_version"], "1.4", "{v}");
    assert_eq!(typed[1].exit_code, hrr_contract::ReplayExit::Invalid);
    assert_eq!(typed[1].verdict, hrr_contract::Verdict::Fail);
    assert_eq!(results[1]["exit_code"], 2, "{v}");
    assert!(
        results[1]["reason"]
            .as_str()
            .unwrap()
            .contains("manifest.json"),
        "{v}"
    );
    // With a GPU the first archive replays (its device memory was never written, so it
    // passes or fails) and the invalid one decides (2); without one the first cannot
    // run (3), which outranks it.
    if Path::new("/dev/nvidia0").exists() {
        assert_eq!(code, 2, "{out}");
        assert!(
            results[0]["exit_code"] == 0 || results[0]["exit_code"] == 1,
            "{v}"
        );
    } else {
        assert_eq!(code, 3, "{out}");
        assert_eq!(results[0]["exit_code"], 3, "{v}");
    }
    assert_eq!(out.matches("events replayed").count(), 2, "{out}");

    let (code, _, err) = run(replay()
        .arg("--info")
        .arg(a.path())
        .arg(not_an_archive.path()));
    assert_eq!(code, 2);
    assert!(err.contains("take one"), "{err}");
}

/// The limits sized to the machine say so in `--help`, with their size here, not as a
/// raw number (issue 25); a limit takes K, M and G.
#[test]
fn help_names_machine_sized_defaults_in_words() {
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in ["--max-file-bytes", "--max-host-bytes"] {
        let line = help.lines().find(|l| l.contains(flag)).unwrap();
        assert!(
            line.contains("[default: half this machine's memory, within 1-64 GiB:")
                && line.contains("GiB here]"),
            "{line}"
        );
    }
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--max-host-bytes", "1K", "--info"])
        .arg(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("invalid value"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--max-host-bytes", "4X", "--info"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a size"));
}
