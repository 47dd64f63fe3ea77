//! The GPUs this process may use: detection narrowed by the visible-devices variables a
//! runner set (`CUDA_VISIBLE_DEVICES`; `ROCR_VISIBLE_DEVICES`, then `HIP_VISIBLE_DEVICES`),
//! each GPU given the value that selects it alone for a child process.

use hrr_matrix::Vendor;

use super::{Detection, Gpu};

/// The entries of a visible-devices value: comma-separated, blanks dropped (an empty or
/// blank value is an empty list: no GPU).
fn entries(value: &str) -> Vec<&str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect()
}

/// Picks from `pool` (in order) what `value` names, in its order: an index into `pool`
/// (`by_position`) or into the GPUs' own indices, or a UUID or a prefix of one. Like the
/// runtimes, the list ends at the first entry that names no GPU; that entry goes into
/// `notes`. A GPU named twice is taken once.
fn select_from(
    pool: &[Gpu],
    var: &str,
    value: &str,
    by_position: bool,
    notes: &mut Vec<String>,
) -> Vec<Gpu> {
    let mut out: Vec<Gpu> = Vec::new();
    for e in entries(value) {
        let found = if let Ok(n) = e.parse::<u32>() {
            if by_position {
                pool.get(n as usize)
            } else {
                pool.iter().find(|g| g.index == n)
            }
        } else if e.starts_with("GPU-") {
            let e = e.to_ascii_lowercase();
            pool.iter().find(|g| {
                g.uuid
                    .as_deref()
                    .is_some_and(|u| u.to_ascii_lowercase().starts_with(&e))
            })
        } else {
            None
        };
        match found {
            Some(g) => {
                if !out.iter().any(|o| o.index == g.index) {
                    out.push(g.clone());
                }
            }
            None => {
                notes.push(format!(
                    "{var}={value}: `{e}` names no GPU here (MIG instances are not supported); the GPUs after it are not used"
                ));
                break;
            }
        }
    }
    if out.is_empty() {
        notes.push(format!(
            "{var}={value:?} leaves no GPU visible to this runner"
        ));
    }
    out
}

