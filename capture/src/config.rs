//! Capture's configuration, read from the environment once, when the first runtime call
//! starts capture: where the archive goes and how it is written. Every `HRR_CAPTURE_*`
//! value is checked here: one capture cannot use turns capture off for the process, with
//! one line on stderr naming the variable (the program itself is unchanged).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hrr_archive::blob::Compression;
use hrr_archive::diskspace::ReservePolicy;
use hrr_archive::CaptureSettings;

/// Where capture writes and how.
#[derive(Debug)]
pub struct Config {
    /// HRR_CAPTURE_OUTPUT: the archive root. (HRR_CAPTURE_CODE_STORE, the shared
    /// code-object store, is `settings.code_store`.)
    pub output: PathBuf,
    pub settings: CaptureSettings,
    /// HRR_CAPTURE_PINNED_SNAPSHOT_MAX: most bytes of pinned host memory snapshotted for
    /// one launch (over it the launch is recorded incomplete).
    pub pinned_snapshot_max: u64,
    /// HRR_CAPTURE_MAPPED_OUTPUT_MAX: most bytes of mapped and managed memory recorded
    /// as kernels' outputs at one synchronisation (over it the record is incomplete).
    pub mapped_output_max: u64,
    /// HRR_CAPTURE_RANGE=profiler[:N] or nvtx:NAME[:N]: record only that range (`range`).
    pub range: Option<hrr_contract::CaptureRange>,
    /// HRR_CAPTURE_SNAPSHOTS=every: snapshot managed and mapped page-locked memory at
    /// every launch, also while an earlier launch reaching it is in flight (`pinned`);
    /// default `settled`.
    pub snapshots_every: bool,
}

/// The pinned-snapshot cap when HRR_CAPTURE_PINNED_SNAPSHOT_MAX is unset: 1 GiB.
pub const DEFAULT_PINNED_SNAPSHOT_MAX: u64 = 1 << 30;

/// The mapped-output cap when HRR_CAPTURE_MAPPED_OUTPUT_MAX is unset: 1 GiB.
pub const DEFAULT_MAPPED_OUTPUT_MAX: u64 = 1 << 30;

