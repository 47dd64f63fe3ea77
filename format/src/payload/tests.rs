#[test]
fn an_argument_encodes_as_its_nested_fields() {
    for (bytes, ptrs, objs) in [
        (&[1u8, 2, 3, 4, 5, 6, 7, 8][..], &[0u64][..], &[][..]),
        (&[][..], &[][..], &[][..]),
        (&[9u8; 24][..], &[0, 16][..], &[8][..]),
        (&[3u8; 4][..], &[][..], &[0][..]),
    ] {
        let mut a = PayloadWriter::new();
        a.u64(9, 1).nested_with(10, |w| {
            w.u64(1, 24).u64(2, bytes.len() as u64);
            w.bytes(3, bytes, false);
            if !ptrs.is_empty() {
                w.u64_array(4, ptrs);
            }
            if !objs.is_empty() {
                w.u64_array(5, objs);
            }
        });
        let mut b = PayloadWriter::new();
        b.u64(9, 1);
        assert!(b.argument(
            10,
            (1, 24),
            (2, bytes.len() as u64),
            (3, bytes),
            [(4, ptrs), (5, objs)]
        ));
        assert_eq!(a.as_bytes(), b.as_bytes());
    }
}

#[test]
fn nested_with_encodes_as_nested() {
    let mut inner = PayloadWriter::new();
    inner.u64(1, 7).u64_array(2, &[3, 4]);
    let mut a = PayloadWriter::new();
    a.u64(9, 1).nested(5, &inner);
    let mut b = PayloadWriter::new();
    b.u64(9, 1).nested_with(5, |w| {
        w.u64(1, 7).u64_array(2, &[3, 4]);
    });
    assert_eq!(a.as_bytes(), b.as_bytes());
}

use super::*;

#[test]
fn every_field_type_round_trips() {
    let mut inner = PayloadWriter::new();
    inner.u64(1, 8).devptr(2, 0xdead_0000);
    let mut w = PayloadWriter::new();
    w.u64(1, 5)
        .i64(2, -7)
        .f64(3, 1.5)
        .handle(4, 0x10)
        .devptr(5, 0x7f00)
        .str(6, "kern");
    assert!(w.bytes(7, &[1, 2, 3], false));
    w.blob(
        8,
        BlobRef {
            hash: ContentHash::of(b"x"),
            len: 1,
        },
    );
    w.u64_array(9, &[1, 2, 3]);
    assert!(w.nested(10, &inner));
    w.null(11, FieldType::DevPtr);
    let bytes = w.finish();
    let p = Payload::parse(&bytes).unwrap();
    assert_eq!(p.u64(1, "a").unwrap(), 5);
    assert_eq!(p.i64(2, "b").unwrap(), -7);
    assert_eq!(f64::from_bits(p.get(3).unwrap().as_u64().unwrap()), 1.5);
    assert_eq!(p.handle(4, "d").unwrap(), 0x10);
    assert_eq!(p.devptr(5, "e").unwrap(), 0x7f00);
    assert_eq!(p.str(6, "f").unwrap(), "kern");
    assert_eq!(p.bytes(7, "g").unwrap(), &[1, 2, 3]);
    assert_eq!(p.blob(8, "h").unwrap().hash, ContentHash::of(b"x"));
    assert_eq!(p.u64_array(9, "i").unwrap(), vec![1, 2, 3]);
    let n = p.get(10).unwrap().as_nested().unwrap();
    assert_eq!(n.devptr(2, "inner").unwrap(), 0xdead_0000);
    assert!(p.get(11).unwrap().is_null());
}

#[test]
fn unknown_fields_are_skipped_and_absent_differs_from_torn() {
    let mut w = PayloadWriter::new();
    w.u64(1, 5);
    let mut bytes = w.finish();
    // A field from a newer writer: unknown id 900, unknown type 200.
    bytes.extend_from_slice(&900u16.to_le_bytes());
    bytes.push(200);
    bytes.push(0);
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend_from_slice(&[9, 9]);
    let p = Payload::parse(&bytes).unwrap();
    assert_eq!(p.u64(1, "a").unwrap(), 5);
    assert_eq!(p.u64(2, "b"), Err(FieldError::Missing { id: 2, name: "b" }));
    // Tear the last value: decoding names the torn field.
    let torn = &bytes[..bytes.len() - 1];
    assert!(matches!(
        Payload::parse(torn),
        Err(FieldError::TornValue {
            id: 900,
            needed: 2,
            available: 1,
            ..
        })
    ));
}

#[test]
fn truncated_bytes_are_refused_by_typed_access() {
    let mut w = PayloadWriter::new();
    w.bytes(1, &[1, 2], true);
    let bytes = w.finish();
    let p = Payload::parse(&bytes).unwrap();
    assert_eq!(p.bytes(1, "a"), Err(FieldError::Truncated { id: 1 }));
}

#[test]
fn deep_nesting_renders_without_recursing_without_bound() {
    // 100,000 levels of nested fields, each an 8-byte field header around the next.
    let depth = 100_000usize;
    let mut v: Vec<u8> = Vec::with_capacity(depth * 8);
    for level in 0..depth {
        v.extend_from_slice(&1u16.to_le_bytes());
        v.push(FieldType::Fields as u8);
        v.push(0);
        v.extend_from_slice(&(((depth - level - 1) * 8) as u32).to_le_bytes());
    }
    let p = Payload::parse(&v).unwrap();
    let shown = p.iter().next().unwrap().render();
    assert!(
        shown.contains("nested deeper than 16"),
        "{}",
        &shown[..shown.len().min(200)]
    );
}
