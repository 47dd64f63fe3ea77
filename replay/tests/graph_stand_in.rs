//! Programs against the stand-in runtime, end to end without a GPU (graphs, and the 3D
//! allocations and copies recorded as the rows they equal). Stream capture into a graph: a C program
//! (tests/stand_in/graph_program.c) captures two streams joined by events in global mode
//! while a second thread copies on a stream of its own, then launches the graph three
//! times with new input, against the stand-in runtime (standin/, `hrr_testkit::standin`) that
//! enforces stream capture's rules: waiting for a capturing stream, or for any stream
//! from a thread in global mode while another thread captures globally, invalidates the
//! capture and EndCapture fails. The program must run under libhrr_capture.so as it runs
//! without it; the archive must hold each launch's input and output; replay against the
//! same runtime must pass every D2H check, and fail exactly an edited graph output.
//!
//! Needs cc and CUDA 13's headers (the stand-in's build; a skip without them, a failure
//! under `CI=true`).

mod common;
#[path = "common/stand_in.rs"]
#[allow(dead_code)] // the library is built here with the programs linked to it
mod stand_in;

use std::path::{Path, PathBuf};
use std::process::Command;

use hrr_archive::api::{
    fid, id, semantic, ApiDesc, BLOB_FIELD, CAPTURE_FIELD, POINTER_WORDS_FIELD,
    SOURCE_PENDING_FIELD,
};
use hrr_archive::payload::{Payload, PayloadWriter};
use hrr_archive::{Archive, Limits};
use hrr_contract::{ReplayResult, Verdict};

