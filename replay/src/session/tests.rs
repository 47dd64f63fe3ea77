use super::*;
use hrr_contract::{Failure, FailureKind};

fn result() -> ReplayResult {
    ReplayResult::failed("/a".into(), ReplayExit::Fail, String::new())
}

#[test]
fn the_verdict_needs_a_passed_check_and_no_failure() {
    let mut r = result();
    assert_eq!(verdict(&mut r), ReplayExit::Fail);
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(r.reason.contains("nothing was verified"), "{}", r.reason);
    r.counts.d2h_pass = 3;
    assert_eq!(verdict(&mut r), ReplayExit::Pass);
    assert_eq!(
        (r.verdict, r.reason.as_str()),
        (Verdict::Pass, "3 D2H checks passed")
    );
    let mut r = result();
    r.counts.d2h_pass = 3;
    r.failures.push(Failure::event(
        1,
        2,
        "cudaMemcpy",
        FailureKind::ReturnCode,
        "returned 1, capture returned 0",
    ));
    assert_eq!(verdict(&mut r), ReplayExit::Fail);
    assert_eq!(
        (r.verdict, r.reason.as_str()),
        (Verdict::Fail, "1 failure(s)")
    );
}

#[test]
fn the_summary_names_kind_verdict_and_an_unloaded_runtime() {
    let mut r = result();
    r.reason = "why".into();
    let mut out = Vec::new();
    print_summary(&mut out, &r).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("runtime          :  (not loaded)"), "{text}");
    assert!(text.ends_with("FAIL: why\n"), "{text}");
}
