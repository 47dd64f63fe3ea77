//! A driver-API program (tests/stand_in/driver_program.c) against the repository's stand-in
//! (standin/, built as libcuda.so.1) under libhrr_capture.so: each driver call is one record in
//! the program's one event order, a runtime call that reaches the driver's exported
//! functions is recorded once (as the runtime call), a driver D2H copy's expected bytes
//! are read after its stream was waited for, a 2D copy by CUDA_MEMCPY2D keeps its rows
//! packed, a module loaded from a file stores the file, a module global is recorded as
//! a variable's address, a launch with `extra`'s parameter buffer is recorded as one with
//! kernelParams, and a library kernel and its function launch like module functions.
//!
//! Needs cc and the CUDA headers (the stand-in is built against them).

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use hrr_archive::api::{fid, id, semantic, BLOB_FIELD, POLLS_SKIPPED_FIELD};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits, ProcessArchive};

mod common;
use common::capture_so;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

/// The stand-in (standin/, built as libcuda.so.1: the driver a driver-API program links)
/// and the driver-API program built in a scratch directory named after `tag`; None after a
/// skip (no cc or no CUDA headers).
#[track_caller]
fn build(tag: &str) -> Option<StandIn> {
    StandIn::build_over(
        Some("libcuda.so.1"),
        &[],
        &format!("driver-{tag}"),
        "driver_program.c",
        &[],
    )
}

/// The module file the program loads: PTX defining the kernel `k` (two 8-byte
/// parameters) and the 16-byte global `var` the program asks for.
const MODULE_PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .global .align 8 .b8 var[16];\n\
    .visible .entry k(.param .u64 k_a, .param .u64 k_b)\n{\n ret;\n}\n";

/// The program's "handle NAME=0x..." lines: the handles the stand-in gave it.
fn handles(stdout: &str) -> HashMap<String, u64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("handle "))
        .filter_map(|l| {
            let (name, v) = l.split_once('=')?;
            let v = u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()?;
            Some((name.to_string(), v))
        })
        .collect()
}

fn payload(p: &ProcessArchive, i: usize) -> Payload<'_> {
    Payload::parse(&p.events[i].payload).unwrap()
}

