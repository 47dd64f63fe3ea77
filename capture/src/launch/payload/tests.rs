use super::*;

fn words(vals: &[u64]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn pointer_words_are_found_inside_arguments_and_pinned_ranges_once() {
    // A by-value struct {dev ptr, int pair, pinned ptr, pinned ptr + 8} and a tail.
    let lookup = |v: u64| match v {
        0x1000..0x1100 => Some((0x1000, 0x100, Space::Device)),
        0x9000..0x9010 => Some((0x9000, 0x10, Space::PinnedHost)),
        _ => None,
    };
    let mut pinned = Vec::new();
    let mut bytes = words(&[0x1010, 7, 0x9000, 0x9008]);
    bytes.extend_from_slice(&[1, 2, 3]);
    let mut w = PointerWords::new();
    scan_pointer_words(&bytes, lookup, &mut w, &mut pinned);
    assert_eq!(w.as_slice(), &[0, 16, 24]);
    assert_eq!(pinned, vec![(0x9000, 0x10)]);
}

#[test]
fn managed_memory_and_mapped_aliases_are_read_through_their_host_start() {
    // A managed allocation, and a device alias of pinned memory whose host start is
    // elsewhere (cudaHostGetDevicePointer returning another address).
    let lookup = |v: u64| match v {
        0x4000..0x4100 => Some((0x4000, 0x100, Space::Managed)),
        0x7000..0x7010 => Some((0x7000, 0x10, Space::MappedAlias { host: 0x9000 })),
        _ => None,
    };
    let mut reached = Vec::new();
    let mut w = PointerWords::new();
    scan_pointer_words(
        &words(&[0x4008, 0x7004, 0x4010]),
        lookup,
        &mut w,
        &mut reached,
    );
    assert_eq!(w.as_slice(), &[0, 8, 16]);
    assert_eq!(reached, vec![(0x4000, 0x100), (0x9000, 0x10)]);
}

#[test]
fn more_pointer_words_than_the_stack_holds_spill_in_order() {
    let lookup = |v: u64| (v >= 0x1000).then_some((0x1000, 1 << 20, Space::Device));
    let vals: Vec<u64> = (0..20).map(|i| 0x1000 + i).collect();
    let mut pinned = Vec::new();
    let mut w = PointerWords::new();
    scan_pointer_words(&words(&vals), lookup, &mut w, &mut pinned);
    let expect: Vec<u64> = (0..20).map(|i| i * 8).collect();
    assert_eq!(w.as_slice(), &expect[..]);
    assert!(pinned.is_empty());
    let mut none = PointerWords::new();
    scan_pointer_words(&words(&[1, 2]), lookup, &mut none, &mut pinned);
    assert!(none.as_slice().is_empty());
}
