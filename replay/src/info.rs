//! `--info` and `--events`: what an archive holds, for people (text) and tools (JSON).
//! Neither needs a GPU.
//!
//! Every string an archive supplies (manifest fields, event fields, warnings naming
//! them) is untrusted: the text renderings pass it through `escape_controls`, so an
//! archive cannot drive the reader's terminal (escape sequences, carriage returns,
//! bidirectional overrides). The JSON renderings stay JSON-escaped by serde.

use std::borrow::Cow;
use std::collections::BTreeMap;

use hrr_archive::api;
use hrr_archive::payload::Payload;
use hrr_archive::Archive;
use serde::Serialize;

#[derive(Serialize)]
pub struct ProcessInfo {
    pub pid: u32,
    pub ppid: u32,
    pub status: String,
    pub complete: bool,
    pub repaired: bool,
    pub stop_reason: Option<String>,
    pub torn: Option<String>,
    pub events: u64,
    pub events_per_api: BTreeMap<String, u64>,
    pub blob_files: u64,
    pub blob_stored_bytes: u64,
    pub blob_distinct_bytes: u64,
    pub blob_referenced_bytes: u64,
    /// Code object files in the archive.
    pub code_objects: u64,
    /// Code objects capture kept in the shared code store instead (the manifest's count).
    pub code_objects_in_store: u64,
    /// That store, as the capturing process named it.
    pub code_store: Option<String>,
    pub unreplayable_apis: Vec<hrr_archive::manifest::UnreplayableApi>,
    pub capture_failures: Vec<hrr_archive::manifest::CaptureFailure>,
    /// Whether capture counted the calls it does not model.
    pub unmodelled_coverage: hrr_archive::manifest::UnmodelledCoverage,
    /// The calls it does not model the program made (exemption as this replay's API
    /// table judges it: replay refuses the archive for any other).
    pub unmodelled_apis: Vec<hrr_archive::manifest::UnmodelledApi>,
    pub runtime: hrr_archive::manifest::RuntimeInfo,
    pub dropped_after_trailer: u64,
    pub dropped_after_stop: u64,
    /// The set-up a range capture left out because its range does not use it.
    pub pruned: Option<hrr_archive::manifest::Pruned>,
}

/// How this build's API table covers one known runtime surface (`api::coverage`): the
/// same for every archive, shown so a reader knows what a refusal by name means.
#[derive(Serialize)]
pub struct CoverageLine {
    pub library: String,
    pub list: String,
    pub modelled: usize,
    pub exempt: usize,
    pub refused: usize,
}

#[derive(Serialize)]
pub struct Info {
    pub archive: String,
    pub format_version: u32,
    pub tool_version: String,
    pub source_revision: String,
    pub complete: bool,
    pub processes: Vec<ProcessInfo>,
    pub warnings: Vec<String>,
    /// This build's coverage of each runtime surface it knows.
    pub coverage: Vec<CoverageLine>,
}

fn coverage() -> Vec<CoverageLine> {
    api::coverage::by_list()
        .into_iter()
        .map(|(l, s)| CoverageLine {
            library: l.library.to_string(),
            list: l.file.to_string(),
            modelled: s.modelled,
            exempt: s.exempt,
            refused: s.refused,
        })
        .collect()
}

pub fn info(a: &Archive) -> Info {
    let processes = a
        .processes
        .iter()
        .map(|p| {
            let mut per = BTreeMap::new();
            for e in &p.events {
                *per.entry(api::api_name(e.header.api_id)).or_insert(0u64) += 1;
            }
            let (referenced, distinct) = p.blob_references();
            let (files, stored, codes) = p.stored_files();
            ProcessInfo {
                pid: p.entry.pid,
                ppid: p.entry.ppid,
                status: p.status.label().into(),
                complete: p.is_complete(),
                repaired: p.manifest.repaired,
                stop_reason: p.manifest.stop_reason.clone(),
                torn: match &p.status {
                    hrr_archive::LogStatus::Truncated {
                        torn,
                        dropped_bytes,
                        ..
                    } => Some(format!(
                        "{torn}; {dropped_bytes} bytes after the last whole record"
                    )),
                    _ => None,
                },
                events: p.events.len() as u64,
                events_per_api: per,
                blob_files: files,
                blob_stored_bytes: stored,
                // Lengths come from the archive: a hostile one may overflow a plain sum.
                blob_distinct_bytes: distinct.iter().fold(0u64, |t, b| t.saturating_add(b.len)),
                blob_referenced_bytes: referenced,
                code_objects: codes,
                code_objects_in_store: p.manifest.code_objects_in_store,
                code_store: p.manifest.code_store.clone(),
                unreplayable_apis: p.manifest.unreplayable_apis.clone(),
                capture_failures: p.manifest.capture_failures.clone(),
                unmodelled_coverage: p.manifest.unmodelled_coverage.clone(),
                unmodelled_apis: unmodelled_apis(p),
                runtime: p.manifest.runtime.clone(),
                dropped_after_trailer: p.manifest.dropped_after_trailer,
                pruned: p.manifest.pruned.clone(),
                dropped_after_stop: p.manifest.dropped_after_stop,
            }
        })
        .collect();
    Info {
        archive: a.root.display().to_string(),
        format_version: a.manifest.format_version,
        tool_version: a.manifest.tool_version.clone(),
        source_revision: a.manifest.source_revision.clone(),
        complete: a.is_complete(),
        processes,
        warnings: a.warnings.clone(),
        coverage: coverage(),
    }
}

