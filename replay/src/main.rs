//! hrr-replay: replays an hrr archive on a GPU and checks every device-to-host result
//! byte for byte; `--info`, `--events`, `--repair` and `--version` need no GPU. Several
//! archives given at once are replayed one after another in this one process, so the
//! GPU runtime's start-up is paid once (the harness replays a case's archive and its
//! edited copy this way).
//!
//! Exit codes: 0 pass; 1 a check failed, every check was skipped, or an event failed
//! differently from capture; 2 bad usage, or the archive is invalid or refused by a
//! limit; 3 the GPU or runtime is unavailable; 4 the program's fault reproduced
//! (REPRODUCED; 0 under `--expect-fault`).

mod compare;
mod declared;
mod engine;
mod fault;
mod hip_version;
mod info;
mod packed;
mod pages;
mod profile;
mod progress;
mod runtime;
mod serve;
mod session;
mod stability;
mod staging;
mod translate;
mod unmodelled;
mod watchdog;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hrr_archive::Limits;
use hrr_contract::ReplayExit;

use session::{replay_all, ReplayRequest, Runtimes};

#[derive(Parser, Debug)]
#[command(
    name = "hrr-replay",
    disable_version_flag = true,
    about = "Replay an hrr capture archive and compare every device-to-host result with the captured bytes",
    after_help = "Exit codes:\n  0  pass (or --info/--events/--repair succeeded)\n  1  a D2H check failed, every check was skipped, or an event failed differently from capture\n  2  bad usage; the archive is invalid or refused by a limit\n  3  the GPU or its runtime is unavailable\n  4  the program faulted at capture and replay reproduced it: the same sticky error (illegal address or instruction, device-side assert, launch failure) at the same call, every other event as captured (REPRODUCED; 0 with --expect-fault)"
)]
struct Cli {
    /// The archive directory (what HRR_CAPTURE_OUTPUT named). Several archives are
    /// replayed in turn in one process; the exit code is the worst of theirs.
    archives: Vec<PathBuf>,
    /// Describe the archive (no GPU needed).
    #[arg(long)]
    info: bool,
    /// List every event, one line each (no GPU needed).
    #[arg(long)]
    events: bool,
    /// Rewrite each damaged process log keeping every record whose checksum verifies
    /// (also past a corrupt one); the original is kept beside it, and a process is marked
    /// complete only if nothing was lost.
    #[arg(long)]
    repair: bool,
    /// Testing aid: flip byte OFFSET of one expected output (the first D2H event, or
    /// --seq's), keeping the archive valid; replay must then fail exactly that check.
    #[arg(long, value_name = "OFFSET")]
    edit_expected: Option<u64>,
    /// With --edit-expected: the event's sequence id.
    #[arg(long)]
    seq: Option<u64>,
    /// Write ARCHIVE as one file (`hrr-replay --pack ARCHIVE OUT.hrrz`): a zstd-compressed
    /// tar whose index lists every file with its SHA-256; code objects the archive keeps
    /// in a code store are packed in. Prints the file's SHA-256 (what a matrix archive
    /// case declares). Replay, --info and --events take the packed file as they take the
    /// directory.
    #[arg(long)]
    pack: bool,
    /// Unpack a packed archive into a new directory (`hrr-replay --unpack IN.hrrz DIR`),
    /// checking every file against the index.
    #[arg(long, conflicts_with = "pack")]
    unpack: bool,
    /// Print tool version, archive format version and source revision.
    #[arg(short = 'V', long)]
    version: bool,
    /// JSON output: with --info/--events to stdout; when replaying, the result to FILE
    /// (with several archives, an array of results in the order given).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    json: Option<String>,
    /// Go on past a failed event and report all of them.
    #[arg(long)]
    continue_on_error: bool,
    /// Harness aid: start the VENDOR (cuda or hip) runtime on the visible device, then
    /// replay requests read from stdin, one JSON line each ({"archives": [..], "json":
    /// FILE, "log": FILE, "continue_on_error": bool, "limits": {..}}), answering each with
    /// one line {"exit_code": N, "healthy": bool} on stdout. Ends at end of input, or after
    /// answering once the device is no longer usable. One process replaying every case
    /// spares each case the runtime's start-up, which the driver serialises across GPUs.
    #[arg(long, value_name = "VENDOR", hide = true)]
    serve: Option<String>,
    /// Largest archive file read, in bytes, or with a K, M or G suffix (0 refuses every
    /// file).
    #[arg(long, value_name = "BYTES", value_parser = byte_count)]
    max_file_bytes: Option<u64>,
    /// Most events read per process (0 refuses every event).
    #[arg(long, default_value_t = Limits::default().max_events)]
    max_events: u64,
    /// Most host bytes of one blob, code object or copy buffer held in memory, or with a
    /// K, M or G suffix (0 refuses every blob); an event over it fails by name and replay
    /// exits 2.
    #[arg(long, value_name = "BYTES", value_parser = byte_count)]
    max_host_bytes: Option<u64>,
    /// Replay each process N times (2 to 64), resetting everything between runs, and
    /// compare the replays' D2H results with each other: a byte they disagree on is
    /// unstable, excluded from the comparison and reported apart (never a pass); every
    /// other byte must still equal the captured one.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=stability::MAX_RUNS))]
    stability_runs: u32,
    /// Print to stderr, when replay ends, where its time went: starting the runtime,
    /// opening the archive, the events (by API) and the host work within them
    /// (allocating, page-locking, loading, poisoning, comparing, waiting).
    #[arg(long)]
    profile: bool,
    /// Name each event on stderr (pid, sequence id, API) just before replaying it: the
    /// last line names the event of a replay that crashed or hung.
    #[arg(long)]
    trace: bool,
    /// Read code objects the archive does not hold from this code store (what capture's
    /// HRR_CAPTURE_CODE_STORE named), instead of the store the archive's manifests name.
    /// It must be a directory of this user's that nobody else can write into.
    #[arg(long, value_name = "DIR")]
    code_store: Option<PathBuf>,
    /// The captured program is meant to fault: a reproduced fault (the same sticky error
    /// at the same call, every other event as captured) exits 0 instead of 4, and an
    /// archive whose program hit no fault fails (exit 1).
    #[arg(long)]
    expect_fault: bool,
    /// Stop a replay stuck in one call (a synchronisation waiting on a kernel that never
    /// ends) once that call has run this many seconds, naming the event and the last
    /// kernel launched before it (exit 1). Off by default.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=watchdog::MAX_LIMIT_S))]
    sync_watchdog: Option<u64>,
    /// Print a heartbeat on stderr every SECONDS (events done of the total, kernels, D2H
    /// checks, the event running and for how long); 0 turns it off. Default: every 10 s
    /// when stderr is a terminal, off otherwise.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(0..=86_400))]
    progress: Option<u64>,
    /// Stop once more than this share (0 to 1, e.g. 0.25) of the D2H checks made so far
    /// failed, after the first 10, naming the first failing check: a replay that has
    /// diverged says so at once instead of listing every later check. Off by default.
    #[arg(long, value_name = "FRACTION", value_parser = divergence_fraction)]
    divergence_abort: Option<f64>,
    /// Also accept a D2H result that is not byte-exact but matches by this comparison,
    /// for a program whose outputs are float noise or a set: `f64:ulps=4`, `f32:ulps=2`,
    /// `bf16:rel=1e-2`, `f16:rel=5e-3` (each element within the bound, read as that
    /// type), or `unordered:4` (the same 4-byte elements in any order). Such checks are
    /// listed as matched by the comparison, never counted as byte-exact. Default:
    /// byte-exact.
    #[arg(long, value_name = "COMPARISON", value_parser = comparison)]
    compare: Option<hrr_contract::Comparison>,
    /// Launch kernel NAME (its mangled name, as --events prints it) from the code object
    /// at PATH (a cubin, fatbin or PTX file; an AMD code object or bundle) instead of the
    /// captured one, with the captured arguments and launch configuration: whether a
    /// rebuilt kernel's outputs changed, byte for byte. Repeatable. A NAME the archive
    /// never looks up is a failure.
    #[arg(long, value_name = "NAME=PATH")]
    replace_kernel: Vec<hrr_contract::KernelReplacement>,
    /// Launch only the kernels whose mangled name matches PATTERN (`*` and `?` globs);
    /// every D2H check after the first launch left out is skipped, never passed (its
    /// result may depend on that kernel). Kernels inside a graph launch with the graph.
    #[arg(long, value_name = "PATTERN")]
    kernel_filter: Option<String>,
    /// Time each kernel and graph launch on the GPU (events recorded around it on its
    /// stream): the summary lists GPU time per kernel (total, launches, longest; all in
    /// --json as kernel_times) and stderr the GPU time against replay's, so a slow replay
    /// splits into GPU and host time. Launches into a capturing stream are not timed.
    #[arg(long)]
    timing: bool,
}

