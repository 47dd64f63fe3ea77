//! Kernel-argument layouts read from real AMDGPU code objects, as Debian's hipcc (HIP 5.2,
//! clang 15) and clang-19 produce them for gfx90a, gfx942, gfx1100 and gfx1201, and from a
//! clang offload bundle (tests/data/amdgpu/README.md says how each was made).

use std::path::Path;

use hrr_archive::amdgpu::{kernels, kernels_of_code_object};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/amdgpu")
            .join(name),
    )
    .unwrap()
}

#[test]
fn explicit_argument_layouts_match_the_source_on_every_target() {
    for target in ["gfx90a", "gfx942", "gfx1100", "gfx1201"] {
        let ks = kernels(&data(&format!("kernels-{target}.co")))
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(ks.len(), 2, "{target}");
        // extern "C" axpy(float a, const float* x, float* y, int n)
        let axpy = ks
            .iter()
            .find(|k| k.name == "axpy")
            .unwrap_or_else(|| panic!("{target}: no axpy"));
        assert_eq!(axpy.symbol, "axpy.kd");
        assert_eq!(
            axpy.explicit_params(),
            vec![(0, 4), (8, 8), (16, 8), (24, 4)],
            "{target}"
        );
        let kinds: Vec<&str> = axpy
            .args
            .iter()
            .filter(|a| !a.is_hidden())
            .map(|a| a.value_kind.as_str())
            .collect();
        assert_eq!(
            kinds,
            ["by_value", "global_buffer", "global_buffer", "by_value"],
            "{target}"
        );
        // clang-19 declares the implicit arguments (hidden_*) after the explicit ones; they
        // are not in the program's `void** args` and explicit_params leaves them out.
        if ["gfx942", "gfx1201"].contains(&target) {
            assert!(
                axpy.args.iter().any(|a| a.is_hidden()),
                "{target}: hidden arguments expected"
            );
        }
        // scale_pair(Pair{float*, float*, int, double} by value, char, long long)
        let sp = ks
            .iter()
            .find(|k| k.name == "_Z10scale_pair4Paircx")
            .unwrap_or_else(|| panic!("{target}: no scale_pair"));
        assert_eq!(
            sp.explicit_params(),
            vec![(0, 32), (32, 1), (40, 8)],
            "{target}"
        );
        assert!(sp.kernarg_segment_size >= 48);
    }
}

#[test]
fn a_bundle_yields_the_layouts_of_its_first_amdgpu_entry() {
    let b = data("kernels-gfx90a-gfx1030.hipfb");
    let ks = kernels_of_code_object(&b).unwrap();
    let axpy = ks.iter().find(|k| k.name == "axpy").unwrap();
    assert_eq!(
        axpy.explicit_params(),
        vec![(0, 4), (8, 8), (16, 8), (24, 4)]
    );
}

#[test]
fn damaged_code_objects_are_refused_with_a_reason() {
    let good = data("kernels-gfx942.co");
    assert!(kernels(b"not an elf")
        .unwrap_err()
        .to_string()
        .contains("not a 64-bit"));
    let mut wrong_machine = good.clone();
    wrong_machine[18] = 0x3e;
    assert!(kernels(&wrong_machine)
        .unwrap_err()
        .to_string()
        .contains("not AMDGPU"));
    // Every truncation and every single-byte corruption: an error or a result, never a panic.
    for cut in (0..good.len()).step_by(97) {
        let _ = kernels(&good[..cut]);
    }
    for i in (0..good.len()).step_by(13) {
        let mut g = good.clone();
        g[i] ^= 0xa5;
        let _ = kernels(&g);
    }
}

#[test]
fn module_images_are_sized_from_their_headers() {
    use hrr_archive::codeobject::module_image_size;
    for name in [
        "kernels-gfx90a.co",
        "kernels-gfx1201.co",
        "kernels-gfx90a-gfx1030.hipfb",
    ] {
        let mut b = data(name);
        let real = b.len() as u64;
        // Trailing bytes after the image (a module load hands a pointer, not a length).
        b.extend_from_slice(&[0xab; 4096]);
        let peek = |o: u64, n: u64| b.get(o as usize..(o + n) as usize).map(|s| s.to_vec());
        assert_eq!(module_image_size(peek), Some(real), "{name}");
    }
    let ptx = b".version 7.0\n.target sm_50\n\0";
    let peek = |o: u64, n: u64| {
        ptx.get(o as usize..(o + n).min(ptx.len() as u64) as usize)
            .map(|s| s.to_vec())
    };
    assert_eq!(
        module_image_size(peek),
        None,
        "PTX is sized by its NUL, by the caller"
    );
}

#[test]
fn memcpy3d_parameters_round_trip_and_address_rows() {
    use hrr_archive::api::memcpy3d::{Parms, Side};
    let p = Parms {
        src_array: 0,
        dst_array: 0,
        src: Side {
            ptr: 0x1000,
            pitch: 256,
            xsize: 64,
            ysize: 23,
            x: 12,
            y: 2,
            z: 1,
        },
        dst: Side {
            ptr: 0x7f00_0000,
            pitch: 512,
            xsize: 50,
            ysize: 20,
            x: 0,
            y: 0,
            z: 0,
        },
        extent: [200, 20, 6],
        kind: 1,
    };
    assert_eq!(Parms::decode(&p.encode()), p);
    // Row j of slice k: ptr + (z + k) * pitch * ysize + (y + j) * pitch + x.
    assert_eq!(p.src.row(0, 0), 0x1000 + 256 * 23 + 2 * 256 + 12);
    assert_eq!(p.src.row(3, 2), 0x1000 + 3 * 256 * 23 + 5 * 256 + 12);
    assert_eq!(p.box_bytes(), Some(200 * 20 * 6));
    let huge = Parms {
        extent: [u64::MAX, 2, 1],
        ..p
    };
    assert_eq!(huge.box_bytes(), None);
}
