//! Calls capture does not model, against the stand-in runtime built with its pass-through
//! probes (standin/cuda_probes.c), from a program (`tests/stand_in/unseen.c`):
//! the pass-through forwards arguments (eight integers and pointers, doubles mixed with
//! integers, some on the stack) and return values unchanged through its first-call path
//! and its resolved slot; the first call of each API is recorded with its name and
//! library; the manifest lists every unmodelled API with its exact count (threads racing
//! to make the first call included) and first sequence id, exempt ones marked; a missing
//! real function returns NO_REAL_FUNCTION.

#![cfg(target_arch = "x86_64")]

use std::collections::BTreeMap;

use hrr_archive::api::{fid, semantic};
use hrr_archive::manifest::UnmodelledCoverage;
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

fn lines(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn unmodelled_calls_pass_through_unchanged_and_are_counted_and_named() {
    // The stand-in with its pass-through probes (standin/cuda_probes.c).
    let Some(s) = StandIn::build_over(None, &["-DHRR_STAND_IN_PROBES"], "unseen", "unseen.c", &[])
    else {
        return;
    };
    let out = s.path().join("archive");
    // Natively first: what the program prints is what it must print under capture.
    let native = std::process::Command::new(&s.exe).output().unwrap();
    let o = s.command(&out, &[]).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let got = lines(&stdout);
    assert_eq!(got["fails"], "0", "{stdout}");
    assert_eq!(got["ints"], "204");
    assert_eq!(got["doubles"], "538.0");
    assert_eq!(got["missing"], "999", "NO_REAL_FUNCTION");
    let native = lines(&String::from_utf8_lossy(&native.stdout));
    for k in ["map", "ints", "doubles", "racers_bad", "fails"] {
        assert_eq!(
            got[k], native[k],
            "{k}: capture changed what the program does"
        );
    }
    assert_eq!(native["missing"], "-1", "natively no one defines it");
    assert!(
        stderr.contains("cuGraphicsMapResources has no real definition"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("cuGraphicsMapResources has no real").count(),
        1
    );
    assert!(
        stderr.contains("cudaGraphicsMapResources (libcudart.so.13) is not modelled"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("cudaGetErrorString (libcudart.so.13) is not"),
        "exempt: no warning"
    );

    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    assert!(p.is_complete());
    let m = &p.manifest;
    assert!(
        // A floor that says the surface lists were read (each function modelled lowers it).
        matches!(m.unmodelled_coverage, UnmodelledCoverage::Measured { pass_throughs } if pass_throughs > 800),
        "{:?}",
        m.unmodelled_coverage
    );
    let by_name: BTreeMap<&str, _> = m
        .unmodelled_apis
        .iter()
        .map(|u| (u.api.as_str(), u))
        .collect();
    // Each recorded first call, by name: its sequence id.
    let records: BTreeMap<String, (u64, String)> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::UNMODELLED_CALL)
        .map(|e| {
            let pl = Payload::parse(&e.payload).unwrap();
            let name = pl.str(fid::API_NAME, "api").unwrap().to_string();
            let lib = pl.str(fid::LIBRARY, "library").unwrap().to_string();
            (name, (e.header.seq, lib))
        })
        .collect();
    let map = by_name["cudaGraphicsMapResources"];
    assert_eq!((map.count, map.library.as_str()), (1, "libcudart.so.13"));
    assert_eq!(map.exempt, None);
    let (seq, lib) = &records["cudaGraphicsMapResources"];
    assert_eq!(
        (map.first_seq, lib.as_str()),
        (Some(*seq), "libcudart.so.13")
    );
    // In the event order: after the first D2H copy, before the second.
    let memcpys: Vec<u64> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == hrr_archive::api::id::Memcpy)
        .map(|e| e.header.seq)
        .collect();
    assert_eq!(memcpys.len(), 3);
    assert!(memcpys[1] < *seq && *seq < memcpys[2], "{memcpys:?} {seq}");
    // Threads racing for the first call: every call counted, one record.
    let racers = by_name["cudaGraphicsUnmapResources"];
    assert_eq!(racers.count, 8 * 1000);
    assert_eq!(
        racers.first_seq,
        Some(records["cudaGraphicsUnmapResources"].0)
    );
    // First-call path once, then the slot: two calls each, one record each.
    for api in [
        "cuGraphicsSubResourceGetMappedArray",
        "cuCoredumpSetAttributeGlobal",
    ] {
        assert_eq!(by_name[api].count, 2, "{api}");
        assert_eq!(by_name[api].library, "libcuda.so.1");
        assert_eq!(by_name[api].first_seq, Some(records[api].0));
    }
    let exempt = by_name["cudaGetErrorString"];
    assert!(exempt.exempt.as_deref().unwrap().contains("error strings"));
    assert_eq!(exempt.first_seq, Some(records["cudaGetErrorString"].0));
    // The missing one is counted and recorded too (the program did call it).
    assert_eq!(by_name["cuGraphicsMapResources"].count, 1);
    // Nothing recorded twice.
    let n = p
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::UNMODELLED_CALL)
        .count();
    assert_eq!(n, records.len());
}
