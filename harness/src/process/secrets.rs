//! What a child may not inherit. Cases run untrusted pull-request code, and their output
//! lands in logs and reports that CI uploads as artifacts.
//!
//! - The harness's own secrets: when it starts ([`withdraw`]), every variable whose name
//!   looks like a credential (`GITHUB_TOKEN`, `*TOKEN*`, `*SECRET*`, `*KEY*`,
//!   `*PASSWORD*`, ...) moves out of its environment into memory only [`secret`] reads
//!   (`report publish` and `control --pr` publish with `GITHUB_TOKEN`), its bytes in the
//!   process's original environment block are overwritten, and the harness becomes
//!   non-dumpable, so `/proc/PID/environ` and the rest of `/proc/PID` belong to root: a
//!   case reading its parent's environment finds nothing (issue 20: it found
//!   `GITHUB_TOKEN`). Every child, whatever spawns it (a case, git, cc, a build), inherits
//!   no credential.
//! - Every child gets an allow-list, not a deny-list: a case and what runs with it
//!   (capture, replay, builds of the code under test, the replay service:
//!   `process::prepare`) and every tool the harness runs itself (git, compilers and their
//!   probes, `nvidia-smi`, the stand-in's `cc`: `process::command`; no other spawn path,
//!   `tests/one_spawn_path.rs`) get the names and
//!   prefixes of [`ALLOWED`] (the loader path, toolchains, GPU selection, `HRR_*`), the
//!   variables the command sets itself (a family's `env` in the matrix), and the names in
//!   `HRR_HARNESS_KEEP_ENV`; a credential-like name is withheld even then. `DATABASE_URL`,
//!   `GH_PAT` or `NPM_AUTH` no longer pass for matching no pattern.
//!
//! `HRR_HARNESS_SECRET_PATTERNS` (comma-separated, case-insensitive substrings) replaces
//! the default patterns; `HRR_HARNESS_KEEP_ENV` (comma-separated names) keeps named
//! variables anyway.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::process::Command;
use std::sync::OnceLock;

/// What a case may inherit: exact names, and prefixes ending in `_` or `*`.
pub const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "PWD",
    "LD_LIBRARY_PATH",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "AR",
    "NVCC",
    "HIPCC",
    "CI",
    "GITHUB_ACTIONS",
    "RUNNER_OS",
    "RUNNER_TEMP",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "SOURCE_DATE_EPOCH",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "HRR_*",
    "LC_*",
    "XDG_*",
    "CUDA_*",
    "NVCC_*",
    "NVIDIA_*",
    "CUBLAS_*",
    "CUDNN_*",
    "NCCL_*",
    "HIP_*",
    "HSA_*",
    "ROCM_*",
    "ROCR_*",
    "AMD_*",
    "GPU_*",
    "CARGO_*",
    "RUSTUP_*",
    "RUSTC*",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "TORCH_*",
    "NVSHMEM_*",
    "OMP_*",
];

/// Whether `name` is on the allow-list.
pub fn allowed(name: &str) -> bool {
    ALLOWED.iter().any(|a| match a.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *a,
    })
}

/// The secrets [`withdraw`] took out of the environment.
static HELD: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// When the harness starts, before any thread: secrets out of the environment (see the
/// module's text). Returns the names withdrawn.
pub fn withdraw() -> Vec<String> {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's own attribute.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    let filter = SecretFilter::from_env();
    let mut held = BTreeMap::new();
    for (name, value) in std::env::vars_os() {
        let (Some(n), Some(v)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if filter.is_secret(n) {
            held.insert(n.to_string(), v.to_string());
        }
    }
    for n in held.keys() {
        std::env::remove_var(n);
    }
    // Every other variable moves to a copy of the C library's own (setenv), so the block
    // the kernel gave the process can be wiped whole: a case's `/proc/$PPID/environ`
    // then shows names only (as root, non-dumpable is no barrier), and the harness's
    // variables off the allow-list (`DATABASE_URL`) are not read there either.
    for (name, value) in std::env::vars_os() {
        // A name set_var refuses (one holding `=`, which glibc's parse allows at its
        // start) is left where it is: its value is wiped below with the rest.
        let settable = !name.is_empty() && !name.as_encoded_bytes().contains(&b'=');
        if settable {
            std::env::set_var(&name, &value);
        }
    }
    wipe_original_block();
    let names = held.keys().cloned().collect();
    let _ = HELD.set(held);
    names
}

/// A secret the harness was started with: withdrawn, or (a process that never withdrew,
/// such as a unit test) still in the environment.
pub fn secret(name: &str) -> Option<String> {
    HELD.get()
        .and_then(|h| h.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.is_empty())
}

/// Overwrites every value in the environment block the kernel gave the process
/// (`/proc/self/stat` fields 50 and 51: env_start, env_end), which `/proc/PID/environ`
/// shows whatever the process did to its environment since; the names stay.
fn wipe_original_block() {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    // Fields after the command name's closing parenthesis start at field 3.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<usize>().ok());
    let (Some(start), Some(end)) = (field(50), field(51)) else {
        return;
    };
    if start == 0 || end <= start || end - start > 16 << 20 {
        return;
    }
    // SAFETY: [start, end) is this process's initial environment block, mapped and
    // writable (the main thread's stack); after remove_var and set_var of every variable
    // the environment points into the C library's copies, never into this block.
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    let mut at = 0;
    while at < block.len() {
        let len = block[at..]
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(block.len() - at);
        let entry = &mut block[at..at + len];
        if let Some(eq) = entry.iter().position(|&b| b == b'=') {
            entry[eq + 1..].fill(b'*');
        }
        at += len + 1;
    }
}

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

    /// Removes from `cmd`'s environment every inherited variable that is not allowed
    /// ([`allowed`], or kept by name) or looks like a credential; variables `cmd` sets
    /// itself stay. Returns the names removed.
    pub fn scrub(&self, cmd: &mut Command) -> Vec<OsString> {
        let explicit: Vec<OsString> = cmd.get_envs().map(|(k, _)| k.to_os_string()).collect();
        let mut removed = Vec::new();
        for (name, _) in std::env::vars_os() {
            let withheld = name.to_str().is_none_or(|n| {
                self.is_secret(n) || !(allowed(n) || self.kept.iter().any(|k| k == n))
            });
            if withheld && !explicit.contains(&name) {
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

    #[test]
    fn a_case_gets_the_allow_list_and_what_its_command_sets() {
        for name in [
            "PATH",
            "HOME",
            "LD_LIBRARY_PATH",
            "CUDA_VISIBLE_DEVICES",
            "HRR_X",
            "LC_ALL",
        ] {
            assert!(allowed(name), "{name}");
        }
        for name in [
            "DATABASE_URL",
            "GH_PAT",
            "NPM_AUTH",
            "AWS_PROFILE",
            "LD_PRELOAD",
        ] {
            assert!(!allowed(name), "{name}");
        }
        let f = SecretFilter::new(None, vec!["LANG_EXTRA".into()]);
        let mut cmd = Command::new("/usr/bin/env");
        cmd.env("MATRIX_SET", "1");
        let removed = f.scrub(&mut cmd);
        assert!(!removed.iter().any(|n| n == "PATH"), "{removed:?}");
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert!(out.contains("MATRIX_SET=1"), "{out}");
        for l in out.lines() {
            let name = l.split('=').next().unwrap_or("");
            assert!(
                allowed(name) || name == "MATRIX_SET",
                "{name} reached the child"
            );
        }
    }
}