fn cc(args: &[&str]) {
    let o = Command::new("cc").args(args).output().expect("cc");
    assert!(
        o.status.success(),
        "cc {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The stand-in runtime (standin/, as libcudart.so.13 with libcuda.so.1 beside it, a link
/// to the same file) and the program `name`, built into `dir`; None where the stand-in
/// cannot be built here (a skip through `hrr_testkit`). The program links the runtime
/// alone: a link to the file names its soname, libcudart.so.13, so capture finds the driver
/// by name on the loader path ([`under_capture`]).
#[track_caller]
fn build(dir: &Path, name: &str) -> Option<(PathBuf, PathBuf)> {
    let cuda = hrr_testkit::standin::cuda(&dir.join("standin"), None, &[])?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stand_in");
    let exe = dir.join(name);
    let mut args: Vec<String> = vec![
        "-O1".into(),
        "-o".into(),
        exe.to_string_lossy().into(),
        src.join(format!("{name}.c")).to_string_lossy().into(),
    ];
    args.extend(cuda.link_args());
    args.push("-lpthread".into());
    cc(&args.iter().map(String::as_str).collect::<Vec<_>>());
    Some((cuda.lib, exe))
}

/// The capture library this build of the workspace made (never built here).
fn capture_so() -> PathBuf {
    hrr_testkit::built::built(
        &hrr_testkit::built::CAPTURE,
        Path::new(env!("CARGO_BIN_EXE_hrr-replay")),
    )
}

/// Replays `archive` against the stand-in runtime: its result.
fn replay(lib: &Path, archive: &Path) -> ReplayResult {
    replay_with(lib, archive, &[])
}

fn replay_with(lib: &Path, archive: &Path, flags: &[&str]) -> ReplayResult {
    let json = archive.with_extension("json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(flags)
        .arg(archive)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", lib)
        // The driver is the same library (its rows: batched copies' driver forms).
        .env("HRR_REPLAY_LIBCUDA", lib)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let r: ReplayResult = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r.exit_code as i32, o.status.code().unwrap(), "{text}");
    r
}

/// The archive at `out`, and a count of its first process's records of a kind.
fn opened(out: &Path) -> (Archive, impl Fn(u16) -> usize) {
    let a = Archive::open(out, Limits::default()).unwrap();
    let kinds: Vec<u16> = a.processes[0]
        .events
        .iter()
        .map(|e| e.header.api_id)
        .collect();
    (a, move |k| kinds.iter().filter(|&&id| id == k).count())
}

/// Replays `archive` against the stand-in: it passes, with `d2h` checks, none failing.
fn replays_passing(lib: &Path, archive: &Path, d2h: u64) -> ReplayResult {
    let r = replay(lib, archive);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.failures);
    assert_eq!((r.counts.d2h_pass, r.counts.d2h_fail), (d2h, 0));
    r
}

/// The D2H node outputs of the graph launch `launch` of `p`, as (node seq, bytes): inline
/// in the launch, or, for the nodes it lists as pending, from the `CopyOutput` records
/// naming it and the node.
fn graph_outputs(
    p: &hrr_archive::ProcessArchive,
    launch: &hrr_archive::Event,
) -> Vec<(u64, Vec<u8>)> {
    let pl = Payload::parse(&launch.payload).unwrap();
    let mut out: Vec<(u64, Vec<u8>)> = pl
        .all(fid::GRAPH_OUTPUT)
        .map(|f| {
            let n = f.as_nested().unwrap();
            let bytes = p
                .load_blob(&n.blob(fid::NODE_BYTES, "bytes").unwrap())
                .unwrap();
            (n.u64(fid::NODE_SEQ, "seq").unwrap(), bytes)
        })
        .collect();
    if pl.get(fid::GRAPH_OUTPUT_PENDING).is_some() {
        for node in pl.u64_array(fid::GRAPH_OUTPUT_PENDING, "pending").unwrap() {
            let attached = p
                .events
                .iter()
                .filter(|e| e.header.api_id == semantic::COPY_OUTPUT)
                .map(|e| Payload::parse(&e.payload).unwrap())
                .find(|c| {
                    c.u64(fid::COPY_SEQ, "copy").unwrap() == launch.header.seq
                        && c.get(fid::COPY_NODE).map(|f| f.as_u64().unwrap()) == Some(node)
                })
                .unwrap_or_else(|| panic!("no CopyOutput for node {node}"));
            let r = attached
                .blob(BLOB_FIELD | fid::GRAPH_OUTPUT, "bytes")
                .unwrap();
            out.push((node, p.load_blob(&r).unwrap()));
        }
    }
    out
}

/// `exe` (linked against the stand-in `lib`) under capture into `out`. The stand-in's
/// directory is on the loader path, as the harness puts it: capture asks the loaded CUDA
/// driver for kernels' parameter layouts (`cuFuncGetParamInfo`), finding it by name
/// (libcuda.so.1, a link to the runtime's file, so the library already loaded).
fn under_capture(lib: &Path, exe: &Path, out: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env("HRR_CAPTURE_OUTPUT", out)
        .env("LD_PRELOAD", capture_so())
        .env("LD_LIBRARY_PATH", lib.parent().unwrap())
        // KB-sized archives: the machine's free space is not under test here.
        .env("HRR_CAPTURE_DISK_RESERVE", "16M");
    c
}

/// Runs `exe args` natively and under capture into `out`: both must exit 0.
fn native_and_captured(lib: &Path, exe: &Path, args: &[&str], out: &Path) {
    let native = Command::new(exe).args(args).output().unwrap();
    assert!(native.status.success(), "native: {native:?}");
    let run = under_capture(lib, exe, out).args(args).output().unwrap();
    assert!(run.status.success(), "captured: {run:?}");
}

/// An explicit graph (an H2D node, a memset node, D2D nodes through graph memory between
/// an allocation node and a free node, two kernel nodes in a chain, one updated in the
/// executable graph between launches, an empty join, an event record node, a child graph
/// holding the D2H node) is rebuilt node by node with
/// its dependencies; the stand-in runs the kernel nodes' `hrr_xor_bytes` over the bytes and
/// ready nodes last added first, so a graph without them computes something else. A graph
/// with a host node is rebuilt with replay's own host function in the node.
#[test]
fn an_explicit_graph_is_rebuilt_with_its_dependencies_and_a_host_node_kept() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "graph_explicit") else {
        return;
    };
    let out = d.path().join("explicit");
    native_and_captured(&lib, &exe, &[], &out);
    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    let child_node = p
        .events
        .iter()
        .find(|e| e.header.api_id == id::GraphAddMemcpyNode1D)
        .unwrap();
    // The D2H node in the child graph is checked at every launch of the parent.
    let launch = p
        .events
        .iter()
        .find(|e| e.header.api_id == semantic::GRAPH_LAUNCH)
        .unwrap();
    let outputs = graph_outputs(p, launch);
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].0, child_node.header.seq);
    // The kernel nodes and the update are records of their own, complete, their device
    // pointer argument marked for translation.
    let kinds = |k: u16| p.events.iter().filter(move |e| e.header.api_id == k);
    assert_eq!(kinds(semantic::GRAPH_KERNEL_NODE).count(), 2);
    assert_eq!(
        kinds(semantic::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS).count(),
        2
    );
    assert_eq!(kinds(semantic::UNREPLAYABLE).count(), 0);
    let second = kinds(semantic::GRAPH_KERNEL_NODE).nth(1).unwrap();
    let first = kinds(semantic::GRAPH_KERNEL_NODE).next().unwrap();
    let kp = Payload::parse(&second.payload).unwrap();
    let kn = kp.get(fid::KERNEL_NODE).unwrap().as_nested().unwrap();
    let first_node = Payload::parse(&first.payload)
        .unwrap()
        .get(fid::KERNEL_NODE)
        .unwrap()
        .as_nested()
        .unwrap()
        .handle(fid::KN_NODE, "node")
        .unwrap();
    assert_eq!(
        kn.u64_array(fid::KN_DEPS, "deps").unwrap(),
        vec![first_node]
    );
    assert_eq!(kp.str(fid::NAME, "name").unwrap(), "hrr_xor_bytes");
    let arg0 = kp.all(fid::ARG).next().unwrap().as_nested().unwrap();
    assert_eq!(
        arg0.u64_array(fid::ARG_POINTER_WORDS, "words").unwrap(),
        vec![0]
    );
    let r = replays_passing(&lib, &out, 3);
    // The graph memory's captured address maps to the replay allocation node's.
    assert_eq!(r.counts.untranslated_pointers, 0);

    // A kernel node whose arguments come packed in `extra` is refused by name.
    let out = d.path().join("extra");
    native_and_captured(&lib, &exe, &["extra"], &out);
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].api, "cudaGraphAddKernelNode");
    assert!(
        r.failures[0].message.contains("extra"),
        "{}",
        r.failures[0].message
    );

    // A host node is rebuilt as an ordering point running replay's own host function.
    let out = d.path().join("host");
    native_and_captured(&lib, &exe, &["host"], &out);
    replays_passing(&lib, &out, 3);
}

