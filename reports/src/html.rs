//! `report.html`: the merged report as one self-contained page (inline CSS, no script, no
//! external file): a totals table per family, a case x family grid coloured by status
//! (each cell with the failure message on hover, a link to the case's details and links
//! to its log and replay result), and a details list of every case that did not pass.
//!
//! The page links only to files inside its own directory, so the directory can be
//! uploaded or copied as a whole. `gather` finds each case's logs and replay results next
//! to the `results.json` it came from: a report already inside the output directory (as
//! `report fetch` lays them out) is linked in place; any other report's logs and replay
//! JSON (not its archives) are copied under `cases/<suite>/<case>/attempt-N/`.
//! Every text from a report is escaped; the page has no script to trick.

mod files;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use files::{gather, CaseFiles, FileLink, COPY_LIMIT_BYTES};

use crate::merge::ExpectedShard;
use crate::result::{write_atomic, CaseResult, RunReport, Totals};
use crate::status::{RawOutcome, Status};

/// The page's file name in the output directory.
pub const FILE_NAME: &str = "report.html";

/// Why the page or the files it links to could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> HtmlError + '_ {
    move |source| HtmlError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Text or attribute value, escaped for HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A fragment id from a family and a case: letters, digits and `-` as they are, every
/// other byte `_XX`, the two joined by `.` (so no two cases share one).
fn anchor(family: &str, case: &str) -> String {
    let enc = |s: &str| {
        let mut out = String::new();
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' {
                out.push(b as char);
            } else {
                let _ = write!(out, "_{b:02X}");
            }
        }
        out
    };
    format!("case.{}.{}", enc(family), enc(case))
}

/// A status's cell colours, `(background, text)` as `#rrggbb`: each status its own
/// background (a status that fails the run is also bold, by the `unexpected` class).
pub fn colours(s: Status) -> (&'static str, &'static str) {
    match s {
        Status::Pass => ("#c9f0d1", "#0b4d1b"),
        Status::Fail => ("#ffc4c4", "#7a0000"),
        Status::Crash => ("#ff9e9e", "#5c0000"),
        Status::Timeout => ("#ffc89e", "#6b2a00"),
        Status::UnexpectedPass => ("#f4c6f0", "#5e0a56"),
        Status::Flake => ("#fff0a3", "#5c4a00"),
        Status::ExpectedFail => ("#d6e2ff", "#1d3a80"),
        Status::Skip => ("#ececec", "#4a4a4a"),
        Status::CompiledNotRun => ("#cdeff3", "#0b4f57"),
        Status::NotRun => ("#57606a", "#ffffff"),
        Status::StandIn => ("#e6dcff", "#3b1f80"),
    }
}

