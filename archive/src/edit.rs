//! Deliberate edits for negative tests: change one byte of one expected output (a D2H
//! blob) and re-point its event at the edited copy, keeping the archive valid. Replay
//! must then fail exactly that check at exactly that offset, which proves its
//! comparison is not vacuous.

use std::path::Path;

use crate::api::{fid, semantic, BLOB_FIELD, CAPTURE_FIELD, COPY_DIR_FIELD, OUTPUT_PENDING_FIELD};
use crate::manifest::EVENTS_FILE;
use crate::payload::{self, FieldType, Payload};
use crate::reader::Archive;
use crate::record;
use crate::{blob, ArchiveError, Limits, Result};

/// What was edited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditedOutput {
    pub pid: u32,
    pub seq: u64,
    pub offset: u64,
    pub old: u8,
    pub new: u8,
}

/// Where an event keeps an expected output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expected {
    /// A D2H copy that ran when it was issued: its blob field.
    Copy,
    /// A graph launch: its first D2H node's bytes (checked after that launch).
    GraphLaunch,
    /// A mapped or managed allocation's bytes after a synchronisation (`MappedOutput`).
    Mapped,
}

fn expected_in(e: &record::Event) -> Option<Expected> {
    let pl = Payload::parse(&e.payload).ok()?;
    if e.header.api_id == semantic::GRAPH_LAUNCH {
        let outputs = pl
            .get(fid::GRAPH_OUTPUT)
            .or(pl.get(fid::GRAPH_OUTPUT_PENDING));
        return outputs.map(|_| Expected::GraphLaunch);
    }
    if e.header.api_id == semantic::MAPPED_OUTPUT {
        return pl.get(fid::MAPPED_BYTES).map(|_| Expected::Mapped);
    }
    // A copy captured into a graph, or added to one as a node, has no expected output of
    // its own.
    let d2h = pl.get(COPY_DIR_FIELD).and_then(|f| f.as_u64().ok()) == Some(2);
    let node =
        pl.get(CAPTURE_FIELD).is_some() || crate::api::copy_node::node_host_side(e.header.api_id);
    (d2h && !node).then_some(Expected::Copy)
}

/// `payload` with the value of its first field `id` replaced, every other field unchanged.
fn replace_first(payload: &[u8], id: u16, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len());
    let mut done = false;
    for f in payload::fields(payload).flatten() {
        let v = if f.id == id && !done {
            done = true;
            value
        } else {
            f.value
        };
        out.extend_from_slice(&f.id.to_le_bytes());
        out.push(f.ty);
        out.push(f.flags);
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
    out
}

/// The index of the `CopyOutput` record attached to the copy at `idx` (to a graph launch:
/// its first D2H node's), when the copy's output is pending; Err when it is pending and
/// no record carries it.
fn attached_output(
    p: &crate::ProcessArchive,
    idx: usize,
) -> Option<std::result::Result<usize, String>> {
    let copy = &p.events[idx];
    let pl = Payload::parse(&copy.payload).ok()?;
    let pending = match copy.header.api_id {
        semantic::GRAPH_LAUNCH => pl.get(fid::GRAPH_OUTPUT).is_none(),
        _ => pl.get(OUTPUT_PENDING_FIELD).is_some(),
    };
    if !pending {
        return None;
    }
    let seq = copy.header.seq;
    Some(
        p.events[idx + 1..]
            .iter()
            .position(|e| {
                e.header.api_id == semantic::COPY_OUTPUT
                    && Payload::parse(&e.payload)
                        .ok()
                        .and_then(|pl| pl.get(fid::COPY_SEQ).and_then(|f| f.as_u64().ok()))
                        == Some(seq)
            })
            .map(|i| idx + 1 + i)
            .ok_or_else(|| "its output is pending and no CopyOutput record carries it".to_string()),
    )
}

