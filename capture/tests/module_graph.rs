//! No crate of the workspace has import circles: reading each top-level module's
//! references to the others (`crate::m`, `$crate::m`, and the crate's own macros by the
//! module defining them), the graph has no cycle. A module is a file under `src/` or a
//! directory with its files; comments are left out (a doc link is no dependency). A
//! binary's modules use nothing defined in its `main.rs` (the root wires modules
//! together; what they share lives in a module of its own). No source file outside tests
//! is over 700 lines (a module's unit tests live in a `#[cfg(test)]` `tests.rs`). Replay
//! spells out no C function type: the ones it calls outside the table are declared once,
//! in `hrr_archive::api::sigs`, which capture's shims of the same functions are checked
//! against (`capture/src/sig_check.rs`) and whose real functions capture calls through
//! them.

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

/// The first name of every path that follows `crate::` in `code`, a `use crate::{a, b::c}`
/// group giving each of its members' first names.
fn crate_refs(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for i in word_starts(code, "crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident_at(group[start..j].trim_start()).to_string());
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident_at(group[start..j].trim_start()).to_string());
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident_at(rest).to_string());
        }
    }
    out.retain(|n| !n.is_empty());
    out
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
        uses.extend(crate_refs(c));
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

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// A crate's top-level modules (a file's stem or a directory's name) -> their sources,
/// a directory's files joined; the roots (`lib.rs`, `main.rs`) are left out.
fn sources_of(krate: &Path) -> BTreeMap<String, String> {
    let src = krate.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if rel.components().count() == 1 && (module == "lib" || module == "main") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        out.entry(module).or_default().push_str(&(text + "\n"));
    }
    out
}

fn capture_sources() -> BTreeMap<String, String> {
    sources_of(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// The workspace's member crates, from its Cargo.toml.
fn workspace_members() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let line = toml
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("the workspace lists its members on one line");
    let list = &line[line.find('[').unwrap() + 1..line.rfind(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m))
        .collect()
}

/// Items `main.rs` defines itself (functions, constants, statics, types), by name.
fn items_of_main(text: &str) -> BTreeSet<String> {
    let code = code_of(text);
    let mut items = BTreeSet::new();
    for kw in [
        "fn ", "const ", "static ", "struct ", "enum ", "type ", "trait ",
    ] {
        for i in word_starts(&code, kw) {
            let name = ident_at(code[i + kw.len()..].trim_start());
            if !name.is_empty() {
                items.insert(name.to_string());
            }
        }
    }
    items
}

#[test]
fn no_crate_has_an_import_circle() {
    let members = workspace_members();
    assert!(members.len() >= 8, "members read: {members:?}");
    let mut read = 0;
    for krate in &members {
        let name = krate.file_name().unwrap().to_string_lossy();
        let g = graph_of(&sources_of(krate));
        if let Some(cycle) = find_cycle(&g) {
            panic!("{name}/src has an import circle: {}", cycle.join(" -> "));
        }
        read += g.len();
    }
    assert!(read > 100, "only {read} modules read");
}

#[test]
fn a_binarys_modules_use_nothing_defined_in_its_main() {
    let mut binaries = 0;
    for krate in workspace_members() {
        let main = krate.join("src/main.rs");
        let Ok(text) = std::fs::read_to_string(&main) else {
            continue;
        };
        binaries += 1;
        let items = items_of_main(&text);
        for (module, source) in sources_of(&krate) {
            let code = code_of(&source);
            for used in crate_refs(&code) {
                assert!(
                    !items.contains(&used),
                    "{}: module {module} uses crate::{used}, which main.rs defines: \
                     move it into a module both can use",
                    krate.display()
                );
            }
        }
    }
    assert!(binaries >= 2, "replay and harness are binaries");
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
        (
            "b",
            "/// [`crate::a`]\nfn g() { crate::c::h() }\nuse crate::{c::{x, y}, d};",
        ),
        ("c", "macro_rules! m { () => {} }\nfn h() { notm!(); }"),
    ]));
    assert_eq!(g["a"], BTreeSet::from(["b".to_string(), "c".to_string()]));
    assert_eq!(g["b"], BTreeSet::from(["c".to_string()]));
    assert!(g["c"].is_empty(), "{:?}", g["c"]);
    assert_eq!(find_cycle(&g), None);
    assert_eq!(
        crate_refs("use crate::{c::{x, y}, d};\nuse crate::e::f;"),
        ["c", "d", "e"],
        "a group's members count as uses"
    );
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

