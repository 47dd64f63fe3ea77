//! Field ids shared by the semantic records' payloads.

pub const HANDLE: u16 = 1;
pub const CODE_OBJECT: u16 = 2;
pub const HOST_STUB: u16 = 3;
pub const NAME: u16 = 4;
pub const SIZE: u16 = 5;
pub const GRID: u16 = 6;
pub const BLOCK: u16 = 7;
pub const SHARED_MEM: u16 = 8;
pub const STREAM: u16 = 9;
/// Repeated, one per kernel parameter: nested {ARG_OFFSET, ARG_SIZE, ARG_BYTES,
/// ARG_POINTER_WORDS}.
pub const ARG: u16 = 10;
pub const ARG_OFFSET: u16 = 1;
pub const ARG_SIZE: u16 = 2;
pub const ARG_BYTES: u16 = 3;
/// Inside an ARG: the byte offsets (a u64 array) of the argument's 8-byte words that
/// pointed into a live allocation at capture; replay translates those words. Absent
/// when no word did.
pub const ARG_POINTER_WORDS: u16 = 4;
/// Inside an ARG: the byte offsets (a u64 array) of the argument's 8-byte words that held
/// a live texture or surface object handle at capture; replay puts its own object's
/// handle there. Absent when no word did.
pub const ARG_OBJECT_WORDS: u16 = 55;
pub const KERNEL: u16 = 11;
pub const API_NAME: u16 = 12;
pub const REASON: u16 = 13;
pub const DEVICE_ADDRESS: u16 = 14;
/// Repeated on a launch, one per pinned host allocation a kernel argument points into:
/// nested {SNAPSHOT_START, SNAPSHOT_SIZE, SNAPSHOT_BYTES (a blob)}: the allocation's
/// content when the kernel was launched, which a kernel may read directly.
pub const PINNED_SNAPSHOT: u16 = 15;
pub const SNAPSHOT_START: u16 = 1;
pub const SNAPSHOT_SIZE: u16 = 2;
pub const SNAPSHOT_BYTES: u16 = 3;
/// Repeated on a launch, one per managed allocation its arguments reach that capture did
/// not snapshot because an earlier launch reaching it was still in flight (the host
/// cannot have written it without racing that kernel; replay keeps what its own kernels
/// made): nested {SNAPSHOT_START, SNAPSHOT_SIZE, SNAPSHOT_IN_FLIGHT_LAUNCH}.
pub const SNAPSHOT_IN_FLIGHT: u16 = 22;
/// Inside a SNAPSHOT_IN_FLIGHT: the sequence id of the launch still in flight.
pub const SNAPSHOT_IN_FLIGHT_LAUNCH: u16 = 4;
/// Repeated on a launch, one per stream and allocation it snapshots that launches on that
/// stream reach, which had finished on the device though no synchronisation capture
/// followed completed them: nested {SNAPSHOT_START, SNAPSHOT_IN_FLIGHT_LAUNCH (the
/// stream's latest such launch), SNAPSHOT_STREAM (its stream, a handle)}. Replay
/// synchronises that stream before it restores the snapshot, so its own launch does not
/// run under the bytes capture read after it.
pub const SNAPSHOT_AFTER: u16 = 23;
pub const SNAPSHOT_STREAM: u16 = 5;

