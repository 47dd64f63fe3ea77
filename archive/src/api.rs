//! The API table: every intercepted runtime call, declared once.
//!
//! `hrr_api_table!(callback)` hands the table to a macro. This crate turns it into
//! [`API_TABLE`] (ids, names, parameter meanings); capture turns the same rows into its
//! `extern "C"` shims (one per vendor name); replay turns them into typed calls of the
//! real function. Adding an API is one row. A row is
//!
//! ```text
//! (id, Name, cuda_symbol, hip_symbol, ret_policy; param: RustType => Kind(args), ...)
//! ```
//!
//! `none` stands for a vendor without that symbol. The kind says what a parameter means
//! (see [`ParamKind`]); its argument names the parameter holding a length. Calls whose
//! meaning no parameter kind captures (registration, launches) are handled by hand in
//! capture and replay: their records are [`SEMANTIC_KINDS`] (one id each, here), and
//! their exported symbols are [`HAND_WRITTEN`] rows naming the records they write and
//! the capture module that owns them. The table and those rows are every symbol capture
//! exports.

pub mod fid;
mod hand_written;
pub mod memcpy3d;
pub mod semantic;
mod validate;

pub use hand_written::{exported_symbols, HandWritten, HAND_WRITTEN, PROCESS_HOOKS};
pub use semantic::{SemanticKind, SEMANTIC_KINDS};
pub use validate::{validate_table, TableError};

/// The runtime family an archive was captured from: one definition, the contract's
/// (its spelling is what manifests and replay results both carry).
pub use hrr_contract::Vendor;