/// The functions a C source defines for other files (top-level, not `static`), by name.
fn c_definitions(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let lines: Vec<&str> = code.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let starts_item = l.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if !starts_item || l.starts_with("static") || l.starts_with("typedef") || !l.contains('(') {
            continue;
        }
        // A definition's body opens on its line or the next (a declaration ends in `;`).
        let head = &l[..l.find('(').unwrap()];
        let opens = l.trim_end().ends_with('{')
            || lines
                .get(i + 1)
                .is_some_and(|n| n.trim_start().starts_with('{'));
        if opens && !l.trim_end().ends_with(';') {
            let name = head
                .rsplit(|c: char| !is_ident(c))
                .next()
                .unwrap_or_default();
            if !name.is_empty() {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// File -> the files whose functions it calls, over one build's C sources.
fn c_graph(sources: &BTreeMap<String, String>) -> Graph {
    let code: BTreeMap<&str, String> = sources
        .iter()
        .map(|(f, text)| (f.as_str(), code_of(text)))
        .collect();
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for (f, c) in &code {
        for d in c_definitions(c) {
            owner.insert(d, f.to_string());
        }
    }
    let mut g = Graph::new();
    for (f, c) in &code {
        let mut uses = BTreeSet::new();
        for (name, o) in &owner {
            if o != f && word_starts(c, &format!("{name}(")).next().is_some() {
                uses.insert(o.clone());
            }
        }
        g.insert(f.to_string(), uses);
    }
    g
}

/// The stand-in runtime's C sources have no circles either: per build (standin/sources.txt),
/// no file calls into a file that calls back into it, however indirectly (graph.c reaches
/// core.c's capture points through hooks it installs).
#[test]
fn the_stand_in_sources_have_no_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../standin");
    let list = std::fs::read_to_string(root.join("sources.txt")).unwrap();
    let mut builds = 0;
    for line in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let files = line.split_once(':').expect("VENDOR SONAME: FILE...").1;
        let sources: BTreeMap<String, String> = files
            .split_whitespace()
            .map(|f| {
                (
                    f.to_string(),
                    std::fs::read_to_string(root.join(f)).unwrap(),
                )
            })
            .collect();
        let g = c_graph(&sources);
        assert!(
            g["core.c"].is_empty() && g.values().filter(|u| !u.is_empty()).count() > 5,
            "core.c calls no other file, and the vendor files call core's: {g:?}"
        );
        if let Some(cycle) = find_cycle(&g) {
            panic!("standin/ ({line}) has a circle: {}", cycle.join(" -> "));
        }
        builds += 1;
    }
    assert_eq!(builds, 2, "an AMD and an NVIDIA build");
    // The reading works: a definition and a call across two files make an edge both ways.
    let two = BTreeMap::from([
        (
            "a.c".to_string(),
            "int f(void) {\n    return g();\n}\n".to_string(),
        ),
        (
            "b.c".to_string(),
            "int g(void)\n{\n    return f();\n}\nstatic int h(void) { return 0; }\n".to_string(),
        ),
    ]);
    assert_eq!(find_cycle(&c_graph(&two)).map(|c| c.len()), Some(3));
}

/// The most lines a source file outside tests may have: past it, a file is split by role
/// (DESIGN.md, "Crates and files": a line per file).
const MAX_LINES: usize = 700;

/// Whether a file under a crate's `src/` (`rel`) is test code, exempt from [`MAX_LINES`]:
/// a `tests.rs` or a file under a `tests/` directory.
fn is_test_file(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "tests.rs")
        || rel
            .parent()
            .is_some_and(|d| d.components().any(|c| c.as_os_str() == "tests"))
}

