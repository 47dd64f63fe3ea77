//! Pinned snapshots in pieces (`capture::pinned`): a 40 MiB page-locked buffer read by
//! two launches is recorded as three pieces per launch; the pieces the program did not
//! change between the launches carry the same blob, so only the changed piece is stored
//! again, and each piece holds exactly the bytes the kernel saw.

use hrr_archive::api::{fid, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

use stand_in::StandIn;

#[test]
fn unchanged_pieces_of_a_large_snapshot_are_stored_once() {
    let Some(s) = StandIn::build("pieces", "pieces_program.c") else {
        return;
    };
    let out = s.path().join("archive");
    let run = s.command(&out, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success() && String::from_utf8_lossy(&run.stdout).contains("pieces ok"),
        "{stderr}"
    );
    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    let launches: Vec<Payload> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::LAUNCH_KERNEL)
        .map(|e| Payload::parse(&e.payload).unwrap())
        .collect();
    assert_eq!(launches.len(), 2, "{stderr}");
    let pieces = |l: &Payload| -> Vec<(u64, u64, hrr_archive::payload::BlobRef)> {
        l.all(fid::PINNED_SNAPSHOT)
            .map(|s| {
                let s = s.as_nested().unwrap();
                (
                    s.u64(fid::SNAPSHOT_START, "start").unwrap(),
                    s.u64(fid::SNAPSHOT_SIZE, "size").unwrap(),
                    s.blob(fid::SNAPSHOT_BYTES, "bytes").unwrap(),
                )
            })
            .collect()
    };
    let (first, second) = (pieces(&launches[0]), pieces(&launches[1]));
    const MIB: u64 = 1 << 20;
    let base = first[0].0;
    let layout = |v: &[(u64, u64, _)]| v.iter().map(|p| (p.0 - base, p.1)).collect::<Vec<_>>();
    assert_eq!(
        layout(&first),
        [(0, 16 * MIB), (16 * MIB, 16 * MIB), (32 * MIB, 8 * MIB)]
    );
    assert_eq!(layout(&second), layout(&first));
    assert_eq!(first[0].2.hash, second[0].2.hash);
    assert_eq!(first[1].2.hash, second[1].2.hash);
    assert_ne!(
        first[2].2.hash, second[2].2.hash,
        "the changed piece is new"
    );
    // Each piece holds the bytes the kernel saw: i * 7, one byte flipped before the second.
    let n = 40 * MIB as usize;
    let mut want: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
    for (launch, v) in [first, second].iter().enumerate() {
        if launch == 1 {
            want[n - 5] ^= 0xff;
        }
        for (start, size, r) in v {
            let at = (start - base) as usize;
            assert_eq!(
                p.load_blob(r).unwrap(),
                want[at..at + *size as usize],
                "launch {launch} piece at {at}"
            );
        }
    }
}
