//! Whether an archive case can run here: its packed archive must have the SHA-256 the
//! matrix declares (else the case fails before replay), and must have been captured where
//! this run can reproduce it: the family's vendor, a device of one of the family's
//! targets (its code objects are built for it), and a GPU for a GPU run or the stand-in
//! runtime for a stand-in run (its results are the stand-in's, no kernel ran). An archive
//! this run cannot reproduce is a skip that says why, never a pass or a failure.

use std::collections::BTreeSet;
use std::path::Path;

use hrr_archive::pack::{self, Peeked};
use hrr_matrix::{Family, Vendor};

use super::{Here, Readiness};

/// What the device name of an archive captured against the stand-in begins with.
const STAND_IN_DEVICE: &str = "HRR stand-in";

pub(super) fn readiness(hrrz: &Path, sha256: &str, here: Here, family: &Family) -> Readiness {
    let found = match pack::file_sha256(hrrz) {
        Ok(h) => h,
        Err(e) => return Readiness::Broken(format!("cannot read the stored archive: {e}")),
    };
    if found != sha256 {
        return Readiness::Broken(format!(
            "refused before replay: {} has SHA-256 {found}, the matrix declares {sha256}",
            hrrz.display()
        ));
    }
    let peeked = match pack::peek(hrrz) {
        Ok(p) => p,
        Err(e) => return Readiness::Broken(format!("the stored archive is unreadable: {e}")),
    };
    // HIP names no architecture in the manifest: the code objects' bundles say.
    let (arch, _) = captured_on(&peeked);
    let targets = if arch.is_empty() {
        match pack::code_object_targets(hrrz, hrr_archive::Limits::default()) {
            Ok(t) => t,
            Err(e) => return Readiness::Broken(format!("the stored archive is unreadable: {e}")),
        }
    } else {
        std::iter::once(arch.clone()).collect()
    };
    if let Some(why) = mismatch(&peeked, &targets, family, here.stand_in) {
        return Readiness::Skip(why);
    }
    let arch = targets.iter().cloned().collect::<Vec<_>>().join(", ");
    if here.compile_only {
        return Readiness::Compiled(format!(
            "stored archive checked: SHA-256 matches, {} files, captured on {arch}; not run: compile-only",
            peeked.files
        ));
    }
    if here.no_gpu {
        return Readiness::Skip(format!(
            "{}; the stored archive (captured on {arch}) was not replayed",
            here.no_gpu_reason
        ));
    }
    Readiness::Run {
        binary: Some(hrrz.to_path_buf()),
    }
}

/// The capture device's architecture (without AMD's feature suffix) and name, from the
/// first process that names a device.
fn captured_on(p: &Peeked) -> (String, String) {
    p.processes
        .iter()
        .find_map(|m| m.runtime.devices.first())
        .map(|d| {
            let arch = d.arch.split(':').next().unwrap_or_default().to_string();
            (arch, d.name.clone())
        })
        .unwrap_or_default()
}

