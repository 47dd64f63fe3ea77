//! The validator's `families` section: unique valid names, vendor and targets agreeing,
//! shards and GPUs per runner bounded, an AMD family's `min_rocm` new enough for each of
//! its targets (`rocm.rs`).

use std::collections::BTreeSet;

use super::{valid_name, Validator, MAX_GPUS_PER_RUNNER, MAX_SHARDS};
use crate::schema::{Family, Matrix, Vendor};

impl Validator<'_> {
    pub(super) fn check_families(&mut self, m: &Matrix) {
        let mut seen = BTreeSet::new();
        if m.families.is_empty() {
            let at = self.pos.item("families", 0);
            self.err(at, "no families declared".into());
        }
        for (i, f) in m.families.iter().enumerate() {
            if !seen.insert(f.name.as_str()) {
                let at = self.pos.field("families", i, "name", None);
                self.err(at, format!("family `{}` is declared twice", f.name));
            }
            if !valid_name(&f.name) {
                let at = self.pos.field("families", i, "name", None);
                self.err(
                    at,
                    format!(
                        "family name `{}` may hold only letters, digits, `_` and `-`",
                        f.name
                    ),
                );
            }
            if f.targets.is_empty() {
                let at = self.pos.field("families", i, "targets", None);
                self.err(at, format!("family `{}` has no targets", f.name));
            }
            for t in &f.targets {
                let ok = match f.vendor {
                    Vendor::Amd => {
                        t.starts_with("gfx")
                            && t.len() > 3
                            && t[3..].chars().all(|c| c.is_ascii_hexdigit())
                    }
                    Vendor::Nvidia => {
                        t.starts_with("sm_")
                            && t.len() > 3
                            && t[3..]
                                .trim_end_matches(['a', 'f'])
                                .chars()
                                .all(|c| c.is_ascii_digit())
                            && t[3..].chars().next().is_some_and(|c| c.is_ascii_digit())
                    }
                };
                if !ok {
                    let at = self.pos.field("families", i, "targets", Some(t));
                    let want = match f.vendor {
                        Vendor::Amd => "an AMD target such as gfx90a or gfx1100",
                        Vendor::Nvidia => "an NVIDIA target such as sm_90",
                    };
                    self.err(
                        at,
                        format!("family `{}`: target `{t}` is not {want}", f.name),
                    );
                }
            }
            if f.runner.is_empty() {
                let at = self.pos.field("families", i, "runner", None);
                self.err(at, format!("family `{}` has no runner labels", f.name));
            }
            if !(1..=MAX_SHARDS).contains(&f.shards) {
                let at = self.pos.field("families", i, "shards", None);
                self.err(
                    at,
                    format!(
                        "family `{}`: shards must be 1 to {MAX_SHARDS} (a workflow's matrix has at most {MAX_SHARDS} jobs), not {}",
                        f.name, f.shards
                    ),
                );
            }
            if !(1..=MAX_GPUS_PER_RUNNER).contains(&f.gpus_per_runner) {
                let at = self.pos.field("families", i, "gpus_per_runner", None);
                self.err(
                    at,
                    format!(
                        "family `{}`: gpus_per_runner must be 1 to {MAX_GPUS_PER_RUNNER}, not {}",
                        f.name, f.gpus_per_runner
                    ),
                );
            }
            self.check_min_rocm(i, f);
            if f.vendor == Vendor::Amd && f.cuda_runtime.is_some() {
                let at = self.pos.field("families", i, "cuda_runtime", None);
                self.err(
                    at,
                    format!(
                        "family `{}`: cuda_runtime is for NVIDIA families only",
                        f.name
                    ),
                );
            }
            for k in f.env.keys() {
                if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    let at = self.pos.field("families", i, "env", Some(k));
                    self.err(
                        at,
                        format!(
                            "family `{}`: `{k}` is not an environment variable name",
                            f.name
                        ),
                    );
                }
            }
        }
    }

    /// An AMD family's minimum ROCm is a release at least what each target needs; an
    /// NVIDIA family names none. (The repository's matrix names one for every AMD family:
    /// `tests/matrix_files.rs` checks it.)
    fn check_min_rocm(&mut self, i: usize, f: &Family) {
        let at = self.pos.field("families", i, "min_rocm", None);
        let name = &f.name;
        match (f.vendor, f.min_rocm.as_deref()) {
            (Vendor::Nvidia, Some(_)) => self.err(
                at,
                format!("family `{name}`: min_rocm is for AMD families only"),
            ),
            (Vendor::Amd, None) => {}
            (Vendor::Amd, Some(text)) => match crate::rocm::parse(text) {
                Err(e) => self.err(at, format!("family `{name}`: min_rocm {e}")),
                Ok(min) => {
                    for t in &f.targets {
                        if let Some((need, why)) =
                            crate::rocm::required(t).filter(|(n, _)| *n > min)
                        {
                            self.err(
                                at,
                                format!("family `{name}`: min_rocm {min} is too old for target {t}: {why} ({need})"),
                            );
                        }
                    }
                }
            },
            (Vendor::Nvidia, None) => {}
        }
    }
}
