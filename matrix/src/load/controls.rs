//! The validator's `controls` section: unique names, a patch path inside the repository
//! (and, given the cases' root, present), guard cases, family patterns bounded and each
//! matching a declared family, every guard and `keep_passing` case known.

use std::collections::BTreeSet;
use std::path::Path;

use super::Validator;
use crate::glob;
use crate::schema::Matrix;

/// At most this many family patterns per control.
const MAX_CONTROL_FAMILIES: usize = 32;

impl Validator<'_> {
    pub(super) fn check_controls(&mut self, m: &Matrix, root: Option<&Path>) {
        let mut seen = BTreeSet::new();
        let cases: BTreeSet<&str> = m.cases.iter().map(|c| c.name.as_str()).collect();
        for (i, c) in m.controls.iter().enumerate() {
            if !seen.insert(c.name.as_str()) {
                let at = self.pos.field("controls", i, "name", None);
                self.err(at, format!("control `{}` is declared twice", c.name));
            }
            match (&c.revert, &c.patch) {
                (Some(_), Some(_)) | (None, None) => {
                    let at = self.pos.item("controls", i);
                    self.err(
                        at,
                        format!(
                            "control `{}`: give exactly one of `revert: COMMIT` or `patch: FILE`",
                            c.name
                        ),
                    );
                }
                (None, Some(p)) => {
                    if let Some(why) = unsafe_relative_path(p) {
                        let at = self.pos.field("controls", i, "patch", None);
                        self.err(
                            at,
                            format!(
                                "control `{}`: patch `{p}` {why}: give a path inside the repository, relative to it",
                                c.name
                            ),
                        );
                    } else if let Some(cases_root) = root {
                        let repo = cases_root.parent().unwrap_or(cases_root);
                        let inside = match (repo.join(p).canonicalize(), repo.canonicalize()) {
                            (Ok(f), Ok(r)) => f.starts_with(r),
                            _ => true, // missing: reported below
                        };
                        if !inside {
                            let at = self.pos.field("controls", i, "patch", None);
                            self.err(
                                at,
                                format!(
                                    "control `{}`: patch `{p}` leads outside the repository through a symbolic link",
                                    c.name
                                ),
                            );
                        } else if !repo.join(p).is_file() {
                            let at = self.pos.field("controls", i, "patch", None);
                            self.err(
                                at,
                                format!(
                                    "control `{}`: patch {} does not exist",
                                    c.name,
                                    repo.join(p).display()
                                ),
                            );
                        }
                    }
                }
                (Some(_), None) => {
                    if c.reverse {
                        let at = self.pos.field("controls", i, "reverse", None);
                        self.err(
                            at,
                            format!("control `{}`: `reverse` applies to patches only", c.name),
                        );
                    }
                }
            }
            if c.guards.is_empty() {
                let at = self.pos.field("controls", i, "guards", None);
                self.err(at, format!("control `{}` names no guard cases", c.name));
            }
            if c.families.len() > MAX_CONTROL_FAMILIES {
                let at = self.pos.field("controls", i, "families", None);
                self.err(
                    at,
                    format!(
                        "control `{}`: {} families, at most {MAX_CONTROL_FAMILIES}",
                        c.name,
                        c.families.len()
                    ),
                );
            }
            for p in &c.families {
                if !m.families.iter().any(|f| glob::matches(p, &f.name)) {
                    let at = self.pos.field("controls", i, "families", Some(p));
                    self.err(at, format!("control `{}`: `{p}` matches no family", c.name));
                }
            }
            for g in c.guards.iter().chain(&c.keep_passing) {
                if !cases.contains(g.as_str()) {
                    let key = if c.guards.contains(g) {
                        "guards"
                    } else {
                        "keep_passing"
                    };
                    let at = self.pos.field("controls", i, key, Some(g));
                    self.err(at, format!("control `{}`: unknown case `{g}`", c.name));
                }
            }
        }
    }
}

/// Why `p` cannot name a file inside the repository by itself: absolute, or climbing out
/// with `..`. None when it is a plain relative path.
fn unsafe_relative_path(p: &str) -> Option<&'static str> {
    use std::path::Component;
    let path = Path::new(p);
    if path.is_absolute() {
        return Some("is absolute");
    }
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Some("climbs out with `..`");
    }
    None
}