/// Host code the program queues (tests/stand_in/host_fns.c): stream host functions and
/// callbacks, a graph's host node (its parameters replaced in the graph and the
/// executable graph), a host function captured into a graph. Each is recorded as its row
/// and replayed as an ordering point running replay's own function. A host function that
/// writes the pinned input of work queued after it: an asynchronous copy's source is read
/// when the copy runs (capture's own host function just before it), a synchronous copy's
/// once it returned, and both replay with the bytes the host function wrote (the output
/// proves it); a kernel reading that memory in place is refused by name.
#[test]
fn host_functions_replay_as_ordering_points_and_what_they_write_is_read_in_order() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "host_fns") else {
        return;
    };
    let out = d.path().join("kept");
    native_and_captured(&lib, &exe, &[], &out);
    let (_, count) = opened(&out);
    assert_eq!(count(id::LaunchHostFunc), 2);
    assert_eq!(count(id::StreamAddCallback), 1);
    assert_eq!(count(id::GraphAddHostNode), 1);
    assert_eq!(count(id::GraphHostNodeSetParams), 1);
    assert_eq!(count(id::GraphExecHostNodeSetParams), 1);
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    replays_passing(&lib, &out, 4);

    for how in ["write", "sync"] {
        let out = d.path().join(how);
        native_and_captured(&lib, &exe, &[how], &out);
        let r = replay(&lib, &out);
        assert_eq!(r.verdict, Verdict::Pass, "{how}: {:?}", r.failures);
        assert_eq!((r.counts.d2h_pass, r.counts.d2h_fail), (1, 0), "{how}");
        let a = Archive::open(&out, Limits::default()).unwrap();
        let p = &a.processes[0];
        // The asynchronous copy's source comes later, in the record naming it.
        let later: Vec<u64> = (p.events.iter())
            .filter(|e| {
                Payload::parse(&e.payload)
                    .unwrap()
                    .get(SOURCE_PENDING_FIELD)
                    .is_some()
            })
            .map(|e| e.header.seq)
            .collect();
        assert_eq!(later.len(), usize::from(how == "write"), "{how}");
        for seq in later {
            assert!(p
                .events
                .iter()
                .any(|e| e.header.api_id == semantic::COPY_OUTPUT
                    && Payload::parse(&e.payload)
                        .unwrap()
                        .u64(fid::COPY_SEQ, "copy")
                        .unwrap()
                        == seq));
        }
    }

    let out = d.path().join("snapshot");
    native_and_captured(&lib, &exe, &["snapshot"], &out);
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].api, "LaunchKernel");
    assert!(
        r.failures[0].message.contains("host function"),
        "{}",
        r.failures[0].message
    );
}

/// Graphs edited after they were made (tests/stand_in/graph_edits.c): a child graph asked
/// for through its node gains a kernel node, a node's containing graph is asked for, the
/// child is replaced in the executable graph, and a capture into a graph gains a dependency
/// on an explicit node. Each edit changes what the stand-in computes (ready nodes run last
/// added first), so replay passes only if it made every edit on its own handles.
#[test]
fn graphs_edited_through_child_nodes_and_capture_dependencies_replay() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "graph_edits") else {
        return;
    };
    let out = d.path().join("edits");
    native_and_captured(&lib, &exe, &[], &out);
    let (_, count) = opened(&out);
    assert_eq!(count(id::GraphChildGraphNodeGetGraph), 1);
    assert_eq!(count(id::GraphNodeGetContainingGraph), 2);
    assert_eq!(count(id::GraphExecChildGraphNodeSetParams), 1);
    assert_eq!(count(id::StreamUpdateCaptureDependencies), 1);
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    let r = replays_passing(&lib, &out, 3);
    assert_eq!(r.counts.untranslated_pointers, 0);
}

/// 3D allocations and peer copies (tests/stand_in/memory3d.c): `cudaMalloc3D` is recorded
/// as the pitched allocation it equals, a 3D peer copy within the device as the 3D copy it
/// equals, and the boxes land where the program put them at replay; a peer copy naming a
/// second device is refused by name.
#[test]
fn malloc3d_and_peer_copies_within_a_device_replay_and_between_devices_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "memory3d") else {
        return;
    };
    let out = d.path().join("one");
    native_and_captured(&lib, &exe, &[], &out);
    let (_, count) = opened(&out);
    assert_eq!(count(id::MallocPitch), 2);
    // Two whole copies in, the first box (async), the second, the whole copy out.
    assert_eq!((count(id::Memcpy3D), count(id::Memcpy3DAsync)), (4, 1));
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    replays_passing(&lib, &out, 1);

    let out = d.path().join("two");
    native_and_captured(&lib, &exe, &["two"], &out);
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].api, "cudaMemcpy3DPeer");
    assert!(
        r.failures[0].message.contains("between two devices"),
        "{}",
        r.failures[0].message
    );
}

