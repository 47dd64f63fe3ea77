//! The validator's `rules` section: each rule selects a family or a target (not both),
//! every pattern (family, target, case, tag) matches something the matrix declares, and
//! it skips or expects, with the issue or the reason that needs.

use super::Validator;
use crate::glob;
use crate::schema::Matrix;

impl Validator<'_> {
    pub(super) fn check_rules(&mut self, m: &Matrix) {
        for (i, r) in m.rules.iter().enumerate() {
            let at = self.pos.item("rules", i);
            if r.family.is_none() && r.target.is_none() {
                self.err(at, "rule selects no family or target: give `family:` or `target:` (a glob; `*` for all)".into());
            }
            if r.family.is_some() && r.target.is_some() {
                self.err(
                    at,
                    "rule gives both `family:` and `target:`: use one".into(),
                );
            }
            if let Some(p) = &r.family {
                if !m.families.iter().any(|f| glob::matches(p, &f.name)) {
                    let at = self.pos.field("rules", i, "family", None);
                    self.err(
                        at,
                        format!("rule: family `{p}` matches no family in the matrix"),
                    );
                }
            }
            if let Some(p) = &r.target {
                if !m
                    .families
                    .iter()
                    .flat_map(|f| &f.targets)
                    .any(|t| glob::matches(p, t))
                {
                    let at = self.pos.field("rules", i, "target", None);
                    self.err(
                        at,
                        format!("rule: target `{p}` matches no target of any family"),
                    );
                }
            }
            if let Some(p) = &r.case {
                if !m.cases.iter().any(|c| glob::matches(p, &c.name)) {
                    let at = self.pos.field("rules", i, "case", None);
                    let hint = if glob::is_glob(p) {
                        ""
                    } else {
                        " (unknown case name)"
                    };
                    self.err(at, format!("rule: case `{p}` matches no case{hint}"));
                }
            }
            if let Some(p) = &r.tag {
                if !m
                    .cases
                    .iter()
                    .flat_map(|c| &c.tags)
                    .any(|t| glob::matches(p, t))
                {
                    let at = self.pos.field("rules", i, "tag", None);
                    self.err(at, format!("rule: tag `{p}` is on no case"));
                }
            }
            match (r.skip, r.expect) {
                (Some(_), Some(_)) => self.err(at, "rule has both `skip` and `expect`: write two rules".into()),
                (None, None) => self.err(at, "rule has neither `skip` nor `expect`: it does nothing".into()),
                (Some(crate::schema::SkipKind::Disabled), None) => match &r.issue {
                    Some(u) if u.starts_with("https://") || u.starts_with("http://") => {}
                    Some(u) => {
                        let at = self.pos.field("rules", i, "issue", None);
                        self.err(at, format!("rule: `skip: disabled` needs an issue URL; `{u}` is not one"));
                    }
                    None => self.err(at, "rule: `skip: disabled` needs `issue:` with the URL of the issue that tracks it".into()),
                },
                _ => {
                    if r.reason.as_deref().is_none_or(|s| s.trim().is_empty()) {
                        let what = if r.skip.is_some() { "`skip: unsupported`" } else { "an expectation" };
                        self.err(at, format!("rule: {what} needs a `reason:`"));
                    }
                }
            }
        }
    }
}