#[test]
fn driver_calls_are_recorded_once_each_in_one_order() {
    let Some(dir) = build("program") else {
        return;
    };
    let ptx = MODULE_PTX;
    let module = dir.path().join("module.ptx");
    std::fs::write(&module, ptx).unwrap();
    let out = dir.path().join("archive");
    let run = dir
        .command(&out, &[module.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Every call succeeded; the event was polled while the stream's work ran (the stand-in
    // runs one queued operation per "not ready" answer), at least twice.
    let calls: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("handle ") && !l.starts_with("polls="))
        .collect();
    assert!(calls.len() >= 30, "{stdout}");
    assert!(calls.iter().all(|l| l.ends_with("=0")), "{stdout}");
    let not_ready: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("polls="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no polls= line: {stdout}"));
    assert!(not_ready >= 2, "{stdout}");
    let h = handles(&stdout);
    assert_eq!(h.len(), 5, "{stdout}");

    let a = Archive::open(&out, Limits::default()).unwrap_or_else(|e| {
        panic!(
            "{e}\ncapture said: {}",
            String::from_utf8_lossy(&run.stderr)
        )
    });
    let p = &a.processes[0];
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    assert_eq!(
        ids,
        [
            id::Init,
            id::DeviceGet,
            id::CtxCreate,
            // cudaMalloc reached the exported cuMemAlloc_v2: one record, the runtime's.
            id::Malloc,
            id::MemAlloc,
            id::MemcpyHtoD,
            id::MemsetD32,
            id::CuStreamCreate,
            id::MemcpyDtoHAsync,
            id::CuStreamSynchronize,
            id::MemcpyDtoH,
            id::DrvMemcpy2D,
            id::DrvMemcpy2DUnaligned,
            id::MemcpyPeer,
            semantic::MODULE_LOAD,
            semantic::MODULE_GET_FUNCTION,
            semantic::SYMBOL_ADDRESS,
            id::MemHostAlloc,
            id::MemHostGetDevicePointer,
            semantic::MODULE_LAUNCH_KERNEL,
            semantic::MODULE_LOAD,
            semantic::MODULE_GET_FUNCTION,
            semantic::MODULE_LAUNCH_KERNEL,
            semantic::MODULE_GET_FUNCTION,
            semantic::MODULE_LAUNCH_KERNEL,
            id::CtxGetCurrent,
            semantic::LAUNCH_KERNEL_EX,
            // The driver's stream capture and graph calls, recorded as their runtime
            // twins (api::driver::RUNTIME_TWINS).
            id::StreamBeginCapture,
            id::StreamIsCapturing,
            id::StreamEndCapture,
            id::GraphInstantiateWithFlags,
            semantic::GRAPH_LAUNCH,
            id::GraphExecDestroy,
            id::GraphDestroy,
            // An explicit graph: the driver's calls recorded as the runtime rows (the
            // copy struct read into the runtime's), the kernel node as the runtime's.
            id::GraphCreate,
            id::GraphAddMemcpyNode,
            semantic::GRAPH_KERNEL_NODE,
            id::GraphAddMemsetNode,
            id::GraphAddMemcpyNode,
            id::GraphInstantiateWithFlags,
            semantic::GRAPH_LAUNCH,
            id::GraphExecMemcpyNodeSetParams,
            id::GraphExecDestroy,
            id::GraphDestroy,
            // Launch configuration.
            semantic::LAUNCH_COOPERATIVE,
            semantic::FUNC_SET_CACHE_CONFIG,
            semantic::FUNC_SET_CACHE_CONFIG,
            id::CuEventCreate,
            id::CuEventRecord,
            // Polls that found the work running, then the one that found it done: the
            // first recorded, the rest counted on the last.
            id::CuEventQuery,
            id::CuEventQuery,
            // The successful poll observed the launches that wrote mapped memory.
            semantic::MAPPED_OUTPUT,
            // Per-thread forms, as their base rows.
            id::MemsetD32,
            semantic::MODULE_LAUNCH_KERNEL,
            semantic::MODULE_UNLOAD,
            semantic::MODULE_UNLOAD,
            id::MemFreeHost,
            id::MemFree,
            id::CuStreamDestroy,
            id::CuEventDestroy,
            id::CtxDestroy,
        ]
    );
    let polls: Vec<usize> = (0..p.events.len())
        .filter(|&i| p.events[i].header.api_id == id::CuEventQuery)
        .collect();
    assert_eq!(p.events[polls[0]].header.ret, 600);
    assert!(payload(p, polls[0]).get(POLLS_SKIPPED_FIELD).is_none());
    assert_eq!(
        payload(p, polls[1])
            .u64(POLLS_SKIPPED_FIELD, "skipped")
            .unwrap(),
        not_ready - 1
    );
    let odd: Vec<(usize, u16, i32, u32)> = p
        .events
        .iter()
        .enumerate()
        .filter(|(i, e)| !((e.header.ret == 0 || *i == polls[0]) && e.header.flags == 0))
        .map(|(i, e)| (i, e.header.api_id, e.header.ret, e.header.flags as u32))
        .collect();
    assert!(odd.is_empty(), "(index, id, ret, flags): {odd:?}");
    // cuLaunchKernel_ptsz's stream 0 is the per-thread stream (2).
    let launches: Vec<usize> = (0..p.events.len())
        .filter(|&i| p.events[i].header.api_id == semantic::MODULE_LAUNCH_KERNEL)
        .collect();
    let last = payload(p, *launches.last().unwrap());
    assert_eq!(last.handle(fid::STREAM, "stream").unwrap(), 2);
    // cuCtxCreate_v4's zero-filled CUctxCreateParams is recorded as null (replay passes
    // null), not as a struct capture could not record.
    assert!(payload(p, 2).get(2).is_some_and(|f| f.is_null()));
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );

    // The device buffer after the upload and the memset; both downloads expect it (the
    // asynchronous one read only after its stream was waited for).
    let mut device: Vec<u8> = (0..256u32).map(|i| (i * 7) as u8).collect();
    for i in 0..4 {
        device[16 + 4 * i..20 + 4 * i].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    }
    let up = payload(p, 5).blob(BLOB_FIELD | 2, "source").unwrap();
    assert_eq!(p.load_blob(&up).unwrap()[..16], device[..16]);
    for i in [8, 10] {
        let r = payload(p, i).blob(BLOB_FIELD | 1, "expected").unwrap();
        assert_eq!(p.load_blob(&r).unwrap(), device, "event {i}");
    }
    // The 2D copy: the struct whole, and 3 rows of 16 bytes from (8, 1), pitch 64, packed.
    let c2 = payload(p, 11);
    assert_eq!(c2.bytes(1, "struct").unwrap().len(), 128);
    let rows = c2.blob(BLOB_FIELD | 1, "rows").unwrap();
    let want: Vec<u8> = (0..3)
        .flat_map(|r| device[(1 + r) * 64 + 8..(1 + r) * 64 + 24].to_vec())
        .collect();
    assert_eq!(p.load_blob(&rows).unwrap(), want);

    // The module file's bytes, as loaded; its global as a variable's address.
    let load = payload(p, 14);
    assert_eq!(load.u64(fid::SIZE, "size").unwrap(), ptx.len() as u64);
    let global = payload(p, 16);
    assert_eq!(global.str(fid::NAME, "name").unwrap(), "var");
    assert_eq!(global.u64(fid::SIZE, "size").unwrap(), 16);
    assert_eq!(global.handle(fid::HANDLE, "module").unwrap(), h["module"]);
    assert_eq!(
        global.str(fid::CODE_OBJECT, "co").unwrap(),
        load.str(fid::CODE_OBJECT, "co").unwrap()
    );

    // The `extra` launch: two 8-byte arguments from the buffer, a device pointer and the
    // mapped pinned memory (snapshotted), as a kernelParams launch records them.
    let l = payload(p, 19);
    assert_eq!(l.str(fid::NAME, "name").unwrap(), "k");
    let args: Vec<Payload> = l.all(fid::ARG).map(|a| a.as_nested().unwrap()).collect();
    assert_eq!(args.len(), 2);
    for a in &args {
        assert_eq!(a.u64(fid::ARG_SIZE, "size").unwrap(), 8);
        assert_eq!(a.u64_array(fid::ARG_POINTER_WORDS, "words").unwrap(), [0]);
    }
    let snap = l.get(fid::PINNED_SNAPSHOT).unwrap().as_nested().unwrap();
    let snap = snap.blob(fid::SNAPSHOT_BYTES, "snapshot").unwrap();
    assert_eq!(p.load_blob(&snap).unwrap(), vec![0x5a; 32]);

    // The library kernel launched as a CUfunction, then its function by cuLaunchKernelEx
    // with the config's shape: both name the library's code object.
    let lib_co = payload(p, 20)
        .str(fid::CODE_OBJECT, "co")
        .unwrap()
        .to_string();
    for i in [22, 24] {
        let l = payload(p, i);
        assert_eq!(l.str(fid::NAME, "name").unwrap(), "k", "event {i}");
        assert_eq!(l.str(fid::CODE_OBJECT, "co").unwrap(), lib_co, "event {i}");
        assert_eq!(l.all(fid::ARG).count(), 2, "event {i}");
    }
    let ex = payload(p, 24);
    assert_eq!(ex.u64_array(fid::GRID, "grid").unwrap(), [3, 1, 1]);
    assert_eq!(ex.u64_array(fid::BLOCK, "block").unwrap(), [128, 1, 1]);
    assert_eq!(ex.u64(fid::SHARED_MEM, "shmem").unwrap(), 32);
    assert_eq!(ex.handle(fid::STREAM, "stream").unwrap(), h["stream"]);
    let f = payload(p, 23);
    assert_eq!(
        (
            f.handle(fid::HANDLE, "f").unwrap(),
            f.handle(fid::KERNEL, "k").unwrap()
        ),
        (h["function"], h["kernel"])
    );
    // The unaligned 2D copy records the same struct as cuMemcpy2D; the peer copy its two
    // device addresses and contexts.
    assert_eq!(
        payload(p, 12).get(1).map(|f| f.value),
        payload(p, 11).get(1).map(|f| f.value)
    );
    let peer = payload(p, 13);
    assert_eq!(peer.handle(2, "dst ctx").unwrap(), h["ctx"]);
    assert_eq!(peer.u64(5, "count").unwrap(), 64);
    // The context the program created, current when asked.
    assert_eq!(payload(p, 2).handle(1, "ctx").unwrap(), h["ctx"]);
    assert_eq!(payload(p, 25).handle(1, "ctx").unwrap(), h["ctx"]);
    // cuLaunchKernelEx with attributes: the launch record cudaLaunchKernelExC writes, each
    // attribute verbatim in the program's order.
    let ex = payload(p, 26);
    assert_eq!(ex.str(fid::CODE_OBJECT, "co").unwrap(), lib_co);
    assert_eq!(ex.u64_array(fid::BLOCK, "block").unwrap(), [64, 1, 1]);
    let attrs: Vec<(u64, Vec<u8>)> = ex
        .all(fid::LAUNCH_ATTR)
        .map(|a| {
            let a = a.as_nested().unwrap();
            (
                a.u64(fid::LAUNCH_ATTR_ID, "id").unwrap(),
                a.bytes(fid::LAUNCH_ATTR_VALUE, "value").unwrap()[..12].to_vec(),
            )
        })
        .collect();
    assert_eq!(
        attrs,
        [
            (
                4,
                [1u32, 1, 1].iter().flat_map(|v| v.to_le_bytes()).collect()
            ),
            (
                8,
                [3u32, 0, 0].iter().flat_map(|v| v.to_le_bytes()).collect()
            ),
        ]
    );
    assert!(
        !p.manifest
            .unreplayable_apis
            .iter()
            .any(|u| u.api.contains("cuLaunchKernelEx")),
        "attributes are recorded, not listed: {:?}",
        p.manifest.unreplayable_apis
    );
}

/// Builds `tests/stand_in/<program>.c` into `dir` (beside the stand-in driver `build` made
/// there, linked against it when `link_driver`), runs it under capture with `args`, and
/// returns its archive and stderr once it exited 0 printing `ok`.
fn capture_program(
    dir: &Path,
    program: &str,
    link_driver: bool,
    args: &[&Path],
    ok: &str,
) -> (Archive, String) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in");
    let exe = dir.join(program);
    let (exe_s, src_s) = (exe.to_string_lossy(), src.join(format!("{program}.c")));
    let mut cmd = vec![
        "-O1".to_string(),
        "-o".into(),
        exe_s.to_string(),
        src_s.to_string_lossy().into(),
    ];
    if link_driver {
        cmd.extend([
            format!("-L{}", dir.display()),
            "-l:libcuda.so.1".into(),
            format!("-Wl,-rpath,{}", dir.display()),
        ]);
    }
    cmd.push("-ldl".into());
    common::cc(&cmd);
    let out = dir.join(format!("archive-{program}"));
    let run = Command::new(&exe)
        .args(args)
        .env("HRR_CAPTURE_OUTPUT", &out)
        .env("LD_PRELOAD", capture_so())
        .env("HRR_CAPTURE_DISK_RESERVE", "16M")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        run.status.success() && stdout.contains(ok),
        "{stdout}{stderr}"
    );
    let a = Archive::open(&out, Limits::default()).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    (a, stderr)
}

