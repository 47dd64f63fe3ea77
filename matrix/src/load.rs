//! Reading and validating a matrix file. Syntax and schema errors come from serde_norway
//! with their line and column; the checks serde cannot make (unknown case names, missing
//! directories, a case in `cases/` the matrix forgets) are located by a line scan of the
//! same text, so every error reads `FILE:LINE:COLUMN: what is wrong`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::glob;
use crate::prescan;
use crate::schema::{
    CaseKind, Check, Family, Matrix, Vendor, MAX_UNSTABLE_BYTES, MAX_UNSTABLE_RUNS,
};

/// At most this many family patterns per control.
const MAX_CONTROL_FAMILIES: usize = 32;
/// Shards of one family: GitHub Actions runs at most 256 jobs from one matrix, and every
/// count the harness sizes memory by is bounded (a `shards: 4294967295` made `run --list`
/// ask for 32 GiB).
pub const MAX_SHARDS: u32 = 256;
/// GPUs one runner of a family holds (the largest hosts have 8 or 16).
pub const MAX_GPUS_PER_RUNNER: u32 = 64;
/// At most this many `stdout_varies` patterns per case, each at most this long.
const MAX_STDOUT_VARIES: usize = 32;
const MAX_PATTERN_LEN: usize = 200;

pub use crate::error::{MatrixError, MatrixErrors};

/// Reads `path` and validates it against the case directories under `cases_root`.
pub fn load(path: &Path, cases_root: &Path) -> Result<Matrix, MatrixErrors> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        MatrixErrors(vec![MatrixError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the matrix: {e}"),
        }])
    })?;
    load_str(&text, path, Some(cases_root))
}

/// Parses and validates matrix text; `file` names it in errors. Without `cases_root` the
/// file-system checks (case directories, patches) are left out.
pub fn load_str(
    text: &str,
    file: &Path,
    cases_root: Option<&Path>,
) -> Result<Matrix, MatrixErrors> {
    let structural = prescan::check(text, file);
    if !structural.is_empty() {
        return Err(MatrixErrors(structural));
    }
    let m: Matrix = serde_norway::from_str(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        // serde_norway appends "at line L column C" to its message; we lead with it instead.
        let msg = e.to_string();
        let msg = match msg.find(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        MatrixErrors(vec![MatrixError {
            file: file.to_path_buf(),
            line,
            column,
            message: msg,
        }])
    })?;
    let pos = Positions::scan(text);
    let mut v = Validator {
        file: file.to_path_buf(),
        pos: &pos,
        errors: Vec::new(),
    };
    v.check(&m, cases_root);
    if v.errors.is_empty() {
        Ok(m)
    } else {
        v.errors.sort_by_key(|e| (e.line, e.column));
        Err(MatrixErrors(v.errors))
    }
}

/// Where each top-level section and each of its list items starts (1-based lines).
struct Positions {
    lines: Vec<String>,
    sections: HashMap<String, (usize, Vec<usize>)>,
}

impl Positions {
    fn scan(text: &str) -> Positions {
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
    fn item(&self, section: &str, idx: usize) -> (usize, usize) {
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
    fn field(&self, section: &str, idx: usize, key: &str, needle: Option<&str>) -> (usize, usize) {
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

struct Validator<'a> {
    file: PathBuf,
    pos: &'a Positions,
    errors: Vec<MatrixError>,
}

impl Validator<'_> {
    fn err(&mut self, at: (usize, usize), message: String) {
        self.errors.push(MatrixError {
            file: self.file.clone(),
            line: at.0,
            column: at.1,
            message,
        });
    }

    fn check(&mut self, m: &Matrix, cases_root: Option<&Path>) {
        if m.version != 1 {
            let at = self.pos.field("version", 0, "version", None);
            let at = if at == (1, 1) {
                self.pos
                    .sections
                    .get("version")
                    .map(|s| (s.0, 1))
                    .unwrap_or(at)
            } else {
                at
            };
            self.err(
                at,
                format!(
                    "matrix version {} is not supported (this harness reads version 1)",
                    m.version
                ),
            );
        }
        if m.tools.build.is_empty() {
            let at = self
                .pos
                .sections
                .get("tools")
                .map(|s| (s.0, 1))
                .unwrap_or((1, 1));
            self.err(
                at,
                "tools.build is empty: name the command that builds capture and replay".into(),
            );
        }
        self.check_families(m);
        self.check_cases(m, cases_root);
        self.check_rules(m);
        self.check_controls(m, cases_root);
    }

    fn check_families(&mut self, m: &Matrix) {
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

    fn check_cases(&mut self, m: &Matrix, cases_root: Option<&Path>) {
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
            for (field, set) in [
                ("module", c.module.is_some()),
                ("library", c.library.is_some()),
                ("nvcc_flags", !c.nvcc_flags.is_empty()),
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

    fn check_rules(&mut self, m: &Matrix) {
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

    fn check_controls(&mut self, m: &Matrix, root: Option<&Path>) {
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

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A plain file name inside a case directory (a name and an extension, no path).
fn valid_file_name(s: &str) -> bool {
    !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        && valid_name(&s.replace('.', "_"))
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
