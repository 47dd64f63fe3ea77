//! The skip rule and the tool lookup, on their inputs (no process environment is changed:
//! other tests of this binary run beside these).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::tools::{find_with, Tool};
use crate::{strict_from, Need, Skip};

/// A fresh directory under the system's temporary one, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("hrr-testkit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn skip(need: Need) -> Skip {
    Skip {
        need,
        package: "hrr-demo".into(),
        test: "tests::needs_xmllint".into(),
        place: "demo/tests/a.rs:7".into(),
        reason: "xmllint not found (PATH (xmllint)): apt install libxml2-utils".into(),
    }
}

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

#[test]
fn ci_true_or_require_all_makes_a_missing_tool_fail() {
    assert!(strict_from(vars(&[("CI", "true")])));
    assert!(strict_from(vars(&[("CI", "1")])));
    assert!(strict_from(vars(&[("HRR_REQUIRE_ALL", "1")])));
    assert!(!strict_from(vars(&[])));
    assert!(!strict_from(vars(&[
        ("CI", "false"),
        ("HRR_REQUIRE_ALL", "0")
    ])));
}

/// Settles `s` as `skip` does, its standard error kept: what it printed.
fn settle(s: &Skip, strict: bool, dir: Option<&Path>, file: &str) -> String {
    let mut err = Vec::new();
    s.settle(strict, dir, file, &mut err);
    String::from_utf8(err).unwrap()
}

#[test]
#[should_panic(
    expected = "tests::needs_xmllint: xmllint not found (PATH (xmllint)): apt install libxml2-utils (demo/tests/a.rs:7). CI=true or HRR_REQUIRE_ALL=1"
)]
fn under_require_all_a_missing_tool_panics_naming_it() {
    let strict = strict_from(vars(&[("HRR_REQUIRE_ALL", "1")]));
    settle(&skip(Need::Tool), strict, None, "f.txt");
}

#[test]
fn under_require_all_a_missing_tool_records_nothing() {
    let d = Scratch::new("strict");
    let s = skip(Need::Tool);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settle(&s, true, Some(&d.0), "f.txt")
    }));
    assert!(r.is_err());
    assert!(!d.0.join("f.txt").exists());
}

#[test]
fn elsewhere_a_missing_tool_is_printed_and_recorded_one_line_per_skip() {
    let d = Scratch::new("lenient");
    let dir = d.0.join("skips");
    let line = "SKIPPED [tool] hrr-demo tests::needs_xmllint: xmllint not found (PATH (xmllint)): \
                apt install libxml2-utils (demo/tests/a.rs:7)\n";
    for _ in 0..2 {
        assert_eq!(settle(&skip(Need::Tool), false, Some(&dir), "p.txt"), line);
    }
    let text = std::fs::read_to_string(dir.join("p.txt")).unwrap();
    assert_eq!(text, line.repeat(2));
}

#[test]
fn what_the_machine_is_never_fails_even_under_ci() {
    let d = Scratch::new("machine");
    for need in [Need::Gpu, Need::Machine] {
        settle(&skip(need), true, Some(&d.0), "m.txt");
    }
    let text = std::fs::read_to_string(d.0.join("m.txt")).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.starts_with("SKIPPED [gpu] ") && text.contains("\nSKIPPED [machine] "));
}

#[test]
fn a_reason_spanning_lines_is_recorded_as_one() {
    let mut s = skip(Need::Machine);
    s.reason = "a\nb".into();
    assert!(s.line().contains(": a b ("), "{}", s.line());
}

const DEMO: Tool = Tool {
    name: "demo",
    env: Some("DEMO"),
    programs: &["demo-tool"],
    places: &["ci/demo"],
    holds: &[],
    install: "install demo",
};