/// Whether `parent` (a module's source) declares its `tests` module as a file compiled for
/// tests only: `#[cfg(test)] mod tests;`, on one line or two.
fn declares_test_module(parent: &str) -> bool {
    let code = code_of(parent);
    let tokens: Vec<&str> = code.split_whitespace().collect();
    tokens
        .windows(3)
        .any(|w| w == ["#[cfg(test)]", "mod", "tests;"])
}

/// The files that may declare the `tests` module at `dir` (a directory under `src/`, or
/// `src/` itself): `dir.rs` or `dir/mod.rs`, or the crate's roots.
fn parents_of_tests_in(src: &Path, dir: &Path) -> Vec<std::path::PathBuf> {
    if dir == src {
        return vec![src.join("lib.rs"), src.join("main.rs")];
    }
    vec![dir.with_extension("rs"), dir.join("mod.rs")]
}

/// Why an exempt file's exemption does not hold, if it does not: the `tests` module it is
/// (a `tests.rs`) or lies in (a `tests/` directory) must be declared
/// `#[cfg(test)] mod tests;` by its parent, so none of it is compiled outside tests.
fn exemption_problem(src: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src).unwrap();
    // The `tests` module: the first `tests` component, or the file itself.
    let mut at = src.to_path_buf();
    for c in rel.components() {
        let name = c.as_os_str();
        if name == "tests" || name == "tests.rs" {
            break;
        }
        at.push(name);
    }
    let parents = parents_of_tests_in(src, &at);
    let declared = parents.iter().any(|p| {
        std::fs::read_to_string(p)
            .map(|t| declares_test_module(&t))
            .unwrap_or(false)
    });
    // Named from the workspace root (`src`'s grandparent), as the line-count failures are.
    let shown = src
        .parent()
        .and_then(Path::parent)
        .and_then(|root| path.strip_prefix(root).ok())
        .unwrap_or(path);
    (!declared).then(|| {
        format!(
            "{} is exempt as test code only if its parent ({}) declares \
             `#[cfg(test)] mod tests;`",
            shown.display(),
            parents
                .iter()
                .map(|p| p.strip_prefix(src).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        )
    })
}

