use super::*;
use serde_json::json;

fn sample() -> ReplayResult {
    let mut r = ReplayResult::failed("/a".into(), ReplayExit::Fail, "1 failure(s)".into());
    r.vendor = Some(Vendor::Hip);
    r.runtime_library = "libamdhip64.so.6".into();
    r.counts.d2h_fail = 1;
    r.failures.push(Failure {
        pid: 7,
        seq: 12,
        api: "hipMemcpy".into(),
        kind: FailureKind::D2hMismatch,
        message: "D2H check failed".into(),
        bytes: Some(256),
        differing_bytes: Some(1),
        first_differing_offset: Some(100),
        expected_hex: Some("00".into()),
        found_hex: Some("01".into()),
        after_unmodelled_call: false,
    });
    r
}

#[test]
fn round_trips_with_the_wire_spellings() {
    let r = sample();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["schema_version"], json!("1.4"));
    assert!(v.get("stability_runs").is_none() && v.get("unstable").is_none());
    assert!(v.get("fault").is_none(), "absent when nothing faulted");
    assert!(v["counts"].get("unstable_bytes").is_none());
    assert!(v["failures"][0].get("after_unmodelled_call").is_none());
    assert!(v.get("unmodelled_apis").is_none());
    assert_eq!(v["vendor"], json!("hip"));
    assert_eq!(v["verdict"], json!("FAIL"));
    assert_eq!(v["exit_code"], json!(1));
    assert_eq!(v["failures"][0]["kind"], json!("d2h_mismatch"));
    assert!(v["failures"][0].get("bytes").is_some());
    let back: ReplayResult = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
    // Absent optional fields stay absent.
    let mut bare = sample();
    bare.failures[0].bytes = None;
    let v = serde_json::to_value(&bare).unwrap();
    assert!(v["failures"][0].get("bytes").is_none());
}

#[test]
fn every_kind_and_verdict_keeps_its_string() {
    for (k, s) in [
        (FailureKind::D2hMismatch, "d2h_mismatch"),
        (FailureKind::ReturnCode, "return_code"),
        (FailureKind::Unreplayable, "unreplayable"),
        (FailureKind::Unmodelled, "unmodelled"),
        (FailureKind::Error, "error"),
    ] {
        assert_eq!(serde_json::to_value(&k).unwrap(), json!(s));
        assert_eq!(serde_json::from_value::<FailureKind>(json!(s)).unwrap(), k);
    }
    assert_eq!(serde_json::to_value(Verdict::Pass).unwrap(), json!("PASS"));
    assert_eq!(
        serde_json::from_value::<Verdict>(json!("FAIL")).unwrap(),
        Verdict::Fail
    );
    assert!(serde_json::from_value::<Verdict>(json!("MAYBE")).is_err());
    for v in [Verdict::Pass, Verdict::Fail, Verdict::Reproduced] {
        assert_eq!(serde_json::to_value(v).unwrap(), json!(v.as_str()));
    }
    assert_eq!(Verdict::Reproduced.as_str(), "REPRODUCED");
}

/// A result written before the schema version existed (exact shape of the old
/// writer), with no vendor and a kind this reader does not know.
#[test]
fn reads_legacy_results_and_unknown_kinds() {
    let legacy = json!({
        "archive": "/x", "vendor": "", "runtime_library": "",
        "verdict": "FAIL", "reason": "the archive names no runtime vendor",
        "counts": {
            "events_total": 0, "events_replayed": 0, "kernels_launched": 0,
            "d2h_pass": 0, "d2h_fail": 0, "d2h_skipped": 0, "failed_as_captured": 0,
            "untranslated_pointers": 0, "unreplayable_refused": 0
        },
        "failures": [{"pid": 1, "seq": 2, "api": "cudaFoo", "kind": "graph_mismatch",
                      "message": "m"}],
        "exit_code": 2
    });
    let r: ReplayResult = serde_json::from_value(legacy).unwrap();
    assert_eq!(r.schema_version, SchemaVersion::LEGACY);
    assert_eq!(r.vendor, None);
    assert_eq!(r.exit_code, ReplayExit::Invalid);
    assert_eq!(
        r.failures[0].kind,
        FailureKind::Other("graph_mismatch".into())
    );
    // An unknown kind is written back as it was read.
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["failures"][0]["kind"], json!("graph_mismatch"));
    assert_eq!(v["vendor"], json!(""));
    // Before `exit_code` existed it read as 0.
    let mut old = serde_json::to_value(&r).unwrap();
    old.as_object_mut().unwrap().remove("exit_code");
    let r: ReplayResult = serde_json::from_value(old).unwrap();
    assert_eq!(r.exit_code, ReplayExit::Pass);
}

