//! A child's output on its way to its log file, capped: a case printing without end
//! neither fills the disk nor grows the harness. The output passes through a pipe and a
//! thread with a fixed buffer; the log keeps its first `cap` bytes and the last
//! `TAIL_KEEP`, with a line between them saying how many bytes were cut. Reading a log
//! back (`tail`) reads only its end.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The log cap when `HRR_HARNESS_LOG_CAP` does not set one.
pub const DEFAULT_CAP: u64 = 64 << 20;
/// What a cut log keeps of the output's end (the part that says why a run failed).
pub const TAIL_KEEP: usize = 64 << 10;

/// The cap from `HRR_HARNESS_LOG_CAP` (bytes, or with a K, M or G suffix), else the
/// default; an unreadable value is reported once and the default used.
pub fn cap_from_env() -> u64 {
    match std::env::var("HRR_HARNESS_LOG_CAP") {
        Err(_) => DEFAULT_CAP,
        Ok(v) => parse_size(&v).unwrap_or_else(|| {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "hrr-harness: warning: HRR_HARNESS_LOG_CAP={v:?} is not a size (like 64M); logs are capped at {DEFAULT_CAP} bytes"
                )
            });
            DEFAULT_CAP
        }),
    }
}

/// `1048576`, `512K`, `64M`, `2G` (binary units).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, shift) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 10),
        b'M' | b'm' => (&s[..s.len() - 1], 20),
        b'G' | b'g' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1u64 << shift)
}

/// Copies `from` into `log` (appending) until end of input, keeping at most `cap` bytes
/// of the file plus the output's last `TAIL_KEEP` bytes and a note; returns how many
/// bytes of output were cut.
pub fn copy_capped(mut from: impl Read, mut log: File, cap: u64) -> std::io::Result<u64> {
    let mut written = log.seek(SeekFrom::End(0))?;
    let mut buf = vec![0u8; 64 << 10];
    // Output past the cap: its last bytes, and how many came in all.
    let mut tail: Vec<u8> = Vec::new();
    let mut over: u64 = 0;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = &buf[..n];
        if written < cap {
            let room = usize::try_from(cap - written)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            log.write_all(&chunk[..room])?;
            written += room as u64;
            chunk = &chunk[room..];
        }
        if !chunk.is_empty() {
            over += chunk.len() as u64;
            tail.extend_from_slice(chunk);
            if tail.len() > 2 * TAIL_KEEP {
                tail.drain(..tail.len() - TAIL_KEEP);
            }
        }
    }
    if over == 0 {
        return Ok(0);
    }
    if tail.len() > TAIL_KEEP {
        tail.drain(..tail.len() - TAIL_KEEP);
    }
    let cut = over - tail.len() as u64;
    if cut == 0 {
        log.write_all(&tail)?;
        return Ok(0);
    }
    writeln!(
        log,
        "\n[hrr-harness: {cut} bytes of output cut here: a log keeps its first {cap} bytes and its last {} (HRR_HARNESS_LOG_CAP)]",
        tail.len()
    )?;
    log.write_all(&tail)?;
    Ok(cut)
}

/// The last `max` bytes of a log, on a line boundary, for reports; only the end of the
/// file is read, however long it is.
pub fn tail(path: &Path, max: usize) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(max as u64);
    let mut data = Vec::with_capacity(max.min(len as usize));
    if f.seek(SeekFrom::Start(start)).is_err() || f.take(max as u64).read_to_end(&mut data).is_err()
    {
        return String::new();
    }
    let mut s = String::from_utf8_lossy(&data).into_owned();
    if start > 0 {
        if let Some(i) = s.find('\n') {
            s.drain(..=i);
        }
        s.insert_str(0, "[...]\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn output_past_the_cap_is_cut_keeping_its_end() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("log");
        std::fs::write(&path, b"header\n").unwrap();
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let total = 5 * TAIL_KEEP + 123;
        let mut out: Vec<u8> = (0..total).map(|i| b'a' + (i % 26) as u8).collect();
        out.extend_from_slice(b"\nthe last line\n");
        let cut = copy_capped(&out[..], log, 1000).unwrap();
        let text = std::fs::read(&path).unwrap();
        assert_eq!(cut, (out.len() - (1000 - 7) - TAIL_KEEP) as u64);
        assert!(text.len() < 1000 + TAIL_KEEP + 200, "{}", text.len());
        assert!(text.starts_with(b"header\nabc"));
        assert!(text.ends_with(b"\nthe last line\n"));
        let s = String::from_utf8_lossy(&text);
        assert!(
            s.contains(&format!("[hrr-harness: {cut} bytes of output cut here")),
            "{s}"
        );
        assert!(tail(&path, 30).ends_with("the last line\n"));
        // Under the cap nothing changes.
        let small = t.path().join("small");
        let log = File::create(&small).unwrap();
        assert_eq!(copy_capped(&b"short\n"[..], log, 1000).unwrap(), 0);
        assert_eq!(std::fs::read(&small).unwrap(), b"short\n");
    }

    #[test]
    fn tail_reads_only_the_end() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("log");
        std::fs::write(&path, b"one\ntwo\nthree\n").unwrap();
        assert_eq!(tail(&path, 100), "one\ntwo\nthree\n");
        assert_eq!(tail(&path, 8), "[...]\nthree\n");
        assert_eq!(tail(&t.path().join("none"), 8), "");
    }
}
