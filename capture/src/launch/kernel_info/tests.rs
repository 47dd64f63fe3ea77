use super::*;

#[test]
fn only_an_index_past_the_last_parameter_ends_a_layout() {
    let answers =
        |codes: Vec<c_int>| layout_from(|i| (codes.get(i).copied().unwrap_or(0), 8 * i as u64, 8));
    assert_eq!(answers(vec![0, 0, 1]), Ok(vec![(0, 8), (8, 8)]));
    assert_eq!(answers(vec![1]), Ok(vec![]));
    // Any other error, first or later, is no layout (never "no parameters"), and is
    // kept for the record it leaves incomplete.
    assert_eq!(answers(vec![900]), Err(900));
    assert_eq!(answers(vec![0, 201]), Err(201));
    note_gap("cuFuncGetParamInfo", Some(900));
    assert!(layout_gap_reason().contains("(cuFuncGetParamInfo returned 900)"));
    assert!(!layout_gap_reason().contains("returned"), "read once");
    // An answer that never ends is no layout either.
    assert!(layout_from(|_| (0, 0, 4)).is_err());
}