/// A `--compare` value.
fn comparison(s: &str) -> Result<hrr_contract::Comparison, String> {
    s.parse()
        .map_err(|e: hrr_contract::ComparisonError| e.to_string())
}

/// A `--divergence-abort` value: a share above 0 and at most 1.
fn divergence_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!(
            "`{s}` is not a share above 0 and at most 1 (e.g. 0.25)"
        )),
    }
}

/// A byte count on the command line: bytes, or a number with a K, M or G suffix.
fn byte_count(s: &str) -> Result<u64, String> {
    hrr_archive::diskspace::parse_size(s.trim()).map_err(|e| e.to_string())
}

/// `--help`'s words for a default sized to the machine, with its size here, instead of a
/// raw number that differs from machine to machine (issue 25).
fn machine_default(bytes: u64) -> String {
    format!(
        "[default: half this machine's memory, within 1-64 GiB: {:.1} GiB here]",
        bytes as f64 / (1u64 << 30) as f64
    )
}

impl Cli {
    fn request(&self, limits: Limits, replacements: Vec<engine::Replacement>) -> ReplayRequest {
        ReplayRequest {
            archives: self.archives.clone(),
            json: self.json.clone(),
            continue_on_error: self.continue_on_error,
            limits,
            stability_runs: self.stability_runs,
            trace: self.trace,
            code_store: self.code_store.clone(),
            expect_fault: self.expect_fault,
            divergence_abort: self.divergence_abort,
            comparison: self.compare,
            replacements,
            kernel_filter: self.kernel_filter.clone(),
            timing: self.timing,
        }
    }
}