/// The manifest's unmodelled calls, plus any whose first-call record it lacks (a process
/// killed before its manifest was written), exemption judged by this replay's table.
fn unmodelled_apis(p: &hrr_archive::ProcessArchive) -> Vec<hrr_archive::manifest::UnmodelledApi> {
    let mut list = p.manifest.unmodelled_apis.clone();
    for c in crate::unmodelled::calls(p) {
        if !list.iter().any(|u| u.api == c.api) {
            list.push(hrr_archive::manifest::UnmodelledApi {
                api: c.api,
                library: c.library,
                count: c.count.unwrap_or(1),
                first_seq: Some(c.first_seq),
                exempt: None,
            });
        }
    }
    for u in &mut list {
        u.exempt = api::exempt_reason(&u.api).map(str::to_string);
    }
    list
}

/// `s` with every character that could act on a terminal written as an escape: C0 and
/// C1 controls and DEL (`\u{1b}`, `\n`, ...) and the bidirectional and zero-width
/// formatting characters (`\u{202e}`). Borrowed when there is none.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    fn acts(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
    }
    if !s.chars().any(acts) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if acts(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

pub fn render_info(i: &Info) -> String {
    use std::fmt::Write;
    let e = escape_controls;
    let mut s = String::new();
    let _ = writeln!(s, "archive        {}", e(&i.archive));
    let _ = writeln!(
        s,
        "format         version {} (written by hrr {} @ {})",
        i.format_version,
        e(&i.tool_version),
        e(&i.source_revision)
    );
    let _ = writeln!(
        s,
        "state          {}",
        if i.complete {
            "complete"
        } else {
            "NOT complete"
        }
    );
    let _ = writeln!(s, "processes      {}", i.processes.len());
    if i.processes.len() > 1 {
        let _ = writeln!(
            s,
            "\n  {:>8} {:>8} {:>11} {:>9} {:>7} {:>6}",
            "pid", "ppid", "status", "events", "blobs", "codes"
        );
        for p in &i.processes {
            let _ = writeln!(
                s,
                "  {:>8} {:>8} {:>11} {:>9} {:>7} {:>6}",
                p.pid,
                p.ppid,
                e(&p.status),
                p.events,
                p.blob_files,
                p.code_objects
            );
        }
    }
    for p in &i.processes {
        let _ = writeln!(
            s,
            "\npid {} (parent {}): {}{}",
            p.pid,
            p.ppid,
            e(&p.status),
            if p.repaired { ", repaired" } else { "" }
        );
        if let Some(t) = &p.torn {
            let _ = writeln!(s, "  torn           {}", e(t));
        }
        if let Some(r) = &p.stop_reason {
            let _ = writeln!(s, "  stopped        {}", e(r));
        }
        let rt = &p.runtime;
        let _ = writeln!(
            s,
            "  runtime        {} {} (driver {})",
            if rt.vendor.is_empty() {
                Cow::Borrowed("?")
            } else {
                e(&rt.vendor)
            },
            e(&rt.runtime_version),
            e(&rt.driver_version)
        );
        for d in &rt.devices {
            let _ = writeln!(
                s,
                "  device {}       {} ({})",
                d.index,
                e(&d.name),
                e(&d.arch)
            );
        }
        let _ = writeln!(s, "  events         {}", p.events);
        for (api, n) in &p.events_per_api {
            let _ = writeln!(s, "    {:<28} {n}", e(api));
        }
        let _ = writeln!(
            s,
            "  blobs          {} files, {} bytes stored, {} distinct bytes, {} bytes referenced (dedup saved {})",
            p.blob_files,
            p.blob_stored_bytes,
            p.blob_distinct_bytes,
            p.blob_referenced_bytes,
            p.blob_referenced_bytes.saturating_sub(p.blob_distinct_bytes)
        );
        match &p.code_store {
            Some(store) => {
                let _ = writeln!(
                    s,
                    "  code objects   {} in the archive, {} in the code store {}",
                    p.code_objects,
                    p.code_objects_in_store,
                    escape_controls(store)
                );
            }
            None => {
                let _ = writeln!(s, "  code objects   {}", p.code_objects);
            }
        }
        if let Some(pr) = &p.pruned {
            let _ = writeln!(
                s,
                "  range set-up   {} of {} code registrations and loads before the range left out (unused by it), with {} code objects ({} bytes)",
                pr.events, pr.candidates, pr.code_objects, pr.code_object_bytes
            );
        }
        if p.dropped_after_trailer + p.dropped_after_stop > 0 {
            let _ = writeln!(
                s,
                "  dropped        {} after the trailer, {} after capture stopped",
                p.dropped_after_trailer, p.dropped_after_stop
            );
        }
        if p.unreplayable_apis.is_empty() {
            let _ = writeln!(s, "  unreplayable   none");
        }
        for u in &p.unreplayable_apis {
            let _ = writeln!(
                s,
                "  unreplayable   {} x{}: {}",
                e(&u.api),
                u.count,
                e(&u.reason)
            );
        }
        use hrr_archive::manifest::UnmodelledCoverage as Cov;
        match &p.unmodelled_coverage {
            Cov::Measured { pass_throughs } if p.unmodelled_apis.is_empty() => {
                let _ = writeln!(
                    s,
                    "  unmodelled     none ({pass_throughs} APIs without a model were watched)"
                );
            }
            Cov::Measured { .. } => {}
            Cov::NotMeasured { reason } => {
                let _ = writeln!(s, "  unmodelled     NOT MEASURED: {}", e(reason));
            }
            Cov::NotRecorded => {
                let _ = writeln!(
                    s,
                    "  unmodelled     not recorded (captured before capture counted calls it does not model)"
                );
            }
        }
        for u in &p.unmodelled_apis {
            let _ = writeln!(
                s,
                "  unmodelled     {} ({}) x{}, first {}: {}",
                e(&u.api),
                e(&u.library),
                u.count,
                u.first_seq.map_or(
                    "call not recorded (made inside another call)".to_string(),
                    |q| format!("at seq {q}")
                ),
                match (&u.exempt, u.first_seq) {
                    (Some(why), _) => format!("exempt, {why}"),
                    (None, Some(_)) => "NOT exempt: replay refuses this archive".to_string(),
                    (None, None) =>
                        "not refused: only the runtime's own work called it".to_string(),
                }
            );
        }
        for f in &p.capture_failures {
            let _ = writeln!(
                s,
                "  capture failed seq {} {}: {}",
                f.seq,
                e(&f.api),
                e(&f.reason)
            );
        }
    }
    for c in &i.coverage {
        let summary = api::coverage::Summary {
            modelled: c.modelled,
            exempt: c.exempt,
            refused: c.refused,
        };
        let _ = writeln!(s, "coverage       {} ({}): {summary}", c.library, c.list);
    }
    for w in &i.warnings {
        let _ = writeln!(s, "warning: {}", e(w));
    }
    s
}

#[derive(Serialize)]
pub struct EventLine {
    pub pid: u32,
    pub seq: u64,
    pub tid: u32,
    pub timestamp_ns: u64,
    pub api: String,
    pub ret: i32,
    pub flags: u16,
    pub fields: BTreeMap<String, String>,
}

pub fn event_lines(a: &Archive) -> Vec<EventLine> {
    let mut out = Vec::new();
    for p in &a.processes {
        for e in &p.events {
            let fields = match Payload::parse(&e.payload) {
                Ok(pl) => pl
                    .iter()
                    .map(|f| {
                        let key = api::desc(e.header.api_id)
                            .and_then(|d| {
                                d.params
                                    .get((f.id as usize).wrapping_sub(1))
                                    .map(|p| p.name.to_string())
                            })
                            .unwrap_or_else(|| format!("f{}", f.id));
                        (key, f.render())
                    })
                    .collect(),
                Err(err) => BTreeMap::from([("error".to_string(), err.to_string())]),
            };
            out.push(EventLine {
                pid: p.entry.pid,
                seq: e.header.seq,
                tid: e.header.tid,
                timestamp_ns: e.header.timestamp_ns,
                api: api::api_name(e.header.api_id),
                ret: e.header.ret,
                flags: e.header.flags,
                fields,
            });
        }
    }
    out
}

/// One line per event, without timestamps and thread ids, so two captures diff cleanly.
pub fn render_event(e: &EventLine) -> String {
    let fields: Vec<String> = e
        .fields
        .iter()
        .map(|(k, v)| format!("{}={}", escape_controls(k), escape_controls(v)))
        .collect();
    format!(
        "{} {:>7} {:<24} ret={} {}",
        e.pid,
        e.seq,
        escape_controls(&e.api),
        e.ret,
        fields.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::escape_controls;

    #[test]
    fn control_and_direction_characters_are_escaped() {
        assert_eq!(escape_controls("sm_90"), "sm_90");
        assert!(matches!(
            escape_controls("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\u{1b}]0;x\u{7}b\r\n\t\u{9b}\u{7f}"),
            "a\\u{1b}]0;x\\u{7}b\\r\\n\\t\\u{9b}\\u{7f}"
        );
        assert_eq!(escape_controls("ab\u{202e}cd"), "ab\\u{202e}cd");
        // Other Unicode text is shown as it is.
        assert_eq!(escape_controls("Größe µs"), "Größe µs");
    }
}