/// Batched copies (tests/stand_in/batch_copies.c): every batch form of the runtime and the
/// driver is recorded as the copies it makes (`cudaMemcpyAsync` of kind default, the
/// driver's `cuMemcpyAsync`; a 3D one's as `cudaMemcpy3DAsync`, an array side counted in
/// its elements), and replay's copies move the same bytes: the six host results pass. A batch the runtime refused is refused by name.
#[test]
fn batched_copies_replay_as_their_copies_and_a_refused_batch_is_named() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "batch_copies") else {
        return;
    };
    let out = d.path().join("batches");
    native_and_captured(&lib, &exe, &[], &out);
    let (_, count) = opened(&out);
    // The overwrite's two; two in, two across, one whole; then the driver's two halves,
    // one whole, one single.
    assert_eq!((count(id::MemcpyAsync), count(id::CuMemcpyAsync)), (7, 4));
    // The 3D ones: host to array, array to pitched memory, back to the host, a sub-box.
    assert_eq!(count(id::Memcpy3DAsync), 4);
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    replays_passing(&lib, &out, 8);

    let out = d.path().join("refused");
    native_and_captured(&lib, &exe, &["refused"], &out);
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].api, "cudaMemcpyBatchAsync");
    assert!(
        r.failures[0].message.contains("the runtime refused"),
        "{}",
        r.failures[0].message
    );
}

/// The generic node calls (tests/stand_in/graph_nodes.c): a graph built and edited only
/// through `cudaGraphAddNode`, `cudaGraphNodeSetParams`, `cudaGraphExecNodeSetParams` and
/// the driver's `cuGraphAddNode[_v2]` is recorded as the typed calls each node's struct
/// equals, and replays: both launches' outputs pass. A node type capture does not model
/// is refused by name.
#[test]
fn generic_node_calls_replay_as_the_typed_calls_they_equal() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "graph_nodes") else {
        return;
    };
    let out = d.path().join("nodes");
    native_and_captured(&lib, &exe, &[], &out);
    let (_, count) = opened(&out);
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    // The runtime's kernel node and the driver's in the child; one update of each kind.
    assert_eq!(count(semantic::GRAPH_KERNEL_NODE), 2);
    assert_eq!(count(semantic::GRAPH_KERNEL_NODE_SET_PARAMS), 1);
    assert_eq!(count(semantic::GRAPH_EXEC_KERNEL_NODE_SET_PARAMS), 1);
    for (row, n) in [
        (id::GraphAddMemsetNode, 1),
        (id::GraphAddEventRecordNode, 1),
        (id::GraphAddEventWaitNode, 1),
        (id::GraphAddHostNode, 1),
        (id::GraphAddEmptyNode, 2),
        (id::GraphAddChildGraphNode, 1),
        (id::GraphAddMemAllocNode, 1),
        (id::GraphAddMemFreeNode, 1),
        (id::GraphExecHostNodeSetParams, 1),
    ] {
        assert_eq!(count(row), n, "row {row}");
    }
    replays_passing(&lib, &out, 2);

    let out = d.path().join("conditional");
    native_and_captured(&lib, &exe, &["conditional"], &out);
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].api, "cudaGraphAddNode");
    assert!(
        r.failures[0].message.contains("a conditional node"),
        "{}",
        r.failures[0].message
    );
}

/// Inter-process handles (tests/stand_in/ipc_handles.c): the runtime's and the driver's
/// `IpcGet*Handle` calls and pool exports replay (replay makes handles of its own, which
/// nothing opens, and closes the file descriptors it gets), and
/// a mismatch after the first of them names it as a possible cause: another process may
/// have written the memory. A mismatch before it names no such cause.
#[test]
fn ipc_handles_replay_and_a_later_mismatch_names_them() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "ipc_handles") else {
        return;
    };
    let reads = |out: &Path| -> Vec<u64> {
        let (a, count) = opened(out);
        let p = &a.processes[0];
        assert_eq!(count(semantic::UNREPLAYABLE), 0);
        for row in [
            id::IpcGetMemHandle,
            id::IpcGetEventHandle,
            id::DrvIpcGetMemHandle,
            id::DrvIpcGetEventHandle,
            id::MemPoolExportToShareableHandle,
            id::DrvMemPoolExportToShareableHandle,
            id::MemPoolExportPointer,
            id::DrvMemPoolExportPointer,
        ] {
            assert_eq!(count(row), 1, "row {row}");
        }
        (p.events.iter())
            .filter(|e| e.header.api_id == id::Memcpy)
            .map(|e| e.header.seq)
            .skip(1)
            .collect()
    };
    let out = d.path().join("handles");
    native_and_captured(&lib, &exe, &[], &out);
    let seqs = reads(&out);
    assert_eq!(seqs.len(), 2, "the two reads back");
    replays_passing(&lib, &out, 2);

    for (i, named) in [(1, true), (0, false)] {
        let out = d.path().join(format!("edited-{i}"));
        native_and_captured(&lib, &exe, &[], &out);
        let seq = reads(&out)[i];
        hrr_archive::edit::edit_expected_output(&out, Some(seq), 0, Limits::default()).unwrap();
        let r = replay(&lib, &out);
        assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
        let m = &r.failures[0].message;
        assert_eq!(
            m.contains("handed another process a handle to its memory or events (cudaIpcGetMemHandle at event"),
            named,
            "{m}"
        );
    }
}

