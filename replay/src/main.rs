//! hrr-replay: replays an hrr archive on a GPU and checks every device-to-host result
//! byte for byte; `--info`, `--events`, `--repair` and `--version` need no GPU. Several
//! archives given at once are replayed one after another in this one process, so the
//! GPU runtime's start-up is paid once (the harness replays a case's archive and its
//! edited copy this way).
//!
//! Exit codes: 0 pass; 1 a check failed, every check was skipped, or an event failed
//! differently from capture; 2 bad usage, or the archive is invalid or refused by a
//! limit; 3 the GPU or runtime is unavailable.

mod engine;
mod info;
mod runtime;
mod staging;
mod translate;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hrr_archive::api::Vendor;
use hrr_archive::{Archive, Limits};

const EXIT_PASS: u8 = 0;
const EXIT_FAIL: u8 = 1;
const EXIT_INVALID: u8 = 2;
const EXIT_NO_GPU: u8 = 3;

#[derive(Parser, Debug)]
#[command(
    name = "hrr-replay",
    disable_version_flag = true,
    about = "Replay an hrr capture archive and compare every device-to-host result with the captured bytes",
    after_help = "Exit codes:\n  0  pass (or --info/--events/--repair succeeded)\n  1  a D2H check failed, every check was skipped, or an event failed differently from capture\n  2  bad usage; the archive is invalid or refused by a limit\n  3  the GPU or its runtime is unavailable"
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
    /// Rewrite a truncated or incomplete archive as a complete one keeping every whole record.
    #[arg(long)]
    repair: bool,
    /// Testing aid: flip byte OFFSET of one expected output (the first D2H event, or
    /// --seq's), keeping the archive valid; replay must then fail exactly that check.
    #[arg(long, value_name = "OFFSET")]
    edit_expected: Option<u64>,
    /// With --edit-expected: the event's sequence id.
    #[arg(long)]
    seq: Option<u64>,
    /// Print tool version, archive format version and source revision.
    #[arg(long)]
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
    /// Largest archive file read, in bytes (0 refuses every file).
    #[arg(long, default_value_t = Limits::default().max_file_bytes)]
    max_file_bytes: u64,
    /// Most events read per process (0 refuses every event).
    #[arg(long, default_value_t = Limits::default().max_events)]
    max_events: u64,
    /// Most host bytes of one blob or code object held in memory (0 refuses every blob).
    #[arg(long, default_value_t = Limits::default().max_host_bytes)]
    max_host_bytes: u64,
}

use hrr_archive::replay_result::ReplayResult;

impl Cli {
    fn request(&self, limits: Limits) -> ReplayRequest {
        ReplayRequest {
            archives: self.archives.clone(),
            json: self.json.clone(),
            continue_on_error: self.continue_on_error,
            limits,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                EXIT_INVALID
            } else {
                EXIT_PASS
            });
        }
    };
    ExitCode::from(run(cli))
}

