//! The repository's stand-in CUDA runtime (standin/, through `hrr_testkit::standin`), built
//! once per test binary for replaying archives without a GPU: replay loads it through
//! `HRR_REPLAY_CUDART` (and `HRR_REPLAY_LIBCUDA`: `libcuda.so.1` beside it is the same
//! library, as the harness builds it).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The built library (`libcudart.so.13`), or None where no C compiler or no CUDA headers
/// are installed: the calling test skips through `hrr_testkit` (which fails it under
/// `CI=true` or `HRR_REQUIRE_ALL=1`). A build that fails is the test's failure.
#[track_caller]
pub fn library() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<(tempfile::TempDir, PathBuf)>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("scratch directory");
            let cuda = hrr_testkit::standin::cuda(dir.path(), None, &[])?;
            Some((dir, cuda.lib))
        })
        .as_ref()
        .map(|(_, so)| so.as_path())
}

/// A PTX module, what the stand-in parses (as the driver JIT-compiles PTX) where an archive
/// needs a code object: each kernel with parameters of the given sizes in bytes, each
/// module-scope global of the given size.
#[allow(dead_code)] // not every test file writes code objects
pub fn ptx(kernels: &[(&str, &[usize])], globals: &[(&str, usize)]) -> Vec<u8> {
    let mut s = String::from(".version 8.0\n.target sm_90\n.address_size 64\n");
    for (name, size) in globals {
        s += &format!(".visible .global .align 8 .b8 {name}[{size}];\n");
    }
    for (name, params) in kernels {
        let params: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, n)| match n {
                1 => format!(".param .u8 p{i}"),
                2 => format!(".param .u16 p{i}"),
                4 => format!(".param .u32 p{i}"),
                8 => format!(".param .u64 p{i}"),
                n => format!(".param .align 8 .b8 p{i}[{n}]"),
            })
            .collect();
        s += &format!(
            ".visible .entry {name}({})\n{{\n ret;\n}}\n",
            params.join(", ")
        );
    }
    s.into_bytes()
}
