//! Reading and validating a matrix file. Syntax and schema errors come from serde_norway
//! with their line and column; the checks serde cannot make (unknown case names, missing
//! directories, a case in `cases/` the matrix forgets) are located by a line scan of the
//! same text, so every error reads `FILE:LINE:COLUMN: what is wrong`.

mod cases;
mod controls;
mod families;
mod positions;
mod rules;

use std::path::{Path, PathBuf};

use crate::prescan;
use crate::schema::Matrix;
use positions::Positions;

/// Shards of one family: GitHub Actions runs at most 256 jobs from one matrix, and every
/// count the harness sizes memory by is bounded (a `shards: 4294967295` made `run --list`
/// ask for 32 GiB).
pub const MAX_SHARDS: u32 = 256;
/// GPUs one runner of a family holds (the largest hosts have 8 or 16).
pub const MAX_GPUS_PER_RUNNER: u32 = 64;

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
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
