//! What a child may not inherit: variables whose names look like credentials
//! (`GITHUB_TOKEN`, `*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, ...). Cases run
//! untrusted pull-request code, and their output lands in logs and reports that CI
//! uploads as artifacts, so no child of the harness (a case, its capture and replay, a
//! build of the code under test, the replay service) sees them. The harness itself keeps
//! them (`control --pr` publishes with `GITHUB_TOKEN`).
//!
//! `HRR_HARNESS_SECRET_PATTERNS` (comma-separated, case-insensitive substrings) replaces
//! the default patterns; `HRR_HARNESS_KEEP_ENV` (comma-separated names) keeps named
//! variables anyway. A variable the harness sets on a command itself (a family's
//! `env` in the matrix) is the matrix author's choice and is kept.

use std::ffi::OsString;
use std::process::Command;

/// The default patterns: a name containing one of these (any case) is a secret.
pub const DEFAULT_PATTERNS: &[&str] =
    &["TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Which variable names are withheld from children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretFilter {
    patterns: Vec<String>,
    kept: Vec<String>,
}

impl SecretFilter {
    /// From `HRR_HARNESS_SECRET_PATTERNS` and `HRR_HARNESS_KEEP_ENV`.
    pub fn from_env() -> SecretFilter {
        let list = |var: &str| -> Option<Vec<String>> {
            std::env::var(var).ok().map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
        };
        SecretFilter::new(
            list("HRR_HARNESS_SECRET_PATTERNS"),
            list("HRR_HARNESS_KEEP_ENV").unwrap_or_default(),
        )
    }

    /// `patterns` (None: the defaults) and the names `kept` anyway.
    pub fn new(patterns: Option<Vec<String>>, kept: Vec<String>) -> SecretFilter {
        let patterns = patterns
            .unwrap_or_else(|| DEFAULT_PATTERNS.iter().map(|p| p.to_string()).collect())
            .into_iter()
            .map(|p| p.to_ascii_uppercase())
            .collect();
        SecretFilter { patterns, kept }
    }

    /// Whether a variable of this name is withheld.
    pub fn is_secret(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        self.patterns.iter().any(|p| upper.contains(p.as_str()))
            && !self.kept.iter().any(|k| k == name)
    }

    /// Removes every inherited secret from `cmd`'s environment (variables `cmd` sets
    /// itself stay); returns the names removed.
    pub fn scrub(&self, cmd: &mut Command) -> Vec<OsString> {
        let explicit: Vec<OsString> = cmd.get_envs().map(|(k, _)| k.to_os_string()).collect();
        let mut removed = Vec::new();
        for (name, _) in std::env::vars_os() {
            let secret = name.to_str().is_none_or(|n| self.is_secret(n));
            if secret && !explicit.contains(&name) {
                cmd.env_remove(&name);
                removed.push(name);
            }
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_secret_in_any_case_unless_kept() {
        let f = SecretFilter::new(None, vec!["MY_KEYBOARD".into()]);
        for name in [
            "GITHUB_TOKEN",
            "ACTIONS_RUNTIME_TOKEN",
            "aws_secret_access_key",
            "NPM_Password",
            "SSH_KEY",
            "DB_PASSWD",
        ] {
            assert!(f.is_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "CUDA_VISIBLE_DEVICES", "MY_KEYBOARD"] {
            assert!(!f.is_secret(name), "{name}");
        }
        let only = SecretFilter::new(Some(vec!["hush".into()]), vec![]);
        assert!(only.is_secret("X_HUSH_Y") && !only.is_secret("GITHUB_TOKEN"));
    }

    #[test]
    fn scrub_removes_inherited_secrets_and_keeps_explicit_ones() {
        // PATH stands in for an inherited secret (every test process has it; setting a
        // variable here would race with the other tests' children).
        let f = SecretFilter::new(Some(vec!["path".into()]), vec![]);
        let mut cmd = Command::new("/usr/bin/env");
        cmd.env("HRR_TEST_PATHLIKE", "explicit");
        let removed = f.scrub(&mut cmd);
        assert!(removed.iter().any(|n| n == "PATH"), "{removed:?}");
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert!(!out.lines().any(|l| l.starts_with("PATH=")), "{out}");
        assert!(out.contains("HRR_TEST_PATHLIKE=explicit"), "{out}");
    }
}
