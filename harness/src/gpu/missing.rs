//! Why this process has no GPU of a family, said so a person can act on it: the device
//! nodes the runtime opens, what nvidia-smi, the KFD and rocminfo show, and the
//! visible-devices values that narrowed them.

use std::path::Path;

use hrr_matrix::{Family, Vendor};

use super::Detection;

/// The device nodes a vendor's runtime opens, as this process finds them.
fn device_nodes(vendor: Vendor, dev: &Path) -> String {
    let listed = |prefix: &str, dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .filter(|n| n.starts_with(prefix))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let node = |p: &Path| match std::fs::OpenOptions::new().read(true).write(true).open(p) {
        Ok(_) => format!("{} opens", p.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => format!("{} absent", p.display()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => format!(
            "{} cannot be opened: {e} (add the user to the render and video groups)",
            p.display()
        ),
        Err(e) => format!("{} cannot be opened: {e}", p.display()),
    };
    match vendor {
        Vendor::Nvidia => {
            let gpus = listed("nvidia", dev)
                .into_iter()
                .filter(|n| n[6..].chars().all(|c| c.is_ascii_digit()) && n.len() > 6)
                .count();
            format!(
                "{}; {gpus} /dev/nvidiaN node(s)",
                node(&dev.join("nvidiactl"))
            )
        }
        Vendor::Amd => {
            let render = listed("renderD", &dev.join("dri"));
            format!(
                "{}; {}",
                node(&dev.join("kfd")),
                if render.is_empty() {
                    format!("no {}/dri/renderD* node", dev.display())
                } else {
                    format!("{}/dri/{}", dev.display(), render.join(","))
                }
            )
        }
    }
}

/// What `rocminfo` lists as GPU agents, or why it could not say.
fn rocminfo_view() -> String {
    match crate::process::command("rocminfo").output() {
        Err(_) => "rocminfo not found".into(),
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let mut gfx: Vec<&str> = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("Name:"))
                .map(str::trim)
                .filter(|n| n.starts_with("gfx"))
                .collect();
            gfx.dedup();
            if gfx.is_empty() {
                format!(
                    "rocminfo lists no GPU agent{}",
                    String::from_utf8_lossy(&o.stderr)
                        .lines()
                        .next()
                        .map(|l| format!(" ({l})"))
                        .unwrap_or_default()
                )
            } else {
                format!("rocminfo lists {}", gfx.join(", "))
            }
        }
    }
}

/// Why this process has no GPU of `family`, in one line for the error `run` ends with:
/// the device nodes, what nvidia-smi or the KFD (and rocminfo) showed, and the
/// visible-devices variables that narrowed them.
pub fn missing_report(family: &Family, d: &Detection) -> String {
    let view = match family.vendor {
        Vendor::Nvidia => String::new(),
        Vendor::Amd => format!("; {}", rocminfo_view()),
    };
    format!(
        "no GPU of family {} ({}) visible here: {}; {}{view}",
        family.name,
        family.targets.join(", "),
        device_nodes(family.vendor, Path::new("/dev")),
        if d.notes.is_empty() {
            "the detected GPUs belong to other vendors".to_string()
        } else {
            d.notes.join("; ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_nodes_are_reported_as_found() {
        let t = tempfile::tempdir().unwrap();
        let s = device_nodes(Vendor::Amd, t.path());
        assert!(s.contains("/kfd absent") && s.contains("no "), "{s}");
        std::fs::create_dir_all(t.path().join("dri")).unwrap();
        std::fs::write(t.path().join("dri/renderD128"), "").unwrap();
        std::fs::write(t.path().join("kfd"), "").unwrap();
        let s = device_nodes(Vendor::Amd, t.path());
        assert!(
            s.contains("/kfd opens") && s.contains("dri/renderD128"),
            "{s}"
        );
        std::fs::write(t.path().join("nvidia0"), "").unwrap();
        std::fs::write(t.path().join("nvidia-uvm"), "").unwrap();
        let s = device_nodes(Vendor::Nvidia, t.path());
        assert!(
            s.contains("nvidiactl absent; 1 /dev/nvidiaN node(s)"),
            "{s}"
        );
    }
}
