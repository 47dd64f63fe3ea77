use super::*;

#[test]
fn encode_decode_both_codecs() {
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
    let h = ContentHash::of(&data);
    for c in [Compression::None, Compression::Zstd { level: 3 }] {
        let stored = encode(&data, c).unwrap();
        let back = decode(Path::new("x"), &stored, &h, &Limits::default()).unwrap();
        assert_eq!(back, data);
    }
    let stored = encode(&data, Compression::Zstd { level: 3 }).unwrap();
    assert!(
        stored.len() < data.len() / 4,
        "zstd should shrink a repetitive buffer"
    );
}

#[test]
fn a_fill_blob_decodes_to_its_content_and_is_bounded_and_verified() {
    let data = vec![0x5au8; 100_000];
    let f = Fill::detect(&data).unwrap();
    let stored = encode_fill(&f);
    let h = ContentHash::of(&data);
    assert_eq!(f.hash(), h);
    let back = decode(Path::new("f"), &stored, &h, &Limits::default()).unwrap();
    assert_eq!(back, data);
    // Into a buffer, as replay reads.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.blob");
    std::fs::write(&p, stored).unwrap();
    let mut out = vec![0u8; data.len()];
    read_blob_into(&p, &h, &Limits::default(), &mut out).unwrap();
    assert_eq!(out, data);
    // Named for other bytes: refused.
    let other = ContentHash::of(&data[1..]);
    assert!(decode(Path::new("f"), &stored, &other, &Limits::default()).is_err());
    // A fill declaring more than the limits allow is refused before expanding.
    let huge = encode_fill(&Fill {
        unit: [0; 16],
        len: 1 << 40,
    });
    let err = decode(Path::new("f"), &huge, &h, &Limits::default()).unwrap_err();
    assert!(err.is_limit(), "{err}");
    // A body that is not one unit is named.
    let mut bad = stored.to_vec();
    bad.push(0);
    let err = decode(Path::new("f"), &bad, &h, &Limits::default()).unwrap_err();
    assert!(err.to_string().contains("one 16-byte unit"), "{err}");
}

#[test]
fn declared_length_is_checked_before_decompressing() {
    let data = vec![0u8; 1 << 20];
    let stored = encode(&data, Compression::Zstd { level: 1 }).unwrap();
    let limits = Limits {
        max_host_bytes: 1 << 10,
        ..Limits::default()
    };
    let err = decode(Path::new("b"), &stored, &ContentHash::of(&data), &limits).unwrap_err();
    assert!(err.is_limit(), "{err}");
}

#[test]
fn large_files_are_written_through_a_mapping_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let body: Vec<u8> = (0..PARALLEL_IO_BYTES + 12_345)
        .map(|i| (i * 31 + i / 4099) as u8)
        .collect();
    let h = header(body.len() as u64, Compression::None);
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("m"))
        .unwrap();
    // tmpfs and ext4 both reserve blocks and map; where one cannot, Ok(false).
    if write_mapped_parallel(&f, &[&h, &body]).unwrap() {
        let back = fs::read(dir.path().join("m")).unwrap();
        assert_eq!(&back[..BLOB_HEADER_LEN], &h);
        assert!(back[BLOB_HEADER_LEN..] == body[..]);
    }
    // The capture path, and replay's read into a caller's buffer.
    let hash = ContentHash::of(&body);
    let dest = dir.path().join("b.blob");
    write_atomic_parts(&dest, &[&h, &body], false).unwrap();
    let mut out = vec![0u8; body.len()];
    read_blob_into(&dest, &hash, &Limits::default(), &mut out).unwrap();
    assert!(out == body);
    let mut short = vec![0u8; 10];
    let err = read_blob_into(&dest, &hash, &Limits::default(), &mut short).unwrap_err();
    assert!(err.to_string().contains("the event says 10"), "{err}");
}

#[test]
fn read_into_decompresses_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![9u8; 100_000];
    let dest = dir.path().join("z.blob");
    write_atomic(
        &dest,
        &encode(&data, Compression::Zstd { level: 1 }).unwrap(),
        false,
    )
    .unwrap();
    let mut out = vec![0u8; data.len()];
    read_blob_into(&dest, &ContentHash::of(&data), &Limits::default(), &mut out).unwrap();
    assert_eq!(out, data);
    let other = ContentHash::of(b"something else");
    let err = read_blob_into(&dest, &other, &Limits::default(), &mut out).unwrap_err();
    assert!(matches!(err, ArchiveError::HashMismatch { .. }), "{err}");
}
