//! Which GPUs this machine has, read the way each vendor's runtime sees them: NVIDIA through
//! `nvidia-smi` (name and compute capability), AMD through the KFD topology in sysfs
//! (`gfx_target_version`, the number gcnArchName is made from), then narrowed to what the
//! runner's own `CUDA_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES`
//! leave visible (`visible`: hosts with one runner per GPU set them; an empty value means
//! no GPU). No GPU is an answer with reasons: `missing::missing_report` names the device
//! nodes and what the vendor tools show, for the error `run` ends with.

use std::path::Path;

use hrr_matrix::{Family, Matrix, Vendor};

mod missing;
mod visible;

pub use missing::missing_report;
pub use visible::restrict;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// The index `CUDA_VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES` take.
    pub index: u32,
    pub vendor: Vendor,
    pub name: String,
    /// `sm_90` or `gfx90a`.
    pub arch: String,
    /// NVIDIA compute mode Exclusive_Process or Prohibited: one process at a time (or
    /// none), so the harness must not hold a context of its own on it.
    pub exclusive: bool,
    /// `GPU-...`: nvidia-smi's UUID; AMD: `GPU-` and the KFD `unique_id` in hex, as
    /// `ROCR_VISIBLE_DEVICES` takes it.
    pub uuid: Option<String>,
    /// What the vendor's variable (`CUDA_VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`) is set
    /// to so that a child sees this GPU alone, given the environment it inherits: the UUID
    /// (NVIDIA, when known, else the index), or the position among the GPUs
    /// `ROCR_VISIBLE_DEVICES` leaves (AMD; HIP numbers devices after ROCr's selection).
    pub select: String,
}

impl std::fmt::Display for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.index, self.name, self.arch)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Detection {
    pub gpus: Vec<Gpu>,
    /// Why a vendor contributed no GPU ("nvidia-smi not found", ...).
    pub notes: Vec<String>,
}

impl Detection {
    pub fn none_reason(&self) -> String {
        format!("no GPU on this machine ({})", self.notes.join("; "))
    }
}

/// `9.0` -> `sm_90`.
pub fn sm_arch(compute_cap: &str) -> Option<String> {
    let (major, minor) = compute_cap.trim().split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let minor: u32 = minor.parse().ok()?;
    Some(format!("sm_{major}{minor}"))
}

/// KFD's `gfx_target_version` (major*10000 + minor*100 + stepping) -> `gfx90a`, `gfx1100`.
pub fn gfx_arch(target_version: u32) -> Option<String> {
    if target_version == 0 {
        return None;
    }
    let major = target_version / 10000;
    let minor = (target_version / 100) % 100;
    let stepping = target_version % 100;
    if minor > 15 || stepping > 15 {
        return None;
    }
    Some(format!("gfx{major}{minor:x}{stepping:x}"))
}

