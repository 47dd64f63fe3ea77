//! Markdown summaries sized for GitHub's step summary (kept under 64 KiB): a run's table
//! of cases, and after a merge, a table of families x statuses with the failing cases.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::merge::ExpectedShard;
use crate::result::{CaseResult, RunReport, Totals};
use crate::status::Status;

/// GitHub refuses step summaries over 1 MiB and its reporters cap at 65,535 bytes; we stay
/// under this.
pub const LIMIT_BYTES: usize = 60 * 1024;

fn cell(s: &str) -> String {
    let one_line = s.lines().next().unwrap_or("");
    let mut t: String = one_line.replace('|', "\\|");
    if t.len() > 300 {
        let mut cut = 300;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
        t.push('…');
    }
    t
}

fn totals_line(t: &Totals) -> String {
    let parts: Vec<String> = Status::ALL
        .iter()
        .filter(|s| t.count(**s) > 0)
        .map(|s| format!("{} {}", t.count(*s), s))
        .collect();
    format!("{} cases: {}", t.cases, parts.join(", "))
}

/// The verdict of a report in words (`Verdict::of`): summary.md, the run's last line and
/// report.html's badge and title all say it this way.
pub fn verdict(t: &Totals) -> &'static str {
    Verdict::of(t).words()
}

/// One verdict for a report, computed once from its totals: FAIL on any unexpected
/// status; else COMPILED, NOT RUN when GPU cases were compiled only, STAND-IN, NO GPU
/// when they ran against the stand-in runtime (never PASS without a GPU: issue 25); else
/// PASS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    CompiledNotRun,
    StandIn,
}

impl Verdict {
    pub fn of(t: &Totals) -> Verdict {
        if t.unexpected > 0 {
            Verdict::Fail
        } else if t.count(Status::CompiledNotRun) > 0 {
            Verdict::CompiledNotRun
        } else if t.count(Status::StandIn) > 0 {
            Verdict::StandIn
        } else {
            Verdict::Pass
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::CompiledNotRun => "COMPILED, NOT RUN",
            Verdict::StandIn => "STAND-IN, NO GPU",
        }
    }

    /// The badge's CSS class in report.html: green, red, or grey for a run no GPU ran.
    pub fn class(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::CompiledNotRun | Verdict::StandIn => "no-gpu",
        }
    }
}

fn icon(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅",
        Status::CompiledNotRun => "🔨",
        Status::StandIn => "🧪",
        Status::ExpectedFail | Status::Skip => "➖",
        Status::Flake => "⚠️",
        _ => "❌",
    }
}

/// Appends rows while they fit; notes how many were left out.
fn push_rows(out: &mut String, rows: &[String], footer_reserve: usize) {
    for (i, r) in rows.iter().enumerate() {
        if out.len() + r.len() + footer_reserve > LIMIT_BYTES {
            let _ = writeln!(
                out,
                "\n_{} more rows left out to stay under GitHub's summary limit; results.json has them all._",
                rows.len() - i
            );
            return;
        }
        out.push_str(r);
    }
}

/// The summary of one run (one family and shard).
pub fn run_summary(r: &RunReport) -> String {
    let mut out = String::new();
    let fam = r.families.join(", ");
    let _ = writeln!(
        out,
        "## hrr-harness: {fam}{}\n",
        if r.shard.is_empty() || r.shard == "1/1" {
            String::new()
        } else {
            format!(" (shard {})", r.shard)
        }
    );
    let _ = writeln!(
        out,
        "**{}**: {}\n",
        verdict(&r.totals),
        totals_line(&r.totals)
    );
    let _ = writeln!(
        out,
        "GPUs: {}  \nrevision `{}`, {:.1} s\n",
        if r.gpus.is_empty() {
            "none".into()
        } else {
            r.gpus.join("; ")
        },
        r.source_revision,
        r.duration_s
    );
    let mut cases: Vec<&CaseResult> = r.cases.iter().collect();
    // Surprises first, then the rest by name.
    cases.sort_by_key(|c| {
        (
            !c.status.is_unexpected(),
            c.status == Status::Pass,
            c.case.clone(),
        )
    });
    out.push_str("| case | status | time | detail |\n| --- | --- | ---: | --- |\n");
    let rows: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "| {} | {} {} | {:.1} s | {} |\n",
                cell(&c.case),
                icon(c.status),
                c.status,
                c.duration_s,
                cell(&c.message)
            )
        })
        .collect();
    push_rows(&mut out, &rows, 200);
    out
}

/// The merged summary: one row per family with counts per status and its failing cases.
pub fn merged_summary(r: &RunReport) -> String {
    let mut by_family: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for c in &r.cases {
        by_family.entry(c.family.as_str()).or_default().push(c);
    }
    let mut out = String::new();
    let _ = writeln!(out, "## hrr-harness: results by GPU family\n");
    let _ = writeln!(
        out,
        "**{}**: {}\n",
        verdict(&r.totals),
        totals_line(&r.totals)
    );
    out.push_str("| family | cases | pass | fail | skip | other | failing cases |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
    let mut rows = Vec::new();
    let mut sums = [0u64; 5];
    for (fam, cases) in &by_family {
        let t = Totals::of(cases.iter().copied());
        let pass = t.count(Status::Pass);
        let fail = t.unexpected;
        let skip = t.count(Status::Skip) + t.count(Status::ExpectedFail);
        let other = t.cases - pass - fail - skip;
        let mut failing: Vec<&str> = cases
            .iter()
            .filter(|c| c.status.is_unexpected())
            .map(|c| c.case.as_str())
            .collect();
        failing.sort();
        failing.dedup();
        for (i, v) in [t.cases, pass, fail, skip, other].iter().enumerate() {
            sums[i] += v;
        }
        rows.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            cell(fam),
            t.cases,
            pass,
            fail,
            skip,
            other,
            if failing.is_empty() {
                "".into()
            } else {
                cell(&failing.join(", "))
            }
        ));
    }
    rows.push(format!(
        "| **total** | {} | {} | {} | {} | {} | |\n",
        sums[0], sums[1], sums[2], sums[3], sums[4]
    ));
    push_rows(&mut out, &rows, 200);
    out.push_str("\n_other: flakes (passed on a re-run) and compiled-not-run (compile-only: built, no GPU used). fail includes not-run (a shard that sent no results). skip includes expected failures._\n");
    out
}

/// The lines a merge adds when expected shards sent no results (empty when none did).
pub fn missing_shards(missing: &[ExpectedShard]) -> String {
    if missing.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n**Missing: {} expected shard(s) sent no results**; their cases are counted as not-run:\n\n",
        missing.len()
    );
    for s in missing {
        let _ = writeln!(out, "- {} shard {}", cell(&s.family), s.label());
    }
    out
}