/// A mapped output larger than a piece (tests/stand_in/mapped_pieces.c): a kernel rewrites
/// a 40 MiB mapped buffer, and the output after the synchronisation is recorded as three
/// `MappedOutput` pieces naming their allocation, each checked on its own; an edited byte
/// of the middle piece fails as bytes of that allocation, at that piece's offset.
#[test]
fn a_large_mapped_output_is_checked_piece_by_piece() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "mapped_pieces") else {
        return;
    };
    let out = d.path().join("archive");
    native_and_captured(&lib, &exe, &[], &out);
    let (a, count) = opened(&out);
    let pieces: Vec<(u64, u64, u64, Option<u64>)> = a.processes[0]
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::MAPPED_OUTPUT)
        .map(|e| {
            let m = Payload::parse(&e.payload).unwrap();
            (
                e.header.seq,
                m.devptr(fid::MAPPED_START, "start").unwrap(),
                m.u64(fid::MAPPED_SIZE, "size").unwrap(),
                m.get(fid::MAPPED_ALLOCATION).map(|f| f.as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(count(semantic::MAPPED_OUTPUT), 3, "{pieces:x?}");
    let base = pieces[0].1;
    const MIB: u64 = 1 << 20;
    assert_eq!(
        pieces
            .iter()
            .map(|p| (p.1 - base, p.2, p.3))
            .collect::<Vec<_>>(),
        [
            (0, 16 * MIB, Some(base)),
            (16 * MIB, 16 * MIB, Some(base)),
            (32 * MIB, 8 * MIB, Some(base))
        ]
    );
    replays_passing(&lib, &out, 3);

    hrr_archive::edit::edit_expected_output(&out, Some(pieces[1].0), 5, Limits::default()).unwrap();
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    let f = &r.failures[0];
    assert_eq!(f.seq, pieces[1].0);
    assert!(
        f.api
            .starts_with(&format!("MappedOutput (bytes 0x1000000..0x2000000 of the allocation at {base:#x}, after cudaDeviceSynchronize")),
        "{f:?}"
    );
    assert_eq!(f.first_differing_offset, Some(5), "{f:?}");
}

/// Streams joined by events (tests/stand_in/mapped_joins.c): kernels on four streams write
/// a mapped buffer, the first stream waits for the others' events, and one event of the
/// first stream is synchronised before the host reads the buffer. That synchronisation
/// completes every stream's kernels through the waits, so the buffer is recorded there,
/// once, and replay checks it.
#[test]
fn streams_joined_by_events_complete_their_mapped_outputs() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "mapped_joins") else {
        return;
    };
    let out = d.path().join("archive");
    native_and_captured(&lib, &exe, &[], &out);
    let (a, count) = opened(&out);
    let p = &a.processes[0];
    assert_eq!(count(semantic::MAPPED_OUTPUT), 1);
    let sync = p
        .events
        .iter()
        .find(|e| e.header.api_id == id::EventSynchronize)
        .unwrap()
        .header
        .seq;
    let m = p
        .events
        .iter()
        .find(|e| e.header.api_id == semantic::MAPPED_OUTPUT)
        .map(|e| Payload::parse(&e.payload).unwrap())
        .unwrap();
    assert_eq!(m.u64(fid::MAPPED_SYNC, "sync").unwrap(), sync);
    assert_eq!(m.u64(fid::MAPPED_SIZE, "size").unwrap(), 1 << 20);
    replays_passing(&lib, &out, 1);
}

/// A synchronisation capture does not follow (mapped_joins.c "unseen": a blocking copy
/// waiting for a blocking stream's kernel), then a host write and a second kernel: capture
/// finds the first launch finished by the event it recorded after it, snapshots the host's
/// bytes at the second and names the first (`SNAPSHOT_AFTER`, with its stream), and the
/// replay passes. With the host writing while the first kernel is still queued ("racy"),
/// the second launch's snapshot is left out (`SNAPSHOT_IN_FLIGHT`), replay's buffer lacks
/// the write, and the mismatch names that snapshot as the cause and the remedy; captured
/// with `HRR_CAPTURE_SNAPSHOTS=every`, that program replays too. With the first stream
/// destroyed before the second kernel, on a new stream ("gone"), the first launch is named
/// with no stream (its handle may be the new stream's) and replay waits for the device.
#[test]
fn launches_finished_unobserved_are_asked_and_a_snapshot_left_out_is_named() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "mapped_joins") else {
        return;
    };
    fn launches(a: &Archive) -> Vec<(u64, Payload<'_>)> {
        a.processes[0]
            .events
            .iter()
            .filter(|e| e.header.api_id == semantic::LAUNCH_KERNEL)
            .map(|e| (e.header.seq, Payload::parse(&e.payload).unwrap()))
            .collect()
    }

    // The second launch's SNAPSHOT_AFTER, checked to name the first launch.
    fn after_first<'a>(l: &[(u64, Payload<'a>)]) -> Payload<'a> {
        let after = l[1]
            .1
            .get(fid::SNAPSHOT_AFTER)
            .unwrap()
            .as_nested()
            .unwrap();
        assert_eq!(
            after.u64(fid::SNAPSHOT_IN_FLIGHT_LAUNCH, "launch").unwrap(),
            l[0].0
        );
        after
    }

    let out = d.path().join("unseen");
    native_and_captured(&lib, &exe, &["unseen"], &out);
    let (a, _) = opened(&out);
    let l = launches(&a);
    assert_eq!(l.len(), 2);
    assert!(l[1].1.get(fid::SNAPSHOT_IN_FLIGHT).is_none());
    assert!(l[1].1.get(fid::PINNED_SNAPSHOT).is_some());
    let after = after_first(&l);
    assert_eq!(
        after.handle(fid::SNAPSHOT_STREAM, "stream").unwrap(),
        l[0].1.handle(fid::STREAM, "stream").unwrap()
    );
    // The blocking copy's byte and the buffer.
    replays_passing(&lib, &out, 2);

    let out = d.path().join("gone");
    native_and_captured(&lib, &exe, &["gone"], &out);
    let (a, _) = opened(&out);
    let l = launches(&a);
    assert_eq!(l.len(), 2);
    let after = after_first(&l);
    assert!(
        after.get(fid::SNAPSHOT_STREAM).is_none(),
        "a stream destroyed is named by none"
    );
    // The blocking copy's byte only: the buffer's MappedOutput waits for a synchronisation
    // that completes the first launch too, which the new stream's is not.
    replays_passing(&lib, &out, 1);

    let out = d.path().join("racy");
    native_and_captured(&lib, &exe, &["racy"], &out);
    let (a, _) = opened(&out);
    let l = launches(&a);
    assert!(l[1].1.get(fid::SNAPSHOT_IN_FLIGHT).is_some());
    let r = replay(&lib, &out);
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.failures);
    let f = &r.failures[0].message;
    assert!(
        f.starts_with("D2H check failed")
            && f.contains("MappedOutput")
            && f.contains("capture left a launch's snapshot of this memory out, the launch at seq")
            && f.contains("HRR_CAPTURE_SNAPSHOTS=every"),
        "{f}"
    );

    let out = d.path().join("every");
    let run = under_capture(&lib, &exe, &out)
        .arg("racy")
        .env("HRR_CAPTURE_SNAPSHOTS", "every")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    replays_passing(&lib, &out, 1);
}