fn env(pairs: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> {
    let pairs: Vec<(String, OsString)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
        .collect();
    move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

fn executable(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_tool_is_found_by_its_variable_then_path_then_its_places() {
    let d = Scratch::new("find");
    let (bin, root) = (d.0.join("bin"), d.0.join("root"));
    let none = Path::new("/nonexistent-hrr-testkit");
    // Nowhere.
    assert_eq!(find_with(&DEMO, env(&[("PATH", none)]), &root), None);
    // A fixed place under the root.
    executable(&root.join("ci/demo"));
    assert_eq!(
        find_with(&DEMO, env(&[("PATH", none)]), &root),
        Some(root.join("ci/demo"))
    );
    // PATH before the places; a file that is not executable is no program.
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("demo-tool"), "").unwrap();
    assert_eq!(
        find_with(&DEMO, env(&[("PATH", &bin)]), &root),
        Some(root.join("ci/demo"))
    );
    executable(&bin.join("demo-tool"));
    assert_eq!(
        find_with(&DEMO, env(&[("PATH", &bin)]), &root),
        Some(bin.join("demo-tool"))
    );
    // The variable alone decides: a path, a bare name on PATH, or nothing when bogus.
    let other = d.0.join("other/demo");
    executable(&other);
    assert_eq!(
        find_with(&DEMO, env(&[("PATH", &bin), ("DEMO", &other)]), &root),
        Some(other)
    );
    assert_eq!(
        find_with(
            &DEMO,
            env(&[("PATH", &bin), ("DEMO", Path::new("demo-tool"))]),
            &root
        ),
        Some(bin.join("demo-tool"))
    );
    assert_eq!(
        find_with(&DEMO, env(&[("PATH", &bin), ("DEMO", none)]), &root),
        None
    );
    // Empty is unset.
    assert_eq!(
        find_with(
            &DEMO,
            env(&[("PATH", &bin), ("DEMO", Path::new(""))]),
            &root
        ),
        Some(bin.join("demo-tool"))
    );
}

#[test]
fn a_directory_tool_must_hold_its_files() {
    const DIR: Tool = Tool {
        name: "headers",
        env: None,
        programs: &[],
        places: &["inc"],
        holds: &["a.h", "b.h"],
        install: "install headers",
    };
    let d = Scratch::new("holds");
    let inc = d.0.join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(inc.join("a.h"), "").unwrap();
    assert_eq!(find_with(&DIR, |_| None, &d.0), None);
    std::fs::write(inc.join("b.h"), "").unwrap();
    assert_eq!(find_with(&DIR, |_| None, &d.0), Some(inc));
}

#[test]
fn a_missing_tool_says_where_it_was_looked_for_and_how_to_install_it() {
    let m = crate::tools::XMLLINT.missing();
    assert_eq!(
        m,
        "xmllint not found (PATH (xmllint)): apt install libxml2-utils (.ci/install does)"
    );
}

#[test]
fn the_process_file_names_package_and_binary_without_cargo_s_hash() {
    let f = crate::process_file();
    assert!(
        f.starts_with("hrr-testkit.hrr_testkit.") && f.ends_with(".txt"),
        "{f}"
    );
}

#[test]
fn a_built_artifact_older_than_a_source_or_missing_is_stale() {
    use crate::built::{stale, Artifact};
    use std::time::{Duration, SystemTime};
    let t = std::env::temp_dir().join(format!("hrr-testkit-built-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&t);
    std::fs::create_dir_all(t.join("src/inner")).unwrap();
    let a = Artifact {
        file: "libx.so",
        package: "x",
        sources: &["src", "build.rs"],
    };
    let at = |p: &str, secs: u64| {
        let f = std::fs::File::create(t.join(p)).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
    };
    let so = t.join("libx.so");
    assert!(stale(&a, &so, &t).unwrap().ends_with("libx.so is missing"));
    at("src/inner/a.rs", 1_000);
    at("build.rs", 2_000);
    at("libx.so", 1_500);
    let why = stale(&a, &so, &t).unwrap();
    assert!(
        why.contains("is older than its sources (src, build.rs)"),
        "{why}"
    );
    at("libx.so", 3_000);
    assert_eq!(stale(&a, &so, &t), None);
    at("src/inner/a.rs", 4_000);
    assert!(
        stale(&a, &so, &t).is_some(),
        "a file deep in a source directory counts"
    );
    let _ = std::fs::remove_dir_all(&t);
}