/// Why this run cannot reproduce the archive, if it cannot (pure): `targets` are the
/// architectures its code objects are for (none known: not judged by them).
fn mismatch(
    p: &Peeked,
    targets: &BTreeSet<String>,
    family: &Family,
    stand_in: bool,
) -> Option<String> {
    let vendor = p
        .processes
        .iter()
        .map(|m| m.runtime.vendor.as_str())
        .find(|v| !v.is_empty())
        .unwrap_or("");
    let want = match family.vendor {
        Vendor::Amd => "hip",
        Vendor::Nvidia => "cuda",
    };
    if vendor != want {
        return Some(format!(
            "captured on a {} runtime; family {} runs {want}",
            if vendor.is_empty() { "unnamed" } else { vendor },
            family.name
        ));
    }
    let (_, name) = captured_on(p);
    if !targets.is_empty() && !family.targets.iter().any(|t| targets.contains(t)) {
        return Some(format!(
            "its code objects are for {}, which family {} does not target ({})",
            targets.iter().cloned().collect::<Vec<_>>().join(", "),
            family.name,
            family.targets.join(", ")
        ));
    }
    match (name.starts_with(STAND_IN_DEVICE), stand_in) {
        (true, false) => Some(
            "captured against the stand-in runtime (no kernel ran there): it replays only under --stand-in"
                .into(),
        ),
        (false, true) => Some(format!(
            "captured on a GPU ({name}): the stand-in runs no kernel, so its results cannot match"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::blob::Compression;
    use hrr_archive::manifest::{DeviceInfo, ProcessManifest, RootManifest, SettingsRecord};

    fn peeked(vendor: &str, arch: &str, name: &str) -> Peeked {
        let mut m = ProcessManifest::new(1, 0);
        m.runtime.vendor = vendor.into();
        m.runtime.devices = vec![DeviceInfo {
            index: 0,
            name: name.into(),
            arch: arch.into(),
            total_memory: 1,
        }];
        Peeked {
            root: RootManifest {
                format_version: hrr_archive::FORMAT_VERSION,
                tool_version: String::new(),
                source_revision: String::new(),
                settings: SettingsRecord {
                    compression: Compression::None,
                    flush_interval_ms: 0,
                    disk_reserve_bytes: 0,
                },
                processes: vec![],
            },
            processes: vec![m],
            files: 3,
            bytes: 10,
        }
    }

    fn family(name: &str, vendor: Vendor, targets: &[&str]) -> Family {
        Family {
            name: name.into(),
            vendor,
            targets: targets.iter().map(|t| t.to_string()).collect(),
            runner: vec![],
            gpus_per_runner: 1,
            shards: 1,
            timeout: None,
            env: Default::default(),
            min_rocm: None,
            cuda_runtime: None,
        }
    }

    #[test]
    fn an_archive_runs_only_where_it_was_captured() {
        let t = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let sm90 = family("sm90", Vendor::Nvidia, &["sm_90"]);
        let gfx = family("gfx110x", Vendor::Amd, &["gfx1100", "gfx1101"]);
        let h200 = peeked("cuda", "sm_90", "NVIDIA H200");
        let on = t(&["sm_90"]);
        assert_eq!(mismatch(&h200, &on, &sm90, false), None);
        let why = mismatch(&h200, &on, &gfx, false).unwrap();
        assert_eq!(why, "captured on a cuda runtime; family gfx110x runs hip");
        let why = mismatch(&h200, &on, &sm90, true).unwrap();
        assert!(
            why.starts_with("captured on a GPU (NVIDIA H200): the stand-in runs no kernel"),
            "{why}"
        );
        let sm80 = peeked("cuda", "sm_80", "NVIDIA A100");
        let why = mismatch(&sm80, &t(&["sm_80"]), &sm90, false).unwrap();
        assert_eq!(
            why,
            "its code objects are for sm_80, which family sm90 does not target (sm_90)"
        );
        let stand_in = peeked("hip", "", "HRR stand-in (gfx1100, no GPU)");
        let bundle = t(&["gfx1100", "gfx1101"]);
        assert_eq!(mismatch(&stand_in, &bundle, &gfx, true), None);
        let why = mismatch(&stand_in, &bundle, &gfx, false).unwrap();
        assert!(why.contains("replays only under --stand-in"), "{why}");
        let gfx90a = family("gfx90a", Vendor::Amd, &["gfx90a"]);
        let why = mismatch(&stand_in, &bundle, &gfx90a, true).unwrap();
        assert_eq!(why, "its code objects are for gfx1100, gfx1101, which family gfx90a does not target (gfx90a)");
        // Nothing known of the targets: not judged by them.
        assert_eq!(mismatch(&stand_in, &t(&[]), &gfx90a, true), None);
    }

    /// The stored archive the matrix's sm90 stand-in case replays.
    fn stored() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../cases/stored_api_tour_stand_in_sm90/api_tour.hrrz")
    }

    fn here(stand_in: bool, compile_only: bool) -> Here<'static> {
        Here {
            no_gpu: false,
            no_gpu_reason: "no GPU",
            compile_only,
            no_compiler: None,
            unsupported_targets: &[],
            stand_in,
        }
    }

    #[test]
    fn a_stored_archive_is_checked_against_its_sha256_before_anything_else() {
        let hrrz = stored();
        let sha = pack::file_sha256(&hrrz).unwrap();
        let sm90 = family("sm90", Vendor::Nvidia, &["sm_90"]);
        assert_eq!(
            readiness(&hrrz, &sha, here(true, false), &sm90),
            Readiness::Run {
                binary: Some(hrrz.clone())
            }
        );
        let wrong = "0".repeat(64);
        let Readiness::Broken(why) = readiness(&hrrz, &wrong, here(true, false), &sm90) else {
            panic!("a wrong SHA-256 ran")
        };
        assert!(why.starts_with("refused before replay: "), "{why}");
        assert!(why.contains(&sha) && why.contains(&wrong), "{why}");
        // The checks come first: a wrong SHA-256 fails even where the archive would skip.
        let gfx = family("gfx110x", Vendor::Amd, &["gfx1100"]);
        assert!(matches!(
            readiness(&hrrz, &wrong, here(true, false), &gfx),
            Readiness::Broken(_)
        ));
        assert!(matches!(
            readiness(&hrrz, &sha, here(true, false), &gfx),
            Readiness::Skip(_)
        ));
        let Readiness::Compiled(what) = readiness(&hrrz, &sha, here(true, true), &sm90) else {
            panic!("compile-only ran it")
        };
        assert!(
            what.contains("SHA-256 matches") && what.contains("sm_90"),
            "{what}"
        );
    }
}