/// A graph whose kernel node reached mapped memory is pointed at other memory in its
/// executable graph and the first freed (mapped_joins.c "swapped"): the next launch does
/// not read the freed memory at capture (it was unmapped: the program faulted), and the
/// replay passes, each buffer checked after its launch.
#[test]
fn memory_freed_after_a_graph_node_moved_off_it_is_not_read_at_the_next_launch() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "mapped_joins") else {
        return;
    };
    let out = d.path().join("swapped");
    native_and_captured(&lib, &exe, &["swapped"], &out);
    replays_passing(&lib, &out, 2);
}

/// Array planes and the device list (tests/stand_in/planes.c): an NV12 array's planes,
/// asked for by the runtime and the driver, are mapped to replay's (the chroma plane's
/// two-byte elements known from the driver's description, so its 3D copy's box is right);
/// a plane the array does not have fails at replay as at capture; `cudaSetValidDevices`
/// passes its list again.
#[test]
fn array_planes_and_the_device_list_replay() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "planes") else {
        return;
    };
    let out = d.path().join("archive");
    native_and_captured(&lib, &exe, &[], &out);
    let (a, count) = opened(&out);
    let p = &a.processes[0];
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    // Two planes given (runtime, driver), a third refused; the device list.
    assert_eq!(count(id::ArrayGetPlane), 3);
    assert_eq!(count(id::SetValidDevices), 1);
    // The chroma plane's 3D copy is recorded whole: its element size was known.
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );
    replays_passing(&lib, &out, 2);
}

/// CUDA 13.5's execution contexts (tests/stand_in/exec_ctx.c): a device's context, streams
/// made in it, an event recorded over it, a wait and a synchronisation of it, all rows;
/// each round's page-locked output is recorded whole (the context's event and
/// synchronisation cover the reads in flight) and replays.
#[test]
fn execution_contexts_replay() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "exec_ctx") else {
        return;
    };
    let out = d.path().join("archive");
    native_and_captured(&lib, &exe, &[], &out);
    let (a, count) = opened(&out);
    let p = &a.processes[0];
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    for (row, n) in [
        (id::DeviceGetExecutionCtx, 1),
        (id::ExecutionCtxStreamCreate, 2),
        (id::ExecutionCtxRecordEvent, 1),
        (id::ExecutionCtxWaitEvent, 1),
        (id::ExecutionCtxSynchronize, 1),
    ] {
        assert_eq!(count(row), n, "row {row}");
    }
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );
    replays_passing(&lib, &out, 2);
}

/// A graph launched behind a host function that waits for the program
/// (tests/stand_in/graph_gate.c): capture reads the D2H node's page-locked output on a
/// reader once the launch completed, never waiting for the stream in `cudaGraphLaunch`
/// (which would keep the gate shut: the program would say so after 5 s). Each launch
/// names its pending node, whose bytes come in a `CopyOutput` record naming the launch and
/// the node; replay compares them after its own launch, and an edited one fails exactly
/// that launch's check.
#[test]
fn a_graph_behind_a_host_function_is_not_waited_for_at_its_launch() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "graph_gate") else {
        return;
    };
    let out = d.path().join("archive");
    native_and_captured(&lib, &exe, &[], &out);
    let (a, count) = opened(&out);
    let p = &a.processes[0];
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    let launches: Vec<u64> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::GRAPH_LAUNCH)
        .map(|e| {
            let pl = Payload::parse(&e.payload).unwrap();
            assert!(pl.get(fid::GRAPH_OUTPUT).is_none(), "read at the launch");
            assert_eq!(
                pl.u64_array(fid::GRAPH_OUTPUT_PENDING, "pending")
                    .unwrap()
                    .len(),
                1
            );
            e.header.seq
        })
        .collect();
    assert_eq!(launches.len(), 3);
    let attached: Vec<u64> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == semantic::COPY_OUTPUT)
        .filter_map(|e| {
            let pl = Payload::parse(&e.payload).unwrap();
            pl.get(fid::COPY_NODE)?;
            Some(pl.u64(fid::COPY_SEQ, "copy").unwrap())
        })
        .collect();
    assert_eq!(attached, launches);
    replays_passing(&lib, &out, 3);
    let edited =
        hrr_archive::edit::edit_expected_output(&out, Some(launches[1]), 5, Limits::default())
            .unwrap();
    assert_eq!(edited.seq, launches[1]);
    let r = replay(&lib, &out);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].seq, launches[1]);
    assert_eq!(r.failures[0].first_differing_offset, Some(5));
}

