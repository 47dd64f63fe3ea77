//! The command line's own promises: `--version` names the archive format and the replay
//! result schema from their constants, `--help` lists the exit codes (7: infrastructure),
//! bad usage exits 2, a listing whose reader left exits quietly.

use std::path::Path;
use std::process::{Command, Output};

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");

fn harness(args: &[&str]) -> Output {
    Command::new(HARNESS).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn version_names_the_archive_format_and_result_schema_from_their_constants() {
    let o = harness(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o).trim(),
        format!(
            "hrr-harness {} (archive format {}, replay result schema {})",
            env!("CARGO_PKG_VERSION"),
            hrr_archive::FORMAT_VERSION,
            hrr_contract::SchemaVersion::CURRENT
        )
    );
}

#[test]
fn help_lists_the_exit_codes() {
    let o = harness(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let s = stdout(&o);
    for code in ["0", "1", "2", "7", "130"] {
        assert!(s.contains(&format!("\n  {code:<4} ")), "exit {code}: {s}");
    }
    assert!(s.contains("has its own codes 3, 4, 5, 6."), "{s}");
    assert!(s.contains("GPUs or compilers are missing"), "{s}");
    for sub in ["run", "build"] {
        let o = harness(&[sub, "--help"]);
        let s = stdout(&o);
        assert!(s.contains("\n  7    infrastructure"), "{sub}: {s}");
    }
    let o = harness(&["control", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let s = stdout(&o);
    for code in ["0", "2", "3", "4", "5", "6", "7", "130"] {
        assert!(s.contains(&format!("\n  {code:<4} ")), "exit {code}: {s}");
    }
    assert!(
        s.contains("the first in this order wins: 4, 3, 6, 5."),
        "{s}"
    );
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(harness(&["--no-such-flag"]).status.code(), Some(2));
    assert_eq!(harness(&["control"]).status.code(), Some(2));
}

/// A reader that closed the pipe (`| head -1`) ends a listing quietly, exit 0: it was a
/// panic, exit 101 ("failed printing to stdout: Broken pipe").
#[test]
fn a_listing_whose_reader_left_exits_quietly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for args in [
        &["matrix", "list", "--family", "sm90"][..],
        &["run", "--family", "sm90", "--list"][..],
    ] {
        let mut child = std::process::Command::new(HARNESS)
            .args(args)
            .current_dir(&root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader leaves before the first line.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
