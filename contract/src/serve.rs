//! `hrr-replay --serve`'s protocol: one `ServeRequest` a line on its stdin, one
//! `ServeAnswer` a line on its stdout.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::exit::ReplayExit;

/// One request: archives replayed in order in the service's process, like
/// `hrr-replay ARCHIVES... [--json FILE] [--continue-on-error]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServeRequest {
    pub archives: Vec<PathBuf>,
    /// Where the JSON result(s) go: a file, "-" for the log, or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    /// Where the summaries and warnings go (the service's stderr when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<PathBuf>,
    #[serde(default)]
    pub continue_on_error: bool,
    /// Reader limits; each one left out keeps replay's default for this machine.
    #[serde(default, skip_serializing_if = "LimitOverrides::is_empty")]
    pub limits: LimitOverrides,
    /// `--stability-runs N`: replay each archive N times and exclude the bytes that
    /// differ between the replays; left out (0 or 1) replays once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability_runs: Option<u32>,
    /// `--sync-watchdog SECONDS`: one call running this long ends the service, naming
    /// the event in its log (a hang becomes a named failure before the case's timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_watchdog_s: Option<u64>,
    /// `--compare C`: what a D2H check may match by besides byte equality (a float
    /// tolerance, or elements in any order); left out, byte-exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<crate::Comparison>,
    /// `--replace-kernel NAME=PATH`, each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replace_kernels: Vec<crate::KernelReplacement>,
}

/// Reader limits a request sets (hrr-archive's `Limits`, each optional); an unknown
/// name is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_file_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_host_bytes: Option<u64>,
}

impl LimitOverrides {
    pub fn is_empty(&self) -> bool {
        *self == LimitOverrides::default()
    }
}

/// `hrr-replay --serve`'s answer to a request it replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServeReply {
    /// The exit code `hrr-replay ARCHIVES...` would have given.
    pub exit_code: ReplayExit,
    /// False: the device is unusable after this request; the service has ended.
    pub healthy: bool,
}

/// One line of `hrr-replay --serve`'s output: a reply, or why a request was refused
/// (unreadable, or its log could not be created); the service goes on after a refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServeAnswer {
    Replied(ServeReply),
    Refused { error: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serve_answers_keep_their_shape() {
        let r = ServeAnswer::Replied(ServeReply {
            exit_code: ReplayExit::Fail,
            healthy: true,
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v, json!({"exit_code": 1, "healthy": true}));
        assert_eq!(serde_json::from_value::<ServeAnswer>(v).unwrap(), r);
        let refused: ServeAnswer = serde_json::from_str(r#"{"error": "bad request: x"}"#).unwrap();
        assert_eq!(
            refused,
            ServeAnswer::Refused {
                error: "bad request: x".into()
            }
        );
        assert!(
            serde_json::from_str::<ServeAnswer>(r#"{"exit_code": 9, "healthy": true}"#).is_err()
        );
    }

    #[test]
    fn requests_keep_their_shape_and_refuse_unknown_limits() {
        let r = ServeRequest {
            archives: vec!["/a".into(), "/b".into()],
            json: Some("/o/replay.json".into()),
            log: Some("/o/replay.log".into()),
            continue_on_error: true,
            limits: LimitOverrides::default(),
            stability_runs: None,
            sync_watchdog_s: None,
            comparison: None,
            replace_kernels: vec![],
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            json!({"archives": ["/a", "/b"], "json": "/o/replay.json",
                   "log": "/o/replay.log", "continue_on_error": true})
        );
        assert_eq!(serde_json::from_value::<ServeRequest>(v).unwrap(), r);
        // A declared comparison travels in the flag's spelling.
        let with = ServeRequest {
            comparison: Some("f64:ulps=4".parse().unwrap()),
            ..r.clone()
        };
        let v = serde_json::to_value(&with).unwrap();
        assert_eq!(v["comparison"], json!("f64:ulps=4"));
        assert_eq!(serde_json::from_value::<ServeRequest>(v).unwrap(), with);
        let r: ServeRequest =
            serde_json::from_str(r#"{"archives": ["/a"], "limits": {"max_events": 5}}"#).unwrap();
        assert_eq!(
            (
                r.limits.max_events,
                r.limits.max_file_bytes,
                r.continue_on_error
            ),
            (Some(5), None, false)
        );
        assert_eq!(r.stability_runs, None);
        let r: ServeRequest =
            serde_json::from_str(r#"{"archives": ["/a"], "stability_runs": 3}"#).unwrap();
        assert_eq!(r.stability_runs, Some(3));
        assert!(serde_json::from_str::<ServeRequest>(
            r#"{"archives": [], "limits": {"max_bytes": 5}}"#
        )
        .is_err());
    }
}