/// No source file of any crate is over [`MAX_LINES`] lines, tests apart: a module's
/// unit tests live in its `tests.rs` (`foo.rs` declares `#[cfg(test)] mod tests;`, the tests
/// are `foo/tests.rs`), and such a file is exempt only where it is such a module.
#[test]
fn no_source_file_is_over_700_lines() {
    // The exemption is read as meant.
    assert!(declares_test_module("x\n#[cfg(test)]\nmod tests;\n"));
    assert!(declares_test_module("#[cfg(test)] mod tests;"));
    assert!(!declares_test_module("mod tests;"));
    assert!(!declares_test_module("// #[cfg(test)]\nmod tests;"));
    assert!(!declares_test_module("#[cfg(test)]\nmod tests_helpers;"));
    assert!(is_test_file(Path::new("a/tests.rs")) && is_test_file(Path::new("tests/b.rs")));
    assert!(!is_test_file(Path::new("a/contests.rs")) && !is_test_file(Path::new("a/b.rs")));
    let scratch = std::env::temp_dir().join(format!("hrr-module-graph-{}", std::process::id()));
    let src = scratch.join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::create_dir_all(src.join("b/tests")).unwrap();
    let put = |f: &str, text: &str| std::fs::write(src.join(f), text).unwrap();
    put("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n");
    put("a.rs", "pub fn f() {}\nmod tests;\n");
    put("b.rs", "#[cfg(test)] mod tests;\n");
    let (a, b, root_tests) = (
        src.join("a/tests.rs"),
        src.join("b/tests/x.rs"),
        src.join("tests.rs"),
    );
    assert!(exemption_problem(&src, &a).is_some_and(|e| e.contains("a.rs or a/mod.rs")));
    assert_eq!(exemption_problem(&src, &b), None);
    assert_eq!(exemption_problem(&src, &root_tests), None);
    put("a.rs", "pub fn f() {}\n#[cfg(test)]\nmod tests;\n");
    assert_eq!(exemption_problem(&src, &a), None);
    std::fs::remove_dir_all(&scratch).unwrap();

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (mut read, mut exempt) = (0, 0);
    let mut problems = Vec::new();
    for krate in workspace_members() {
        let src = krate.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        for path in files {
            read += 1;
            let rel = path.strip_prefix(&src).unwrap();
            if is_test_file(rel) {
                exempt += 1;
                problems.extend(exemption_problem(&src, &path));
                continue;
            }
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            if lines > MAX_LINES {
                problems.push(format!(
                    "{}: {lines} lines, over {MAX_LINES}: split it by role (its tests into \
                     a tests.rs of their own first)",
                    path.strip_prefix(root).unwrap_or(&path).display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(read > 200, "only {read} source files read");
    assert!(exempt > 5, "only {exempt} test files found");
}

/// The C function types `code` spells out (`extern "C" fn(..) -> R` anywhere but a
/// function's definition, which names the function before its parameters), whitespace
/// and the C types' module paths removed; a macro's `$` pattern is no type.
fn spelled_c_fn_types(code: &str) -> BTreeSet<String> {
    let needle = "extern \"C\" fn(";
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices(needle) {
        let mut i = at + needle.len();
        let mut depth = 1;
        let bytes = code.as_bytes();
        while depth > 0 && i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        let rest = &code[i..];
        let ret = rest
            .trim_start()
            .strip_prefix("->")
            .map(|r| r.split(|c| ";,={)\n".contains(c)).next().unwrap_or(""))
            .unwrap_or("");
        let mut t: String = format!("{}->{ret}", &code[at..i])
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        for path in ["::std::os::raw::", "std::os::raw::", "std::ffi::", "libc::"] {
            t = t.replace(path, "");
        }
        if !t.contains('$') {
            out.insert(t);
        }
    }
    out
}

fn c_fn_types_of(krate: &str) -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(&root.join(krate).join("src"), &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        for t in spelled_c_fn_types(&code) {
            out.entry(t).or_insert_with(|| f.display().to_string());
        }
    }
    out
}

#[test]
fn replay_spells_no_c_function_type_and_capture_calls_the_registrys_through_it() {
    let sample = "type A = unsafe extern \"C\" fn(*mut c_void, c_int) -> c_int;\n\
                  pub unsafe extern \"C\" fn shim(a: c_int) -> c_int { 0 }\n\
                  let f: unsafe extern \"C\" fn(*mut ::std::os::raw::c_void,\n c_int)\n -> c_int = g;";
    let found: Vec<String> = spelled_c_fn_types(sample).into_iter().collect();
    assert_eq!(found, ["extern\"C\"fn(*mutc_void,c_int)->c_int"]);
    let replay = c_fn_types_of("replay");
    assert!(
        replay.is_empty(),
        "replay spells C function types; take them from registry/src/sigs.rs: {replay:#?}"
    );
    // Capture's shims of those functions are checked against the registry's types when
    // it compiles (sig_check.rs); the real functions behind them are called through the
    // same types, never through a type spelled again.
    let check = code_of(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sig_check.rs"))
            .unwrap(),
    );
    let shims: BTreeSet<&str> = check
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter_map(|w| w.strip_prefix("crate::"))
        .filter_map(|p| p.rsplit("::").next())
        .collect();
    assert!(shims.len() >= 20, "{shims:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut spelled = Vec::new();
    for f in files {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        for (at, _) in code.match_indices("real!(") {
            let inner = &code[at + "real!(".len()..];
            let Some((name, ty)) = inner.split_once(':') else {
                continue;
            };
            if shims.contains(name.trim()) && !ty.trim_start().starts_with("sigs::") {
                spelled.push(format!("{} in {}", name.trim(), f.display()));
            }
        }
    }
    assert!(
        spelled.is_empty(),
        "real functions of the registry's shims called through a type spelled again: {spelled:?}"
    );
}

/// Every directory module under `src` (recursively), and its children's names -> sources
/// (a child directory's `mod.rs` or the `name.rs` beside it), each without its
/// `#[cfg(test)] mod tests` (which may `use super::*`).
fn directory_modules(src: &Path) -> Vec<(std::path::PathBuf, BTreeMap<String, String>)> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let mut children: BTreeMap<String, String> = BTreeMap::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                // A child directory's own files are read at its level; here it is its
                // `mod.rs` (or the `name.rs` beside it, read as a file).
                dirs.push(path.clone());
                let text = std::fs::read_to_string(path.join("mod.rs")).unwrap_or_default();
                children.entry(name).or_default().push_str(&text);
            } else if path.extension().is_some_and(|x| x == "rs")
                && !["mod", "lib", "main", "tests"].contains(&name.as_str())
            {
                let text = std::fs::read_to_string(&path).unwrap();
                children.entry(name).or_default().push_str(&text);
            }
        }
        for text in children.values_mut() {
            let code = code_of(text);
            let end = code.find("#[cfg(test)]\nmod tests").unwrap_or(code.len());
            *text = code[..end].to_string();
        }
        if dir != src {
            out.push((dir, children));
        }
    }
    out
}

/// A directory module's children: `super::NAME` naming a sibling is an edge of the
/// graph; naming anything else (an item of the parent) is an upward use, returned.
fn sibling_graph(children: &BTreeMap<String, String>) -> (Graph, Vec<String>) {
    let mut g = Graph::new();
    let mut upward = Vec::new();
    for (m, code) in children {
        let mut uses = BTreeSet::new();
        for i in word_starts(code, "super::") {
            let rest = &code[i + "super::".len()..];
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .map(|n| ident_at(n.trim_start()).to_string())
                    .filter(|n| !n.is_empty())
                    .collect(),
                None => vec![ident_at(rest).to_string()],
            };
            for n in names {
                if children.contains_key(&n) {
                    uses.insert(n);
                } else if n != "super" {
                    upward.push(format!("{m} uses super::{n}"));
                }
            }
        }
        uses.remove(m);
        g.insert(m.clone(), uses);
    }
    (g, upward)
}

