//! Which HIP runtime may replay an archive: one whose major version is at least the
//! capture's. An older major lacks the entry points (the R0600 names, newer `_spt`
//! forms) and struct layouts the captured program used, so replay refuses such an
//! archive before anything runs, naming both versions.

use hrr_archive::api::hip_abi::HipVersion;
use hrr_archive::Archive;

/// Why the loaded HIP runtime cannot replay the archive.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("the archive was captured on HIP {captured} (pid {pid}), and the runtime replay loaded, {library}, is HIP {replaying}: a runtime of an older major version lacks entry points and struct layouts the program used; replay it with HIP {} or newer", captured.major)]
    NewerCapture {
        captured: HipVersion,
        pid: u32,
        library: String,
        replaying: HipVersion,
    },
}

/// Checks each process's capture-time HIP version (manifest `runtime_version`) against
/// `replaying`; a version either side did not report is not judged.
pub fn check_versions<'a>(
    captured: impl IntoIterator<Item = (u32, &'a str)>,
    replaying: Option<HipVersion>,
    library: &str,
) -> Result<(), VersionError> {
    let Some(replaying) = replaying else {
        return Ok(());
    };
    for (pid, v) in captured {
        if let Some(c) = HipVersion::parse(v).filter(|c| c.major > replaying.major) {
            return Err(VersionError::NewerCapture {
                captured: c,
                pid,
                library: library.to_string(),
                replaying,
            });
        }
    }
    Ok(())
}

/// [`check_versions`] for an archive's processes.
pub fn check(
    archive: &Archive,
    replaying: Option<HipVersion>,
    library: &str,
) -> Result<(), VersionError> {
    check_versions(
        archive
            .processes
            .iter()
            .map(|p| (p.entry.pid, p.manifest.runtime.runtime_version.as_str())),
        replaying,
        library,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_major_capture_is_refused_naming_both() {
        let v5 = HipVersion::from_runtime(50_221_153);
        let v7 = HipVersion::from_runtime(70_100_000);
        let e = check_versions([(7, "70100000")], v5, "libamdhip64.so.5").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("HIP 7.1.0 (pid 7)"), "{text}");
        assert!(
            text.contains("libamdhip64.so.5, is HIP 5.2.21153"),
            "{text}"
        );
        assert!(text.contains("with HIP 7 or newer"), "{text}");
        // Same or older major: replayed; an unreported version is not judged.
        assert_eq!(check_versions([(7, "50221153")], v7, "x"), Ok(()));
        assert_eq!(check_versions([(7, "70000000")], v7, "x"), Ok(()));
        assert_eq!(check_versions([(7, "")], v5, "x"), Ok(()));
        assert_eq!(check_versions([(7, "70100000")], None, "x"), Ok(()));
    }
}
