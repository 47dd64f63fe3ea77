//! What a matrix file may contain before the YAML parser sees it: a bounded size and
//! nesting depth, one document, no tags, anchors or aliases, and no key left without a
//! value. These are refused with their line and column by a scan of the text, in time
//! linear in its length: the parser itself would spend minutes on 100,000 nested
//! brackets, expand alias bombs, or silently read `timeout:` as "no timeout".

use crate::error::MatrixError;
use std::path::Path;

/// Largest matrix file read (ours is about 10 KiB).
pub const MAX_BYTES: usize = 1 << 20;
/// Deepest nesting of flow collections (`[`, `{`) and block indentation levels.
pub const MAX_DEPTH: usize = 32;

/// The text with quoted strings and comments blanked, so structural characters inside
/// them are not mistaken for structure. Lengths and columns are preserved.
fn blank_quotes_and_comments(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in line.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                    out.push(c);
                } else {
                    out.push(' ');
                }
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                    out.push(c);
                } else if c == '#' && (prev == ' ' || prev == '\t' || out.is_empty()) {
                    break;
                } else {
                    out.push(c);
                }
            }
        }
        prev = c;
    }
    out
}

/// Checks `text`; every problem found, in file order.
pub fn check(text: &str, file: &Path) -> Vec<MatrixError> {
    let mut errors = Vec::new();
    let mut err = |line: usize, column: usize, message: String| {
        errors.push(MatrixError {
            file: file.to_path_buf(),
            line,
            column,
            message,
        })
    };
    if text.len() > MAX_BYTES {
        err(
            1,
            1,
            format!(
                "the matrix is {} bytes; the most read is {MAX_BYTES}",
                text.len()
            ),
        );
        return errors;
    }
    let lines: Vec<String> = text.lines().map(blank_quotes_and_comments).collect();
    let mut flow_depth = 0usize;
    let mut indents: Vec<usize> = Vec::new();
    let mut seen_content = false;
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        let trimmed = l.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        let indent = l.len() - trimmed.len();
        if trimmed == "---" || trimmed.starts_with("--- ") || trimmed == "..." {
            if seen_content {
                err(
                    n,
                    1,
                    "a second YAML document: the matrix is one document".into(),
                );
                return errors;
            }
            continue;
        }
        seen_content = true;
        // Block nesting: the stack of indentation levels, plus `- ` items on one line.
        if flow_depth == 0 {
            while indents.last().is_some_and(|&top| top > indent) {
                indents.pop();
            }
            if indents.last() != Some(&indent) {
                indents.push(indent);
            }
            let dashes = trimmed
                .split_inclusive(' ')
                .take_while(|t| t.trim() == "-")
                .count();
            if indents.len() + dashes > MAX_DEPTH {
                err(
                    n,
                    indent + 1,
                    format!("nested more than {MAX_DEPTH} levels deep"),
                );
                return errors;
            }
        }
        let mut prev = ' ';
        for (col, c) in l.char_indices() {
            let token_start = matches!(prev, ' ' | '\t' | '[' | '{' | ',' | ':' | '-') || col == 0;
            match c {
                '[' | '{' => {
                    flow_depth += 1;
                    if flow_depth > MAX_DEPTH {
                        err(
                            n,
                            col + 1,
                            format!("brackets nested more than {MAX_DEPTH} levels deep"),
                        );
                        return errors;
                    }
                }
                ']' | '}' => flow_depth = flow_depth.saturating_sub(1),
                '!' if token_start => err(
                    n,
                    col + 1,
                    "YAML tags (`!name`) are not part of the matrix schema".into(),
                ),
                // An anchor or alias name is any run of characters but blanks and flow
                // indicators (`&_t`, `*-x` included: issue 20's 5.3 GB alias bomb used them).
                '&' | '*'
                    if token_start
                        && l[col + 1..].starts_with(|c: char| {
                            !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}')
                        }) =>
                {
                    err(
                        n,
                        col + 1,
                        "YAML anchors and aliases (`&name`, `*name`) are not part of the matrix schema"
                            .into(),
                    )
                }
                _ => {}
            }
            prev = c;
        }
        // `key:` with nothing after it must open a nested block.
        let body = trimmed.trim_start_matches("- ").trim_end();
        if flow_depth == 0 && body.ends_with(':') && !body.contains(": ") {
            let key = body.trim_end_matches(':');
            let next = lines[i + 1..].iter().find(|x| !x.trim().is_empty());
            let opens_block = next.is_some_and(|x| {
                let t = x.trim_start();
                let ind = x.len() - t.len();
                let key_col = indent + (trimmed.len() - body.len());
                ind > key_col || (ind == key_col && t.starts_with("- "))
            });
            if !opens_block {
                err(
                    n,
                    indent + 1,
                    format!("`{key}` has no value (write one, or leave the key out)"),
                );
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(text: &str) -> Vec<(usize, usize, String)> {
        check(text, Path::new("m.yaml"))
            .into_iter()
            .map(|e| (e.line, e.column, e.message))
            .collect()
    }

    #[test]
    fn an_ordinary_matrix_passes() {
        let ok = "version: 1\n# a comment with ! & * [ {\ncases:\n  - name: a\n    tags: [x, \"y!\"]\n    env:\n      K: '&v'\n  - name: b\n";
        assert_eq!(msgs(ok), vec![]);
        let real = include_str!("../matrix.yaml");
        assert_eq!(msgs(real), vec![]);
    }

    #[test]
    fn deep_brackets_are_refused_quickly() {
        let t = format!("cases: {}", "[".repeat(100_000));
        let start = std::time::Instant::now();
        let m = msgs(&t);
        assert_eq!(m.len(), 1);
        assert!(m[0].2.contains("nested more than 32"), "{m:?}");
        assert!(start.elapsed().as_secs() < 2);
        let t = format!(
            "cases:\n{}",
            (0..40)
                .map(|i| format!("{}- a:\n", "  ".repeat(i)))
                .collect::<String>()
        );
        assert!(msgs(&t)[0].2.contains("nested more than"));
    }

    #[test]
    fn tags_anchors_documents_and_blank_values_are_located() {
        assert_eq!(msgs("version: !!int 1\n")[0].0, 1);
        assert!(msgs("a: &x [1]\nb: *x\n").len() == 2);
        // Names that start with neither a letter nor a digit are anchors too.
        assert!(msgs("a: &_t [1]\nb: *_t\nc: &-u 2\nd: [*-u]\n").len() == 4);
        // A glob or an ampersand in prose is no anchor.
        assert!(msgs("family: \"gfx11*\"\nreason: a & b, R&D\n").is_empty());
        assert_eq!(msgs("version: 1\n---\nversion: 1\n")[0].0, 2);
        let m = msgs("cases:\n  - name: a\n    timeout:\n  - name: b\n");
        assert_eq!(
            m,
            vec![(
                3,
                5,
                "`timeout` has no value (write one, or leave the key out)".into()
            )]
        );
        assert_eq!(msgs("a:\n- x\n"), vec![]);
    }
}
