use hrr_archive::api::coverage::*;
#[test]
fn list() {
    let h = std::fs::read_to_string(
        "/tmp/ciclone/target/ci-tools/cuda/nvidia/cu13/include/cuda_runtime_api.h",
    )
    .unwrap();
    let mut names = std::collections::BTreeSet::new();
    for part in h.split("CUDARTAPI").skip(1) {
        let n: String = part
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !n.is_empty() && part.trim_start()[n.len()..].trim_start().starts_with('(') {
            names.insert(n);
        }
    }
    for n in &names {
        let s = summary([n.as_str()]);
        if s.refused == 1 {
            println!("REFUSED {n}");
        }
    }
}