/// A setting capture cannot use; capture is then off for the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    Compress(String),
    FlushMs(String),
    Fsync(String),
    /// The value's own problem, as the archive's parser names it.
    DiskReserve(String),
    /// The value's own problem, as the archive's size parser names it.
    PinnedSnapshotMax(String),
    /// The value's own problem, as the archive's size parser names it.
    MappedOutputMax(String),
    Range(String),
    Snapshots(String),
    /// HRR_CAPTURE_MANAGED_SNAPSHOTS, the earlier name of HRR_CAPTURE_SNAPSHOTS, is set.
    SnapshotsRenamed,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Compress(v) => write!(
                f,
                "HRR_CAPTURE_COMPRESS={v:?} is not one of none, zstd, zstd:LEVEL (1-22)"
            ),
            ConfigError::FlushMs(v) => write!(
                f,
                "HRR_CAPTURE_FLUSH_MS={v:?} is not a positive number of milliseconds"
            ),
            ConfigError::Fsync(v) => write!(
                f,
                "HRR_CAPTURE_FSYNC={v:?} is not on (events), all (events and blobs) or off"
            ),
            ConfigError::DiskReserve(why) => write!(f, "HRR_CAPTURE_DISK_RESERVE: {why}"),
            ConfigError::PinnedSnapshotMax(why) => {
                write!(f, "HRR_CAPTURE_PINNED_SNAPSHOT_MAX: {why}")
            }
            ConfigError::MappedOutputMax(why) => {
                write!(f, "HRR_CAPTURE_MAPPED_OUTPUT_MAX: {why}")
            }
            ConfigError::Snapshots(v) => write!(
                f,
                "HRR_CAPTURE_SNAPSHOTS={v:?} is not settled (the default) or every"
            ),
            ConfigError::SnapshotsRenamed => write!(
                f,
                "HRR_CAPTURE_MANAGED_SNAPSHOTS is now HRR_CAPTURE_SNAPSHOTS (it covers mapped page-locked memory too): set that instead"
            ),
            ConfigError::Range(v) => write!(
                f,
                "HRR_CAPTURE_RANGE={v:?} is not {}",
                hrr_contract::CAPTURE_RANGE_FORMS
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Whether HRR_CAPTURE_OUTPUT asks for capture at all (set and not blank).
pub fn wanted(output: Option<OsString>) -> bool {
    output.is_some_and(|v| !v.to_string_lossy().trim().is_empty())
}

/// `output` made absolute against `cwd` (capture resolves HRR_CAPTURE_OUTPUT when the
/// library loads, so a program that changes directory later still records where the
/// variable named when it started).
pub fn absolute(output: &OsStr, cwd: &Path) -> PathBuf {
    let p = Path::new(output);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Reads the configuration from the process environment. `Ok(None)`: capture is off.
pub fn from_env() -> Result<Option<Config>, ConfigError> {
    from(|k| std::env::var_os(k))
}

/// Reads the configuration from `get` (the environment, or a test's map).
pub fn from(get: impl Fn(&str) -> Option<OsString>) -> Result<Option<Config>, ConfigError> {
    let out = get("HRR_CAPTURE_OUTPUT");
    if !wanted(out.clone()) {
        return Ok(None);
    }
    let output = PathBuf::from(out.unwrap_or_default());
    let text = |k: &str| {
        get(k)
            .map(|v| v.to_string_lossy().trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let mut s = CaptureSettings::default();
    if let Some(c) = text("HRR_CAPTURE_COMPRESS") {
        s.compression = compression(&c)?;
    }
    if let Some(ms) = text("HRR_CAPTURE_FLUSH_MS") {
        match ms.parse::<u64>() {
            Ok(v) if v > 0 => s.flush_interval = Duration::from_millis(v),
            _ => return Err(ConfigError::FlushMs(ms)),
        }
    }
    if let Some(f) = text("HRR_CAPTURE_FSYNC") {
        (s.fsync, s.fsync_blobs) = fsync(&f)?;
    }
    if let Some(r) = text("HRR_CAPTURE_DISK_RESERVE") {
        s.reserve =
            ReservePolicy::parse(&r).map_err(|e| ConfigError::DiskReserve(e.to_string()))?;
    }
    // Made absolute when the library loads, as HRR_CAPTURE_OUTPUT is; a store that
    // cannot be used is the writer's to refuse (code objects then go into the archive).
    s.code_store = get("HRR_CAPTURE_CODE_STORE")
        .filter(|v| !v.to_string_lossy().trim().is_empty())
        .map(PathBuf::from);
    let mut pinned_snapshot_max = DEFAULT_PINNED_SNAPSHOT_MAX;
    if let Some(v) = text("HRR_CAPTURE_PINNED_SNAPSHOT_MAX") {
        pinned_snapshot_max = hrr_archive::diskspace::parse_size(&v)
            .map_err(|e| ConfigError::PinnedSnapshotMax(e.to_string()))?;
    }
    let mut mapped_output_max = DEFAULT_MAPPED_OUTPUT_MAX;
    if let Some(v) = text("HRR_CAPTURE_MAPPED_OUTPUT_MAX") {
        mapped_output_max = hrr_archive::diskspace::parse_size(&v)
            .map_err(|e| ConfigError::MappedOutputMax(e.to_string()))?;
    }
    let range = text("HRR_CAPTURE_RANGE").map(|v| range(&v)).transpose()?;
    if text("HRR_CAPTURE_MANAGED_SNAPSHOTS").is_some() {
        return Err(ConfigError::SnapshotsRenamed);
    }
    let snapshots_every = match text("HRR_CAPTURE_SNAPSHOTS").as_deref() {
        None | Some("settled") => false,
        Some("every") => true,
        Some(v) => return Err(ConfigError::Snapshots(v.to_string())),
    };
    Ok(Some(Config {
        output,
        settings: s,
        pinned_snapshot_max,
        mapped_output_max,
        range,
        snapshots_every,
    }))
}

/// `profiler[:N]` or `nvtx:NAME[:N]` (the grammar the matrix checks too).
pub fn range(v: &str) -> Result<hrr_contract::CaptureRange, ConfigError> {
    hrr_contract::parse_capture_range(v).map_err(|e| ConfigError::Range(e.0))
}

fn compression(c: &str) -> Result<Compression, ConfigError> {
    Ok(match c {
        "none" | "off" | "0" => Compression::None,
        "zstd" => Compression::Zstd { level: 3 },
        other => match other.strip_prefix("zstd:").map(|l| l.parse::<i32>()) {
            Some(Ok(level)) if (1..=22).contains(&level) => Compression::Zstd { level },
            _ => return Err(ConfigError::Compress(other.to_string())),
        },
    })
}

/// (fsync events and manifests, fsync blobs too).
fn fsync(f: &str) -> Result<(bool, bool), ConfigError> {
    Ok(match f {
        "1" | "on" | "true" | "yes" | "events" => (true, false),
        "all" => (true, true),
        "0" | "off" | "false" | "no" => (false, false),
        other => return Err(ConfigError::Fsync(other.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Option<Config>, ConfigError> {
        let m: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        from(|k| m.get(k).cloned())
    }

    fn settings(pairs: &[(&str, &str)]) -> CaptureSettings {
        let mut all = vec![("HRR_CAPTURE_OUTPUT", "/tmp/x")];
        all.extend_from_slice(pairs);
        cfg(&all).unwrap().unwrap().settings
    }

    #[test]
    fn empty_or_blank_output_means_off() {
        assert!(cfg(&[]).unwrap().is_none());
        assert!(cfg(&[("HRR_CAPTURE_OUTPUT", "")]).unwrap().is_none());
        assert!(cfg(&[("HRR_CAPTURE_OUTPUT", "  ")]).unwrap().is_none());
        let c = cfg(&[("HRR_CAPTURE_OUTPUT", "/tmp/x")]).unwrap().unwrap();
        assert_eq!(c.output, PathBuf::from("/tmp/x"));
        assert!(!wanted(Some(" ".into())) && wanted(Some("a".into())));
    }

    #[test]
    fn bad_settings_are_named() {
        let with = |k: &str, v: &str| {
            cfg(&[("HRR_CAPTURE_OUTPUT", "/tmp/x"), (k, v)])
                .unwrap_err()
                .to_string()
        };
        let e = with("HRR_CAPTURE_COMPRESS", "lz5");
        assert!(
            e.contains("HRR_CAPTURE_COMPRESS") && e.contains("lz5"),
            "{e}"
        );
        assert_eq!(
            with("HRR_CAPTURE_COMPRESS", "zstd:23"),
            ConfigError::Compress("zstd:23".into()).to_string()
        );
        let e = with("HRR_CAPTURE_FLUSH_MS", "0");
        assert!(e.contains("HRR_CAPTURE_FLUSH_MS"), "{e}");
        let e = with("HRR_CAPTURE_DISK_RESERVE", "much");
        assert!(e.starts_with("HRR_CAPTURE_DISK_RESERVE: "), "{e}");
        assert_eq!(
            settings(&[("HRR_CAPTURE_COMPRESS", "zstd:5")]).compression,
            Compression::Zstd { level: 5 }
        );
        assert_eq!(
            settings(&[("HRR_CAPTURE_FLUSH_MS", "250")]).flush_interval,
            Duration::from_millis(250)
        );
    }

    #[test]
    fn the_pinned_snapshot_cap_defaults_to_a_gibibyte_and_a_bad_one_is_named() {
        let cap = |v: &str| {
            cfg(&[
                ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
                ("HRR_CAPTURE_PINNED_SNAPSHOT_MAX", v),
            ])
            .map(|c| c.unwrap().pinned_snapshot_max)
        };
        assert_eq!(cap("  "), Ok(1 << 30));
        assert_eq!(cap("64M"), Ok(64 << 20));
        let e = cap("lots").unwrap_err().to_string();
        assert!(
            e.starts_with("HRR_CAPTURE_PINNED_SNAPSHOT_MAX: ") && e.contains("\"lots\""),
            "{e}"
        );
        assert!(cap("99999999999G").is_err());
    }

    #[test]
    fn the_mapped_output_cap_defaults_to_a_gibibyte_and_a_bad_one_is_named() {
        let cap = |v: &str| {
            cfg(&[
                ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
                ("HRR_CAPTURE_MAPPED_OUTPUT_MAX", v),
            ])
            .map(|c| c.unwrap().mapped_output_max)
        };
        assert_eq!(cap(""), Ok(DEFAULT_MAPPED_OUTPUT_MAX));
        assert_eq!(cap("100K"), Ok(100 << 10));
        let e = cap("plenty").unwrap_err().to_string();
        assert!(
            e.starts_with("HRR_CAPTURE_MAPPED_OUTPUT_MAX: ") && e.contains("\"plenty\""),
            "{e}"
        );
    }

    #[test]
    fn snapshots_are_settled_unless_every_is_asked_and_a_bad_value_is_named() {
        let every = |v: &str| {
            cfg(&[
                ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
                ("HRR_CAPTURE_SNAPSHOTS", v),
            ])
            .map(|c| c.unwrap().snapshots_every)
        };
        assert_eq!(every(""), Ok(false));
        assert_eq!(every("settled"), Ok(false));
        assert_eq!(every("every"), Ok(true));
        let e = every("always").unwrap_err().to_string();
        assert!(
            e.starts_with("HRR_CAPTURE_SNAPSHOTS=\"always\"") && e.contains("every"),
            "{e}"
        );
        let e = cfg(&[
            ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
            ("HRR_CAPTURE_MANAGED_SNAPSHOTS", "every"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("HRR_CAPTURE_MANAGED_SNAPSHOTS is now HRR_CAPTURE_SNAPSHOTS"),
            "{e}"
        );
    }

    #[test]
    fn a_relative_output_is_made_absolute() {
        let cwd = Path::new("/work/run");
        assert_eq!(absolute(OsStr::new("out"), cwd), Path::new("/work/run/out"));
        assert_eq!(absolute(OsStr::new("/abs/out"), cwd), Path::new("/abs/out"));
    }

    #[test]
    fn fsync_levels() {
        let level = |v: &str| {
            let s = settings(&[("HRR_CAPTURE_FSYNC", v)]);
            (s.fsync, s.fsync_blobs)
        };
        let default = settings(&[]);
        assert_eq!((default.fsync, default.fsync_blobs), (true, false));
        assert_eq!(level("on"), (true, false));
        assert_eq!(level("all"), (true, true));
        assert_eq!(level("off"), (false, false));
        let e = cfg(&[
            ("HRR_CAPTURE_OUTPUT", "/tmp/x"),
            ("HRR_CAPTURE_FSYNC", "sometimes"),
        ])
        .unwrap_err();
        assert_eq!(e, ConfigError::Fsync("sometimes".into()));
        assert!(e.to_string().contains("HRR_CAPTURE_FSYNC"));
    }
}
