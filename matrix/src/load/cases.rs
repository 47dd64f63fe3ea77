//! The validator's `cases` section: unique names and directories, each case's kind with
//! the fields it allows (built from source or an archive), `stdout_varies` bounded,
//! `unstable` bounded and present exactly when `stability` is checked, and, given the
//! cases' root, every directory and file a case names present and every case directory
//! named.

use std::collections::BTreeSet;
use std::path::Path;

use super::{valid_name, Validator};
use crate::schema::{CaseKind, Check, Matrix, MAX_UNSTABLE_BYTES, MAX_UNSTABLE_RUNS};

/// At most this many `stdout_varies` patterns per case, each at most this long.
const MAX_STDOUT_VARIES: usize = 32;
const MAX_PATTERN_LEN: usize = 200;

impl Validator<'_> {
    pub(super) fn check_cases(&mut self, m: &Matrix, cases_root: Option<&Path>) {
        let mut seen = BTreeSet::new();
        let mut dirs = BTreeSet::new();
        for (i, c) in m.cases.iter().enumerate() {
            let at_name = self.pos.field("cases", i, "name", None);
            if !seen.insert(c.name.as_str()) {
                self.err(at_name, format!("case `{}` is declared twice", c.name));
            }
            if !valid_name(&c.name) {
                self.err(
                    at_name,
                    format!(
                        "case name `{}` may hold only letters, digits, `_` and `-`",
                        c.name
                    ),
                );
            }
            let at_dir = self.pos.field("cases", i, "dir", None);
            if !valid_name(&c.dir) {
                self.err(
                    at_dir,
                    format!(
                        "case `{}`: dir `{}` must be one directory name under cases/",
                        c.name, c.dir
                    ),
                );
            } else if !dirs.insert(c.dir.as_str()) {
                self.err(
                    at_dir,
                    format!(
                        "case `{}`: directory `{}` is used by another case",
                        c.name, c.dir
                    ),
                );
            }
            if !(0..=255).contains(&c.exit_code) {
                let at = self.pos.field("cases", i, "exit_code", None);
                self.err(
                    at,
                    format!(
                        "case `{}`: exit_code {} is not an exit status (0 to 255)",
                        c.name, c.exit_code
                    ),
                );
            }
            if c.checks.is_empty() {
                let at = self.pos.field("cases", i, "checks", None);
                self.err(
                    at,
                    format!(
                        "case `{}` declares no checks: it would verify nothing",
                        c.name
                    ),
                );
            }
            if !c.stdout_varies.is_empty() && c.kind == CaseKind::Host {
                let at = self.pos.field("cases", i, "stdout_varies", None);
                self.err(
                    at,
                    format!("host case `{}`: `stdout_varies` is for gpu cases", c.name),
                );
            }
            if c.stdout_varies.len() > MAX_STDOUT_VARIES {
                let at = self.pos.field("cases", i, "stdout_varies", None);
                self.err(
                    at,
                    format!(
                        "case `{}`: {} stdout_varies patterns, at most {MAX_STDOUT_VARIES}",
                        c.name,
                        c.stdout_varies.len()
                    ),
                );
            }
            for p in &c.stdout_varies {
                if p.is_empty() || p.len() > MAX_PATTERN_LEN || p.contains(['\n', '\r']) {
                    let at = self.pos.field("cases", i, "stdout_varies", None);
                    self.err(
                        at,
                        format!(
                            "case `{}`: stdout_varies pattern {p:?} must be one line of 1 to {MAX_PATTERN_LEN} characters",
                            c.name
                        ),
                    );
                }
            }
            self.check_unstable(i, c);
            if c.archive.is_some() && c.kind != CaseKind::Archive {
                let at = self.pos.field("cases", i, "archive", None);
                self.err(
                    at,
                    format!(
                        "case `{}`: `archive` is for archive cases (`kind: archive`)",
                        c.name
                    ),
                );
            }
            if c.tolerance.is_some() || c.compare.is_some() {
                let key = if c.tolerance.is_some() {
                    "tolerance"
                } else {
                    "compare"
                };
                let at = self.pos.field("cases", i, key, None);
                if c.kind == CaseKind::Host {
                    self.err(
                        at,
                        format!("host case `{}`: `{key}` is for gpu cases", c.name),
                    );
                } else if let Err(why) = c.comparison() {
                    self.err(at, format!("case `{}`: {key}: {why}", c.name));
                }
            }
            for f in &c.nvcc_flags {
                let bad = |ch: char| ch.is_whitespace() || ch.is_control();
                if f.is_empty() || f.len() > 64 || f.chars().any(bad) {
                    let at = self.pos.field("cases", i, "nvcc_flags", None);
                    self.err(
                        at,
                        format!(
                            "case `{}`: nvcc flag {f:?} must be one word of 1 to 64 characters",
                            c.name
                        ),
                    );
                }
            }
            if let Some(r) = &c.replace_kernel {
                let at = self.pos.field("cases", i, "replace_kernel", None);
                let word = |s: &str| {
                    !s.is_empty()
                        && s.len() <= 1024
                        && !s
                            .chars()
                            .any(|c| c.is_whitespace() || c.is_control() || c == '=')
                };
                if c.kind != CaseKind::Gpu {
                    self.err(
                        at,
                        format!("case `{}`: `replace_kernel` is for gpu cases", c.name),
                    );
                } else if !word(&r.kernel) {
                    self.err(
                        at,
                        format!(
                            "case `{}`: replace_kernel: kernel {:?} must be one mangled name",
                            c.name, r.kernel
                        ),
                    );
                }
            }
            if let Some(r) = &c.capture_range {
                if let Err(e) = hrr_contract::parse_capture_range(r) {
                    let at = self.pos.field("cases", i, "capture_range", None);
                    self.err(at, format!("case `{}`: capture_range: {e}", c.name));
                }
            }
            for (field, set) in [
                ("module", c.module.is_some()),
                ("library", c.library.is_some()),
                ("nvcc_flags", !c.nvcc_flags.is_empty()),
                ("capture_range", c.capture_range.is_some()),
            ] {
                if set && c.kind == CaseKind::Host {
                    let at = self.pos.field("cases", i, field, None);
                    self.err(
                        at,
                        format!("host case `{}`: `{field}` is for gpu cases", c.name),
                    );
                }
            }
            match c.kind {
                CaseKind::Host => {
                    if c.command.is_empty() {
                        let at = self.pos.field("cases", i, "kind", None);
                        self.err(at, format!("host case `{}` needs a command", c.name));
                    }
                    for ch in &c.checks {
                        if *ch != Check::ExitZero {
                            let at = self.pos.field("cases", i, "checks", Some(ch.name()));
                            self.err(at, format!("host case `{}`: check `{}` needs a GPU case (host cases support exit-zero)", c.name, ch.name()));
                        }
                    }
                }
                CaseKind::Gpu | CaseKind::Archive => {
                    if !c.command.is_empty() {
                        let at = self.pos.field("cases", i, "command", None);
                        self.err(at, format!("gpu case `{}`: `command` is for host cases (a gpu case is cases/{}/main.cpp)", c.name, c.dir));
                    }
                    if c.kind == CaseKind::Archive {
                        self.check_archive(i, c);
                    }
                    for ch in &c.checks {
                        if *ch == Check::ExitZero {
                            let at = self.pos.field("cases", i, "checks", Some("exit-zero"));
                            self.err(
                                at,
                                format!("gpu case `{}`: exit-zero is a host-case check", c.name),
                            );
                        }
                        if let Check::Refused(apis) = ch {
                            if apis.is_empty() {
                                let at = self.pos.field("cases", i, "checks", Some("refused"));
                                self.err(
                                    at,
                                    format!(
                                        "case `{}`: `refused` must name the APIs replay refuses",
                                        c.name
                                    ),
                                );
                            }
                            if c.checks.contains(&Check::Roundtrip) {
                                let at = self.pos.field("cases", i, "checks", Some("refused"));
                                self.err(at, format!("case `{}`: `refused` and `roundtrip` exclude each other (a refused call fails the roundtrip)", c.name));
                            }
                        }
                    }
                }
            }
            if let Some(root) = cases_root {
                if valid_name(&c.dir) {
                    let dir = root.join(&c.dir);
                    if !dir.is_dir() {
                        self.err(
                            at_dir,
                            format!(
                                "case `{}`: directory {} does not exist",
                                c.name,
                                dir.display()
                            ),
                        );
                    } else if let (CaseKind::Archive, Some(f)) =
                        (c.kind, c.archive.as_ref().and_then(|a| a.file.as_ref()))
                    {
                        if !valid_file_name(f) || !dir.join(f).is_file() {
                            let at = self.pos.field("cases", i, "archive", None);
                            self.err(
                                at,
                                format!(
                                    "archive case `{}`: file {f} is not a file in {}",
                                    c.name,
                                    dir.display()
                                ),
                            );
                        }
                    } else if c.kind == CaseKind::Gpu && !dir.join("main.cpp").is_file() {
                        self.err(
                            at_dir,
                            format!("gpu case `{}`: {} has no main.cpp", c.name, dir.display()),
                        );
                    } else {
                        let swap = c.replace_kernel.as_ref().map(|r| r.module.clone());
                        let sources = [
                            ("module", &c.module),
                            ("library", &c.library),
                            ("replace_kernel", &swap),
                        ];
                        for (field, m) in sources {
                            let Some(m) = m else { continue };
                            if !valid_file_name(m) || !dir.join(m).is_file() {
                                let at = self.pos.field("cases", i, field, None);
                                self.err(
                                    at,
                                    format!(
                                        "case `{}`: {field} source {m} is not a file in {}",
                                        c.name,
                                        dir.display()
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        }
        if let Some(root) = cases_root {
            if let Ok(rd) = std::fs::read_dir(root) {
                let mut on_disk: Vec<String> = rd
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.') && n != "common")
                    .collect();
                on_disk.sort();
                for d in on_disk {
                    if !dirs.contains(d.as_str()) {
                        let at = self
                            .pos
                            .sections
                            .get("cases")
                            .map(|s| (s.0, 1))
                            .unwrap_or((1, 1));
                        self.err(at, format!("cases/{d} exists but no case in the matrix uses it: add it to `cases:` or remove the directory"));
                    }
                }
            }
        }
    }

    /// An archive case names its archive (and nothing a built program needs); `archive:`
    /// belongs to archive cases only.
    fn check_archive(&mut self, i: usize, c: &crate::schema::Case) {
        let at = self.pos.field("cases", i, "archive", None);
        match &c.archive {
            None => self.err(
                at,
                format!(
                    "archive case `{}` needs `archive: {{file: NAME.hrrz, sha256: HEX}}` (or `url:`)",
                    c.name
                ),
            ),
            Some(a) => {
                if let Some(why) = a.problem() {
                    self.err(at, format!("archive case `{}`: archive: {why}", c.name));
                }
            }
        }
        for (field, set) in [
            ("module", c.module.is_some()),
            ("library", c.library.is_some()),
            ("nvcc_flags", !c.nvcc_flags.is_empty()),
            ("capture_range", c.capture_range.is_some()),
            ("stdout_varies", !c.stdout_varies.is_empty()),
            ("exit_code", c.exit_code != 0),
        ] {
            if set {
                let at = self.pos.field("cases", i, field, None);
                self.err(
                    at,
                    format!(
                        "archive case `{}`: `{field}` is for cases built from source",
                        c.name
                    ),
                );
            }
        }
    }

    /// `unstable:` is bounded, for gpu cases, and checked by `stability` (and that check
    /// needs it).
    fn check_unstable(&mut self, i: usize, c: &crate::schema::Case) {
        let checked = c.checks.contains(&Check::Stability);
        match c.unstable {
            Some(u) => {
                let at = self.pos.field("cases", i, "unstable", None);
                if c.kind == CaseKind::Host {
                    self.err(
                        at,
                        format!("host case `{}`: `unstable` is for gpu cases", c.name),
                    );
                }
                if !(2..=MAX_UNSTABLE_RUNS).contains(&u.runs) {
                    self.err(
                        at,
                        format!(
                            "case `{}`: unstable runs {} must be 2 to {MAX_UNSTABLE_RUNS} (instability is learned by comparing replays)",
                            c.name, u.runs
                        ),
                    );
                }
                if !(1..=MAX_UNSTABLE_BYTES).contains(&u.max_bytes) {
                    self.err(
                        at,
                        format!(
                            "case `{}`: unstable max_bytes {} must be 1 to {MAX_UNSTABLE_BYTES}",
                            c.name, u.max_bytes
                        ),
                    );
                }
                if !checked {
                    self.err(
                        at,
                        format!(
                            "case `{}` declares `unstable` without the `stability` check that holds it to its bound",
                            c.name
                        ),
                    );
                }
            }
            None if checked => {
                let at = self.pos.field("cases", i, "checks", Some("stability"));
                self.err(
                    at,
                    format!(
                        "case `{}`: check `stability` needs `unstable: {{runs: N, max_bytes: M}}`",
                        c.name
                    ),
                );
            }
            None => {}
        }
    }
}

/// A plain file name inside a case directory (a name and an extension, no path).
fn valid_file_name(s: &str) -> bool {
    !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        && valid_name(&s.replace('.', "_"))
}
