//! Shell-style globs for rule patterns: `*` any run of characters, `?` one character,
//! everything else literal. Enough for `gfx11*`, `sm_9?`, `big_*`; no classes, no escapes.

/// Whether `text` matches `pattern` entirely.
pub fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with one backtrack point for the last `*`: linear in practice.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether the pattern has glob characters at all.
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs_match_what_a_shell_would() {
        assert!(matches("gfx11*", "gfx110x"));
        assert!(matches("gfx11*", "gfx1151"));
        assert!(!matches("gfx11*", "gfx120x"));
        assert!(matches("*", ""));
        assert!(matches("sm_9?", "sm_90"));
        assert!(!matches("sm_9?", "sm_9"));
        assert!(matches("*copy*", "big_copy_1g"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXbYY"));
        assert!(matches("exact", "exact"));
        assert!(!matches("exact", "exactly"));
    }
}