/// nvcc's default build and libraries such as cuBLAS link no CUDA library: they open the
/// driver with dlopen, take `cuGetProcAddress_v2` with dlsym, and every driver function
/// from that. Capture hands out its own functions along both paths, so each call is
/// recorded once, in order, with the D2H copy's bytes; an `RTLD_NEXT` lookup keeps libc's
/// answer; nothing is unmodelled.
#[test]
fn driver_functions_found_through_dlsym_and_cu_get_proc_address_are_recorded() {
    let Some(dir) = build("lookup") else {
        return;
    };
    let driver = dir.path().join("libcuda.so.1");
    let (a, stderr) = capture_program(
        dir.path(),
        "lookup_program",
        false,
        &[&driver],
        "round trip ok",
    );
    let p = &a.processes[0];
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    assert_eq!(
        ids,
        [
            id::Init,
            id::MemAlloc,
            id::MemcpyHtoD,
            id::MemsetD32,
            id::MemcpyDtoH,
            id::MemFree
        ],
        "{stderr}"
    );
    // The D2H copy's expected bytes are in the archive.
    let dtoh = Payload::parse(&p.events[4].payload).unwrap();
    let blob = dtoh.blob(BLOB_FIELD | 1, "expected output").unwrap();
    let bytes = p.load_blob(&blob).unwrap();
    assert_eq!(bytes.len(), 256);
    assert_eq!(&bytes[128..132], &0x01020304u32.to_le_bytes());
    assert!(
        p.manifest
            .unmodelled_apis
            .iter()
            .all(|u| u.exempt.is_some()),
        "{:?}",
        p.manifest.unmodelled_apis
    );
}

