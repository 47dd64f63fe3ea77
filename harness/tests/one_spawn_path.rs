//! Every child the harness starts gets the allow-listed environment (issue 20: the
//! stand-in's `cc` once ran with the harness's whole environment): the code outside
//! `src/process.rs` and `src/process/` makes no `Command` of its own, only through
//! `process::command` (a tool) or `process::prepare` (a case and what runs with it).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_child_is_spawned_outside_the_process_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "{} files under {}",
        files.len(),
        src.display()
    );
    let mut offenders = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel == Path::new("process.rs") || rel.starts_with("process") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        // Unit tests may build their own commands; the code they test may not.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            if line.contains("Command::new(") && !line.trim_start().starts_with("//") {
                offenders.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "children spawned without the allow-list (use process::command or process::prepare):\n{}",
        offenders.join("\n")
    );
}
