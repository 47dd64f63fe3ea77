//! A range archive's set-up, cut to what its range uses (issue 23). Before a range
//! starts, capture records every code-object registration and load, for it cannot know
//! which kernels the range will launch: a PyTorch process registers tens of thousands of
//! kernels in hundreds of fat binaries, and one training step launches a few dozen. At
//! the capture's exit, [`plan`] keeps such a record only when something kept names its
//! code object or one of its handles, and [`prune_process`] rewrites the log without the
//! rest and removes the code objects only they named.
//!
//! Replay loads a code object by hash when a launch, a function lookup or a variable
//! names it; registrations themselves do nothing there. So dropping the registrations
//! and loads of a code object that nothing kept names changes nothing replay does. A
//! record capture could not tie to a code object is kept as it is. The dropped sequence
//! ids are listed in the process manifest (`Pruned`), the only gaps besides a repair's
//! that a reader accepts.

use std::collections::BTreeSet;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::api::{fid, semantic};
use crate::blob;
use crate::hash::ContentHash;
use crate::manifest::{self, Gaps, ProcessEntry, Pruned, SeqGap, EVENTS_FILE, MANIFEST_FILE};
use crate::payload::{FieldType, Payload};
use crate::reader::ProcessArchive;
use crate::record::{self, Event, RecordHeader, FILE_HEADER_LEN, TRAILER_API_ID};
use crate::{Limits, Result};

/// The set-up records a range archive may drop: registrations and loads of code
/// objects, and the unregistrations and unloads that end them.
const CODE_SETUP: [u16; 7] = [
    semantic::REGISTER_FAT_BINARY,
    semantic::REGISTER_FUNCTION,
    semantic::REGISTER_VAR,
    semantic::UNREGISTER_FAT_BINARY,
    semantic::MODULE_LOAD,
    semantic::MODULE_GET_FUNCTION,
    semantic::MODULE_UNLOAD,
];

/// Words below this are counts, sizes and flags, never a handle or a host address: a
/// kept event's small integer does not keep a record whose handle happens to equal it.
const MIN_IDENTITY: u64 = 1 << 16;

/// Nested payloads deeper than this are not searched (capture nests at most a few).
const MAX_DEPTH: usize = 8;

/// What a range archive's set-up keeps and drops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Code set-up records before the range's start: the candidates.
    pub candidates: u64,
    /// Indices (into the events) of the records dropped, ascending.
    pub drop: Vec<usize>,
    /// Code objects that only dropped records named.
    pub drop_code_objects: BTreeSet<ContentHash>,
}

/// What one record names: code objects (by hash) and words (handles, addresses, every
/// integer at any depth).
#[derive(Default)]
struct Names {
    code_objects: HashSet<ContentHash>,
    words: HashSet<u64>,
}

impl Names {
    fn add(&mut self, payload: &[u8], depth: usize) {
        let Ok(p) = Payload::parse(payload) else {
            return;
        };
        for f in p.iter() {
            match f.field_type() {
                Some(FieldType::U64 | FieldType::Handle | FieldType::DevPtr | FieldType::I64) => {
                    if let Ok(v) = f.as_u64() {
                        self.words.insert(v);
                    }
                }
                Some(FieldType::U64Array) => {
                    self.words.extend(f.as_u64_array().unwrap_or_default());
                }
                Some(FieldType::Str) => {
                    if let Some(h) = f.as_str().ok().and_then(ContentHash::from_hex) {
                        self.code_objects.insert(h);
                    }
                }
                Some(FieldType::Fields) if depth < MAX_DEPTH => self.add(f.value, depth + 1),
                _ => {}
            }
        }
    }
}

/// Whether a candidate ends what another made (an unregistration, an unload).
fn ends(api_id: u16) -> bool {
    matches!(
        api_id,
        semantic::UNREGISTER_FAT_BINARY | semantic::MODULE_UNLOAD
    )
}