/// The shared runtime finds driver functions for the program with lookups capture leaves
/// alone (they are its own machinery): `cudaGetDriverEntryPoint*` hands the program the
/// driver's function, which capture replaces with its own, so the calls are recorded.
#[test]
fn driver_functions_from_the_runtime_entry_point_lookup_are_recorded() {
    let Some(dir) = build("entry-point") else {
        return;
    };
    let (a, stderr) = capture_program(
        dir.path(),
        "entry_point_program",
        true,
        &[],
        "entry points ok",
    );
    let ids: Vec<u16> = a.processes[0]
        .events
        .iter()
        .map(|e| e.header.api_id)
        .collect();
    assert_eq!(ids, [id::MemAlloc, id::MemFree], "{stderr}");
}

/// A second driver loaded into a namespace of its own (dlmopen) is beyond capture: the
/// program's lookups in it keep the driver's functions (capture's would forward to the
/// base namespace's driver, another instance), so the program runs as without capture;
/// the lookups and the instance itself are recorded as unmodelled calls, so replay
/// refuses the archive naming them.
#[test]
fn a_driver_in_a_dlmopen_namespace_is_left_alone_and_refused_by_name() {
    let Some(dir) = build("dlmopen") else {
        return;
    };
    let driver = dir.path().join("libcuda.so.1");
    let (a, stderr) = capture_program(
        dir.path(),
        "dlmopen_program",
        true,
        &[&driver],
        "dlmopen ok",
    );
    assert!(stderr.contains("dlmopen"), "{stderr}");
    let p = &a.processes[0];
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    assert_eq!(ids[0], id::Init, "{stderr}");
    assert!(
        !ids.contains(&id::MemAlloc),
        "nothing of the other namespace is recorded as replayable: {ids:?}"
    );
    let names: Vec<String> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::UNMODELLED_CALL)
        .filter_map(|e| {
            let p = Payload::parse(&e.payload).ok()?;
            p.str(fid::API_NAME, "api").ok().map(str::to_string)
        })
        .collect();
    assert_eq!(
        names,
        [
            "cuMemAlloc_v2",
            "cuMemFree_v2",
            "dlmopen namespace: libcuda.so.1"
        ],
        "{stderr}"
    );
    assert!(
        p.manifest
            .unmodelled_apis
            .iter()
            .any(|u| u.api == "dlmopen namespace: libcuda.so.1"),
        "{:?}",
        p.manifest.unmodelled_apis
    );
}

