//! libhrr_capture.so exports exactly the symbols archive's API declares: each vendor
//! symbol of each table row and each hand-written row (`hrr_archive::api::exported_symbols`),
//! no more (an undeclared export would intercept a call no one records or replays) and no
//! fewer (a declared symbol without a shim would let the program's call bypass capture).
//! The built library's dynamic symbol table is read with `nm -D`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use hrr_archive::api::exported_symbols;

/// The built cdylib: in this test's deps directory (cargo test) or one above it (cargo
/// build); built through cargo when neither has it.
fn capture_so() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let candidates = [
        deps.join("libhrr_capture.so"),
        deps.parent().unwrap().join("libhrr_capture.so"),
    ];
    if !candidates.iter().any(|c| c.is_file()) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let _ = Command::new(cargo)
            .args(["build", "-q", "-p", "hrr-capture"])
            .status();
    }
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .expect("libhrr_capture.so was not built")
}

/// The functions a shared library defines in its dynamic symbol table.
fn exported_functions(so: &std::path::Path) -> BTreeSet<String> {
    let o = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(so)
        .output()
        .expect("nm (binutils) is needed to read the library's dynamic symbols");
    assert!(
        o.status.success(),
        "nm -D {}: {}",
        so.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            // "ADDRESS TYPE NAME"; a versioned name carries "@VERSION".
            let mut f = l.split_whitespace();
            let (_addr, kind, name) = (f.next()?, f.next()?, f.next()?);
            let name = name.split('@').next().unwrap_or(name);
            matches!(kind, "T" | "W" | "i").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn the_library_exports_exactly_the_declared_symbols() {
    let declared: BTreeSet<String> = exported_symbols().map(str::to_string).collect();
    let exported = exported_functions(&capture_so());
    let undeclared: Vec<&String> = exported.difference(&declared).collect();
    let missing: Vec<&String> = declared.difference(&exported).collect();
    assert!(
        missing.is_empty(),
        "declared in hrr_archive::api but no shim exported: {missing:?}"
    );
    assert!(
        undeclared.is_empty(),
        "exported but declared in neither API_TABLE nor HAND_WRITTEN: {undeclared:?}"
    );
    assert!(declared.len() > 100, "{} symbols", declared.len());
}