fn main() -> ExitCode {
    let began = std::time::Instant::now();
    let d = Limits::default();
    let command = <Cli as clap::CommandFactory>::command()
        .mut_arg("max_file_bytes", |a| {
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            a.help(format!("{help} {}", machine_default(d.max_file_bytes)))
        })
        .mut_arg("max_host_bytes", |a| {
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            a.help(format!("{help} {}", machine_default(d.max_host_bytes)))
        });
    let parsed = command
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                ReplayExit::Invalid.code()
            } else {
                ReplayExit::Pass.code()
            });
        }
    };
    if cli.profile {
        profile::enable();
    }
    // SAFETY: isatty only inspects the descriptor.
    let terminal = unsafe { libc::isatty(2) } == 1;
    // Only a replay has progress to show (not --info, --events, --repair, an edit).
    let replays = !(cli.info
        || cli.events
        || cli.repair
        || cli.pack
        || cli.unpack
        || cli.edit_expected.is_some());
    match cli.progress.filter(|_| replays) {
        Some(0) => {}
        Some(s) => progress::arm(std::time::Duration::from_secs(s)),
        None if terminal && replays => {
            progress::arm(std::time::Duration::from_secs(progress::DEFAULT_TERMINAL_S))
        }
        None => {}
    }
    if let Some(s) = cli.sync_watchdog {
        watchdog::arm(std::time::Duration::from_secs(s), watchdog::api_symbol);
    }
    let exit = run(cli);
    if profile::enabled() {
        eprint!("{}", profile::report(began.elapsed()));
    }
    ExitCode::from(exit.code())
}