fn run(mut cli: Cli) -> u8 {
    // `--info --json ARCHIVE`: --json takes an optional FILE, so it swallowed the archive.
    if (cli.info || cli.events) && cli.archives.is_empty() {
        if let Some(v) = cli.json.take().filter(|v| v != "-") {
            cli.archives.push(PathBuf::from(v));
        }
        cli.json = Some("-".into());
    }
    if let Some(v) = cli.serve.as_deref() {
        return serve(v);
    }
    if cli.version {
        println!(
            "hrr-replay {}\narchive format version {}\nsource revision {}",
            hrr_archive::TOOL_VERSION,
            hrr_archive::FORMAT_VERSION,
            hrr_archive::SOURCE_REVISION
        );
        return EXIT_PASS;
    }
    let limits = Limits {
        max_file_bytes: cli.max_file_bytes,
        max_events: cli.max_events,
        max_host_bytes: cli.max_host_bytes,
    };
    let path = match cli.archives.as_slice() {
        [] => {
            eprintln!("hrr-replay: no archive given (see --help)");
            return EXIT_INVALID;
        }
        [one] => one.clone(),
        several => {
            if cli.info || cli.events || cli.repair || cli.edit_expected.is_some() {
                eprintln!(
                    "hrr-replay: {} archives given; --info, --events, --repair and --edit-expected take one",
                    several.len()
                );
                return EXIT_INVALID;
            }
            return replay_all(
                &cli.request(limits),
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
                EXIT_PASS
            }
            Err(e) => {
                eprintln!("hrr-replay: {e}");
                EXIT_INVALID
            }
        };
    }
    if cli.repair {
        return match hrr_archive::repair::repair(&path, limits) {
            Ok(fixed) if fixed.is_empty() => {
                println!("{}: already complete, nothing to repair", path.display());
                EXIT_PASS
            }
            Ok(fixed) => {
                for f in fixed {
                    println!(
                        "pid {}: was {}, kept {} events, dropped {} torn bytes{}",
                        f.pid,
                        f.was,
                        f.events_kept,
                        f.bytes_dropped,
                        if f.missing_blobs > 0 {
                            format!(", {} referenced blobs missing or corrupt", f.missing_blobs)
                        } else {
                            String::new()
                        }
                    );
                }
                EXIT_PASS
            }
            Err(e) => {
                eprintln!("hrr-replay: {e}");
                EXIT_INVALID
            }
        };
    }
    if !cli.info && !cli.events {
        return replay_all(
            &cli.request(limits),
            &mut Runtimes::default(),
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        );
    }
    let archive = match Archive::open(&path, limits) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("hrr-replay: {e}");
            return EXIT_INVALID;
        }
    };
    let json_stdout = cli.json.as_deref() == Some("-");
    if cli.info {
        let i = info::info(&archive);
        if json_stdout {
            println!("{}", serde_json::to_string_pretty(&i).unwrap_or_default());
        } else {
            print!("{}", info::render_info(&i));
        }
        return EXIT_PASS;
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
    EXIT_PASS
}

/// A `--serve` request: a replay job and the file its summary and warnings go to.
#[derive(serde::Deserialize)]
struct ServeRequest {
    #[serde(flatten)]
    replay: ReplayRequest,
    #[serde(default)]
    log: Option<PathBuf>,
}

/// `--serve`: replays requests from stdin in this process, one runtime and context for
/// all of them (see the flag's help).
fn serve(vendor: &str) -> u8 {
    use std::io::BufRead;
    let Some(v) = Vendor::parse(vendor) else {
        eprintln!("hrr-replay: --serve {vendor:?}: expected cuda or hip");
        return EXIT_INVALID;
    };
    let mut runtimes = Runtimes::default();
    if let Err((code, why)) = runtimes.get(v) {
        eprintln!("hrr-replay: --serve: {why}");
        return code;
    }
    let sync = match v {
        Vendor::Cuda => "cudaDeviceSynchronize",
        Vendor::Hip => "hipDeviceSynchronize",
    };
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let req: ServeRequest = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                let reply = serde_json::json!({ "error": format!("bad request: {e}") });
                let _ = writeln!(stdout, "{reply}");
                let _ = stdout.flush();
                continue;
            }
        };
        let mut log: Box<dyn Write> = match &req.log {
            Some(path) => match std::fs::File::create(path) {
                Ok(f) => Box::new(std::io::BufWriter::new(f)),
                Err(e) => {
                    let reply = serde_json::json!({
                        "error": format!("cannot create {}: {e}", path.display())
                    });
                    let _ = writeln!(stdout, "{reply}");
                    let _ = stdout.flush();
                    continue;
                }
            },
            None => Box::new(std::io::stderr()),
        };
        let code = {
            let mut err = Vec::new();
            let code = replay_all(&req.replay, &mut runtimes, &mut log, &mut err);
            let _ = log.write_all(&err);
            let _ = log.flush();
            code
        };
        // A replay can leave the context unusable (an illegal address is sticky): the
        // next archive would then fail for a reason of this one's.
        let healthy = match runtimes.get(v) {
            Ok(rt) => rt.call_void(sync) == Ok(0),
            Err(_) => false,
        };
        let reply = serde_json::json!({ "exit_code": code, "healthy": healthy });
        if writeln!(stdout, "{reply}")
            .and_then(|_| stdout.flush())
            .is_err()
            || !healthy
        {
            return EXIT_FAIL;
        }
    }
    EXIT_PASS
}