/// A registration's or load's own names: its code object, and the handles the program
/// uses it by: a registration's host stub or variable address, a module, a function
/// and its module (a fat binary's handle is for registration calls alone). None when
/// capture could not tie it to a code object: it is kept.
fn identity(api_id: u16, p: &Payload) -> Option<(ContentHash, Vec<u64>)> {
    let co = p
        .get(fid::CODE_OBJECT)
        .and_then(|f| f.as_str().ok())
        .and_then(ContentHash::from_hex)?;
    let by: &[u16] = match api_id {
        semantic::MODULE_LOAD => &[fid::HANDLE],
        semantic::MODULE_GET_FUNCTION => &[fid::HANDLE, fid::KERNEL],
        _ => &[fid::HOST_STUB],
    };
    Some((co, handles(p, by)))
}

fn handles(p: &Payload, ids: &[u16]) -> Vec<u64> {
    ids.iter()
        .filter_map(|id| p.get(*id).and_then(|f| f.as_u64().ok()))
        .filter(|v| *v >= MIN_IDENTITY)
        .collect()
}

/// The set-up a range archive can do without; None when the log holds no range start
/// (a whole-program archive, or a range that never started).
///
/// 1. Everything but the candidates is kept, and so is a candidate capture could not tie
///    to a code object; what they name is collected.
/// 2. A registration or load is kept when its code object is named, or one of its
///    handles is (a launch through a module's function names the function). Its code
///    object is then named too, which keeps the rest of that code object's records
///    (the module load behind a kept lookup).
/// 3. An unregistration or unload goes with the registration or load of its handle, the
///    latest before it (one it cannot match is kept).
pub fn plan(events: &[Event]) -> Option<Plan> {
    let start = events.iter().position(|e| {
        matches!(
            e.header.api_id,
            semantic::RANGE_RESTORE | semantic::RANGE_MARK
        )
    })?;
    let candidate = |i: usize| i < start && CODE_SETUP.contains(&events[i].header.api_id);
    let mut kept = Names::default();
    // Registrations and loads still undecided: (index, code object, handles).
    let mut open: Vec<(usize, ContentHash, Vec<u64>)> = Vec::new();
    let mut candidates = 0u64;
    for (i, e) in events.iter().enumerate() {
        if !candidate(i) {
            kept.add(&e.payload, 0);
            continue;
        }
        candidates += 1;
        if ends(e.header.api_id) {
            continue;
        }
        match (Payload::parse(&e.payload).ok().as_ref()).and_then(|p| identity(e.header.api_id, p))
        {
            Some((co, handles)) => open.push((i, co, handles)),
            None => kept.add(&e.payload, 0),
        }
    }
    let by_handle = |co: &ContentHash, handles: &[u64], kept: &Names| {
        kept.code_objects.contains(co) || handles.iter().any(|h| kept.words.contains(h))
    };
    let mut dropped: Vec<(usize, ContentHash, Vec<u64>)> = Vec::new();
    for (i, co, handles) in open {
        if by_handle(&co, &handles, &kept) {
            kept.code_objects.insert(co);
        } else {
            dropped.push((i, co, handles));
        }
    }
    dropped.retain(|(_, co, _)| !kept.code_objects.contains(co));
    let mut drop: Vec<usize> = dropped.iter().map(|(i, _, _)| *i).collect();
    // Each ending with the maker of its handle: the latest registration or load of it
    // before the ending (one pass, in order).
    let gone: HashSet<usize> = drop.iter().copied().collect();
    let mut maker: HashMap<u64, usize> = HashMap::new();
    for i in (0..start).filter(|&i| candidate(i)) {
        let id = events[i].header.api_id;
        let makes = matches!(id, semantic::REGISTER_FAT_BINARY | semantic::MODULE_LOAD);
        if !makes && !ends(id) {
            continue;
        }
        let Ok(p) = Payload::parse(&events[i].payload) else {
            continue;
        };
        let Some(&h) = handles(&p, &[fid::HANDLE]).first() else {
            continue;
        };
        if makes {
            maker.insert(h, i);
        } else if maker.get(&h).is_some_and(|j| gone.contains(j)) {
            drop.push(i);
        }
    }
    drop.sort_unstable();
    let drop_code_objects = dropped.into_iter().map(|(_, co, _)| co).collect();
    Some(Plan {
        candidates,
        drop,
        drop_code_objects,
    })
}

