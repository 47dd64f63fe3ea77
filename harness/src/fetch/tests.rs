use super::*;

#[test]
fn rate_limits_are_read_from_githubs_headers() {
    let h = |pairs: &[(&str, &str)]| {
        let mut m = http::HeaderMap::new();
        for (k, v) in pairs {
            m.insert(
                http::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        m
    };
    assert_eq!(rate_limit_wait(200, &h(&[]), 0), None);
    assert_eq!(
        rate_limit_wait(403, &h(&[]), 0),
        None,
        "a plain 403 is no rate limit"
    );
    assert_eq!(
        rate_limit_wait(429, &h(&[("retry-after", "7")]), 0),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        rate_limit_wait(
            403,
            &h(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "1030")
            ]),
            1000
        ),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        rate_limit_wait(429, &h(&[]), 0),
        Some(Duration::from_secs(60))
    );
    // A limit far away is given up on, naming the wait.
    let e = FetchError::RateLimited {
        what: "downloading artifact `a`".into(),
        status: 403,
        wait: Duration::from_secs(3600),
    };
    let e = next_try(e, 1).unwrap_err();
    assert!(e.to_string().contains("it asks to wait 3600 s"), "{e}");
    let e = FetchError::RateLimited {
        what: "downloading artifact `a`".into(),
        status: 429,
        wait: Duration::from_secs(2),
    };
    assert_eq!(next_try(e, 1).unwrap(), Duration::from_secs(2));
}
use zip::write::SimpleFileOptions;

fn zip_of(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    let mut w = zip::ZipWriter::new(f.reopen().unwrap());
    for (name, data) in entries {
        w.start_file(*name, SimpleFileOptions::default()).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
    f
}

#[test]
fn entry_names_that_leave_the_directory_are_refused() {
    for bad in [
        "/etc/passwd",
        "../x",
        "a/../../x",
        "a/..",
        "a\\..\\x",
        "",
        "./",
        "a\0b",
    ] {
        assert_eq!(safe_relative(bad), None, "{bad:?}");
    }
    assert_eq!(safe_relative("a/./b/"), Some(PathBuf::from("a/b")));
    assert_eq!(
        safe_relative("cases/c/attempt-1/capture.log").map(|p| p.components().count()),
        Some(4)
    );
    for bad in ["", ".", "..", ".hidden", "a/b", "a\\b"] {
        assert!(!plain_name(bad), "{bad:?}");
    }
    assert!(plain_name("hrr-results-sm90-shard-1"));
}

#[test]
fn a_zip_unpacks_and_replaces_an_earlier_unpack() {
    let t = tempfile::tempdir().unwrap();
    let z = zip_of(&[
        ("results.json", b"{}"),
        ("cases/c/attempt-1/capture.log", b"log"),
    ]);
    let dir = t.path().join("art");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("stale"), "old").unwrap();
    let (files, bytes) = unpack_into(z.path(), &dir, &Limits::default()).unwrap();
    assert_eq!((files, bytes), (2, 5));
    assert_eq!(
        std::fs::read(dir.join("cases/c/attempt-1/capture.log")).unwrap(),
        b"log"
    );
    assert!(!dir.join("stale").exists());
    assert!(!t.path().join(".art.partial").exists());
}

#[test]
fn limits_on_entries_and_bytes_refuse_the_whole_zip() {
    let t = tempfile::tempdir().unwrap();
    let z = zip_of(&[("a", &[0u8; 1000]), ("b", b"x"), ("c", b"y")]);
    let dir = t.path().join("art");
    let few = Limits {
        max_bytes: 1 << 20,
        max_entries: 2,
    };
    assert!(matches!(
        unpack_into(z.path(), &dir, &few),
        Err(UnpackError::TooManyEntries(2))
    ));
    let small = Limits {
        max_bytes: 999,
        max_entries: 10,
    };
    assert!(matches!(
        unpack_into(z.path(), &dir, &small),
        Err(UnpackError::TooLarge(999))
    ));
    assert!(!dir.exists());
    assert!(!t.path().join(".art.partial").exists());
}

#[test]
fn symbolic_links_and_duplicate_names_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let f = tempfile::NamedTempFile::new().unwrap();
    let mut w = zip::ZipWriter::new(f.reopen().unwrap());
    w.start_file("results.json", SimpleFileOptions::default())
        .unwrap();
    w.add_symlink("cases", "/etc", SimpleFileOptions::default())
        .unwrap();
    w.finish().unwrap();
    let e = unpack_into(f.path(), &t.path().join("a"), &Limits::default()).unwrap_err();
    assert!(
        matches!(e, UnpackError::Symlink(ref n) if n == "cases"),
        "{e}"
    );
    let z = zip_of(&[("x", b"1"), ("./x", b"2")]);
    let e = unpack_into(z.path(), &t.path().join("b"), &Limits::default()).unwrap_err();
    assert!(matches!(e, UnpackError::Io { .. }), "{e}");
    assert!(!t.path().join("b").exists());
}
