//! Managed and mapped page-locked memory at launches (`capture::pinned`): a launch made
//! while an earlier launch reaching the same buffer is still in flight takes no snapshot
//! of it and names the launch in flight (`SNAPSHOT_IN_FLIGHT`); after a synchronisation
//! the next launch snapshots it again, with the host's write in it.
//! `HRR_CAPTURE_SNAPSHOTS=every` snapshots at every launch; a bad value, or the variable's
//! earlier name, leaves the program unrecorded and unchanged. The snapshot cap counts only
//! the memory snapshotted: a launch that leaves its buffer out for a launch in flight is
//! complete under a cap the buffer exceeds.
//! The stand-in's driver is there by name (`libcuda.so.1` on the loader path) with the
//! runtime's primary context current, so the third launch's snapshot is read by copy
//! (`capture::dma`: an allocation's first snapshot is read through the host, its second
//! by copy) and its bytes are checked like the others.

use hrr_archive::api::{fid, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

use stand_in::StandIn;

/// Each launch's snapshots (start, bytes) and in-flight marks (start, size, launch), with
/// the launch's sequence id.
type Launch = (u64, Vec<(u64, Vec<u8>)>, Vec<(u64, u64, u64)>);

fn launches(out: &std::path::Path) -> Vec<Launch> {
    let a = Archive::open(out, Limits::default()).unwrap();
    let p = &a.processes[0];
    p.events
        .iter()
        .filter(|e| e.header.api_id == semantic::LAUNCH_KERNEL)
        .map(|e| {
            let l = Payload::parse(&e.payload).unwrap();
            let snaps = l
                .all(fid::PINNED_SNAPSHOT)
                .map(|s| {
                    let s = s.as_nested().unwrap();
                    let r = s.blob(fid::SNAPSHOT_BYTES, "bytes").unwrap();
                    (
                        s.u64(fid::SNAPSHOT_START, "start").unwrap(),
                        p.load_blob(&r).unwrap(),
                    )
                })
                .collect();
            let marks = l
                .all(fid::SNAPSHOT_IN_FLIGHT)
                .map(|s| {
                    let s = s.as_nested().unwrap();
                    (
                        s.u64(fid::SNAPSHOT_START, "start").unwrap(),
                        s.u64(fid::SNAPSHOT_SIZE, "size").unwrap(),
                        s.u64(fid::SNAPSHOT_IN_FLIGHT_LAUNCH, "launch").unwrap(),
                    )
                })
                .collect();
            (e.header.seq, snaps, marks)
        })
        .collect()
}

#[test]
fn memory_in_flight_is_not_snapshotted_until_a_synchronisation() {
    let Some(s) = StandIn::build("managed", "managed_program.c") else {
        return;
    };
    let n = 1usize << 20;
    let want: Vec<u8> = (0..n).map(|i| (i * 3) as u8).collect();
    let changed = {
        let mut w = want.clone();
        w[5] ^= 0xff;
        w
    };

    for memory in ["managed", "mapped"] {
        let out = s.path().join(format!("settled_{memory}"));
        let run = s.command(&out, &[memory]).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success() && String::from_utf8_lossy(&run.stdout) == "managed ok\n",
            "{memory}: {stderr}"
        );
        assert!(
            stderr.contains("1 snapshots of managed or mapped memory not taken: an earlier launch reaching the memory was still in flight"),
            "{memory}: {stderr}"
        );
        let l = launches(&out);
        assert_eq!(l.len(), 3, "{memory}: {stderr}");
        let (first_seq, first, _) = &l[0];
        assert_eq!(
            first.len(),
            1,
            "{memory}: the first launch snapshots the buffer"
        );
        let base = first[0].0;
        assert_eq!(first[0].1, want, "{memory}");
        assert!(l[0].2.is_empty(), "{memory}");
        assert!(
            l[1].1.is_empty(),
            "{memory}: no snapshot while the first launch is in flight"
        );
        assert_eq!(l[1].2, [(base, n as u64, *first_seq)], "{memory}");
        assert_eq!(
            l[2].1,
            [(base, changed.clone())],
            "{memory}: after the synchronisation, with the host's write"
        );
        assert!(l[2].2.is_empty(), "{memory}");
    }

    // Under a cap of half the buffer: the launches that snapshot it are incomplete, the
    // one that leaves it out is not.
    let out = s.path().join("capped");
    let run = s
        .command(&out, &["mapped"])
        .env("HRR_CAPTURE_PINNED_SNAPSHOT_MAX", "512K")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let a = Archive::open(&out, Limits::default()).unwrap();
    let flags: Vec<u16> = a.processes[0]
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::LAUNCH_KERNEL)
        .map(|e| e.header.flags & hrr_archive::record::RECORD_FLAG_INCOMPLETE)
        .collect();
    let f = hrr_archive::record::RECORD_FLAG_INCOMPLETE;
    assert_eq!(flags, [f, 0, f], "{stderr}");

    let out = s.path().join("every");
    let run = s
        .command(&out, &[])
        .env("HRR_CAPTURE_SNAPSHOTS", "every")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let l = launches(&out);
    let snaps: Vec<_> = l.iter().map(|(_, s, m)| (s.clone(), m.len())).collect();
    assert_eq!(
        snaps,
        [
            (vec![(base_of(&l), want.clone())], 0),
            (vec![(base_of(&l), want)], 0),
            (vec![(base_of(&l), changed)], 0)
        ]
    );

    for (var, value, said) in [
        (
            "HRR_CAPTURE_SNAPSHOTS",
            "sometimes",
            "HRR_CAPTURE_SNAPSHOTS=\"sometimes\" is not settled (the default) or every",
        ),
        (
            "HRR_CAPTURE_MANAGED_SNAPSHOTS",
            "every",
            "HRR_CAPTURE_MANAGED_SNAPSHOTS is now HRR_CAPTURE_SNAPSHOTS",
        ),
    ] {
        let out = s.path().join(format!("bad_{var}"));
        let run = s.command(&out, &[]).env(var, value).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success() && String::from_utf8_lossy(&run.stdout) == "managed ok\n",
            "the program runs unchanged: {stderr}"
        );
        assert!(stderr.contains(said), "{stderr}");
        assert!(!out.exists(), "capture is off: no archive");
    }
}

/// The managed buffer's captured start: the first launch's snapshot.
fn base_of(l: &[Launch]) -> u64 {
    l[0].1[0].0
}
