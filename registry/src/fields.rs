//! The record fields beside a row's parameters (a parameter's host bytes, the pointer
//! words in them, the copy's direction, a capturing stream's sequence, a pending output or
//! source, skipped polls), and the copy direction capture resolves.

/// Field id of the blob holding a parameter's host bytes (`BLOB_FIELD | param field id`).
pub const BLOB_FIELD: u16 = 0x100;
/// Field id of the offsets (u64 array, ascending) of the 8-byte words in an H2D copy's
/// source blob (`BLOB_FIELD | param field id`) that held device pointers at capture
/// (`POINTER_WORDS_FIELD | param field id`): replay translates each word to its own
/// allocation's address before the copy. Absent: no pointer in the bytes.
pub const POINTER_WORDS_FIELD: u16 = 0x400;
/// Field id of the copy direction capture resolved (a [`CopyDir`] as u64).
pub const COPY_DIR_FIELD: u16 = 0x200;
/// Field id on a call made into a capturing stream: the capture sequence's id (u64;
/// [`CAPTURE_INVALIDATED`] for a sequence already invalidated). Such a call is not
/// executed when it is made: it becomes a node of the graph being captured. Its host
/// destination is checked at each launch of that graph (`semantic::GRAPH_LAUNCH`), its
/// host source restored before each launch.
pub const CAPTURE_FIELD: u16 = 0x201;
/// [`CAPTURE_FIELD`]'s value for a capture sequence the runtime reported invalidated.
pub const CAPTURE_INVALIDATED: u64 = u64::MAX;
/// On an asynchronous D2H copy's record: the field id of the destination parameter
/// whose expected output comes later, in a `CopyOutput` record
/// ([`semantic::COPY_OUTPUT`]) naming this copy's sequence id. Archives written before
/// it carry the output inline (`BLOB_FIELD | id`) and never this field.
pub const OUTPUT_PENDING_FIELD: u16 = 0x300;

/// On an H2D copy's record: the field id of the source parameter whose bytes come later,
/// in a `CopyOutput` record naming this copy's sequence id (the blob and its pointer
/// words, as the copy's own fields would hold them): capture read them when the copy ran,
/// queued behind a host function that could still write them. Archives written before it
/// never carry this field.
pub const SOURCE_PENDING_FIELD: u16 = 0x301;

/// On a poll's record (`api::polls`): how many polls of the same handle on the same
/// thread capture counted and did not record since the last recorded one (each found
/// the work still running and changed nothing).
pub const POLLS_SKIPPED_FIELD: u16 = 0x202;

/// Direction of a memcpy, as capture resolved it (for "default" from the allocation table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDir {
    HostToHost = 0,
    HostToDevice = 1,
    DeviceToHost = 2,
    DeviceToDevice = 3,
}

impl CopyDir {
    pub fn from_u64(v: u64) -> Option<CopyDir> {
        Some(match v {
            0 => CopyDir::HostToHost,
            1 => CopyDir::HostToDevice,
            2 => CopyDir::DeviceToHost,
            3 => CopyDir::DeviceToDevice,
            _ => return None,
        })
    }
    /// From a memcpy kind (0..=3 as in CUDA and HIP), or from where the pointers live
    /// for kind 4 ("default").
    pub fn resolve(kind: i64, dst_is_device: bool, src_is_device: bool) -> Option<CopyDir> {
        match kind {
            0 => Some(CopyDir::HostToHost),
            1 => Some(CopyDir::HostToDevice),
            2 => Some(CopyDir::DeviceToHost),
            3 => Some(CopyDir::DeviceToDevice),
            4 => Some(match (src_is_device, dst_is_device) {
                (false, false) => CopyDir::HostToHost,
                (false, true) => CopyDir::HostToDevice,
                (true, false) => CopyDir::DeviceToHost,
                (true, true) => CopyDir::DeviceToDevice,
            }),
            _ => None,
        }
    }
}