/// What replay prints for `--version`: the tool, the archive format it reads and writes,
/// and the source revision, from hrr-archive's constants.
fn version_text() -> String {
    format!(
        "hrr-replay {}\narchive format version {}\nsource revision {}",
        hrr_archive::TOOL_VERSION,
        hrr_archive::FORMAT_VERSION,
        hrr_archive::SOURCE_REVISION
    )
}

fn run(mut cli: Cli) -> ReplayExit {
    // `--info --json ARCHIVE`: --json takes an optional FILE, so it swallowed the archive.
    if (cli.info || cli.events) && cli.archives.is_empty() {
        if let Some(v) = cli.json.take().filter(|v| v != "-") {
            cli.archives.push(PathBuf::from(v));
        }
        cli.json = Some("-".into());
    }
    if let Some(v) = cli.serve.as_deref() {
        return serve::serve(v);
    }
    if cli.version {
        println!("{}", version_text());
        return ReplayExit::Pass;
    }
    let limits = Limits {
        max_file_bytes: cli
            .max_file_bytes
            .unwrap_or(Limits::default().max_file_bytes),
        max_events: cli.max_events,
        max_host_bytes: cli
            .max_host_bytes
            .unwrap_or(Limits::default().max_host_bytes),
    };
    if cli.pack || cli.unpack {
        return pack_or_unpack(&cli, limits);
    }
    let replacements = match session::load_replacements(&cli.replace_kernel, &limits) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hrr-replay: {}", info::escape_controls(&e));
            return ReplayExit::Invalid;
        }
    };
    let path = match cli.archives.as_slice() {
        [] => {
            eprintln!("hrr-replay: no archive given (see --help)");
            return ReplayExit::Invalid;
        }
        [one] => one.clone(),
        several => {
            if cli.info || cli.events || cli.repair || cli.edit_expected.is_some() {
                eprintln!(
                    "hrr-replay: {} archives given; --info, --events, --repair and --edit-expected take one",
                    several.len()
                );
                return ReplayExit::Invalid;
            }
            return replay_all(
                &cli.request(limits, replacements),
                &mut Runtimes::default(),
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            );
        }
    };
    if let Some(offset) = cli.edit_expected {
        return match hrr_archive::edit::edit_expected_output(&path, cli.seq, offset, limits) {
            Ok(e) => {
                println!(
                    "pid {} seq {}: expected output byte {} changed {:#04x} -> {:#04x}",
                    e.pid, e.seq, e.offset, e.old, e.new
                );
                ReplayExit::Pass
            }
            Err(e) => {
                eprintln!("hrr-replay: {}", info::escape_controls(&e.to_string()));
                ReplayExit::Invalid
            }
        };
    }
    if cli.repair {
        return match hrr_archive::repair::repair(&path, limits) {
            Ok(fixed) if fixed.is_empty() => {
                println!(
                    "{}: nothing to repair (every process is complete, or was repaired and is intact since)",
                    path.display()
                );
                ReplayExit::Pass
            }
            Ok(fixed) => {
                for f in &fixed {
                    println!("{}", describe_repair(f));
                }
                ReplayExit::Pass
            }
            Err(e) => {
                eprintln!("hrr-replay: {}", info::escape_controls(&e.to_string()));
                ReplayExit::Invalid
            }
        };
    }
    if !cli.info && !cli.events {
        return replay_all(
            &cli.request(limits, replacements),
            &mut Runtimes::default(),
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        );
    }
    let (archive, _unpacked) = match packed::open(&path, limits) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("hrr-replay: {}", info::escape_controls(&e.to_string()));
            return ReplayExit::Invalid;
        }
    };
    let json_stdout = cli.json.as_deref() == Some("-");
    if cli.info {
        let mut i = info::info(&archive);
        // A packed file is described as the file given, not our unpacked copy.
        i.archive = path.display().to_string();
        if json_stdout {
            println!("{}", serde_json::to_string_pretty(&i).unwrap_or_default());
        } else {
            print!("{}", info::render_info(&i));
        }
        return ReplayExit::Pass;
    }
    let mut out = std::io::stdout().lock();
    for e in info::event_lines(&archive) {
        let line = if json_stdout {
            serde_json::to_string(&e).unwrap_or_default()
        } else {
            info::render_event(&e)
        };
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
    ReplayExit::Pass
}