const STYLE: &str = "\
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em;color:#1f2328;background:#fff}
h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.2em;margin:1.5em 0 .5em}
.verdict{display:inline-block;padding:.1em .6em;border-radius:4px;font-weight:700;color:#fff}
.verdict.pass{background:#1a7f37}.verdict.fail{background:#cf222e}.verdict.no-gpu{background:#6e7781}
.meta{color:#57606a;margin:.2em 0}
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:.25em .5em}
th{background:#f6f8fa;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
table.grid th.case{position:sticky;left:0;z-index:1;font-weight:600;white-space:nowrap}
table.grid thead th{position:sticky;top:0;z-index:2}
table.grid td.cell{min-width:7em;vertical-align:top}
td.cell .status{display:block}td.cell a.status{color:inherit;text-decoration:none}
td.cell a.status:hover{text-decoration:underline}
td.cell .files{display:block;font-size:.8em}td.cell .files a{color:inherit}
td.cell .nolog{display:block;font-size:.8em;opacity:.7}
td.zero{color:#8c959f}
.absent{background:repeating-linear-gradient(45deg,#fff,#fff 4px,#f3f3f3 4px,#f3f3f3 8px);color:#8c959f}
.unexpected{font-weight:700}
.legend span{display:inline-block;margin:0 .4em .3em 0;padding:.05em .5em;border-radius:3px;border:1px solid #d0d7de}
.detail{border:1px solid #d0d7de;border-radius:6px;padding:.5em .8em;margin:.6em 0}
.detail:target{outline:3px solid #0969da}
.detail h3{margin:0 0 .3em;font-size:1em}
.detail pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.4em;margin:.3em 0;font-size:.9em}
";

/// Writes `report.html` into `out_dir` for the merged report, with its case files
/// gathered from `sources` (see `gather`) and the expected shards that sent no results
/// (`missing`). Returns the page's path.
pub fn write_report(
    out_dir: &Path,
    merged: &RunReport,
    sources: &[(&Path, &RunReport)],
    missing: &[ExpectedShard],
) -> Result<PathBuf, HtmlError> {
    let files = gather(out_dir, sources)?;
    let page = render(merged, &files, missing);
    let path = out_dir.join(FILE_NAME);
    write_atomic(&path, page.as_bytes()).map_err(io_err(&path))?;
    Ok(path)
}

/// Whether `c` is a `not-run` entry a merge made for a shard of `missing` (its family
/// sent no results for it): shown as one line per shard, not as a card per case.
fn of_missing_shard(c: &CaseResult, missing: &[ExpectedShard]) -> bool {
    c.status == Status::NotRun && missing.iter().any(|s| s.family == c.family)
}

/// The fragment id of a missing shard's line.
fn shard_anchor(s: &ExpectedShard) -> String {
    anchor(&s.family, &format!("shard {}", s.label()))
}

/// The page for a merged report; `missing`: the expected shards that sent no results.
pub fn render(r: &RunReport, files: &CaseFiles, missing: &[ExpectedShard]) -> String {
    let mut by_family: BTreeMap<&str, BTreeMap<&str, &CaseResult>> = BTreeMap::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for c in &r.cases {
        by_family
            .entry(c.family.as_str())
            .or_default()
            .insert(c.case.as_str(), c);
        names.insert(c.case.as_str());
    }
    for f in &r.families {
        by_family.entry(f.as_str()).or_default();
    }
    let mut o = String::new();
    let verdict = crate::markdown::Verdict::of(&r.totals);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>hrr-harness: {} {}</title>\n<style>\n{STYLE}",
        verdict.words(),
        escape(&totals_text(&r.totals))
    );
    for s in Status::ALL {
        let (background, text) = colours(s);
        let _ = writeln!(
            o,
            ".st-{}{{background:{background};color:{text}}}",
            s.as_str()
        );
    }
    o.push_str("</style>\n</head>\n<body>\n");
    header(&mut o, r, verdict);
    family_table(&mut o, &by_family, missing);
    grid(&mut o, &by_family, &names, files, missing);
    missing_shards(&mut o, r, missing);
    details(&mut o, r, files, missing);
    o.push_str("</body>\n</html>\n");
    o
}

fn totals_text(t: &Totals) -> String {
    let parts: Vec<String> = Status::ALL
        .iter()
        .filter(|s| t.count(**s) > 0)
        .map(|s| format!("{} {s}", t.count(*s)))
        .collect();
    format!("{} cases: {}", t.cases, parts.join(", "))
}

fn header(o: &mut String, r: &RunReport, verdict: crate::markdown::Verdict) {
    let _ = writeln!(
        o,
        "<h1>hrr-harness: results by GPU family</h1>\n\
         <p><span class=\"verdict {}\" id=\"verdict\">{}</span> {}</p>",
        verdict.class(),
        verdict.words(),
        escape(&totals_text(&r.totals))
    );
    let started = chrono::DateTime::from_timestamp(r.started_unix as i64, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "<p class=\"meta\">revision <code>{}</code> · hrr-harness {} · started {} · {:.1} s of runner time</p>",
        escape(&r.source_revision),
        escape(&r.tool_version),
        escape(&started),
        r.duration_s
    );
    if !r.gpus.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"meta\">GPUs: {}</p>",
            escape(&r.gpus.join("; "))
        );
    }
    o.push_str("<p class=\"legend\">");
    for s in Status::ALL {
        let _ = write!(o, "<span class=\"st-{0}\">{0}</span>", s.as_str());
    }
    o.push_str("<span class=\"absent\">not in this family</span></p>\n");
}

/// A family's shards as `ran/expected`: the shard labels (`K/N`) of its cases that ran,
/// against N (from those labels or the missing shards'), with the missing ones named.
fn shards_text(
    family: &str,
    cases: &BTreeMap<&str, &CaseResult>,
    missing: &[ExpectedShard],
) -> String {
    let gone: Vec<&ExpectedShard> = missing.iter().filter(|s| s.family == family).collect();
    let ran: BTreeSet<&str> = cases
        .values()
        .filter(|c| !of_missing_shard(c, missing))
        .map(|c| c.shard.as_str())
        .collect();
    let total = ran
        .iter()
        .filter_map(|l| l.split_once('/').and_then(|(_, n)| n.parse::<u32>().ok()))
        .chain(gone.iter().map(|s| s.count))
        .max();
    let mut text = match total {
        Some(n) => format!("{}/{n}", ran.len()),
        None => ran.iter().copied().collect::<Vec<_>>().join(", "),
    };
    if !gone.is_empty() {
        let names: Vec<String> = gone.iter().map(|s| s.label()).collect();
        let _ = write!(text, " (no results: {})", names.join(", "));
    }
    text
}

fn family_table(
    o: &mut String,
    by_family: &BTreeMap<&str, BTreeMap<&str, &CaseResult>>,
    missing: &[ExpectedShard],
) {
    let present: Vec<Status> = Status::ALL
        .into_iter()
        .filter(|s| {
            by_family
                .values()
                .any(|cases| cases.values().any(|c| c.status == *s))
        })
        .collect();
    o.push_str("<h2>Families</h2>\n<table class=\"families\">\n<thead><tr><th>family</th><th>shards</th><th>cases</th>");
    for s in &present {
        let _ = write!(o, "<th class=\"st-{0}\">{0}</th>", s.as_str());
    }
    o.push_str("<th>unexpected</th></tr></thead>\n<tbody>\n");
    for (fam, cases) in by_family {
        let t = Totals::of(cases.values().copied());
        let _ = write!(
            o,
            "<tr data-family=\"{0}\"><th>{0}</th><td class=\"shards\">{1}</td><td class=\"num\">{2}</td>",
            escape(fam),
            escape(&shards_text(fam, cases, missing)),
            t.cases
        );
        for s in &present {
            let n = t.count(*s);
            let _ = write!(
                o,
                "<td class=\"num{}\" data-status=\"{}\">{n}</td>",
                if n == 0 { " zero" } else { "" },
                s.as_str()
            );
        }
        let _ = writeln!(
            o,
            "<td class=\"num{}\">{}</td></tr>",
            if t.unexpected > 0 { " unexpected" } else { "" },
            t.unexpected
        );
    }
    o.push_str("</tbody>\n</table>\n");
}

fn grid(
    o: &mut String,
    by_family: &BTreeMap<&str, BTreeMap<&str, &CaseResult>>,
    names: &BTreeSet<&str>,
    files: &CaseFiles,
    missing: &[ExpectedShard],
) {
    o.push_str("<h2>Cases</h2>\n<table class=\"grid\">\n<thead><tr><th class=\"case\">case</th>");
    for fam in by_family.keys() {
        let _ = write!(
            o,
            "<th class=\"family\" data-family=\"{0}\">{0}</th>",
            escape(fam)
        );
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for name in names {
        let _ = write!(
            o,
            "<tr data-case=\"{0}\"><th class=\"case\">{0}</th>",
            escape(name)
        );
        for (fam, cases) in by_family {
            match cases.get(name) {
                Some(c) => cell(o, c, files, missing),
                None => {
                    let _ = write!(
                        o,
                        "<td class=\"cell absent\" data-family=\"{}\" data-case=\"{}\">—</td>",
                        escape(fam),
                        escape(name)
                    );
                }
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
}

fn cell(o: &mut String, c: &CaseResult, files: &CaseFiles, missing: &[ExpectedShard]) {
    let st = c.status.as_str();
    let _ = write!(
        o,
        "<td class=\"cell st-{st}{}\" data-family=\"{}\" data-case=\"{}\" data-status=\"{st}\" title=\"{}\">",
        if c.status.is_unexpected() { " unexpected" } else { "" },
        escape(&c.family),
        escape(&c.case),
        escape(&c.message)
    );
    let shard = missing
        .iter()
        .find(|s| of_missing_shard(c, missing) && s.family == c.family);
    if c.status == Status::Pass {
        let _ = write!(o, "<span class=\"status\">{st}</span>");
    } else if let Some(s) = shard {
        // The shard's one line says why; the case has no details of its own.
        let _ = write!(
            o,
            "<a class=\"status\" href=\"#{}\">{st}</a>",
            shard_anchor(s)
        );
    } else {
        let _ = write!(
            o,
            "<a class=\"status\" href=\"#{}\">{st}</a>",
            anchor(&c.family, &c.case)
        );
    }
    let log = files.log(&c.family, &c.case);
    let replay = files.replay(&c.family, &c.case);
    if log.is_none() && replay.is_none() {
        o.push_str("<span class=\"nolog\">no log</span>");
    } else {
        o.push_str("<span class=\"files\">");
        let links: Vec<String> = [("log", log), ("replay", replay)]
            .into_iter()
            .filter_map(|(label, f)| {
                f.map(|f| {
                    format!(
                        "<a class=\"{label}\" href=\"{}\" title=\"attempt {}: {}\">{label}</a>",
                        escape(&f.href),
                        f.attempt,
                        escape(&f.name)
                    )
                })
            })
            .collect();
        o.push_str(&links.join(" · "));
        o.push_str("</span>");
    }
    o.push_str("</td>");
}

fn outcome(o: RawOutcome) -> &'static str {
    match o {
        RawOutcome::Pass => "pass",
        RawOutcome::Fail => "fail",
        RawOutcome::Crash => "crash",
        RawOutcome::Timeout => "timeout",
    }
}

/// One line per expected shard that sent no results: its family, its label and how many
/// of the family's cases therefore did not run.
fn missing_shards(o: &mut String, r: &RunReport, missing: &[ExpectedShard]) {
    if missing.is_empty() {
        return;
    }
    o.push_str("<h2>Shards that sent no results</h2>\n<ul class=\"missing\">\n");
    for s in missing {
        let not_run = r
            .cases
            .iter()
            .filter(|c| c.family == s.family && of_missing_shard(c, missing))
            .count();
        let _ = writeln!(
            o,
            "<li class=\"st-not-run\" id=\"{}\" data-family=\"{}\" data-shard=\"{}\">{} shard {} sent no results.json: {} of its family's cases did not run</li>",
            shard_anchor(s),
            escape(&s.family),
            escape(&s.label()),
            escape(&s.family),
            escape(&s.label()),
            not_run
        );
    }
    o.push_str("</ul>\n");
}

fn details(o: &mut String, r: &RunReport, files: &CaseFiles, missing: &[ExpectedShard]) {
    // Surprises first, then the rest, each by family and case; a missing shard's cases
    // are its one line above.
    let mut shown: Vec<&CaseResult> = r
        .cases
        .iter()
        .filter(|c| c.status != Status::Pass && !of_missing_shard(c, missing))
        .collect();
    shown.sort_by_key(|c| (!c.status.is_unexpected(), &c.family, &c.case));
    if shown.is_empty() {
        return;
    }
    o.push_str("<h2>Cases that did not pass</h2>\n");
    for c in shown {
        let st = c.status.as_str();
        let _ = writeln!(
            o,
            "<div class=\"detail\" id=\"{}\" data-family=\"{}\" data-case=\"{}\">\n\
             <h3><span class=\"st-{st}\">&nbsp;{st}&nbsp;</span> {} · {} (shard {}, {:.1} s)</h3>\n\
             <pre class=\"message\">{}</pre>",
            anchor(&c.family, &c.case),
            escape(&c.family),
            escape(&c.case),
            escape(&c.case),
            escape(&c.family),
            escape(&c.shard),
            c.duration_s,
            escape(&c.message)
        );
        for (i, a) in c.attempts.iter().enumerate() {
            let n = i as u32 + 1;
            let _ = write!(
                o,
                "<p>attempt {n}: {}, {:.1} s: {}",
                outcome(a.outcome),
                a.duration_s,
                escape(&a.message)
            );
            let links: Vec<String> = files
                .of(&c.family, &c.case)
                .iter()
                .filter(|f| f.attempt == n)
                .map(|f| format!("<a href=\"{}\">{}</a>", escape(&f.href), escape(&f.name)))
                .collect();
            if links.is_empty() {
                o.push_str(" · <span class=\"nolog\">no log</span>");
            } else {
                let _ = write!(o, " · {}", links.join(" "));
            }
            o.push_str("</p>\n");
            let failed: Vec<String> = a
                .checks
                .iter()
                .filter(|k| !k.passed)
                .map(|k| format!("{}: {}", k.name, k.detail))
                .collect();
            if !failed.is_empty() {
                let _ = writeln!(o, "<pre>{}</pre>", escape(&failed.join("\n")));
            }
        }
        if let Some(at) = files.archives_at(&c.family, &c.case) {
            let _ = writeln!(
                o,
                "<p class=\"meta\">archives (not copied): <code>{}</code></p>",
                escape(&at.display().to_string())
            );
        }
        o.push_str("</div>\n");
    }
}
