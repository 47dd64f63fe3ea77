//! libhrr_capture.so exports exactly the symbols archive's API declares: each vendor
//! symbol of each table row and each hand-written row (`hrr_archive::api::exported_symbols`),
//! no more (an undeclared export would intercept a call no one records or replays) and no
//! fewer (a declared symbol without a shim would let the program's call bypass capture).
//! The built library's dynamic symbol table is read with `nm -D`.

use std::collections::BTreeSet;
use std::process::Command;

use hrr_archive::api::exported_symbols;

mod common;
use common::capture_so;

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
        "exported but declared in neither API_TABLE, HAND_WRITTEN nor PROCESS_HOOKS: {undeclared:?}"
    );
    assert!(declared.len() > 100, "{} symbols", declared.len());
}

struct Row {
    symbol: &'static str,
    owner: &'static str,
}

#[test]
fn each_hand_written_symbol_lives_in_the_module_its_row_names() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rows = hrr_archive::api::HAND_WRITTEN
        .iter()
        .map(|h| (h.symbol, h.owner))
        .chain(hrr_archive::api::PROCESS_HOOKS.iter().copied());
    for (symbol, owner) in rows {
        let h = Row { symbol, owner };
        let file = src.join(format!("{}.rs", h.owner));
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: owner {}: {e}", h.symbol, file.display()));
        let named = text.match_indices(h.symbol).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + h.symbol.len()..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            !ident(before) && !ident(after)
        });
        assert!(named, "{} is not defined in {}", h.symbol, file.display());
    }
}