/// A library's kernel list and managed variable (tests/stand_in/library.c): each listed
/// kernel is recorded as the `GetKernel` of its name, found by name in replay's own load;
/// the managed variable is mapped to replay's, and what the host wrote there reaches the
/// launch that reads it: the output passes.
#[test]
fn library_kernel_lists_and_managed_variables_replay() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "library") else {
        return;
    };
    let out = d.path().join("archive");
    native_and_captured(&lib, &exe, &[], &out);
    let (a, count) = opened(&out);
    let p = &a.processes[0];
    assert_eq!(count(semantic::UNREPLAYABLE), 0);
    assert_eq!(
        count(semantic::MODULE_GET_FUNCTION),
        2,
        "one per listed kernel"
    );
    assert_eq!(count(semantic::SYMBOL_ADDRESS), 1, "the managed variable");
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );
    let r = replay(&lib, &out);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.failures);
    // The managed variable as the synchronisation leaves it, and the copy back.
    assert_eq!((r.counts.d2h_pass, r.counts.d2h_fail), (2, 0));
}

#[test]
fn a_captured_graph_is_recorded_without_changing_the_program_and_replayed() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "graph_program") else {
        return;
    };
    let native = Command::new(&exe).output().unwrap();
    assert!(native.status.success(), "native: {native:?}");

    let out = d.path().join("archive");
    let run = under_capture(&lib, &exe, &out).output().unwrap();
    assert_eq!(
        run.status.code(),
        native.status.code(),
        "capture changed the program: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );

    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    assert!(
        p.manifest.capture_failures.is_empty(),
        "{:?}",
        p.manifest.capture_failures
    );
    let payload = |i: usize| Payload::parse(&p.events[i].payload).unwrap();
    // The copies made into the capturing streams carry their capture; the D2H one has no
    // expected bytes of its own (it had not run).
    let captured: Vec<usize> = (0..p.events.len())
        .filter(|&i| payload(i).get(CAPTURE_FIELD).is_some())
        .collect();
    assert_eq!(captured.len(), 2, "the H2D and the D2H copy of the graph");
    let d2h_node = p.events[captured[1]].header.seq;
    assert_eq!(p.events[captured[1]].header.api_id, id::MemcpyAsync);
    assert!(payload(captured[1]).get(BLOB_FIELD | 1).is_none());
    // Each launch: the input as it was at that launch, the output after it.
    let launches: Vec<usize> = (0..p.events.len())
        .filter(|&i| p.events[i].header.api_id == semantic::GRAPH_LAUNCH)
        .collect();
    assert_eq!(launches.len(), 3);
    for (l, &i) in launches.iter().enumerate() {
        let pl = payload(i);
        let node = |f: u16| {
            let n = pl.get(f).unwrap().as_nested().unwrap();
            let bytes = p.load_blob(&n.blob(fid::NODE_BYTES, "bytes").unwrap());
            (n.u64(fid::NODE_SEQ, "seq").unwrap(), bytes.unwrap())
        };
        let want: Vec<u8> = (0..256).map(|b| (b * 7 + l * 50) as u8).collect();
        let (in_seq, input) = node(fid::GRAPH_INPUT);
        let (out_seq, output) = graph_outputs(p, &p.events[i]).remove(0);
        assert_eq!(
            (in_seq, out_seq),
            (p.events[captured[0]].header.seq, d2h_node)
        );
        assert_eq!((input, output), (want.clone(), want), "launch {l}");
    }

    let r = replay(&lib, &out);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.failures);
    // Three launches' D2H node and the second thread's copy.
    assert_eq!((r.counts.d2h_pass, r.counts.d2h_fail), (4, 0));

    // One byte of the second launch's output edited: exactly that check fails.
    let seq = p.events[launches[1]].header.seq;
    let edited = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--edit-expected", "5", "--seq", &seq.to_string()])
        .arg(&out)
        .output()
        .unwrap();
    assert!(edited.status.success(), "{edited:?}");
    let r = replay(&lib, &out);
    assert_eq!((r.counts.d2h_pass, r.counts.d2h_fail), (3, 1));
    let f = &r.failures[0];
    assert_eq!((f.seq, f.first_differing_offset), (seq, Some(5)));
    assert!(f.api.contains(&format!("node seq {d2h_node}")), "{}", f.api);
}

/// A non-blocking stream the program created.
fn create_stream(w: &hrr_archive::ProcessWriter, stream: u64) {
    let mut p = PayloadWriter::new();
    p.handle(ApiDesc::field_id(0), stream)
        .u64(ApiDesc::field_id(1), 1);
    w.append(id::StreamCreateWithFlags, 0, 1, 0, p.as_bytes())
        .unwrap();
}

