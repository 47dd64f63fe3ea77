//! Where each top-level section of the matrix text and each of its list items starts,
//! found by a line scan: what places the validator's errors at a line and column that
//! serde cannot give (an unknown name, a missing directory, a bound exceeded).

use std::collections::HashMap;

/// Where each top-level section and each of its list items starts (1-based lines).
pub(super) struct Positions {
    lines: Vec<String>,
    pub(super) sections: HashMap<String, (usize, Vec<usize>)>,
}

impl Positions {
    pub(super) fn scan(text: &str) -> Positions {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut sections: HashMap<String, (usize, Vec<usize>)> = HashMap::new();
        let mut current: Option<String> = None;
        let mut item_indent: Option<usize> = None;
        for (i, l) in lines.iter().enumerate() {
            let trimmed = l.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = l.len() - trimmed.len();
            if indent == 0 {
                if let Some(key) = l.split(':').next().filter(|k| !k.starts_with('-')) {
                    current = Some(key.trim().to_string());
                    item_indent = None;
                    sections.insert(key.trim().to_string(), (i + 1, Vec::new()));
                    continue;
                }
            }
            if let Some(sec) = &current {
                if trimmed.starts_with("- ") || trimmed == "-" {
                    let ind = *item_indent.get_or_insert(indent);
                    if ind == indent {
                        if let Some(s) = sections.get_mut(sec) {
                            s.1.push(i + 1);
                        }
                    }
                }
            }
        }
        Positions { lines, sections }
    }

    /// Line of item `idx` of `section`, else the section's line, else 1.
    pub(super) fn item(&self, section: &str, idx: usize) -> (usize, usize) {
        match self.sections.get(section) {
            Some((line, items)) => match items.get(idx) {
                Some(&l) => {
                    let col = self.lines[l - 1].find('-').map(|c| c + 1).unwrap_or(1);
                    (l, col)
                }
                None => (*line, 1),
            },
            None => (1, 1),
        }
    }

    /// Position of `key:` inside item `idx` of `section` (or of `needle` when given).
    pub(super) fn field(
        &self,
        section: &str,
        idx: usize,
        key: &str,
        needle: Option<&str>,
    ) -> (usize, usize) {
        let (start, col) = self.item(section, idx);
        let end = self
            .sections
            .get(section)
            .and_then(|(_, items)| items.get(idx + 1).copied())
            .unwrap_or_else(|| self.next_section_after(start));
        let key_pat = format!("{key}:");
        let mut key_line = None;
        for l in start..end.min(self.lines.len() + 1) {
            let text = &self.lines[l - 1];
            if key_line.is_none() {
                if let Some(c) = find_token(text, &key_pat) {
                    key_line = Some(l);
                    if needle.is_none() {
                        return (l, c + 1);
                    }
                }
            }
            if key_line.is_some() {
                if let Some(n) = needle {
                    if let Some(c) = find_token(text, n) {
                        return (l, c + 1);
                    }
                }
            }
        }
        key_line.map(|l| (l, 1)).unwrap_or((start, col))
    }

    fn next_section_after(&self, line: usize) -> usize {
        self.sections
            .values()
            .map(|(l, _)| *l)
            .filter(|&l| l > line)
            .min()
            .unwrap_or(self.lines.len() + 1)
    }
}

/// Column of `needle` in `text` where it is not part of a longer word.
fn find_token(text: &str, needle: &str) -> Option<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        let ends_word = needle.ends_with(':') || !after.is_some_and(word);
        if !before.is_some_and(word) && ends_word {
            return Some(at);
        }
        from = at + needle.len();
    }
    None
}