/// Narrows `d` to the GPUs the inherited visible-devices variables allow (`env` reads
/// one): NVIDIA by `CUDA_VISIBLE_DEVICES` (indices as nvidia-smi numbers them, or UUIDs);
/// AMD by `ROCR_VISIBLE_DEVICES` (KFD order, or UUIDs), then `HIP_VISIBLE_DEVICES`
/// (positions among what ROCr left, or UUIDs). Each GPU's `select` is then what its
/// vendor variable must be set to for a child that inherits the rest of the environment.
pub fn restrict(d: &mut Detection, env: impl Fn(&str) -> Option<String>) {
    let (nvidia, amd): (Vec<Gpu>, Vec<Gpu>) =
        d.gpus.drain(..).partition(|g| g.vendor == Vendor::Nvidia);
    let mut notes = Vec::new();
    let nvidia = match env("CUDA_VISIBLE_DEVICES") {
        Some(v) if !nvidia.is_empty() => {
            select_from(&nvidia, "CUDA_VISIBLE_DEVICES", &v, false, &mut notes)
        }
        _ => nvidia,
    };
    let mut amd = match env("ROCR_VISIBLE_DEVICES") {
        Some(v) if !amd.is_empty() => {
            select_from(&amd, "ROCR_VISIBLE_DEVICES", &v, true, &mut notes)
        }
        _ => amd,
    };
    // HIP numbers the devices ROCr left from 0.
    for (i, g) in amd.iter_mut().enumerate() {
        g.select = i.to_string();
    }
    if let Some(v) = env("HIP_VISIBLE_DEVICES").filter(|_| !amd.is_empty()) {
        amd = select_from(&amd, "HIP_VISIBLE_DEVICES", &v, true, &mut notes);
    }
    d.gpus = nvidia;
    d.gpus.extend(amd);
    d.notes.extend(notes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::tests::gpu;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn restricted(gpus: Vec<Gpu>, vars: &[(&str, &str)]) -> Detection {
        let mut d = Detection {
            gpus,
            notes: vec![],
        };
        restrict(&mut d, env(vars));
        d
    }

    fn picked(d: &Detection) -> Vec<(u32, String)> {
        d.gpus.iter().map(|g| (g.index, g.select.clone())).collect()
    }

    #[test]
    fn cuda_visible_devices_narrows_nvidia_gpus_by_index_or_uuid() {
        let four: Vec<Gpu> = (0..4).map(|i| gpu(i, Vendor::Nvidia, "sm_90")).collect();
        // Unset: every GPU.
        assert_eq!(restricted(four.clone(), &[]).gpus.len(), 4);
        // Indices, in the variable's order; select stays the physical index.
        let d = restricted(four.clone(), &[("CUDA_VISIBLE_DEVICES", "2, 1")]);
        assert_eq!(picked(&d), vec![(2, "2".into()), (1, "1".into())]);
        // A UUID or a prefix of one.
        let d = restricted(four.clone(), &[("CUDA_VISIBLE_DEVICES", "GPU-0003")]);
        assert_eq!(picked(&d), vec![(3, "3".into())]);
        // Empty: no GPU, and the note says why.
        let d = restricted(four.clone(), &[("CUDA_VISIBLE_DEVICES", "")]);
        assert!(d.gpus.is_empty());
        assert!(
            d.notes[0].contains("leaves no GPU visible"),
            "{:?}",
            d.notes
        );
        // The list ends at an entry that names nothing, as CUDA's does.
        let d = restricted(four.clone(), &[("CUDA_VISIBLE_DEVICES", "0,7,1")]);
        assert_eq!(picked(&d), vec![(0, "0".into())]);
        assert!(d.notes[0].contains("`7` names no GPU"), "{:?}", d.notes);
        // AMD variables leave NVIDIA GPUs alone.
        let d = restricted(four, &[("HIP_VISIBLE_DEVICES", "")]);
        assert_eq!(d.gpus.len(), 4);
    }

    #[test]
    fn rocr_then_hip_visible_devices_narrow_amd_gpus_and_hip_counts_after_rocr() {
        let four: Vec<Gpu> = (0..4).map(|i| gpu(i, Vendor::Amd, "gfx90a")).collect();
        // ROCR 2,3: HIP sees them as 0 and 1, so a child selects them as 0 and 1.
        let d = restricted(four.clone(), &[("ROCR_VISIBLE_DEVICES", "2,3")]);
        assert_eq!(picked(&d), vec![(2, "0".into()), (3, "1".into())]);
        // Then HIP 1: the second of those, still selected as HIP's 1.
        let d = restricted(
            four.clone(),
            &[
                ("ROCR_VISIBLE_DEVICES", "2,3"),
                ("HIP_VISIBLE_DEVICES", "1"),
            ],
        );
        assert_eq!(picked(&d), vec![(3, "1".into())]);
        // HIP alone indexes the KFD list; ROCR by UUID.
        let d = restricted(four.clone(), &[("HIP_VISIBLE_DEVICES", "3")]);
        assert_eq!(picked(&d), vec![(3, "3".into())]);
        let d = restricted(four.clone(), &[("ROCR_VISIBLE_DEVICES", "GPU-0001AA")]);
        assert_eq!(picked(&d), vec![(1, "0".into())]);
        for v in ["ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"] {
            assert!(restricted(four.clone(), &[(v, " ")]).gpus.is_empty(), "{v}");
        }
        // A mixed machine: each vendor's variable narrows its own GPUs only.
        let mut mixed = four;
        mixed.push(gpu(0, Vendor::Nvidia, "sm_90"));
        let d = restricted(
            mixed,
            &[("CUDA_VISIBLE_DEVICES", ""), ("HIP_VISIBLE_DEVICES", "0")],
        );
        assert_eq!(picked(&d), vec![(0, "0".into())]);
        assert_eq!(d.gpus[0].vendor, Vendor::Amd);
    }
}
