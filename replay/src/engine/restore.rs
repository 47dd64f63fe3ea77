//! A range capture's snapshot (`RangeRestore`, `RangeMark`: capture's `range`): before
//! the range replays, each allocation's bytes at the range's start are written into the
//! allocation replay made for the same captured address. The mark records the snapshot's
//! size and cost; replay only counts it.

use hrr_archive::api::{fid, id};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use hrr_archive::ProcessArchive;
use hrr_contract::Counts;

use super::error::{host_len, EvResult, EventError};
use super::translation::Translation;
use crate::runtime::Runtime;
use crate::translate::Translated;

/// `cudaMemcpyHostToDevice` / `hipMemcpyHostToDevice`.
const HOST_TO_DEVICE: u64 = 1;

/// Writes one allocation's snapshot into the replay allocation of its captured address
/// (`tr` only reads; `counts` gains the bytes restored).
pub(super) fn replay_range_restore(
    rt: &Runtime,
    proc_: &ProcessArchive,
    tr: &Translation,
    counts: &mut Counts,
    ev: &Event,
) -> EvResult {
    let p = Payload::parse(&ev.payload)?;
    let start = p.devptr(fid::DEVICE_ADDRESS, "allocation")?;
    let size = p.u64(fid::SIZE, "size")?;
    let r = p.blob(fid::RANGE_BYTES, "bytes")?;
    let len = host_len(proc_, size, "range snapshot")?;
    if r.len != size {
        return Err(EventError::BlobLength {
            what: "range snapshot",
            blob: r.len,
            copy: size,
        });
    }
    if size == 0 {
        return Ok(());
    }
    let last = start.checked_add(size - 1).ok_or_else(|| {
        EventError::Inconsistent(format!(
            "range snapshot of {size} bytes at {start:#x} runs past the address space"
        ))
    })?;
    let at = match (tr.addrs.translate(start), tr.addrs.translate(last)) {
        (Translated::Mapped(a), Translated::Mapped(b)) if b == a + size - 1 => a,
        _ => {
            return Err(EventError::Inconsistent(format!(
                "range snapshot of {size} bytes at {start:#x} maps to no replay allocation of that size"
            )))
        }
    };
    let bytes = proc_.load_blob(&r)?;
    // SAFETY: cudaMemcpy / hipMemcpy(dst, src, count, kind): `at` starts `len` bytes
    // of one replay allocation (both ends translated into it), `bytes` holds `len`.
    let ret = unsafe {
        rt.call_table(
            id::Memcpy,
            &[at, bytes.as_ptr() as u64, len as u64, HOST_TO_DEVICE],
        )
    }?;
    if ret != 0 {
        return Err(EventError::Call {
            call: format!("restoring {size} bytes at {start:#x} from the range snapshot"),
            code: ret,
        });
    }
    counts.range_restored_bytes += size;
    Ok(())
}