/// HRR_CAPTURE_CODE_STORE: two captures of the same program write its modules into the
/// store once; neither archive holds a copy, and each reads them back through its
/// manifest.
#[test]
fn a_code_store_keeps_modules_once_for_every_archive() {
    let Some(dir) = build("store") else {
        return;
    };
    let ptx = MODULE_PTX;
    let module = dir.path().join("module.ptx");
    std::fs::write(&module, ptx).unwrap();
    let store = dir.path().join("store");
    let mut objects = Vec::new();
    for run in ["one", "two"] {
        let out = dir.path().join(run);
        let r = dir
            .command(&out, &[module.to_str().unwrap()])
            .env("HRR_CAPTURE_CODE_STORE", &store)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{err}");
        assert!(err.contains("in the code store)"), "{err}");
        let a = Archive::open(&out, Limits::default()).unwrap();
        let p = &a.processes[0];
        assert!(p.manifest.code_object_count >= 1, "{:?}", p.manifest);
        assert_eq!(
            p.manifest.code_objects_in_store, p.manifest.code_object_count,
            "every module in the store"
        );
        assert_eq!(
            std::fs::read_dir(p.dir.join("code_objects"))
                .unwrap()
                .count(),
            0
        );
        let co = payload(p, 14)
            .str(fid::CODE_OBJECT, "co")
            .unwrap()
            .to_string();
        assert_eq!(p.load_code_object(&co).unwrap(), ptx.as_bytes());
        objects.push(p.manifest.code_object_count);
    }
    let stored = std::fs::read_dir(store.join("code_objects"))
        .unwrap()
        .count() as u64;
    assert_eq!(stored, objects[0], "stored once for both archives");
}
