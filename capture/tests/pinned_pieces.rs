//! Pinned snapshots in pieces (`capture::pinned`): a 40 MiB page-locked buffer read by
//! two launches is recorded as three pieces per launch; the pieces the program did not
//! change between the launches carry the same blob, so only the changed piece is stored
//! again, and each piece holds exactly the bytes the kernel saw. The output each
//! synchronisation records is the same pieces, named by the same blobs.

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
    // After each synchronisation, the buffer the kernel reached is an output: one
    // MappedOutput a piece, naming the allocation, each piece the very blob the launch's
    // snapshot stored (the kernel wrote nothing), so the outputs store nothing new.
    // (start, size, the allocation named, blob) of each MappedOutput, by launch.
    type Output = (u64, u64, Option<u64>, hrr_archive::payload::BlobRef);
    let outputs: Vec<Vec<Output>> = [0, 1]
        .iter()
        .map(|&i| {
            let launch_seq = p
                .events
                .iter()
                .filter(|e| e.header.api_id == semantic::LAUNCH_KERNEL)
                .nth(i)
                .unwrap()
                .header
                .seq;
            p.events
                .iter()
                .filter(|e| e.header.api_id == semantic::MAPPED_OUTPUT)
                .map(|e| Payload::parse(&e.payload).unwrap())
                .filter(|m| m.u64(fid::MAPPED_LAUNCH, "launch").unwrap() == launch_seq)
                .map(|m| {
                    (
                        m.devptr(fid::MAPPED_START, "start").unwrap(),
                        m.u64(fid::MAPPED_SIZE, "size").unwrap(),
                        m.get(fid::MAPPED_ALLOCATION).map(|f| f.as_u64().unwrap()),
                        m.blob(fid::MAPPED_BYTES, "bytes").unwrap(),
                    )
                })
                .collect()
        })
        .collect();
    for (launch, (outs, snaps)) in outputs.iter().zip([&first, &second]).enumerate() {
        let seen: Vec<_> = outs.iter().map(|o| (o.0, o.1, o.2, o.3.hash)).collect();
        let want: Vec<_> = snaps
            .iter()
            .map(|s| (s.0, s.1, Some(base), s.2.hash))
            .collect();
        assert_eq!(seen, want, "launch {launch}'s outputs: {stderr}");
    }
    let blobs = walkdir_count(&p.dir.join("blobs"));
    // The first two pieces hold the same bytes (i * 7 repeats every 256 bytes): one
    // blob; the last piece, then the changed last piece: three in all.
    assert_eq!(blobs, 3, "{stderr}");
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

/// Files under `dir`, at any depth.
fn walkdir_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => walkdir_count(&e.path()),
                    _ => 1,
                })
                .sum()
        })
        .unwrap_or(0)
}
