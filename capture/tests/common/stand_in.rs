//! Builds the repository's stand-in runtime (standin/, through `hrr_testkit::standin`:
//! libcudart.so.13, or libcuda.so.1 for a driver-API program) and one C program against
//! it, in a scratch directory removed when dropped; runs the program under
//! libhrr_capture.so. Shared by every test of a program over the stand-in.
#![allow(dead_code)] // each test file uses some of these

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::capture_so;

/// A scratch directory with the stand-in runtime and one program built in it.
pub struct StandIn {
    dir: PathBuf,
    pub exe: PathBuf,
    /// The stand-in as built (its version, its library).
    pub cuda: hrr_testkit::standin::Cuda,
}

impl StandIn {
    /// Builds `tests/stand_in/<program>` into a fresh directory named after `tag`, over
    /// the stand-in runtime; None after a skip (no cc or no CUDA headers).
    #[track_caller]
    pub fn build(tag: &str, program: &str) -> Option<StandIn> {
        Self::build_with(tag, program, &[])
    }

    /// As [`build`](Self::build), the program compiled with `cflags` too.
    #[track_caller]
    pub fn build_with(tag: &str, program: &str, cflags: &[&str]) -> Option<StandIn> {
        Self::build_over(None, &[], tag, program, cflags)
    }

    /// As [`build_with`](Self::build_with), the stand-in built as `soname` (None: as
    /// libcudart.so.13; `libcuda.so.1`: the driver a driver-API program links) with
    /// `defines` (`-D` switches standin/ documents), and the program linked against it.
    #[track_caller]
    pub fn build_over(
        soname: Option<&str>,
        defines: &[&str],
        tag: &str,
        program: &str,
        cflags: &[&str],
    ) -> Option<StandIn> {
        let dir = std::env::temp_dir().join(format!("hrr-capture-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let Some(cuda) = hrr_testkit::standin::cuda(&dir, soname, defines) else {
            let _ = std::fs::remove_dir_all(&dir);
            return None;
        };
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in");
        let exe = dir.join("program");
        let mut args: Vec<String> = vec!["-O1".into(), "-pthread".into()];
        args.extend(cflags.iter().map(|f| f.to_string()));
        args.extend([
            "-o".into(),
            exe.to_string_lossy().into_owned(),
            src.join(program).to_string_lossy().into_owned(),
        ]);
        args.extend(cuda.link_args());
        args.push("-ldl".into());
        crate::common::cc(&args);
        Some(StandIn { dir, exe, cuda })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The program with `args`, capture on into `output`, the stand-in on the loader path.
    pub fn command(&self, output: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(&self.exe);
        c.args(args)
            .env("HRR_CAPTURE_OUTPUT", output)
            .env("LD_PRELOAD", capture_so())
            // The stand-in's directory on the loader path, as the harness puts it: capture
            // finds the driver by name there (libcuda.so.1, the same library).
            .env("LD_LIBRARY_PATH", &self.dir)
            // KB-sized archives: the machine's free space is not under test (faults.rs
            // sets its own reserve where it is).
            .env("HRR_CAPTURE_DISK_RESERVE", "16M")
            .env_remove("HRR_CAPTURE_PINNED_SNAPSHOT_MAX")
            .env_remove("HRR_CAPTURE_MAPPED_OUTPUT_MAX")
            .env_remove("HRR_CAPTURE_FLUSH_MS")
            .env_remove("HRR_CAPTURE_FSYNC")
            .env_remove("HRR_CAPTURE_COMPRESS");
        c
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
