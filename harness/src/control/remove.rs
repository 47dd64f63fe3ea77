//! Step 1 of a control, removing the fix: a temporary git worktree of HEAD (removed again
//! when dropped, also on error or interruption), the commit reverted or the patch applied
//! in it, each git command and its output appended to the control's log, and the removed
//! change saved as `removed.diff`.

use std::path::{Path, PathBuf};

use super::spec::Removal;

/// `git worktree add` did not give a worktree.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("git worktree add: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("git worktree add: {0}")]
    Refused(String),
}

/// A git command in the worktree did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git {args}: {source}")]
    Spawn {
        args: String,
        #[source]
        source: std::io::Error,
    },
    /// It ran and failed; `stderr` holds its first three lines, joined by ` | `.
    #[error("git {args} failed: {stderr}")]
    Failed { args: String, stderr: String },
}

/// Why the fix is still in.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// No worktree: the harness could not try.
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    /// The revert or the patch did not apply (the git output is in `log`).
    #[error("{error}")]
    NotApplied { error: GitError, log: PathBuf },
}

/// A worktree that is removed when dropped (normal end, error or interruption).
pub struct Worktree {
    repo: PathBuf,
    path: PathBuf,
}

impl Worktree {
    pub fn add(repo: &Path, path: &Path) -> Result<Worktree, WorktreeError> {
        let out = crate::process::command("git")
            .arg("-C")
            .arg(repo)
            .args(["worktree", "add", "--detach", "--quiet"])
            .arg(path)
            .arg("HEAD")
            .output()
            .map_err(WorktreeError::Spawn)?;
        if !out.status.success() {
            return Err(WorktreeError::Refused(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(Worktree {
            repo: repo.to_path_buf(),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = crate::process::command("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["worktree", "remove", "--force"])
            .arg(&self.path)
            .output();
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = crate::process::command("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["worktree", "prune"])
            .output();
    }
}

/// Runs `git ARGS` in `dir`, appending the command and its output to `log`.
fn git_in(dir: &Path, args: &[&str], log: &Path) -> Result<(), GitError> {
    let joined = args.join(" ");
    let out = crate::process::command("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|source| GitError::Spawn {
            args: joined.clone(),
            source,
        })?;
    let mut text = format!("$ git {joined}\n");
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
    if out.status.success() {
        Ok(())
    } else {
        Err(GitError::Failed {
            args: joined,
            stderr: String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | "),
        })
    }
}

/// Makes a worktree of `repo`'s HEAD at `wt_path` and removes the fix in it; patch files
/// are read from `repo`. Logs go to `dir/control.log`, the removed change to
/// `dir/removed.diff`.
pub fn remove_fix(
    repo: &Path,
    removal: &Removal,
    wt_path: &Path,
    dir: &Path,
) -> Result<Worktree, RemoveError> {
    let log = dir.join("control.log");
    let _ = std::fs::remove_dir_all(wt_path);
    let wt = Worktree::add(repo, wt_path)?;
    let applied = match removal {
        Removal::Revert { commit } => git_in(&wt.path, &["revert", "--no-commit", commit], &log),
        Removal::Patch { file, reverse } => {
            let p = repo.join(file).to_string_lossy().into_owned();
            let mut args = vec!["apply"];
            if *reverse {
                args.push("-R");
            }
            args.push(&p);
            git_in(&wt.path, &args, &log)
        }
    };
    if let Err(error) = applied {
        return Err(RemoveError::NotApplied { error, log });
    }
    if let Ok(o) = crate::process::command("git")
        .arg("-C")
        .arg(&wt.path)
        .args(["diff", "HEAD"])
        .output()
    {
        let _ = std::fs::write(dir.join("removed.diff"), &o.stdout);
    }
    Ok(wt)
}
