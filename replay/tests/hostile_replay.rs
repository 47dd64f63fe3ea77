//! Hostile archives through the hrr-replay binary, each once a reported defect: manifest
//! and event strings that drive a terminal, a 1D upload whose count runs past its blob,
//! and a download count far beyond the limits. Replay runs against the stand-in runtime
//! (standin/), so a read past replay's own buffer is a crash here.

#[path = "common/seeds.rs"]
mod seeds;
#[path = "common/stand_in.rs"]
mod stand_in;

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{fid, id, semantic, CopyDir};
use hrr_archive::blob::Compression;
use hrr_archive::manifest::DeviceInfo;
use hrr_archive::payload::PayloadWriter;

fn replay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
}

fn run(cmd: &mut Command) -> (Option<i32>, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// Replays `archive` against the stand-in runtime with `args`; None without a C compiler.
#[track_caller]
fn replay_stand_in(archive: &Path, args: &[&str]) -> Option<(Option<i32>, String, String)> {
    let so = stand_in::library()?;
    Some(run(replay()
        .arg(archive)
        .args(args)
        .arg("--json")
        .arg(archive.join("result.json"))
        .env("HRR_REPLAY_CUDART", so)))
}

const ESCAPES: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\r";

#[test]
fn info_and_events_show_control_characters_escaped() {
    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    w.update_runtime(|r| {
        r.runtime_version = format!("13.0{ESCAPES}");
        r.devices.push(DeviceInfo {
            index: 0,
            name: format!("H200{ESCAPES}"),
            arch: "sm_90\u{202e}".into(),
            total_memory: 1,
        });
    });
    w.note_unreplayable(&format!("cudaX{ESCAPES}"), ESCAPES);
    let mut p = PayloadWriter::new();
    p.str(fid::NAME, &format!("kernel{ESCAPES}"))
        .str(fid::CODE_OBJECT, ESCAPES);
    w.append(semantic::LAUNCH_KERNEL, 0, 1, 0, p.as_bytes())
        .unwrap();
    w.finish().unwrap();

    let (code, out, _) = run(replay().arg("--info").arg(d.path()));
    assert_eq!(code, Some(0), "{out}");
    assert!(
        !out.contains('\u{1b}') && !out.contains('\r') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(
        out.contains("H200\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\r"),
        "{out}"
    );
    assert!(out.contains("sm_90\\u{202e}"), "{out}");
    // JSON stays JSON: the string comes back exactly.
    let (code, out, _) = run(replay().args(["--info", "--json"]).arg(d.path()));
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["processes"][0]["runtime"]["devices"][0]["name"],
        format!("H200{ESCAPES}")
    );
    let (code, out, _) = run(replay().arg("--events").arg(d.path()));
    assert_eq!(code, Some(0));
    assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
    assert!(out.contains("kernel"), "{out}");
    let (_, out, _) = run(replay().args(["--events", "--json"]).arg(d.path()));
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(
        v["fields"]["f4"].as_str().unwrap().starts_with("\"kernel"),
        "{v}"
    );
}

#[test]
fn the_rich_seed_archives_pass_against_the_stand_in() {
    for c in [Compression::None, Compression::Zstd { level: 1 }] {
        let d = tempfile::tempdir().unwrap();
        seeds::rich_archive(d.path(), c, 3);
        let Some((code, out, err)) = replay_stand_in(d.path(), &[]) else {
            return;
        };
        assert_eq!(code, Some(0), "{c:?}: {out}{err}");
        assert!(out.contains("PASS: 7 D2H checks passed"), "{out}");
    }
}

/// A 1D upload of 64 MiB from a 64-byte blob: replay used to hand the runtime its
/// 64-byte buffer and a 64 MiB count (a SIGSEGV in the runtime's memcpy; on a GPU, its
/// own memory copied to the device).
#[test]
fn an_upload_longer_than_its_blob_is_refused_before_the_call() {
    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    let dev = 0x7f00_0000_0000u64;
    let n = 64u64 << 20;
    w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, n))
        .unwrap();
    let r = w.put_blob(&[5u8; 64]).unwrap();
    let up = seeds::memcpy(CopyDir::HostToDevice, dev, 0x1000, n, r);
    w.append(id::Memcpy, 0, 1, 0, &up).unwrap();
    w.finish().unwrap();
    let Some((code, out, err)) = replay_stand_in(d.path(), &[]) else {
        return;
    };
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        out.contains(&format!(
            "FAILED seq 1 cudaMemcpy [error]: source bytes: the blob holds 64 bytes, the copy is {n}"
        )),
        "{out}"
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("result.json")).unwrap()).unwrap();
    assert_eq!(r["exit_code"], 2, "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains("seq 1 cudaMemcpy"),
        "{r}"
    );
}