#[test]
fn replays_modules_use_nothing_of_their_parent_and_their_siblings_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../replay/src");
    let dirs = directory_modules(&src);
    assert!(
        dirs.iter()
            .any(|(d, c)| d.ends_with("engine") && c.len() > 20),
        "replay/src/engine read: {:?}",
        dirs.iter().map(|(d, _)| d).collect::<Vec<_>>()
    );
    for (dir, children) in &dirs {
        let (g, upward) = sibling_graph(children);
        assert!(
            upward.is_empty(),
            "{}: a module uses an item its parent defines (move it into a sibling both \
             can use): {upward:?}",
            dir.display()
        );
        if let Some(cycle) = find_cycle(&g) {
            panic!(
                "{}: the modules form a circle: {}",
                dir.display(),
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_sibling_reader_sees_upward_uses_and_circles() {
    let children: BTreeMap<String, String> = [
        ("a", "use super::b::X;\nuse super::{c, Ctx};"),
        ("b", "fn f() { super::a::g() }"),
        ("c", "use super::super::Root;"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), t.to_string()))
    .collect();
    let (g, upward) = sibling_graph(&children);
    assert_eq!(upward, vec!["a uses super::Ctx", "c uses super::Root"]);
    assert!(g["a"].contains("b") && g["a"].contains("c"));
    assert_eq!(
        find_cycle(&g).unwrap(),
        vec!["a".to_string(), "b".into(), "a".into()]
    );
}