/// One replay job: archives replayed in order in this process, and where the result goes.
#[derive(Clone, Debug, serde::Deserialize)]
struct ReplayRequest {
    archives: Vec<PathBuf>,
    /// A file, "-" for stdout, or none.
    #[serde(default)]
    json: Option<String>,
    #[serde(default)]
    continue_on_error: bool,
    #[serde(default)]
    limits: Limits,
}

/// Replays every archive of `req`, in order; writes each summary to `out`, problems to
/// `err`, the JSON result(s) where `req.json` says, and returns the worst exit code.
fn replay_all(
    req: &ReplayRequest,
    runtimes: &mut Runtimes,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let mut results = Vec::with_capacity(req.archives.len());
    for path in &req.archives {
        let result = match Archive::open(path, req.limits) {
            Ok(archive) => replay(req, &archive, runtimes, err),
            Err(e) => {
                let _ = writeln!(err, "hrr-replay: {e}");
                ReplayResult {
                    archive: path.display().to_string(),
                    verdict: "FAIL".into(),
                    reason: e.to_string(),
                    exit_code: EXIT_INVALID,
                    ..ReplayResult::default()
                }
            }
        };
        let _ = print_summary(out, &result);
        results.push(result);
    }
    let json = if results.len() == 1 {
        serde_json::to_vec_pretty(&results[0])
    } else {
        serde_json::to_vec_pretty(&results)
    }
    .unwrap_or_default();
    match req.json.as_deref() {
        Some("-") => {
            let _ = writeln!(out, "{}", String::from_utf8_lossy(&json));
        }
        Some(file) => {
            if let Err(e) = std::fs::write(file, json) {
                let _ = writeln!(err, "hrr-replay: cannot write {file}: {e}");
            }
        }
        None => {}
    }
    let _ = out.flush();
    results
        .iter()
        .map(|r| r.exit_code)
        .max_by_key(|&c| exit_severity(c))
        .unwrap_or(EXIT_INVALID)
}

/// Orders exit codes for several archives: an unavailable GPU outranks an invalid
/// archive, which outranks a failed check.
fn exit_severity(code: u8) -> u8 {
    match code {
        EXIT_PASS => 0,
        EXIT_FAIL => 1,
        EXIT_INVALID => 2,
        _ => 3,
    }
}

/// The runtimes loaded so far, one per vendor, each initialised once (a second archive
/// of the same vendor reuses the context the first created).
#[derive(Default)]
struct Runtimes {
    loaded: Vec<(Vendor, Result<runtime::Runtime, StartError>)>,
}

/// Why a runtime could not start: the exit code and the reason.
type StartError = (u8, String);

impl Runtimes {
    fn get(&mut self, vendor: Vendor) -> Result<&runtime::Runtime, StartError> {
        let i = match self.loaded.iter().position(|(v, _)| *v == vendor) {
            Some(i) => i,
            None => {
                self.loaded.push((vendor, start_runtime(vendor)));
                self.loaded.len() - 1
            }
        };
        self.loaded[i].1.as_ref().map_err(|e| e.clone())
    }
}

/// Loads the vendor's runtime, checks it sees a device and creates the context.
fn start_runtime(vendor: Vendor) -> Result<runtime::Runtime, StartError> {
    let rt = runtime::Runtime::load(vendor).map_err(|e| (EXIT_NO_GPU, e))?;
    let count_fn = match vendor {
        Vendor::Cuda => "cudaGetDeviceCount",
        Vendor::Hip => "hipGetDeviceCount",
    };
    match rt.call_int_out(count_fn) {
        Ok((0, n)) if n > 0 => {}
        Ok((r, n)) => {
            return Err((
                EXIT_NO_GPU,
                format!(
                    "no {} device: {count_fn} returned {r} with {n} devices",
                    vendor.as_str()
                ),
            ))
        }
        Err(e) => return Err((EXIT_NO_GPU, e)),
    }
    // Initialise the runtime's context so driver-level module loads have one.
    let free = match vendor {
        Vendor::Cuda => "cudaFree",
        Vendor::Hip => "hipFree",
    };
    match rt.call_ptr(free, 0) {
        Ok(0) | Err(_) => Ok(rt),
        Ok(r) => Err((
            EXIT_NO_GPU,
            format!("{free}(NULL) to initialise the runtime returned {r}"),
        )),
    }
}