/// A download whose count is 32 GiB: refused by the limit (naming the event and the
/// limit) or, with the limit raised, as longer than its blob, before any buffer is
/// allocated: exit 2, never an abort in staging.
#[test]
fn a_huge_download_count_exits_2_naming_the_event_and_the_limit() {
    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    let dev = 0x7f00_0000_0000u64;
    w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, 64))
        .unwrap();
    let r = w.put_blob(&[5u8; 64]).unwrap();
    let n = 32u64 << 30;
    let down = seeds::memcpy(CopyDir::DeviceToHost, 0x1000, dev, n, r);
    w.append(id::Memcpy, 0, 1, 0, &down).unwrap();
    w.finish().unwrap();
    let limit = hrr_archive::Limits::default().max_host_bytes;
    let Some((code, out, err)) = replay_stand_in(d.path(), &[]) else {
        return;
    };
    assert_eq!(code, Some(2), "{out}{err}");
    if n > limit {
        assert!(
            out.contains(&format!(
                "FAILED seq 1 cudaMemcpy [error]: the copy's result: {n} bytes exceeds max_host_bytes ({limit})"
            )),
            "{out}"
        );
    }
    // The limit raised past the count: refused as longer than its blob, not allocated.
    let (code, out, err) =
        replay_stand_in(d.path(), &["--max-host-bytes", "1099511627776"]).unwrap();
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        out.contains(&format!(
            "FAILED seq 1 cudaMemcpy [error]: expected output: the blob holds 64 bytes, the copy is {n}"
        )),
        "{out}"
    );
}

/// Blob lengths an archive declares are summed for `--info`: two of u64::MAX once
/// overflowed the sum (a panic, found by `fuzz_archives`).
#[test]
fn info_survives_blob_lengths_that_overflow_a_sum() {
    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    for fill in [1u8, 2] {
        let mut r = w.put_blob(&[fill; 16]).unwrap();
        r.len = u64::MAX;
        let down = seeds::memcpy(CopyDir::DeviceToHost, 0x1000, 0x2000, 16, r);
        w.append(id::Memcpy, 0, 1, 0, &down).unwrap();
    }
    w.finish().unwrap();
    let (code, out, err) = run(replay().arg("--info").arg(d.path()));
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!("{} distinct bytes", u64::MAX)),
        "{out}"
    );
}

/// Replay's summary quotes archive strings (an unreplayable event's API name and
/// reason): escaped as in `--info`.
#[test]
fn the_replay_summary_shows_control_characters_escaped() {
    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    let mut p = PayloadWriter::new();
    p.str(fid::API_NAME, &format!("cudaX{ESCAPES}"))
        .str(fid::REASON, ESCAPES);
    w.append(semantic::UNREPLAYABLE, 0, 1, 0, p.as_bytes())
        .unwrap();
    w.finish().unwrap();
    let Some((code, out, err)) = replay_stand_in(d.path(), &[]) else {
        return;
    };
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
    assert!(out.contains("cudaX\\u{1b}]0;owned"), "{out}");
}

/// `--json FILE` where FILE is a link planted to another file: the result replaces the
/// link, and the link's target is untouched (it used to be overwritten).
#[test]
fn a_link_planted_at_the_json_path_is_replaced_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    seeds::rich_archive(&a, Compression::None, 1);
    let victim = d.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let json = d.path().join("result.json");
    std::os::unix::fs::symlink(&victim, &json).unwrap();
    let Some(so) = stand_in::library() else {
        return;
    };
    let (code, out, err) = run(replay()
        .arg(&a)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so));
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let meta = std::fs::symlink_metadata(&json).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the link was replaced by the result"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(r["counts"].is_object(), "{r}");
}

