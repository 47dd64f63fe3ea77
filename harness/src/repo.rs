//! Where things are: the source tree (the directory holding `matrix/matrix.yaml`), its
//! cases and its source revision.

use std::path::{Path, PathBuf};

use crate::error::HarnessError;

/// The matrix file's path inside a source tree.
pub const MATRIX_REL: &str = "matrix/matrix.yaml";

#[derive(Clone, Debug)]
pub struct SourceTree {
    pub root: PathBuf,
    pub matrix: PathBuf,
}

impl SourceTree {
    /// The tree of `--matrix FILE` (its grandparent), or the first directory upward from
    /// the current one that holds `matrix/matrix.yaml`.
    pub fn locate(matrix: Option<&Path>) -> Result<SourceTree, HarnessError> {
        if let Some(m) = matrix {
            let m = m
                .canonicalize()
                .map_err(|e| HarnessError::usage(format!("--matrix {}: {e}", m.display())))?;
            let root = m
                .parent()
                .and_then(Path::parent)
                .ok_or_else(|| {
                    HarnessError::usage(format!(
                        "--matrix {}: expected DIR/matrix/FILE",
                        m.display()
                    ))
                })?
                .to_path_buf();
            return Ok(SourceTree { root, matrix: m });
        }
        let cwd = std::env::current_dir()
            .map_err(|e| HarnessError::usage(format!("cannot read the current directory: {e}")))?;
        let mut dir: &Path = &cwd;
        loop {
            if dir.join(MATRIX_REL).is_file() {
                return Ok(SourceTree::at(dir));
            }
            match dir.parent() {
                Some(p) => dir = p,
                None => {
                    return Err(HarnessError::usage(format!(
                        "no {MATRIX_REL} in {} or any directory above it: run inside an hrr-harness checkout or pass --matrix",
                        cwd.display()
                    )))
                }
            }
        }
    }

    pub fn at(root: &Path) -> SourceTree {
        SourceTree {
            root: root.to_path_buf(),
            matrix: root.join(MATRIX_REL),
        }
    }

    pub fn cases_dir(&self) -> PathBuf {
        self.root.join("cases")
    }

    /// `git describe --always --dirty`, or "unknown" outside git.
    pub fn revision(&self) -> String {
        crate::process::command("git")
            .arg("-C")
            .arg(&self.root)
            .args(["describe", "--always", "--dirty", "--abbrev=12"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".into())
    }

    /// The revision plus, for a tree with uncommitted changes, a hash of those changes:
    /// build directories are keyed by it, so two controls (two different diffs of the same
    /// HEAD) never share one.
    pub fn build_key(&self) -> String {
        let rev = self.revision();
        if !rev.ends_with("-dirty") {
            return rev;
        }
        let diff = crate::process::command("git")
            .arg("-C")
            .arg(&self.root)
            .args(["diff", "HEAD"])
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default();
        format!(
            "{rev}-{}",
            &hrr_archive::ContentHash::of(&diff).to_hex()[..12]
        )
    }

    pub fn load_matrix(&self) -> Result<hrr_matrix::Matrix, HarnessError> {
        hrr_matrix::load(&self.matrix, &self.cases_dir()).map_err(HarnessError::Matrix)
    }
}
