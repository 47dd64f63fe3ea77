//! capture/src has no import circles: reading each module's references to the others
//! (`crate::m`, `$crate::m`, and the crate's own macros by the module defining them),
//! the graph has no cycle. Comments are left out (a doc link is no dependency).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// A source file without its `//` comments (doc comments included).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier that starts `s`.
fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    &s[..end]
}

/// Offsets where `word` occurs in `code` not preceded by an identifier character.
fn word_starts<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(word)
        .map(|(i, _)| i)
        .filter(move |&i| !code[..i].ends_with(is_ident))
}

/// Module -> the modules it uses, from the sources (`lib.rs`, the root, is left out).
fn graph_of(sources: &BTreeMap<String, String>) -> Graph {
    let code: BTreeMap<&str, String> = sources
        .iter()
        .map(|(m, text)| (m.as_str(), code_of(text)))
        .collect();
    // Each crate macro, by the module that defines it.
    let mut macros: BTreeMap<String, String> = BTreeMap::new();
    for (m, c) in &code {
        for i in word_starts(c, "macro_rules!") {
            let name = ident_at(c[i + "macro_rules!".len()..].trim_start());
            macros.insert(name.to_string(), m.to_string());
        }
    }
    let mut g = Graph::new();
    for (m, c) in &code {
        let mut uses = BTreeSet::new();
        for i in word_starts(c, "crate::") {
            uses.insert(ident_at(&c[i + "crate::".len()..]).to_string());
        }
        for (name, owner) in &macros {
            let call = format!("{name}!");
            if word_starts(c, &call).next().is_some() {
                uses.insert(owner.clone());
            }
        }
        uses.retain(|u| u != m && code.contains_key(u.as_str()));
        g.insert(m.to_string(), uses);
    }
    g
}

/// A cycle of the graph, as the modules along it (first repeated at the end), if any.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        m: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|m| visit(g, m, &mut Vec::new(), &mut done))
}

fn capture_sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let path = e.unwrap().path();
        assert!(
            !path.is_dir(),
            "{}: nested modules are not read by this test; extend it",
            path.display()
        );
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|x| x == "rs") && stem != "lib" {
            out.insert(stem, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

#[test]
fn capture_modules_have_no_import_circles() {
    let g = graph_of(&capture_sources());
    if let Some(cycle) = find_cycle(&g) {
        panic!("capture/src has an import circle: {}", cycle.join(" -> "));
    }
    // The reading works: the direction the crate documents is seen.
    let uses = |a: &str, b: &str| g[a].contains(b);
    assert!(uses("state", "registry") && uses("state", "crash"));
    assert!(uses("generic", "real"), "the real! macro counts as a use");
    assert!(uses("shims", "generic") && uses("modules", "launch"));
    for low in ["real", "crash", "ffi", "registry", "alloc", "config"] {
        assert!(
            !g[low].iter().any(|m| m == "state"),
            "{low} must not reach up to state: {:?}",
            g[low]
        );
    }
}

#[test]
fn the_reader_finds_uses_and_cycles() {
    let src = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(m, t)| (m.to_string(), t.to_string()))
            .collect()
    };
    let g = graph_of(&src(&[
        (
            "a",
            "use crate::b::X;\n// crate::c in a comment\nfn f() { m!(1); }",
        ),
        ("b", "/// [`crate::a`]\nfn g() { crate::c::h() }"),
        ("c", "macro_rules! m { () => {} }\nfn h() { notm!(); }"),
    ]));
    assert_eq!(g["a"], BTreeSet::from(["b".to_string(), "c".to_string()]));
    assert_eq!(g["b"], BTreeSet::from(["c".to_string()]));
    assert!(g["c"].is_empty(), "{:?}", g["c"]);
    assert_eq!(find_cycle(&g), None);
    let g = graph_of(&src(&[
        ("a", "use crate::b;"),
        ("b", "use crate::c;"),
        ("c", "fn f() { $crate::a::x() }"),
    ]));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
