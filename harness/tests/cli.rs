//! The command line's own promises: `--version` names the archive format and the replay
//! result schema from their constants, `--help` lists the exit codes (7: infrastructure),
//! bad usage exits 2.

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
