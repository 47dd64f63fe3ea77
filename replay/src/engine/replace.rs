//! `--replace-kernel NAME=PATH`: the kernel NAME is launched from the code object at
//! PATH (a cubin, fatbin or PTX file on CUDA; an AMD code object or bundle on HIP) instead
//! of the captured one, with the captured arguments and launch configuration, so a
//! compiler or runtime engineer sees byte for byte whether a rebuilt kernel's outputs
//! changed. Every lookup of the name (a registered kernel, a module's function, a graph
//! kernel node's function) is served from the replacement's module, loaded once per
//! process. A replacement the archive never looked up is a failure: a misspelt name must
//! not pass as "unchanged".
//!
//! `--kernel-filter PATTERN` (a glob on the mangled name) launches only the kernels that
//! match; every D2H check after the first launch it leaves out is skipped, never passed
//! (its result may depend on that kernel). Kernels inside a graph launch with their graph.

use std::collections::HashMap;
use std::path::PathBuf;

/// One `--replace-kernel`, its code object read when replay started.
#[derive(Clone, Debug)]
pub struct Replacement {
    pub name: String,
    pub path: PathBuf,
    pub image: Vec<u8>,
}

/// The replacement modules this process loaded, and the lookups each name served.
#[derive(Debug, Default)]
pub(super) struct Replaced {
    pub(super) modules: HashMap<PathBuf, u64>,
    pub(super) lookups: HashMap<String, u64>,
}

/// `*` any run of characters, `?` one; everything else itself.
pub(super) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("_Z6affine*", "_Z6affinePiPKiiij"));
        assert!(glob("*affine*", "affine"));
        assert!(glob("a?fine", "affine"));
        assert!(!glob("affine", "affine2"));
        assert!(!glob("*scale", "scale_add"));
        assert!(glob("*", ""));
    }
}
