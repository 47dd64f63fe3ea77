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
/// On a `CopyOutput` record: the sequence id of the copy whose output it carries.
pub const COPY_SEQ: u16 = 16;
/// On a `CopyOutput` record: the field id of the copy's destination parameter (its
/// bytes are the blob at `BLOB_FIELD | COPY_FIELD`).
pub const COPY_FIELD: u16 = 17;
