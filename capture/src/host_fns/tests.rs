use super::*;

static CALLS: AtomicU64 = AtomicU64::new(0);

extern "C" fn program_fn(data: *mut c_void) {
    CALLS.fetch_add(data as u64, Ordering::SeqCst);
}

/// One test: the count is the process's.
#[test]
fn a_wrapped_host_function_runs_the_programs_once_and_counts_itself_done() {
    let before = PENDING.load(Ordering::SeqCst);
    let ctx = Box::into_raw(Box::new(Call {
        func: {
            let f: sigs::HostFn = program_fn;
            f as usize as u64
        },
        data: 5,
    }));
    PENDING.fetch_add(1, Ordering::SeqCst);
    assert!(pending());
    run_host_fn(ctx.cast());
    assert_eq!(CALLS.load(Ordering::SeqCst), 5);
    assert_eq!(PENDING.load(Ordering::SeqCst), before);
    // A refused call frees its box and is done at once.
    let ctx = Box::into_raw(Box::new(Call { func: 0, data: 0 }));
    PENDING.fetch_add(1, Ordering::SeqCst);
    Wrapped { args: vec![], ctx }.settle(1);
    assert_eq!(PENDING.load(Ordering::SeqCst), before);
    // Never below zero.
    fork_child_forget();
    done();
    assert_eq!(PENDING.load(Ordering::SeqCst), 0);
    // Only an asynchronous copy from pageable memory is read right while one is pending.
    PENDING.fetch_add(1, Ordering::SeqCst);
    assert_eq!(source_unknown(true, true), None);
    assert_eq!(source_unknown(true, false), Some(PENDING_SOURCE));
    assert_eq!(source_unknown(false, true), Some(PENDING_SOURCE));
    done();
}