fn detect_nvidia(d: &mut Detection) {
    // The compute mode first; should a driver not know that field, ask without it.
    let query = |fields: &str| {
        crate::process::command("nvidia-smi")
            .arg(format!("--query-gpu={fields}"))
            .arg("--format=csv,noheader")
            .output()
    };
    let out = match query("index,name,compute_cap,compute_mode,uuid") {
        Ok(o) if !o.status.success() => query("index,name,compute_cap"),
        other => other,
    };
    match out {
        Err(_) => d.notes.push("nvidia-smi not found".into()),
        Ok(o) if !o.status.success() => d.notes.push(format!(
            "nvidia-smi failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let before = d.gpus.len();
            d.gpus
                .extend(text.lines().filter_map(parse_nvidia_smi_line));
            if d.gpus.len() == before {
                d.notes.push("nvidia-smi lists no GPU".into());
            }
        }
    }
}

/// One line of `nvidia-smi --query-gpu=index,name,compute_cap[,compute_mode[,uuid]]`.
fn parse_nvidia_smi_line(line: &str) -> Option<Gpu> {
    let parts: Vec<&str> = line.split(',').map(str::trim).collect();
    let (idx, name, cap, mode, uuid) = match parts[..] {
        [i, n, c, m, u] => (i, n, c, m, Some(u)),
        [i, n, c, m] => (i, n, c, m, None),
        [i, n, c] => (i, n, c, "Default", None),
        _ => return None,
    };
    let index: u32 = idx.parse().ok()?;
    let uuid = uuid.filter(|u| u.starts_with("GPU-")).map(str::to_string);
    Some(Gpu {
        index,
        vendor: Vendor::Nvidia,
        name: name.to_string(),
        arch: sm_arch(cap)?,
        exclusive: mode != "Default",
        select: uuid.clone().unwrap_or_else(|| index.to_string()),
        uuid,
    })
}

fn detect_amd(d: &mut Detection, topology: &Path) {
    let nodes = topology.join("nodes");
    let Ok(rd) = std::fs::read_dir(&nodes) else {
        d.notes
            .push(format!("no AMD KFD ({} absent)", nodes.display()));
        return;
    };
    let mut ids: Vec<u32> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
        .collect();
    ids.sort();
    let mut index = 0;
    for id in ids {
        let dir = nodes.join(id.to_string());
        let props = std::fs::read_to_string(dir.join("properties")).unwrap_or_default();
        let tv = props
            .lines()
            .find_map(|l| l.strip_prefix("gfx_target_version "))
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(0);
        let Some(arch) = gfx_arch(tv) else { continue };
        let name = std::fs::read_to_string(dir.join("name"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let uuid = props
            .lines()
            .find_map(|l| l.strip_prefix("unique_id "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|id| *id != 0)
            .map(|id| format!("GPU-{id:016x}"));
        d.gpus.push(Gpu {
            index,
            vendor: Vendor::Amd,
            name: if name.is_empty() { arch.clone() } else { name },
            arch,
            exclusive: false,
            uuid,
            select: index.to_string(),
        });
        index += 1;
    }
    if !d.gpus.iter().any(|g| g.vendor == Vendor::Amd) {
        d.notes.push("the AMD KFD lists no GPU".into());
    }
}

/// This machine's GPUs as this process may use them: detected, then narrowed by the
/// visible-devices variables it inherited (`restrict`).
pub fn detect() -> Detection {
    let mut d = Detection::default();
    detect_nvidia(&mut d);
    detect_amd(&mut d, Path::new("/sys/class/kfd/kfd/topology"));
    restrict(&mut d, |v| std::env::var(v).ok());
    d
}

/// Whether `gpu` belongs to `family`: same vendor and its architecture is one of the
/// family's targets (`sm_90a` counts as `sm_90`).
pub fn belongs(gpu: &Gpu, family: &Family) -> bool {
    gpu.vendor == family.vendor
        && family
            .targets
            .iter()
            .any(|t| t == &gpu.arch || t.trim_end_matches(['a', 'f']) == gpu.arch)
}

/// Why `--family auto` found no single family.
#[derive(Debug, thiserror::Error)]
pub enum AutoFamilyError {
    #[error("GPU {0} belongs to no family in the matrix (add its target to a family)")]
    NoFamily(Gpu),
    #[error("this machine's GPUs belong to several families ({}): choose one with --family", .0.join(", "))]
    Several(Vec<String>),
}

/// The family `--family auto` means: the one every GPU belongs to (`None`: no GPU here).
pub fn auto_family<'m>(
    m: &'m Matrix,
    d: &Detection,
) -> Result<Option<&'m Family>, AutoFamilyError> {
    if d.gpus.is_empty() {
        return Ok(None);
    }
    let mut found: Vec<&Family> = Vec::new();
    for g in &d.gpus {
        match m.families.iter().find(|f| belongs(g, f)) {
            Some(f) => {
                if !found.iter().any(|x| x.name == f.name) {
                    found.push(f)
                }
            }
            None => return Err(AutoFamilyError::NoFamily(g.clone())),
        }
    }
    match found.as_slice() {
        [one] => Ok(Some(*one)),
        many => Err(AutoFamilyError::Several(
            many.iter().map(|f| f.name.clone()).collect(),
        )),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn architecture_names() {
        assert_eq!(sm_arch("9.0").as_deref(), Some("sm_90"));
        assert_eq!(sm_arch("12.0").as_deref(), Some("sm_120"));
        assert_eq!(sm_arch("x"), None);
        assert_eq!(gfx_arch(90010).as_deref(), Some("gfx90a"));
        assert_eq!(gfx_arch(90402).as_deref(), Some("gfx942"));
        assert_eq!(gfx_arch(110000).as_deref(), Some("gfx1100"));
        assert_eq!(gfx_arch(110501).as_deref(), Some("gfx1151"));
        assert_eq!(gfx_arch(120001).as_deref(), Some("gfx1201"));
        assert_eq!(gfx_arch(0), None);
    }

    pub(super) fn gpu(index: u32, vendor: Vendor, arch: &str) -> Gpu {
        Gpu {
            index,
            vendor,
            name: "test".into(),
            arch: arch.into(),
            exclusive: false,
            uuid: Some(format!("GPU-{index:04}aa")),
            select: index.to_string(),
        }
    }

    #[test]
    fn gpus_are_matched_to_families_and_auto_picks_the_only_one() {
        let m = hrr_matrix::load_str(
            "version: 1\ntools: {build: [true], capture: a, replay: b}\nfamilies:\n  - {name: gfx110x, vendor: amd, targets: [gfx1100, gfx1101], runner: [x]}\n  - {name: gfx90a, vendor: amd, targets: [gfx90a], runner: [x]}\n  - {name: sm90, vendor: nvidia, targets: [sm_90], runner: [x]}\ncases: []\n",
            Path::new("m.yaml"),
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let fam = |n: &str| m.families.iter().find(|f| f.name == n).unwrap();
        assert!(belongs(&gpu(0, Vendor::Amd, "gfx1101"), fam("gfx110x")));
        assert!(!belongs(&gpu(0, Vendor::Amd, "gfx1101"), fam("gfx90a")));
        assert!(
            !belongs(&gpu(0, Vendor::Amd, "sm_90"), fam("sm90")),
            "vendor must match"
        );
        let one = Detection {
            gpus: vec![
                gpu(0, Vendor::Nvidia, "sm_90"),
                gpu(1, Vendor::Nvidia, "sm_90"),
            ],
            notes: vec![],
        };
        assert_eq!(auto_family(&m, &one).unwrap().unwrap().name, "sm90");
        let mixed = Detection {
            gpus: vec![
                gpu(0, Vendor::Amd, "gfx90a"),
                gpu(1, Vendor::Amd, "gfx1100"),
            ],
            notes: vec![],
        };
        let e = auto_family(&m, &mixed).unwrap_err();
        assert!(
            matches!(&e, AutoFamilyError::Several(f) if f == &["gfx90a", "gfx110x"]),
            "{e}"
        );
        assert!(e.to_string().contains("choose one with --family"), "{e}");
        let unknown = Detection {
            gpus: vec![gpu(0, Vendor::Amd, "gfx950")],
            notes: vec![],
        };
        assert!(matches!(
            auto_family(&m, &unknown),
            Err(AutoFamilyError::NoFamily(g)) if g.arch == "gfx950"
        ));
        assert!(auto_family(&m, &Detection::default()).unwrap().is_none());
    }

    #[test]
    fn nvidia_smi_lines_are_parsed_with_their_compute_mode() {
        let g = parse_nvidia_smi_line("0, NVIDIA H200, 9.0, Default").unwrap();
        assert_eq!((g.index, g.arch.as_str(), g.exclusive), (0, "sm_90", false));
        assert_eq!(g.select, "0");
        // The line an H200 gives (nvidia-smi on the device machine, 2026-12-01).
        let g = parse_nvidia_smi_line(
            "0, NVIDIA H200, 9.0, Default, GPU-6ad10c5e-0427-4b06-a35f-d697bbc50553",
        )
        .unwrap();
        assert_eq!(
            (g.index, g.uuid.as_deref(), g.select.as_str()),
            (
                0,
                Some("GPU-6ad10c5e-0427-4b06-a35f-d697bbc50553"),
                "GPU-6ad10c5e-0427-4b06-a35f-d697bbc50553"
            )
        );
        assert!(
            parse_nvidia_smi_line("1, NVIDIA H200, 9.0, Exclusive_Process")
                .unwrap()
                .exclusive
        );
        assert!(
            !parse_nvidia_smi_line("2, NVIDIA H200, 9.0")
                .unwrap()
                .exclusive
        );
        assert!(parse_nvidia_smi_line("garbage").is_none());
        assert!(parse_nvidia_smi_line("x, NVIDIA H200, 9.0, Default").is_none());
    }

    #[test]
    fn kfd_topology_is_read_from_sysfs_files() {
        let t = tempfile::tempdir().unwrap();
        let node = |id: u32, tv: u32, name: &str| {
            let d = t.path().join("nodes").join(id.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("properties"),
                format!(
                    "cpu_cores_count 0\ngfx_target_version {tv}\nunique_id {}\n",
                    id * 255
                ),
            )
            .unwrap();
            std::fs::write(d.join("name"), name).unwrap();
        };
        node(0, 0, "");
        node(1, 90010, "aldebaran");
        node(2, 90010, "aldebaran");
        let mut d = Detection::default();
        detect_amd(&mut d, t.path());
        let archs: Vec<(u32, &str)> = d.gpus.iter().map(|g| (g.index, g.arch.as_str())).collect();
        assert_eq!(archs, vec![(0, "gfx90a"), (1, "gfx90a")]);
        assert_eq!(d.gpus[1].uuid.as_deref(), Some("GPU-00000000000001fe"));
        let mut none = Detection::default();
        detect_amd(&mut none, &t.path().join("absent"));
        assert!(none.gpus.is_empty() && none.notes[0].contains("no AMD KFD"));
    }
}
