use super::*;

#[test]
fn archive_names_are_recognised_and_nothing_else() {
    let h = "0123456789abcdef0123456789abcdef";
    for ok in [
        "manifest.json".to_string(),
        "pid-42/manifest.json".into(),
        "pid-42.2/events.bin".into(),
        format!("pid-7/code_objects/{h}.co"),
        format!("pid-7/blobs/01/{h}.blob"),
    ] {
        assert!(is_archive_path(&ok), "{ok}");
    }
    for bad in [
        "../manifest.json".to_string(),
        "/manifest.json".into(),
        "pid-42/../../etc/passwd".into(),
        "pid-x/manifest.json".into(),
        "pid-042/manifest.json".into(),
        "pid-4/.lock".into(),
        format!("pid-7/blobs/02/{h}.blob"),
        format!("pid-7/code_objects/{}.co", h.to_uppercase()),
        format!("pid-7/blobs/01/{h}.blob/x"),
        "pid-7/events.bin/".into(),
        "notes.txt".into(),
    ] {
        assert!(!is_archive_path(&bad), "{bad}");
    }
}

#[test]
fn headers_round_trip_and_refuse_what_is_not_a_plain_file() {
    let h = header("pid-1/events.bin", 1234).unwrap();
    assert_eq!(parse_header(&h), Ok(("pid-1/events.bin".into(), 1234)));
    let mut link = h;
    link[156] = b'2';
    assert!(parse_header(&link).unwrap_err().contains("checksum"));
    // Re-checksummed, the link type itself is refused.
    link[148..156].copy_from_slice(b"        ");
    let sum: u32 = link.iter().map(|&b| u32::from(b)).sum();
    link[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    assert!(parse_header(&link)
        .unwrap_err()
        .contains("not a regular file"));
    assert!(header(&"x".repeat(100), 1).is_err());
}
