//! Copy sources read when the copy runs. A copy from page-locked memory queued behind a
//! host function that may still run (`host_fns`) reads bytes that function may write: so
//! capture queues a host function of its own just before the copy, on the same stream,
//! which reads the source then, in the copy's order. The copy's record says its source
//! comes later (`SOURCE_PENDING_FIELD`); the bytes go into a `CopyOutput` record naming
//! the copy, written by whichever comes second, the read or the copy's record. A read that
//! never happens (the program ended first) leaves no such record, and replay refuses the
//! copy by name.

use std::os::raw::c_void;
use std::sync::{Arc, Mutex};

use hrr_archive::api::{fid, semantic, sigs, Vendor, BLOB_FIELD, POINTER_WORDS_FIELD};
use hrr_archive::payload::{BlobRef, PayloadWriter};
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::writer::current_tid;

use crate::state::Capture;

/// What reading the source yields: its blob and the offsets of the device pointers in it.
pub type Read = Result<(BlobRef, Vec<u64>), String>;

/// The read, run on the runtime's callback thread when the copy's turn comes.
pub type Reader = Box<dyn FnOnce() -> Read + Send>;

#[derive(Default)]
struct Slot {
    read: Option<Read>,
    /// The copy's record: (seq, source field, API name).
    copy: Option<(u64, u16, &'static str)>,
    cancelled: bool,
}

/// One copy's source, to be read when the copy runs.
pub struct SourceRead(Arc<Mutex<Slot>>);

extern "C" fn read_now(ctx: *mut c_void) {
    // SAFETY: the box `defer` made for this one call, which the runtime runs once.
    let (slot, reader) = *unsafe { Box::from_raw(ctx.cast::<(Arc<Mutex<Slot>>, Reader)>()) };
    let read = reader();
    let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
    match (s.cancelled, s.copy) {
        (true, _) => {}
        (false, Some((seq, field, api))) => write(seq, field, api, read),
        (false, None) => s.read = Some(read),
    }
}

/// Queues the read of a copy's source on `stream`, just before the copy; None where it
/// cannot be queued (the copy's source is then read now, and said to be unknown).
pub fn defer(vendor: Vendor, stream: u64, reader: Reader) -> Option<SourceRead> {
    let launch = crate::host_fns::launcher(vendor)?;
    let slot = Arc::new(Mutex::new(Slot::default()));
    let ctx = Box::into_raw(Box::new((slot.clone(), reader)));
    let f: sigs::HostFn = read_now;
    // SAFETY: the program's stream, about to take its copy; the box is the read's own.
    let r = crate::capturing::relaxed(vendor, || unsafe {
        launch(stream as *mut c_void, f, ctx.cast())
    });
    if r != 0 {
        // SAFETY: the runtime refused it: nothing else holds the box.
        drop(unsafe { Box::from_raw(ctx) });
        return None;
    }
    Some(SourceRead(slot))
}

impl SourceRead {
    /// The copy was recorded at `seq`, its source in field `field`: the bytes are written
    /// now if read already, otherwise when they are.
    pub fn recorded(self, seq: u64, field: u16, api: &'static str) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match s.read.take() {
            Some(read) => write(seq, field, api, read),
            None => s.copy = Some((seq, field, api)),
        }
    }
    /// The copy failed or went unrecorded: whatever the read finds is dropped.
    pub fn cancel(self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).cancelled = true;
    }
}

fn write(seq: u64, field: u16, api: &'static str, read: Read) {
    let Some(cap) = crate::state::current() else {
        return;
    };
    write_record(cap, seq, field, api, read);
}

fn write_record(cap: &Capture, seq: u64, field: u16, api: &'static str, read: Read) {
    let mut p = PayloadWriter::new();
    p.u64(fid::COPY_SEQ, seq).u64(fid::COPY_FIELD, field as u64);
    let why = match read {
        Ok((r, words)) => {
            p.blob(BLOB_FIELD | field, r);
            if !words.is_empty() {
                p.u64_array(POINTER_WORDS_FIELD | field, &words);
            }
            None
        }
        Err(e) => Some(format!(
            "the source of seq {seq} {api}, read when the copy ran, was not recorded: {e}"
        )),
    };
    let flags = if why.is_some() {
        RECORD_FLAG_INCOMPLETE
    } else {
        0
    };
    let w = cap.writer();
    let at = w.append(semantic::COPY_OUTPUT, flags, current_tid(), 0, p.as_bytes());
    if let (Some(at), Some(why)) = (at, why) {
        w.note_capture_failure(at, api, &why);
    }
}