/// The dropped indices' sequence ids as inclusive stretches of consecutive ids.
fn stretches(events: &[Event], drop: &[usize]) -> Vec<SeqGap> {
    let mut out: Vec<SeqGap> = Vec::new();
    for &i in drop {
        let seq = events[i].header.seq;
        match out.last_mut() {
            Some(g) if g.last_seq + 1 == seq => g.last_seq = seq,
            _ => out.push(SeqGap {
                first_seq: seq,
                last_seq: seq,
            }),
        }
    }
    out
}

/// Prunes the set-up of one process's complete range archive in `dir` (its process
/// directory), as [`plan`] decides. The manifest listing the dropped ids is written
/// before the log without them (a reader accepts a pruned stretch absent or whole), and
/// code objects are removed last. Returns what was dropped; None when nothing was (no
/// range, an incomplete log, nothing unused, or pruned already).
pub fn prune_process(dir: &Path, pid: u32, limits: &Limits) -> Result<Option<Pruned>> {
    let entry = ProcessEntry {
        pid,
        ppid: 0,
        dir: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let archive = ProcessArchive::open(dir, entry, *limits)?;
    if !archive.is_complete()
        || archive.manifest.pruned.is_some()
        || archive.manifest.seq_gaps() != Gaps::default()
    {
        return Ok(None);
    }
    let events = &archive.events;
    let Some(plan) = plan(events) else {
        return Ok(None);
    };
    if plan.drop.is_empty() {
        return Ok(None);
    }
    let mut dropped = vec![false; events.len()];
    for &i in &plan.drop {
        dropped[i] = true;
    }
    let kept = events.len() - plan.drop.len();
    let mut log = Vec::with_capacity(
        FILE_HEADER_LEN
            + (events.iter().zip(&dropped))
                .filter(|(_, d)| !**d)
                .map(|(e, _)| record::RECORD_HEADER_LEN + e.payload.len())
                .sum::<usize>()
            + 64,
    );
    log.extend_from_slice(&record::file_header());
    for (e, _) in events.iter().zip(&dropped).filter(|(_, d)| !**d) {
        record::encode_record(&mut log, &e.header, &e.payload);
    }
    // `plan` found a range start, so there is a last event.
    let last = events.last().map(|e| e.header.seq + 1).unwrap_or(0);
    let trailer = RecordHeader {
        api_id: TRAILER_API_ID,
        flags: 0,
        seq: last,
        timestamp_ns: events.last().map_or(0, |e| e.header.timestamp_ns),
        tid: 0,
        ret: 0,
    };
    record::encode_record(&mut log, &trailer, &record::trailer_payload(kept as u64));

    let own: Vec<(ContentHash, u64)> = (plan.drop_code_objects.iter())
        .filter_map(|h| {
            let path = dir.join(blob::code_object_rel_path(h));
            let meta = std::fs::symlink_metadata(path).ok()?;
            meta.is_file().then_some((*h, meta.len()))
        })
        .collect();
    let pruned = Pruned {
        candidates: plan.candidates,
        events: plan.drop.len() as u64,
        code_objects: own.len() as u64,
        code_object_bytes: own.iter().map(|(_, n)| n).sum(),
        stretches: stretches(events, &plan.drop),
    };
    let mut m = archive.manifest.clone();
    m.event_count = kept as u64;
    let in_store = (plan.drop_code_objects.len() - own.len()) as u64;
    m.code_object_count = (m.code_object_count).saturating_sub(plan.drop_code_objects.len() as u64);
    m.code_objects_in_store = m.code_objects_in_store.saturating_sub(in_store);
    m.pruned = Some(pruned.clone());
    manifest::write_manifest(&dir.join(MANIFEST_FILE), &m, true)?;
    blob::write_atomic(&dir.join(EVENTS_FILE), &log, true)?;
    for (h, _) in &own {
        let path = dir.join(blob::code_object_rel_path(h));
        // A file left behind costs space, never correctness: the log no longer names it.
        let _ = std::fs::remove_file(path);
    }
    Ok(Some(pruned))
}

#[cfg(test)]
mod tests;