/// The archive says a `cudaFree` failed, replay's succeeds: replay reports the return
/// code, and the allocation follows replay's result (freed, forgotten), so teardown does
/// not free it again (a double free aborted replay before).
#[test]
fn a_free_that_failed_only_at_capture_is_not_freed_twice() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let w = seeds::writer(&a, Compression::None);
    let mut p = PayloadWriter::new();
    p.devptr(1, 0x7f00_0000_0000).u64(2, 4096);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, 0x7f00_0000_0000);
    w.append(id::Free, 0, 1, 1, p.as_bytes()).unwrap();
    w.finish().unwrap();
    let Some(so) = stand_in::library() else {
        return;
    };
    let (code, out, err) = run(replay()
        .arg(&a)
        .arg("--continue-on-error")
        .env("HRR_REPLAY_CUDART", so)
        .env("HRR_STAND_IN_ABORT_ON_DOUBLE_FREE", "1"));
    assert_eq!(code, Some(1), "a failure, not a crash: {out}{err}");
    assert!(out.contains("returned 0, capture returned 1"), "{out}{err}");
}

/// Ranges replay would hand the runtime are checked against its own allocations first
/// (issue 20's reproducers): a `Malloc` resized to 0 bytes then a 256-byte upload, and a
/// 2^40-byte memset on 16 KiB. Each is refused by name before the call (exit 2), never a
/// crash; the same memset that failed at capture too is skipped as failed as captured.
/// A 0-byte registration at a device address maps nothing when replay's registration
/// fails (as the runtime's does): the download from there reads replay's allocation.
#[test]
fn device_ranges_outside_replays_allocations_are_refused_before_the_call() {
    let dev = 0x7f00_0000_0000u64;
    type Write<'a> = &'a dyn Fn(&hrr_archive::ProcessWriter);
    let cases: [(&str, Write); 2] = [
        ("resized malloc", &|w| {
            w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, 0))
                .unwrap();
            let r = w.put_blob(&[5u8; 256]).unwrap();
            let up = seeds::memcpy(CopyDir::HostToDevice, dev, 0x1000, 256, r);
            w.append(id::Memcpy, 0, 1, 0, &up).unwrap();
        }),
        ("huge memset", &|w| {
            w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, 16 << 10))
                .unwrap();
            let mut p = PayloadWriter::new();
            p.devptr(1, dev).u64(2, 7).u64(3, 1 << 40);
            w.append(id::Memset, 0, 1, 0, p.as_bytes()).unwrap();
        }),
    ];
    for (name, write) in cases {
        let d = tempfile::tempdir().unwrap();
        let w = seeds::writer(d.path(), Compression::None);
        write(&w);
        w.finish().unwrap();
        let Some((code, out, err)) = replay_stand_in(d.path(), &[]) else {
            return;
        };
        assert_eq!(code, Some(2), "{name}: {out}{err}");
        let why = match name {
            // cudaMalloc(0) gives null, which maps nothing.
            "resized malloc" => "dst: 256 bytes from 0x7f0000000000 lie in no allocation this replay made",
            _ => "ptr: 1099511627776 bytes from 0x7f0000000000 run past the allocation holding it (16384 bytes from 0x7f0000000000, as captured)",
        };
        assert!(
            out.contains(&format!(
                "[error]: {why}: refused, not handed to the runtime"
            )),
            "{name}: {out}"
        );
    }

    // The program's memset failed at capture on that range: nothing to replay.
    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, 16 << 10))
        .unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, dev).u64(2, 7).u64(3, 1 << 40);
    w.append(id::Memset, 0, 1, 1, p.as_bytes()).unwrap();
    let r = w.put_blob(&[0u8; 64]).unwrap();
    let down = seeds::memcpy(CopyDir::DeviceToHost, 0x1000, dev, 64, r);
    w.append(id::Memcpy, 0, 1, 0, &down).unwrap();
    w.finish().unwrap();
    let (code, out, err) = replay_stand_in(d.path(), &[]).unwrap();
    assert_eq!(code, Some(0), "{out}{err}");

    let d = tempfile::tempdir().unwrap();
    let w = seeds::writer(d.path(), Compression::None);
    w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, 4096))
        .unwrap();
    let mut p = PayloadWriter::new();
    p.u64(1, dev + 64).u64(2, 0).u64(3, 0);
    w.append(id::HostRegister, 0, 1, 0, p.as_bytes()).unwrap();
    let r = w.put_blob(&[0u8; 64]).unwrap();
    let down = seeds::memcpy(CopyDir::DeviceToHost, 0x1000, dev + 64, 64, r);
    w.append(id::Memcpy, 0, 1, 0, &down).unwrap();
    w.finish().unwrap();
    let (code, out, err) = replay_stand_in(d.path(), &["--continue-on-error"]).unwrap();
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("FAILED seq 1 cudaHostRegister [return_code]"),
        "{out}"
    );
    assert!(out.contains("D2H checks       : 1 pass, 0 fail"), "{out}");
}