#[test]
fn refuses_a_newer_major_version_and_unknown_vendors() {
    let mut v = serde_json::to_value(sample()).unwrap();
    v["schema_version"] = json!("2.0");
    let e = serde_json::from_value::<ReplayResult>(v.clone()).unwrap_err();
    assert!(e.to_string().contains("schema version 2.0 is newer"), "{e}");
    // Refused even when the rest no longer has version 1's shape.
    v.as_object_mut().unwrap().remove("counts");
    let e = serde_json::from_value::<ReplayResult>(v).unwrap_err();
    assert!(e.to_string().contains("newer"), "{e}");
    let mut v = serde_json::to_value(sample()).unwrap();
    v["schema_version"] = json!("1.9");
    assert!(serde_json::from_value::<ReplayResult>(v).is_ok());
    let mut v = serde_json::to_value(sample()).unwrap();
    v["vendor"] = json!("opencl");
    let e = serde_json::from_value::<ReplayResult>(v).unwrap_err();
    assert!(e.to_string().contains("unknown vendor \"opencl\""), "{e}");
}

/// Schema 1.2's stability fields: written only when a replay learned instability,
/// read back as written; a 1.1 result (none of them) reads as one replay with
/// nothing excluded; a verdict from a newer minor version is kept.
#[test]
fn stability_fields_round_trip_and_older_results_read() {
    let mut r = sample();
    r.stability_runs = 3;
    r.counts.d2h_unstable = 1;
    r.counts.unstable_bytes = 5;
    r.unstable.push(UnstableCheck {
        pid: 7,
        seq: 20,
        api: "hipMemcpy".into(),
        bytes: 16,
        unstable_bytes: 5,
        ranges: vec![
            ByteRange { start: 0, len: 3 },
            ByteRange { start: 8, len: 2 },
        ],
        ranges_total: 2,
        verdict: UnstableVerdict::StableBytesMatch,
    });
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["stability_runs"], json!(3));
    assert_eq!(v["counts"]["unstable_bytes"], json!(5));
    assert_eq!(v["unstable"][0]["verdict"], json!("stable_bytes_match"));
    assert_eq!(v["unstable"][0]["ranges"][1], json!({"start": 8, "len": 2}));
    assert_eq!(
        serde_json::from_value::<ReplayResult>(v.clone()).unwrap(),
        r
    );
    let mut newer = v;
    newer["unstable"][0]["verdict"] = json!("flapping");
    let back: ReplayResult = serde_json::from_value(newer).unwrap();
    assert_eq!(
        back.unstable[0].verdict,
        UnstableVerdict::Other("flapping".into())
    );
    assert_eq!(
        serde_json::to_value(&back).unwrap()["unstable"][0]["verdict"],
        json!("flapping")
    );
    let mut old = serde_json::to_value(sample()).unwrap();
    old["schema_version"] = json!("1.1");
    let r: ReplayResult = serde_json::from_value(old).unwrap();
    assert_eq!((r.stability_runs, r.unstable.len()), (1, 0));
    assert_eq!(r.counts.unstable_bytes, 0);
    assert_eq!(ByteRange { start: 4, len: 1 }.to_string(), "4");
    assert_eq!(ByteRange { start: 4, len: 3 }.to_string(), "4..7");
}

#[test]
fn counts_add_field_by_field() {
    let mut a = Counts {
        events_total: 1,
        d2h_pass: 2,
        ..Counts::default()
    };
    let b = Counts {
        events_total: 10,
        events_replayed: 3,
        kernels_launched: 4,
        d2h_pass: 5,
        d2h_fail: 6,
        d2h_skipped: 7,
        failed_as_captured: 8,
        untranslated_pointers: 9,
        unreplayable_refused: 11,
        checks_after_unmodelled: 12,
        d2h_unstable: 13,
        d2h_all_unstable: 14,
        unstable_bytes: 15,
        d2h_declared_match: 16,
        kernels_filtered: 17,
        d2h_after_filtered: 18,
        range_restored_bytes: 19,
    };
    a.add(&b);
    assert_eq!(
        a,
        Counts {
            events_total: 11,
            d2h_pass: 7,
            ..b
        }
    );
}