/// What a parameter means, which decides how capture records it and replay rebuilds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer passed through unchanged (flags, sizes, values, device ordinals).
    Value,
    /// A device address; replay translates it to the enclosing replay allocation.
    DevPtr,
    /// A device allocation being freed: translated, then dropped from the table.
    FreeDevPtr,
    /// `T**` out: a new device allocation whose size is the named parameter.
    OutDevPtr(&'static str),
    /// `T**` out: new pinned host memory of the named size (kernels may read it).
    OutHostPtr(&'static str),
    /// Pinned host memory being freed.
    FreeHostPtr,
    /// Pointer to a plain value the call writes (a count, an ordinal, a time).
    OutValue,
    /// Pointer to a struct the call fills (device properties); not replayed.
    OutStruct,
    /// A stream handle (0 is the default stream).
    Stream,
    /// `stream*` out.
    OutStream,
    Event,
    OutEvent,
    /// Memcpy destination: device or host according to the `kind` parameter (or the
    /// pointer's attributes for "default"); length is the named parameter.
    CopyDst(&'static str),
    /// Memcpy source, as above.
    CopySrc(&'static str),
    /// The cudaMemcpyKind / hipMemcpyKind value.
    CopyKind,
    /// `size_t*` out: a size the call writes (the pitch of a pitched allocation).
    OutSize,
    /// `T**` out: a pitched device allocation of `*pitch * height` bytes; names the
    /// `OutSize` pitch parameter and the height parameter. Replay requires the same pitch.
    OutPitchedDevPtr(&'static str, &'static str),
    /// 2D copy destination: `height` rows of `width` bytes, `pitch` apart (pitch, width,
    /// height). A host side is recorded as its copied rows only, packed (seed 003): the
    /// capture cost follows the bytes copied, and padding between rows is never compared.
    CopyDst2D(&'static str, &'static str, &'static str),
    /// 2D copy source, as above.
    CopySrc2D(&'static str, &'static str, &'static str),
    /// `const cudaMemcpy3DParms*` / `const hipMemcpy3DParms*`: a struct passed by pointer
    /// (layout in `memcpy3d`), recorded field by field; its host side as packed rows.
    Copy3DParms,
    /// Host memory being page-locked (`HostRegister`) of the named size: replay registers a
    /// buffer of its own of that size and maps the captured range onto it.
    RegisterHostPtr(&'static str),
}

/// What replay expects of the call's return code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetPolicy {
    /// The same code as at capture.
    Exact,
    /// Timing-dependent (query calls): any code is accepted.
    Any,
}

#[derive(Clone, Copy, Debug)]
pub struct ParamDesc {
    pub name: &'static str,
    pub kind: ParamKind,
}

#[derive(Clone, Copy, Debug)]
pub struct ApiDesc {
    pub id: u16,
    pub name: &'static str,
    pub cuda: Option<&'static str>,
    pub hip: Option<&'static str>,
    pub ret: RetPolicy,
    pub params: &'static [ParamDesc],
}

impl ApiDesc {
    pub fn symbol(&self, v: Vendor) -> Option<&'static str> {
        match v {
            Vendor::Cuda => self.cuda,
            Vendor::Hip => self.hip,
        }
    }
    /// Index of the parameter called `name` (the table's length references).
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }
    /// Payload field id of parameter `i` (ids 1..=N are the parameters, in order).
    pub fn field_id(i: usize) -> u16 {
        i as u16 + 1
    }
}

/// Calls the macro `$cb` with the generic table. Rust types use `::std::os::raw` and
/// [`crate::api::Dim3`]-free signatures only, so every row is callable through one
/// typed function pointer.
#[macro_export]
macro_rules! hrr_api_table {
    ($cb:ident) => {
        $cb! {
            (1, GetDeviceCount, cudaGetDeviceCount, hipGetDeviceCount, Exact; count: *mut ::std::os::raw::c_int => OutValue),
            (2, SetDevice, cudaSetDevice, hipSetDevice, Exact; device: ::std::os::raw::c_int => Value),
            (3, GetDevice, cudaGetDevice, hipGetDevice, Exact; device: *mut ::std::os::raw::c_int => OutValue),
            (4, DeviceSynchronize, cudaDeviceSynchronize, hipDeviceSynchronize, Exact;),
            (5, DeviceReset, cudaDeviceReset, hipDeviceReset, Exact;),
            (6, GetDeviceProperties, cudaGetDeviceProperties_v2, hipGetDeviceProperties, Exact; prop: *mut ::std::os::raw::c_void => OutStruct, device: ::std::os::raw::c_int => Value),
            (10, Malloc, cudaMalloc, hipMalloc, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutDevPtr(size), size: usize => Value),
            (11, Free, cudaFree, hipFree, Exact; ptr: *mut ::std::os::raw::c_void => FreeDevPtr),
            (12, MallocHost, cudaMallocHost, hipMallocHost, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutHostPtr(size), size: usize => Value),
            (13, HostAlloc, cudaHostAlloc, hipHostMalloc, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutHostPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (14, FreeHost, cudaFreeHost, hipHostFree, Exact; ptr: *mut ::std::os::raw::c_void => FreeHostPtr),
            (15, MallocPitch, cudaMallocPitch, hipMallocPitch, Exact; ptr: *mut *mut ::std::os::raw::c_void => OutPitchedDevPtr(pitch, height), pitch: *mut usize => OutSize, width: usize => Value, height: usize => Value),
            (16, HostRegister, cudaHostRegister, hipHostRegister, Exact; ptr: *mut ::std::os::raw::c_void => RegisterHostPtr(size), size: usize => Value, flags: ::std::os::raw::c_uint => Value),
            (17, HostUnregister, cudaHostUnregister, hipHostUnregister, Exact; ptr: *mut ::std::os::raw::c_void => FreeHostPtr),
            (20, Memcpy, cudaMemcpy, hipMemcpy, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (21, MemcpyAsync, cudaMemcpyAsync, hipMemcpyAsync, Exact; dst: *mut ::std::os::raw::c_void => CopyDst(count), src: *const ::std::os::raw::c_void => CopySrc(count), count: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (22, Memset, cudaMemset, hipMemset, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, value: ::std::os::raw::c_int => Value, count: usize => Value),
            (23, MemsetAsync, cudaMemsetAsync, hipMemsetAsync, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, value: ::std::os::raw::c_int => Value, count: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (24, Memcpy2D, cudaMemcpy2D, hipMemcpy2D, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind),
            (25, Memcpy2DAsync, cudaMemcpy2DAsync, hipMemcpy2DAsync, Exact; dst: *mut ::std::os::raw::c_void => CopyDst2D(dpitch, width, height), dpitch: usize => Value, src: *const ::std::os::raw::c_void => CopySrc2D(spitch, width, height), spitch: usize => Value, width: usize => Value, height: usize => Value, kind: ::std::os::raw::c_int => CopyKind, stream: *mut ::std::os::raw::c_void => Stream),
            (26, Memset2D, cudaMemset2D, hipMemset2D, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_int => Value, width: usize => Value, height: usize => Value),
            (28, Memcpy3D, cudaMemcpy3D, hipMemcpy3D, Exact; p: *const ::std::os::raw::c_void => Copy3DParms),
            (29, Memcpy3DAsync, cudaMemcpy3DAsync, hipMemcpy3DAsync, Exact; p: *const ::std::os::raw::c_void => Copy3DParms, stream: *mut ::std::os::raw::c_void => Stream),
            (27, Memset2DAsync, cudaMemset2DAsync, hipMemset2DAsync, Exact; ptr: *mut ::std::os::raw::c_void => DevPtr, pitch: usize => Value, value: ::std::os::raw::c_int => Value, width: usize => Value, height: usize => Value, stream: *mut ::std::os::raw::c_void => Stream),
            (30, StreamCreate, cudaStreamCreate, hipStreamCreate, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream),
            (31, StreamCreateWithFlags, cudaStreamCreateWithFlags, hipStreamCreateWithFlags, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, flags: ::std::os::raw::c_uint => Value),
            (32, StreamCreateWithPriority, cudaStreamCreateWithPriority, hipStreamCreateWithPriority, Exact; stream: *mut *mut ::std::os::raw::c_void => OutStream, flags: ::std::os::raw::c_uint => Value, priority: ::std::os::raw::c_int => Value),
            (33, StreamDestroy, cudaStreamDestroy, hipStreamDestroy, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (34, StreamSynchronize, cudaStreamSynchronize, hipStreamSynchronize, Exact; stream: *mut ::std::os::raw::c_void => Stream),
            (35, StreamQuery, cudaStreamQuery, hipStreamQuery, Any; stream: *mut ::std::os::raw::c_void => Stream),
            (36, StreamWaitEvent, cudaStreamWaitEvent, hipStreamWaitEvent, Exact; stream: *mut ::std::os::raw::c_void => Stream, event: *mut ::std::os::raw::c_void => Event, flags: ::std::os::raw::c_uint => Value),
            (40, EventCreate, cudaEventCreate, hipEventCreate, Exact; event: *mut *mut ::std::os::raw::c_void => OutEvent),
            (41, EventCreateWithFlags, cudaEventCreateWithFlags, hipEventCreateWithFlags, Exact; event: *mut *mut ::std::os::raw::c_void => OutEvent, flags: ::std::os::raw::c_uint => Value),
            (42, EventRecord, cudaEventRecord, hipEventRecord, Exact; event: *mut ::std::os::raw::c_void => Event, stream: *mut ::std::os::raw::c_void => Stream),
            (43, EventSynchronize, cudaEventSynchronize, hipEventSynchronize, Exact; event: *mut ::std::os::raw::c_void => Event),
            (44, EventQuery, cudaEventQuery, hipEventQuery, Any; event: *mut ::std::os::raw::c_void => Event),
            (45, EventElapsedTime, cudaEventElapsedTime, hipEventElapsedTime, Exact; ms: *mut f32 => OutValue, start: *mut ::std::os::raw::c_void => Event, end: *mut ::std::os::raw::c_void => Event),
            (46, EventDestroy, cudaEventDestroy, hipEventDestroy, Exact; event: *mut ::std::os::raw::c_void => Event),
        }
    };
}

/// How a parameter of a table row crosses the FFI boundary: every row's parameters are
/// integers or pointers, carried as u64 between the generic code and the typed call.
pub trait FfiArg: Copy {
    fn to_u64(self) -> u64;
    fn from_u64(v: u64) -> Self;
}

macro_rules! ffi_int {
    ($($t:ty),*) => { $( impl FfiArg for $t {
        fn to_u64(self) -> u64 { self as u64 }
        fn from_u64(v: u64) -> Self { v as $t }
    } )* };
}
ffi_int!(i32, u32, usize, u64);

impl<T> FfiArg for *mut T {
    fn to_u64(self) -> u64 {
        self as usize as u64
    }
    fn from_u64(v: u64) -> Self {
        v as usize as *mut T
    }
}

impl<T> FfiArg for *const T {
    fn to_u64(self) -> u64 {
        self as usize as u64
    }
    fn from_u64(v: u64) -> Self {
        v as usize as *const T
    }
}

/// Field id of the blob holding a parameter's host bytes (`BLOB_FIELD | param field id`).
pub const BLOB_FIELD: u16 = 0x100;
/// Field id of the copy direction capture resolved (a [`CopyDir`] as u64).
pub const COPY_DIR_FIELD: u16 = 0x200;
/// On an asynchronous D2H copy's record: the field id of the destination parameter
/// whose expected output comes later, in a `CopyOutput` record
/// ([`semantic::COPY_OUTPUT`]) naming this copy's sequence id. Archives written before
/// it carry the output inline (`BLOB_FIELD | id`) and never this field.
pub const OUTPUT_PENDING_FIELD: u16 = 0x300;

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

macro_rules! define_descs {
    ($( ($id:literal, $name:ident, $cuda:ident, $hip:ident, $ret:ident; $( $p:ident : $t:ty => $k:ident $( ( $($ka:ident),+ ) )? ),* ) ),* $(,)?) => {
        /// Ids of the table's generic APIs, by name.
        #[allow(non_upper_case_globals)]
        pub mod id {
            $( pub const $name: u16 = $id; )*
        }
        /// Every generic API, in id order.
        pub static API_TABLE: &[ApiDesc] = &[
            $( ApiDesc {
                id: $id,
                name: stringify!($name),
                cuda: vendor_symbol!($cuda),
                hip: vendor_symbol!($hip),
                ret: RetPolicy::$ret,
                params: &[ $( ParamDesc { name: stringify!($p), kind: ParamKind::$k $( ( $(stringify!($ka)),+ ) )? } ),* ],
            } ),*
        ];
    };
}

macro_rules! vendor_symbol {
    (none) => {
        None
    };
    ($s:ident) => {
        Some(stringify!($s))
    };
}

hrr_api_table!(define_descs);

/// Looks up a generic API by id.
pub fn desc(id: u16) -> Option<&'static ApiDesc> {
    API_TABLE.iter().find(|d| d.id == id)
}

/// A human name for any API id (generic, semantic, or the trailer).
pub fn api_name(id: u16) -> String {
    if let Some(d) = desc(id) {
        return d.name.to_string();
    }
    if let Some(k) = SEMANTIC_KINDS.iter().find(|k| k.id == id) {
        return k.name.to_string();
    }
    if id == crate::record::TRAILER_API_ID {
        return "Trailer".into();
    }
    format!("Api{id}")
}
