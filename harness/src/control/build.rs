//! Step 2 of a control, building without the fix: capture, replay and the control's
//! cases built from the worktree (or, with `--prebuilt`, its tools taken from a
//! directory), and with `--build-only` the tools copied out for a GPU machine.

use std::path::{Path, PathBuf};

use crate::builder::{self, BuildRequest, Built, CaseBuild};
use crate::error::HarnessError;
use crate::repo::SourceTree;

use super::spec::ControlSpec;
use super::ControlRun;

/// Why the build step gave nothing to run.
#[derive(Debug)]
pub enum BuildStop {
    /// `--prebuilt DIR`: `dir` (DIR/CONTROL) has no `hrr-replay`.
    MissingPrebuilt { dir: PathBuf },
    /// Interrupted while building.
    Interrupted,
    /// Capture or replay did not build without the fix (the whole error is in `build.log`).
    Tree(HarnessError),
    /// A case did not build without the fix.
    Case { case: String, message: String },
}

impl ControlRun<'_> {
    /// Builds capture, replay and `only` from `source` (tools from `tools_dir` when given).
    pub(super) fn build(
        &self,
        source: &SourceTree,
        tools_dir: Option<PathBuf>,
        only: Vec<String>,
    ) -> Result<Built, HarnessError> {
        builder::build(&BuildRequest {
            stand_in: false,
            matrix: self.matrix,
            family: self.family,
            source,
            build_root: self.build_root.clone(),
            tools_dir,
            cargo_target_dir: self.cargo_target_dir.clone(),
            only: Some(only),
            verbose: false,
        })
    }

    /// Builds `spec`'s tools and cases from `worktree`, the tree without the fix; a build
    /// error is written to `dir/build.log`.
    pub(super) fn build_without_fix(
        &self,
        spec: &ControlSpec,
        worktree: &Path,
        dir: &Path,
    ) -> Result<Built, BuildStop> {
        let prebuilt = self.prebuilt.as_ref().map(|d| d.join(&spec.name));
        if let Some(p) = &prebuilt {
            if !p.join("hrr-replay").is_file() {
                return Err(BuildStop::MissingPrebuilt { dir: p.clone() });
            }
        }
        let built = match self.build(&SourceTree::at(worktree), prebuilt, spec.cases()) {
            Ok(b) => b,
            Err(HarnessError::Interrupted) => return Err(BuildStop::Interrupted),
            Err(e) => {
                let _ = std::fs::write(dir.join("build.log"), e.to_string());
                return Err(BuildStop::Tree(e));
            }
        };
        if let Some((case, message)) = built.cases.iter().find_map(|(n, b)| match b {
            CaseBuild::Failed { message, .. } => Some((n.clone(), message.clone())),
            _ => None,
        }) {
            return Err(BuildStop::Case { case, message });
        }
        Ok(built)
    }
}

/// `--build-only`: copies the built capture and replay into `to`.
pub(super) fn copy_tools(built: &Built, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    std::fs::copy(&built.capture, to.join("libhrr_capture.so"))?;
    std::fs::copy(&built.replay, to.join("hrr-replay"))?;
    Ok(())
}