// Launch configuration (semantic kinds 121-126); ids 40-49 are theirs.
/// A function attribute as the program passed it (`cudaFuncAttribute` /
/// `hipFuncAttribute`), on a FuncSetAttribute record.
pub const FUNC_ATTRIBUTE: u16 = 40;
/// The value set: an attribute's int, a cache or shared-memory configuration.
pub const CONFIG_VALUE: u16 = 41;
/// Repeated on a LaunchKernelEx record, one per launch attribute in the program's order:
/// nested {LAUNCH_ATTR_ID, LAUNCH_ATTR_VALUE (64 bytes, verbatim)}.
pub const LAUNCH_ATTR: u16 = 42;
pub const LAUNCH_ATTR_ID: u16 = 1;
pub const LAUNCH_ATTR_VALUE: u16 = 2;
/// hipExtLaunchKernel's start and stop events (handles, 0 for none) and flags.
pub const START_EVENT: u16 = 43;
pub const STOP_EVENT: u16 = 44;
pub const LAUNCH_FLAGS: u16 = 45;
/// Repeated on a graph launch, one per H2D node: nested {NODE_SEQ, NODE_BYTES}: the
/// host bytes the node reads, as they were when the graph was launched.
pub const GRAPH_INPUT: u16 = 16;
/// Repeated on a graph launch, one per D2H node: nested {NODE_SEQ, NODE_BYTES}: the host
/// bytes the node wrote, read once the launch completed.
pub const GRAPH_OUTPUT: u16 = 17;
/// Inside a GRAPH_INPUT / GRAPH_OUTPUT: the sequence id of the call that made the node.
pub const NODE_SEQ: u16 = 1;
/// Inside a GRAPH_INPUT / GRAPH_OUTPUT: the bytes (a blob).
pub const NODE_BYTES: u16 = 2;
/// On a graph launch whose outputs were not read: why (the launch went into a capturing
/// stream, so it ran only as part of that capture's graph).
pub const GRAPH_UNCHECKED: u16 = 18;
/// In a GRAPH_LAUNCH record: the sticky error (a kernel fault, `api::faults`) that the wait
/// for the launch's outputs returned at capture. The launch faulted: no output was read,
/// and replay expects its own wait to return the same error.
pub const GRAPH_FAULT: u16 = 74;
/// On a GRAPH_LAUNCH record: the D2H nodes (their NODE_SEQ values, u64 array) whose
/// bytes a reader reads once the launch completed, each in a `CopyOutput` record naming
/// the launch (COPY_SEQ) and the node (COPY_NODE): capture did not wait for the launch.
pub const GRAPH_OUTPUT_PENDING: u16 = 80;
/// On a `CopyOutput` record of a graph launch's D2H node: the node's NODE_SEQ (the bytes
/// are the blob at `BLOB_FIELD | GRAPH_OUTPUT`).
pub const COPY_NODE: u16 = 81;
/// The library an unmodelled call's symbol belongs to (`UNMODELLED_CALL`).
pub const LIBRARY: u16 = 19;
/// On an `UNMODELLED_CALL` naming a library with a private runtime
/// ([`private_runtime`](super::private_runtime)): the first sequence id whose checks it
/// may have affected (its work has no place in the log).
pub const SINCE_SEQ: u16 = 73;
/// On a `CopyOutput` record: the sequence id of the copy whose output it carries.
pub const COPY_SEQ: u16 = 20;
/// On a `CopyOutput` record: the field id of the copy's destination parameter (its
/// bytes are the blob at `BLOB_FIELD | COPY_FIELD`).
pub const COPY_FIELD: u16 = 21;
/// On a kernel node record (`semantic::GRAPH_KERNEL_NODE` and its parameter updates):
/// the node's graph handles, nested ([`kernel_node`](super::kernel_node)).
pub const KERNEL_NODE: u16 = 46;
/// In `KERNEL_NODE`: the graph the node was added to.
pub const KN_GRAPH: u16 = 1;
/// In `KERNEL_NODE`: the node's handle (returned by an add, passed to an update).
pub const KN_NODE: u16 = 2;
/// In `KERNEL_NODE`: the node's dependencies, in the program's order (u64 array).
pub const KN_DEPS: u16 = 3;
/// In `KERNEL_NODE`: the executable graph an exec update changes.
pub const KN_EXEC: u16 = 4;
/// On a 3D copy record with an array side: the bytes of one row of the copied box
/// (`extent.width` counts the array's elements; the host side's rows are this long).
pub const ARRAY_ROW_BYTES: u16 = 56;
/// On a `MappedOutput` record: the captured start address of the mapped or managed
/// allocation, or of the piece of it the record holds (`MAPPED_ALLOCATION`; a device
/// pointer field).
pub const MAPPED_START: u16 = 65;
/// On a `MappedOutput` record: the allocation's (or the piece's) size in bytes.
pub const MAPPED_SIZE: u16 = 66;
/// On a `MappedOutput` record: the allocation's (or the piece's) bytes after the
/// synchronisation (a blob).
pub const MAPPED_BYTES: u16 = 67;
/// On a `MappedOutput` record: the sequence id of the last completed launch whose
/// arguments reached the allocation.
pub const MAPPED_LAUNCH: u16 = 68;
/// On a `MappedOutput` record: the sequence id of the synchronisation that completed it.
pub const MAPPED_SYNC: u16 = 69;
/// On a `MappedOutput` record that holds one piece of a larger allocation (capture
/// records one a `pieces::PIECE` of 16 MiB): the allocation's captured start address;
/// `MAPPED_START` and `MAPPED_SIZE` are then the piece's. Absent: the record is the
/// whole allocation.
pub const MAPPED_ALLOCATION: u16 = 82;
/// On a `RangeRestore` record: the allocation's bytes at the range's start (a blob).
pub const RANGE_BYTES: u16 = 75;
/// On a `RangeMark` record: how many allocations the snapshot holds.
pub const RANGE_ALLOCATIONS: u16 = 76;
/// On a `RangeMark` record: nanoseconds the snapshot took (synchronisation and reads).
pub const RANGE_NS: u16 = 77;
/// On a `RangeMark` record: which occurrence of the trigger (1 = the first).
pub const RANGE_OCCURRENCE: u16 = 78;
/// On a `RangeMark` record: present (1) where the range ends.
pub const RANGE_END: u16 = 79;