/// A launch of the stand-in's `kernel` on `stream` with `args` 8-byte zero arguments.
fn launch_kernel(w: &hrr_archive::ProcessWriter, code: &str, stream: u64, args: usize) {
    let mut p = PayloadWriter::new();
    p.str(fid::NAME, "kernel")
        .str(fid::CODE_OBJECT, code)
        .u64_array(fid::GRID, &[1, 1, 1])
        .u64_array(fid::BLOCK, &[32, 1, 1])
        .u64(fid::SHARED_MEM, 0)
        .handle(fid::STREAM, stream);
    for _ in 0..args {
        p.nested_with(fid::ARG, |a| {
            a.bytes(fid::ARG_BYTES, &0u64.to_le_bytes(), false);
        });
    }
    w.append(semantic::LAUNCH_KERNEL, 0, 1, 0, p.as_bytes())
        .unwrap();
}

/// A kernel first launched inside a capture: replay loads its module and function before
/// the capture begins (the stand-in invalidates a capture during which code is loaded, so
/// `cudaStreamEndCapture` would then fail).
#[test]
fn kernels_launched_in_a_capture_are_loaded_before_it() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, _)) = build(d.path(), "graph_program") else {
        return;
    };
    let root = d.path().join("kernel");
    let w = common::cuda_writer(&root);
    let code = w
        .put_code_object(&stand_in::ptx(&[("kernel", &[8, 8])], &[]))
        .unwrap();
    let (stream, graph, exec) = (0x5100u64, 0xa0u64, 0xe0u64);
    create_stream(&w, stream);
    let mut p = PayloadWriter::new();
    p.handle(1, stream).u64(2, 0);
    w.append(id::StreamBeginCapture, 0, 1, 0, p.as_bytes())
        .unwrap();
    for _ in 0..2 {
        // The stand-in's `kernel` takes two 8-byte parameters (replay checks a launch's
        // arguments against them).
        launch_kernel(&w, &code.to_hex(), stream, 2);
    }
    let mut p = PayloadWriter::new();
    p.handle(1, stream).handle(2, graph);
    w.append(id::StreamEndCapture, 0, 1, 0, p.as_bytes())
        .unwrap();
    let mut p = PayloadWriter::new();
    p.handle(1, exec).handle(2, graph).u64(3, 0);
    w.append(id::GraphInstantiateWithFlags, 0, 1, 0, p.as_bytes())
        .unwrap();
    let mut p = PayloadWriter::new();
    p.handle(fid::HANDLE, exec).handle(fid::STREAM, stream);
    w.append(semantic::GRAPH_LAUNCH, 0, 1, 0, p.as_bytes())
        .unwrap();
    w.finish().unwrap();

    let r = replay(&lib, &root);
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.counts.events_replayed, r.counts.events_total);
    assert_eq!(r.counts.kernels_launched, 2);
}

/// A launch record with fewer arguments than its kernel's parameters (a capture that
/// could not describe the kernel, or an edited archive) is refused by name: launched, the
/// driver would read parameters that are not there (on the H200 replay crashed).
#[test]
fn a_launch_short_of_its_kernels_parameters_is_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, _)) = build(d.path(), "graph_program") else {
        return;
    };
    let root = d.path().join("short");
    let w = common::cuda_writer(&root);
    let code = w
        .put_code_object(&stand_in::ptx(&[("kernel", &[8, 8])], &[]))
        .unwrap();
    let stream = 0x5100u64;
    create_stream(&w, stream);
    for args in [2, 1] {
        launch_kernel(&w, &code.to_hex(), stream, args);
    }
    w.finish().unwrap();

    let r = replay(&lib, &root);
    assert_eq!(r.counts.kernels_launched, 1);
    assert_eq!(r.failures.len(), 1, "{:?}", r.failures);
    assert_eq!(r.failures[0].seq, 2);
    assert!(
        r.failures[0].message.contains(
            "kernel kernel takes 2 parameter(s) of [8, 8] bytes, the record gives 1 argument(s) of [8] bytes"
        ),
        "{}",
        r.failures[0].message
    );
}

/// Device pointers the program wrote into memory it copies to the device (the shape of
/// cuBLAS's pointer-array batched GEMMs): capture marks the words that held them, replay
/// uploads its own allocations' addresses there and expects its own addresses where the
/// array is read back; the small integer and the float beside them are left alone.
#[test]
fn device_pointers_inside_copied_bytes_are_translated_both_ways() {
    let d = tempfile::tempdir().unwrap();
    let Some((lib, exe)) = build(d.path(), "pointer_arrays") else {
        return;
    };
    let out = d.path().join("pointers");
    native_and_captured(&lib, &exe, &[], &out);
    let a = Archive::open(&out, Limits::default()).unwrap();
    let p = &a.processes[0];
    let copies: Vec<Payload> = p
        .events
        .iter()
        .filter(|e| e.header.api_id == id::MemcpyAsync)
        .map(|e| Payload::parse(&e.payload).unwrap())
        .collect();
    assert_eq!(copies.len(), 8);
    let words = |c: &Payload| c.u64_array(POINTER_WORDS_FIELD | 2, "words").ok();
    let words_d2h = |c: &Payload| c.u64_array(POINTER_WORDS_FIELD | 1, "words").ok();
    // The upload and the read-back: three pointers at 0, 8 and 16; the count and the
    // scale are no pointers. The data copies hold none.
    assert_eq!(words(&copies[0]), Some(vec![0, 8, 16]));
    assert_eq!(words_d2h(&copies[1]), Some(vec![0, 8, 16]));
    assert!(copies[2..]
        .iter()
        .all(|c| words(c).is_none() && words_d2h(c).is_none()));

    let r = replays_passing(&lib, &out, 4);
    assert_eq!(r.counts.untranslated_pointers, 0);
}