/// Flips every bit of byte `offset` of the expected output of event `seq` (or of the
/// first event with an expected output when `seq` is None) in the first process.
pub fn edit_expected_output(
    root: &Path,
    seq: Option<u64>,
    offset: u64,
    limits: Limits,
) -> Result<EditedOutput> {
    let archive = Archive::open(root, limits)?;
    let p = archive
        .processes
        .first()
        .ok_or_else(|| ArchiveError::invalid(root, "archive has no process"))?;
    let idx = p
        .events
        .iter()
        .position(|e| seq.is_none_or(|s| e.header.seq == s) && expected_in(e).is_some())
        .ok_or_else(|| {
            ArchiveError::invalid(
                root,
                format!(
                    "no device-to-host event{}",
                    seq.map(|s| format!(" with seq {s}")).unwrap_or_default()
                ),
            )
        })?;
    let copy_seq = p.events[idx].header.seq;
    // An asynchronous copy's output may be in the CopyOutput record attached to it: that
    // record's blob is edited, and the check replay must fail is still the copy's.
    let idx = attached_output(p, idx)
        .unwrap_or(Ok(idx))
        .map_err(|why| ArchiveError::invalid(root, format!("copy at seq {copy_seq}: {why}")))?;
    let ev = &p.events[idx];
    let invalid = |e: crate::payload::FieldError| ArchiveError::invalid(root, e.to_string());
    let pl = Payload::parse(&ev.payload).map_err(invalid)?;
    let kind = expected_in(ev);
    // The blob field, and for a graph launch the nested node field holding it.
    let (field, node) = if kind == Some(Expected::GraphLaunch) {
        let node = pl
            .get(fid::GRAPH_OUTPUT)
            .ok_or_else(|| ArchiveError::invalid(root, "graph launch has no D2H node"))?;
        let inner = node.as_nested().map_err(invalid)?;
        let bytes = *inner
            .get(fid::NODE_BYTES)
            .ok_or_else(|| ArchiveError::invalid(root, "graph node has no bytes"))?;
        (bytes, Some(*node))
    } else if kind == Some(Expected::Mapped) {
        let f = pl
            .get(fid::MAPPED_BYTES)
            .ok_or_else(|| ArchiveError::invalid(root, "mapped output has no bytes"))?;
        (*f, None)
    } else {
        let f = pl
            .iter()
            .find(|f| f.id & BLOB_FIELD != 0 && f.field_type() == Some(FieldType::Blob))
            .ok_or_else(|| ArchiveError::invalid(root, "event has no expected-output blob"))?;
        (*f, None)
    };
    let old_ref = field.as_blob().map_err(invalid)?;
    let mut data = p.load_blob(&old_ref)?;
    let at = usize::try_from(offset)
        .ok()
        .filter(|&o| o < data.len())
        .ok_or(ArchiveError::OffsetOutside {
            path: root.to_path_buf(),
            offset,
            len: data.len() as u64,
        })?;
    let old = data[at];
    data[at] = !old;
    let new_hash = crate::ContentHash::of(&data);
    let dest = p.dir.join(blob::blob_rel_path(&new_hash));
    if let Some(parent) = dest.parent() {
        crate::safefs::ensure_dir(parent)?;
    }
    blob::write_atomic(
        &dest,
        &blob::encode(&data, blob::Compression::None)
            .map_err(|e| ArchiveError::io(&dest, "encode", e))?,
        false,
    )?;
    // Re-encode the payload with the new reference, every other field unchanged.
    let mut new_ref = new_hash.0.to_vec();
    new_ref.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let out = match node {
        Some(n) => {
            let inner = replace_first(n.value, field.id, &new_ref);
            replace_first(&ev.payload, n.id, &inner)
        }
        None => replace_first(&ev.payload, field.id, &new_ref),
    };
    let mut log = record::file_header().to_vec();
    for (i, e) in p.events.iter().enumerate() {
        record::encode_record(
            &mut log,
            &e.header,
            if i == idx { &out } else { &e.payload },
        );
    }
    if p.status == crate::LogStatus::Complete {
        let n = p.events.len() as u64;
        let h = record::RecordHeader {
            api_id: record::TRAILER_API_ID,
            flags: 0,
            seq: n,
            timestamp_ns: 0,
            tid: 0,
            ret: 0,
        };
        record::encode_record(&mut log, &h, &record::trailer_payload(n));
    }
    // Not fsync'd: an edited archive is a test input, remade whenever it is needed.
    // Both files are replaced by rename, never rewritten in place, so an edited copy
    // made of hard links leaves the original archive untouched.
    blob::write_atomic(&p.dir.join(EVENTS_FILE), &log, false)?;
    Ok(EditedOutput {
        pid: p.entry.pid,
        seq: copy_seq,
        offset,
        old,
        new: !old,
    })
}
