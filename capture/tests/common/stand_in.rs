//! Builds the stand-in runtime (tests/stand_in/runtime.c, or driver.c: soname
//! libcuda.so.1) and one C program against it, in a scratch directory removed when
//! dropped; runs the program under libhrr_capture.so. Shared by every test of a program
//! over a stand-in runtime.
#![allow(dead_code)] // each test file uses some of these

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::capture_so;

/// A scratch directory with the stand-in runtime and one program built in it.
pub struct StandIn {
    dir: PathBuf,
    pub exe: PathBuf,
}

impl StandIn {
    /// Builds `tests/stand_in/<program>` into a fresh directory named after `tag`.
    pub fn build(tag: &str, program: &str) -> StandIn {
        Self::build_with(tag, program, &[])
    }

    /// As [`build`](Self::build), the program compiled with `cflags` too.
    pub fn build_with(tag: &str, program: &str, cflags: &[&str]) -> StandIn {
        Self::build_over("runtime.c", tag, program, cflags)
    }

    /// As [`build_with`](Self::build_with), over the stand-in library built from
    /// `tests/stand_in/<runtime>` (`driver.c`: the driver alone).
    pub fn build_over(runtime: &str, tag: &str, program: &str, cflags: &[&str]) -> StandIn {
        let dir = std::env::temp_dir().join(format!("hrr-capture-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in");
        let lib = dir.join("libcuda.so.1");
        let exe = dir.join("program");
        cc(&[
            "-O1",
            "-shared",
            "-fPIC",
            "-pthread",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            &lib.to_string_lossy(),
            &src.join(runtime).to_string_lossy(),
        ]);
        let (exe_s, prog_s) = (exe.to_string_lossy(), src.join(program));
        let (lib_dir, rpath) = (
            format!("-L{}", dir.display()),
            format!("-Wl,-rpath,{}", dir.display()),
        );
        let prog_s = prog_s.to_string_lossy();
        let mut args: Vec<&str> = vec!["-O1", "-pthread"];
        args.extend_from_slice(cflags);
        args.extend_from_slice(&[
            "-o",
            &exe_s,
            &prog_s,
            &lib_dir,
            "-l:libcuda.so.1",
            &rpath,
            "-ldl",
        ]);
        cc(&args);
        StandIn { dir, exe }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The program with `args`, capture on into `output`.
    pub fn command(&self, output: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(&self.exe);
        c.args(args)
            .env("HRR_CAPTURE_OUTPUT", output)
            .env("LD_PRELOAD", capture_so())
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

/// cc with `args` (the shared helper takes owned strings).
fn cc(args: &[&str]) {
    crate::common::cc(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
}
