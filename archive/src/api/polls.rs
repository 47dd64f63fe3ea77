//! Polls: the query rows a program calls until its work is done (`cudaEventQuery`,
//! `cudaStreamQuery`, the driver's and HIP's per-thread forms), each with the
//! synchronisation row that reaches what a successful query observed. Replay makes that
//! synchronisation where capture's query succeeded, and skips a query that found the work
//! still running (it changed nothing), so a polling loop costs replay neither a race nor
//! thousands of calls.

use super::id;

/// `cudaErrorNotReady`, `hipErrorNotReady` and `CUDA_ERROR_NOT_READY`: the same number.
pub const NOT_READY: i32 = 600;

/// The synchronisation row whose success is what a successful `row` observed (same
/// handle, at argument 0), if `row` is a poll.
pub fn completion_of(row: u16) -> Option<u16> {
    Some(match row {
        id::StreamQuery => id::StreamSynchronize,
        id::EventQuery => id::EventSynchronize,
        id::CuStreamQuery => id::CuStreamSynchronize,
        id::CuEventQuery => id::CuEventSynchronize,
        id::StreamQuerySpt => id::StreamSynchronizeSpt,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{desc, ParamKind};

    #[test]
    fn each_poll_completes_through_a_row_of_the_same_handle() {
        let mut polls = 0;
        for d in crate::api::API_TABLE {
            let Some(sync) = completion_of(d.id) else {
                continue;
            };
            polls += 1;
            let s = desc(sync).unwrap();
            // The query's result is not compared as an error; the two take one handle of
            // the same kind, and exist for the same vendors.
            assert_eq!(d.ret, crate::api::RetPolicy::Any, "{}", d.name);
            assert_eq!(d.params.len(), 1, "{}", d.name);
            assert_eq!(s.params.len(), 1, "{}", s.name);
            assert_eq!(d.params[0].kind, s.params[0].kind, "{}", d.name);
            assert!(matches!(
                d.params[0].kind,
                ParamKind::Stream | ParamKind::Event
            ));
            assert_eq!(
                (d.cuda.is_some(), d.hip.is_some()),
                (s.cuda.is_some(), s.hip.is_some())
            );
        }
        assert_eq!(polls, 5);
        assert_eq!(completion_of(id::StreamSynchronize), None);
    }
}