/// `--pack ARCHIVE OUT` or `--unpack IN DIR`.
fn pack_or_unpack(cli: &Cli, limits: Limits) -> ReplayExit {
    let [from, to] = cli.archives.as_slice() else {
        eprintln!(
            "hrr-replay: --{} takes two paths: {}",
            if cli.pack { "pack" } else { "unpack" },
            if cli.pack {
                "the archive directory and the file to write (OUT.hrrz)"
            } else {
                "the packed file and a new directory to unpack into"
            }
        );
        return ReplayExit::Invalid;
    };
    let done = if cli.pack {
        hrr_archive::pack::pack(from, to, limits).map(|p| {
            println!(
                "{}: {} files, {} bytes ({} code object(s) from the code store); sha256 {}",
                to.display(),
                p.files,
                p.bytes,
                p.from_store,
                p.sha256
            )
        })
    } else {
        hrr_archive::pack::unpack(from, to, limits)
            .map(|u| println!("{}: {} files, {} bytes", to.display(), u.files, u.bytes))
    };
    match done {
        Ok(()) => ReplayExit::Pass,
        Err(e) => {
            eprintln!("hrr-replay: {}", info::escape_controls(&e.to_string()));
            ReplayExit::Invalid
        }
    }
}

/// One line per repaired process: what was kept, what was lost and where, and whether
/// the process is now complete (only when nothing was lost).
fn describe_repair(f: &hrr_archive::repair::RepairedProcess) -> String {
    let mut line = format!(
        "pid {}: was {}, kept {} events",
        f.pid, f.was, f.events_kept
    );
    for l in &f.lost {
        let ids = if l.first_seq == l.last_seq {
            format!("event {}", l.first_seq)
        } else {
            format!("events {}..={}", l.first_seq, l.last_seq)
        };
        line += &format!(
            ", lost {ids} ({} corrupt bytes at byte {})",
            l.bytes, l.offset
        );
    }
    let lost_bytes = f.lost.iter().fold(0u64, |t, l| t.saturating_add(l.bytes));
    let other = f
        .bytes_dropped
        .saturating_sub(f.tail_bytes_dropped)
        .saturating_sub(lost_bytes);
    if other > 0 {
        line += &format!(", skipped {other} corrupt bytes that held no event");
    }
    if f.duplicates_dropped > 0 {
        line += &format!(
            ", dropped {} records whose sequence id an earlier record had",
            f.duplicates_dropped
        );
    }
    if f.tail_bytes_dropped > 0 {
        line += &format!(
            ", dropped {} bytes after the last whole record",
            f.tail_bytes_dropped
        );
    }
    if f.missing_blobs > 0 {
        line += &format!(", {} referenced blobs missing or corrupt", f.missing_blobs);
    }
    line += if f.complete {
        "; now complete"
    } else if !f.lost.is_empty() {
        "; still incomplete: events were lost"
    } else if f.tail_bytes_dropped > 0 {
        "; still incomplete: the log's end was torn (events after the last whole record, or its trailer, are gone)"
    } else {
        "; still incomplete: the process ended without its trailer, so later events may never have been written"
    };
    line + &format!(
        "; original log kept as {}",
        info::escape_controls(&f.backup.display().to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_the_constants() {
        let v = version_text();
        assert!(
            v.starts_with(&format!("hrr-replay {}\n", hrr_archive::TOOL_VERSION)),
            "{v}"
        );
        assert!(
            v.contains(&format!(
                "archive format version {}\n",
                hrr_archive::FORMAT_VERSION
            )),
            "{v}"
        );
    }

    #[test]
    fn dash_capital_v_is_the_version_flag() {
        let cli = Cli::try_parse_from(["hrr-replay", "-V"]).unwrap();
        assert!(cli.version);
    }
}
