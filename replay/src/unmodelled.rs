//! Calls the captured program made that capture does not model: which a process made
//! (its `UNMODELLED_CALL` records, with the manifest's counts), which of them the API
//! table exempts, and the refusal that names the others. Replay decides exemption by its
//! own table, not by what capture wrote: an API exempted or modelled later is judged by
//! the replay that reads the archive.

use std::fmt;

use hrr_archive::api::private_runtime::is_private_runtime;
use hrr_archive::api::{exempt_reason, fid, semantic};
use hrr_archive::payload::Payload;
use hrr_archive::ProcessArchive;
use hrr_contract::{Failure, FailureKind, UnmodelledCall};

/// The unmodelled APIs process `p` called, by first sequence id: one per recorded first
/// call, with the manifest's count where it has one (a process killed before its
/// manifest was last written may lack it).
pub fn calls(p: &ProcessArchive) -> Vec<UnmodelledCall> {
    let mut out: Vec<UnmodelledCall> = Vec::new();
    for ev in &p.events {
        if ev.header.api_id != semantic::UNMODELLED_CALL {
            continue;
        }
        let Ok(pl) = Payload::parse(&ev.payload) else {
            continue;
        };
        let api = pl.str(fid::API_NAME, "api").unwrap_or("?").to_string();
        if out.iter().any(|c| c.api == api) {
            continue;
        }
        let listed = p.manifest.unmodelled_apis.iter().find(|u| u.api == api);
        out.push(UnmodelledCall {
            pid: p.entry.pid,
            library: pl.str(fid::LIBRARY, "library").unwrap_or("?").to_string(),
            count: listed.map(|u| u.count),
            // A library with a private runtime: the checks it may have affected start
            // where capture says (its work has no place in the log).
            first_seq: pl.u64(fid::SINCE_SEQ, "since seq").unwrap_or(ev.header.seq),
            exempt: exempt_reason(&api).map(str::to_string),
            api,
        });
    }
    // Listed with a first call whose record the log lost (torn, repaired): still named.
    for u in &p.manifest.unmodelled_apis {
        if let Some(seq) = u.first_seq {
            if !out.iter().any(|c| c.api == u.api) {
                out.push(UnmodelledCall {
                    pid: p.entry.pid,
                    api: u.api.clone(),
                    library: u.library.clone(),
                    count: Some(u.count),
                    first_seq: if is_private_runtime(&u.api) { 0 } else { seq },
                    exempt: exempt_reason(&u.api).map(str::to_string),
                });
            }
        }
    }
    out.sort_by_key(|c| c.first_seq);
    out
}

/// The first sequence id of a call replay refuses (not exempt) in these calls.
pub fn first_refused(calls: &[UnmodelledCall]) -> Option<u64> {
    calls
        .iter()
        .filter(|c| c.exempt.is_none())
        .map(|c| c.first_seq)
        .min()
}

/// Replay's refusal of an archive whose program called APIs capture does not model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    /// The calls refused (none exempt), in the order of their first call.
    pub calls: Vec<UnmodelledCall>,
}

/// `API (library) xCOUNT, first at pid P seq S`.
fn describe(c: &UnmodelledCall) -> String {
    if is_private_runtime(&c.api) {
        return format!(
            "{} ({}): its GPU code runs through its own copy of the runtime, so its launches and copies bypass the calls capture records; every check of pid {} from seq {} on may be affected",
            c.api, c.library, c.pid, c.first_seq
        );
    }
    let count = c.count.map_or("at least 1 call".to_string(), |n| {
        format!("{n} call{}", if n == 1 { "" } else { "s" })
    });
    format!(
        "{} ({}): {count}, first at pid {} seq {}",
        c.api, c.library, c.pid, c.first_seq
    )
}

const REMEDY: &str = "capture passed these calls through without recording what they did, so a replay could differ for a reason it cannot name; model them in the API table (registry/src/lib.rs), or exempt them there (api::EXEMPT) if they cannot affect results, and capture again; --continue-on-error replays anyway and marks every check after the first such call";