fn replay(
    req: &ReplayRequest,
    archive: &Archive,
    runtimes: &mut Runtimes,
    err: &mut dyn Write,
) -> ReplayResult {
    let vendor_name = archive
        .processes
        .iter()
        .map(|p| p.manifest.runtime.vendor.clone())
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    let mut result = ReplayResult {
        archive: archive.root.display().to_string(),
        vendor: vendor_name.clone(),
        verdict: "FAIL".into(),
        ..ReplayResult::default()
    };
    result.exit_code = (|| {
        let Some(vendor) = Vendor::parse(&vendor_name) else {
            result.reason =
                "the archive names no runtime vendor (no runtime call was recorded)".into();
            return EXIT_INVALID;
        };
        for p in &archive.processes {
            if !p.is_complete() {
                let _ = writeln!(
                    err,
                    "hrr-replay: warning: pid {} is {} (replaying its whole records)",
                    p.entry.pid,
                    p.status.label()
                );
            }
        }
        let rt = match runtimes.get(vendor) {
            Ok(r) => r,
            Err((code, reason)) => {
                result.reason = reason;
                return code;
            }
        };
        result.runtime_library = rt.library_name.clone();
        let opts = engine::Options {
            continue_on_error: req.continue_on_error,
        };
        for p in &archive.processes {
            let (c, f) = engine::replay_process(rt, p, &opts);
            let t = &mut result.counts;
            t.events_total += c.events_total;
            t.events_replayed += c.events_replayed;
            t.kernels_launched += c.kernels_launched;
            t.d2h_pass += c.d2h_pass;
            t.d2h_fail += c.d2h_fail;
            t.d2h_skipped += c.d2h_skipped;
            t.failed_as_captured += c.failed_as_captured;
            t.untranslated_pointers += c.untranslated_pointers;
            t.unreplayable_refused += c.unreplayable_refused;
            result.failures.extend(f);
        }
        let c = &result.counts;
        if !result.failures.is_empty() {
            result.reason = format!("{} failure(s)", result.failures.len());
            EXIT_FAIL
        } else if c.d2h_pass == 0 {
            result.reason = "no device-to-host check passed: nothing was verified".into();
            EXIT_FAIL
        } else {
            result.verdict = "PASS".into();
            result.reason = format!("{} D2H checks passed", c.d2h_pass);
            EXIT_PASS
        }
    })();
    result
}

fn print_summary(out: &mut dyn Write, r: &ReplayResult) -> std::io::Result<()> {
    let c = &r.counts;
    writeln!(out, "archive          : {}", r.archive)?;
    writeln!(
        out,
        "runtime          : {} ({})",
        r.vendor,
        if r.runtime_library.is_empty() {
            "not loaded"
        } else {
            &r.runtime_library
        }
    )?;
    writeln!(
        out,
        "events replayed  : {} of {}",
        c.events_replayed, c.events_total
    )?;
    writeln!(out, "kernels launched : {}", c.kernels_launched)?;
    writeln!(
        out,
        "D2H checks       : {} pass, {} fail, {} skipped",
        c.d2h_pass, c.d2h_fail, c.d2h_skipped
    )?;
    writeln!(out, "failed as at capture : {}", c.failed_as_captured)?;
    writeln!(out, "untranslated pointers: {}", c.untranslated_pointers)?;
    writeln!(out, "unreplayable refused : {}", c.unreplayable_refused)?;
    for f in &r.failures {
        writeln!(
            out,
            "FAILED seq {} {} [{}]: {}",
            f.seq, f.api, f.kind, f.message
        )?;
    }
    writeln!(out, "{}: {}", r.verdict, r.reason)?;
    Ok(())
}
