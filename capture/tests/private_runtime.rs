//! Libraries with a private runtime, against the stand-in runtime (standin/, as
//! libcudart.so.13): a program built by nvcc with `-cudart shared` loads a
//! shared library nvcc built with its default static runtime (its GPU code registers
//! with its own copy of the runtime). On x86_64 capture interposes the driver lookups
//! such a runtime makes, so the library is not refused for being loaded (elsewhere it is
//! named among the unmodelled calls); the same library built with `-cudart shared`, and
//! the program alone, are never named. Needs nvcc, cc and the CUDA 13 headers
//! (`hrr_testkit`: skipped, saying so, where one is missing; a failure under `CI=true` or
//! `HRR_REQUIRE_ALL=1`).

use std::path::{Path, PathBuf};
use std::process::Command;

use hrr_archive::api::private_runtime::{api_name, is_private_runtime};
use hrr_archive::api::{fid, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};
use hrr_testkit::tools;

mod common;

fn run(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().expect("spawn");
    assert!(
        o.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

struct Built {
    dir: PathBuf,
    main: PathBuf,
}

impl Drop for Built {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The stand-in and the programs built into a fresh directory; None after a skip.
fn build(nvcc: &Path) -> Option<Built> {
    let dir = std::env::temp_dir().join(format!("hrr-capture-private-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in");
    let d = |n: &str| dir.join(n).to_string_lossy().into_owned();
    hrr_testkit::standin::cuda(&dir, None, &[])?;
    let lib = src.join("private_runtime_lib.cu");
    // nvcc's default: the static runtime inside the library.
    run(Command::new(nvcc)
        .args(["-arch=sm_90", "-Xcompiler", "-fPIC", "-shared", "-o"])
        .arg(d("libprivate.so"))
        .arg(&lib));
    run(Command::new(nvcc)
        .args([
            "-arch=sm_90",
            "-cudart",
            "shared",
            "-Xcompiler",
            "-fPIC",
            "-shared",
            "-o",
        ])
        .arg(d("libsharedrt.so"))
        .arg(&lib));
    run(Command::new(nvcc)
        .args(["-arch=sm_90", "-cudart", "shared", "-o"])
        .arg(d("main"))
        .arg(src.join("private_runtime_main.cu"))
        .arg("-ldl"));
    Some(Built {
        main: dir.join("main"),
        dir,
    })
}

/// The program with `lib` (if any), natively and under capture; the archive of the
/// captured run and capture's stderr. The two runs must print the same.
fn capture(b: &Built, lib: Option<&str>, tag: &str) -> (Archive, String) {
    let out = b.dir.join(format!("archive-{tag}"));
    let args: Vec<String> = lib
        .map(|l| b.dir.join(l).to_string_lossy().into_owned())
        .into_iter()
        .collect();
    let native = run(Command::new(&b.main)
        .args(&args)
        .env("LD_LIBRARY_PATH", &b.dir));
    let o = run(Command::new(&b.main)
        .args(&args)
        .env("LD_LIBRARY_PATH", &b.dir)
        .env("HRR_CAPTURE_OUTPUT", &out)
        .env("LD_PRELOAD", common::capture_so())
        .env("HRR_CAPTURE_DISK_RESERVE", "16M"));
    assert_eq!(
        o.stdout, native.stdout,
        "capture changed what the program prints"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("fails 0"));
    let a = Archive::open(&out, Limits::default()).unwrap();
    (a, String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The private-runtime records of the archive's one process: (api, library, since seq).
fn private_records(a: &Archive) -> Vec<(String, String, u64)> {
    a.processes[0]
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::UNMODELLED_CALL)
        .filter_map(|e| {
            let p = Payload::parse(&e.payload).unwrap();
            let api = p.str(fid::API_NAME, "api").unwrap().to_string();
            is_private_runtime(&api).then(|| {
                (
                    api,
                    p.str(fid::LIBRARY, "library").unwrap().to_string(),
                    p.u64(fid::SINCE_SEQ, "since").unwrap(),
                )
            })
        })
        .collect()
}

#[test]
fn a_library_with_its_own_static_runtime_loaded_but_unused_is_not_refused() {
    let Some([nvcc, _]) = hrr_testkit::tools([&tools::NVCC, &tools::CC]) else {
        return;
    };
    let Some(b) = build(&nvcc) else {
        return;
    };
    // x86_64: a private CUDA runtime reaches the driver only through the lookups capture
    // interposes (capture/src/lookup.rs), so its work would be recorded at the driver;
    // loaded and never called, as here, it did nothing to record. Refusal is by use, not
    // by load: nothing is named, for the static-runtime library, the same library through
    // the shared runtime, or the program alone.
    for (lib, tag) in [
        (Some("libprivate.so"), "private"),
        (Some("libsharedrt.so"), "shared"),
        (None, "alone"),
    ] {
        let (a, stderr) = capture(&b, lib, tag);
        let p = &a.processes[0];
        assert!(p.is_complete(), "{tag}");
        let private: Vec<_> = p
            .manifest
            .unmodelled_apis
            .iter()
            .filter(|u| is_private_runtime(&u.api))
            .collect();
        if cfg!(target_arch = "x86_64") {
            assert!(
                private_records(&a).is_empty(),
                "{tag}: {:?}",
                private_records(&a)
            );
            assert!(private.is_empty(), "{tag}: {private:?}");
            assert!(
                !stderr.contains("its own copy of the runtime"),
                "{tag}: {stderr}"
            );
        } else if tag == "private" {
            let path = b.dir.join("libprivate.so").to_string_lossy().into_owned();
            let api = api_name("libprivate.so", "CUDA");
            assert_eq!(private_records(&a), vec![(api, path, 0)]);
        }
        // The copies through the shared runtime are recorded.
        assert!(
            p.events
                .iter()
                .any(|e| e.header.api_id == hrr_archive::api::id::Memcpy),
            "{tag}"
        );
    }
}