const LIBRARY_REMEDY: &str = "capture sees only what passes through the shared runtime; link such a library against the shared runtime (nvcc -cudart shared) or keep it out of the captured program, and capture again; --continue-on-error replays anyway and marks every check after the library could first have run";

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (libs, apis): (Vec<&UnmodelledCall>, Vec<&UnmodelledCall>) =
            self.calls.iter().partition(|c| is_private_runtime(&c.api));
        let mut parts = Vec::new();
        if !apis.is_empty() {
            let names: Vec<String> = apis.iter().map(|c| describe(c)).collect();
            parts.push(format!(
                "the program called {} API{} capture does not model: {}. {REMEDY}",
                apis.len(),
                if apis.len() == 1 { "" } else { "s" },
                names.join("; ")
            ));
        }
        if !libs.is_empty() {
            let names: Vec<String> = libs.iter().map(|c| describe(c)).collect();
            parts.push(format!(
                "the program loaded {} librar{} with a private GPU runtime: {}. {LIBRARY_REMEDY}",
                libs.len(),
                if libs.len() == 1 { "y" } else { "ies" },
                names.join("; ")
            ));
        }
        write!(f, "{}", parts.join(" "))
    }
}

impl Refusal {
    /// The refusal of `calls`, if any of them is not exempt.
    pub fn of(calls: &[UnmodelledCall]) -> Option<Refusal> {
        let refused: Vec<UnmodelledCall> = calls
            .iter()
            .filter(|c| c.exempt.is_none())
            .cloned()
            .collect();
        (!refused.is_empty()).then_some(Refusal { calls: refused })
    }

    /// One failure per refused API, at its first call.
    pub fn failures(&self) -> Vec<Failure> {
        self.calls
            .iter()
            .map(|c| {
                Failure::event(
                    c.pid,
                    c.first_seq,
                    c.api.clone(),
                    FailureKind::Unmodelled,
                    format!("not modelled by capture: {}", describe(c)),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(api: &str, count: Option<u64>, seq: u64) -> UnmodelledCall {
        UnmodelledCall {
            pid: 7,
            api: api.into(),
            library: "libcudart.so.13".into(),
            count,
            first_seq: seq,
            exempt: exempt_reason(api).map(str::to_string),
        }
    }

    #[test]
    fn the_refusal_names_apis_counts_first_calls_and_the_remedy() {
        let calls = [
            call("cudaGetErrorString", Some(4), 2),
            call("cudaGraphicsMapResources", Some(3), 9),
            call("cudaGraphicsUnmapResources", None, 12),
        ];
        assert_eq!(first_refused(&calls), Some(9));
        let r = Refusal::of(&calls).unwrap();
        let text = r.to_string();
        assert!(text.starts_with("the program called 2 APIs capture does not model: cudaGraphicsMapResources (libcudart.so.13): 3 calls, first at pid 7 seq 9; cudaGraphicsUnmapResources (libcudart.so.13): at least 1 call, first at pid 7 seq 12. "), "{text}");
        assert!(text.contains("model them in the API table"), "{text}");
        assert!(text.contains("--continue-on-error"), "{text}");
        assert!(!text.contains("cudaGetErrorString"), "exempt: {text}");
        let f = r.failures();
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].kind.clone(), f[0].seq, f[0].api.as_str()),
            (FailureKind::Unmodelled, 9, "cudaGraphicsMapResources")
        );
        assert!(Refusal::of(&calls[..1]).is_none(), "only exempt calls");
        assert_eq!(first_refused(&calls[..1]), None);
    }

    #[test]
    fn a_library_with_a_private_runtime_is_named_with_its_own_remedy() {
        let lib = UnmodelledCall {
            pid: 7,
            api: hrr_archive::api::private_runtime::api_name("libcublas.so.13", "CUDA"),
            library: "/opt/lib/libcublas.so.13".into(),
            count: Some(1),
            first_seq: 0,
            exempt: exempt_reason("private runtime: libcublas.so.13 (CUDA)").map(str::to_string),
        };
        assert_eq!(lib.exempt, None, "never exempt");
        let calls = [call("cudaGraphicsMapResources", Some(3), 9), lib];
        assert_eq!(first_refused(&calls), Some(0), "every check marked");
        let text = Refusal::of(&calls).unwrap().to_string();
        assert!(
            text.starts_with(
                "the program called 1 API capture does not model: cudaGraphicsMapResources"
            ),
            "{text}"
        );
        assert!(text.contains("the program loaded 1 library with a private GPU runtime: private runtime: libcublas.so.13 (CUDA) (/opt/lib/libcublas.so.13): its GPU code runs through its own copy of the runtime"), "{text}");
        assert!(text.contains("nvcc -cudart shared"), "{text}");
    }
}
