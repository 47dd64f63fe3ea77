//! Our own negative controls stay valid as the code moves: every patch in the matrix
//! still applies to the tree (a control whose patch no longer applies proves nothing).

use std::path::Path;
use std::process::Command;

#[test]
fn every_control_patch_still_applies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let m = hrr_matrix::load(&root.join("matrix/matrix.yaml"), &root.join("cases"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(m.controls.len() >= 4, "our own controls are missing");
    for c in &m.controls {
        let Some(patch) = &c.patch else { continue };
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(root).args(["apply", "--check"]);
        if c.reverse {
            cmd.arg("-R");
        }
        let o = cmd.arg(root.join(patch)).output().expect("git");
        assert!(
            o.status.success(),
            "control {}: {patch} no longer applies: {}",
            c.name,
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
