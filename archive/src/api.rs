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
//! meaning no parameter kind captures (registration, launches) are declared in
//! [`SEMANTIC_APIS`] and handled by hand in capture and replay, still under one id here.

/// The runtime family an archive was captured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    Cuda,
    Hip,
}

impl Vendor {
    pub fn as_str(&self) -> &'static str {
        match self {
            Vendor::Cuda => "cuda",
            Vendor::Hip => "hip",
        }
    }
    pub fn parse(s: &str) -> Option<Vendor> {
        match s {
            "cuda" => Some(Vendor::Cuda),
            "hip" => Some(Vendor::Hip),
            _ => None,
        }
    }
}

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

/// The layout of `cudaMemcpy3DParms` / `hipMemcpy3DParms` (identical on x86-64, 160 bytes):
/// `{array srcArray; pos srcPos{x,y,z}; pitchedPtr srcPtr{ptr,pitch,xsize,ysize};
/// array dstArray; pos dstPos; pitchedPtr dstPtr; extent{width,height,depth}; int kind}`.
pub mod memcpy3d {
    pub const SIZE: usize = 160;
    pub const SRC_ARRAY: usize = 0;
    pub const SRC_POS: usize = 8;
    pub const SRC_PTR: usize = 32;
    pub const DST_ARRAY: usize = 64;
    pub const DST_POS: usize = 72;
    pub const DST_PTR: usize = 96;
    pub const EXTENT: usize = 128;
    pub const KIND: usize = 152;

    /// One side of a 3D copy: a pitched pointer and a position in it.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Side {
        pub ptr: u64,
        pub pitch: u64,
        pub xsize: u64,
        pub ysize: u64,
        pub x: u64,
        pub y: u64,
        pub z: u64,
    }

    impl Side {
        /// Address of row `j` of slice `k` of the copied box.
        pub fn row(&self, j: u64, k: u64) -> u64 {
            self.ptr
                .wrapping_add((self.z + k).wrapping_mul(self.pitch.wrapping_mul(self.ysize)))
                .wrapping_add((self.y + j).wrapping_mul(self.pitch))
                .wrapping_add(self.x)
        }
    }

    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Parms {
        pub src_array: u64,
        pub dst_array: u64,
        pub src: Side,
        pub dst: Side,
        /// Width in bytes (for linear memory), height, depth.
        pub extent: [u64; 3],
        pub kind: i32,
    }

    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
    }

    impl Parms {
        pub fn decode(b: &[u8; SIZE]) -> Parms {
            let side = |pos: usize, ptr: usize| Side {
                ptr: u64_at(b, ptr),
                pitch: u64_at(b, ptr + 8),
                xsize: u64_at(b, ptr + 16),
                ysize: u64_at(b, ptr + 24),
                x: u64_at(b, pos),
                y: u64_at(b, pos + 8),
                z: u64_at(b, pos + 16),
            };
            Parms {
                src_array: u64_at(b, SRC_ARRAY),
                dst_array: u64_at(b, DST_ARRAY),
                src: side(SRC_POS, SRC_PTR),
                dst: side(DST_POS, DST_PTR),
                extent: [
                    u64_at(b, EXTENT),
                    u64_at(b, EXTENT + 8),
                    u64_at(b, EXTENT + 16),
                ],
                kind: i32::from_le_bytes(b[KIND..KIND + 4].try_into().unwrap_or([0; 4])),
            }
        }

        pub fn encode(&self) -> [u8; SIZE] {
            let mut b = [0u8; SIZE];
            let mut put = |at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
            put(SRC_ARRAY, self.src_array);
            put(DST_ARRAY, self.dst_array);
            for (pos, ptr, s) in [(SRC_POS, SRC_PTR, self.src), (DST_POS, DST_PTR, self.dst)] {
                put(pos, s.x);
                put(pos + 8, s.y);
                put(pos + 16, s.z);
                put(ptr, s.ptr);
                put(ptr + 8, s.pitch);
                put(ptr + 16, s.xsize);
                put(ptr + 24, s.ysize);
            }
            put(EXTENT, self.extent[0]);
            put(EXTENT + 8, self.extent[1]);
            put(EXTENT + 16, self.extent[2]);
            b[KIND..KIND + 4].copy_from_slice(&self.kind.to_le_bytes());
            b
        }

        /// Bytes of the copied box (width x height x depth), None on overflow.
        pub fn box_bytes(&self) -> Option<u64> {
            self.extent[0]
                .checked_mul(self.extent[1])?
                .checked_mul(self.extent[2])
        }
    }
}

/// Ids of the hand-written (semantic) APIs: registration and launches.
pub mod semantic {
    pub const REGISTER_FAT_BINARY: u16 = 100;
    pub const REGISTER_FUNCTION: u16 = 101;
    pub const REGISTER_VAR: u16 = 102;
    pub const UNREGISTER_FAT_BINARY: u16 = 103;
    /// The device address of a `__device__`/`__constant__` variable at capture (recorded
    /// before the first symbol copy that touches it), so replay can map it to the same
    /// variable in its own module (`cuModuleGetGlobal` / `hipModuleGetGlobal`). The copy
    /// itself is recorded as a plain Memcpy / MemcpyAsync to or from that address.
    pub const SYMBOL_ADDRESS: u16 = 104;
    /// `cuModuleLoadData[Ex]` / `hipModuleLoadData`: a code object loaded from memory.
    pub const MODULE_LOAD: u16 = 105;
    /// `cuModuleGetFunction` / `hipModuleGetFunction`.
    pub const MODULE_GET_FUNCTION: u16 = 106;
    /// `cudaLaunchKernel` / `hipLaunchKernel`: launch by host stub.
    pub const LAUNCH_KERNEL: u16 = 110;
    /// `__cudaLaunchKernel`: launch by `cudaKernel_t` (CUDA 12.4+ triple-chevron path).
    pub const LAUNCH_KERNEL_BY_HANDLE: u16 = 111;
    /// `cuLaunchKernel` / `hipModuleLaunchKernel` / `hipExtModuleLaunchKernel`: a function
    /// from a module loaded by the program; recorded like every launch (name, code object,
    /// grid, block, arguments).
    pub const MODULE_LAUNCH_KERNEL: u16 = 112;
    /// An API that no other process can reproduce (host callbacks, IPC handles).
    pub const UNREPLAYABLE: u16 = 120;
}

/// Semantic APIs: (id, name, cuda symbol, hip symbol).
pub const SEMANTIC_APIS: &[(u16, &str, Option<&str>, Option<&str>)] = &[
    (
        semantic::REGISTER_FAT_BINARY,
        "RegisterFatBinary",
        Some("__cudaRegisterFatBinary"),
        Some("__hipRegisterFatBinary"),
    ),
    (
        semantic::REGISTER_FUNCTION,
        "RegisterFunction",
        Some("__cudaRegisterFunction"),
        Some("__hipRegisterFunction"),
    ),
    (
        semantic::REGISTER_VAR,
        "RegisterVar",
        Some("__cudaRegisterVar"),
        Some("__hipRegisterVar"),
    ),
    (
        semantic::UNREGISTER_FAT_BINARY,
        "UnregisterFatBinary",
        Some("__cudaUnregisterFatBinary"),
        Some("__hipUnregisterFatBinary"),
    ),
    (
        semantic::SYMBOL_ADDRESS,
        "SymbolAddress",
        Some("cudaGetSymbolAddress"),
        Some("hipGetSymbolAddress"),
    ),
    (
        semantic::MODULE_LOAD,
        "ModuleLoadData",
        Some("cuModuleLoadData"),
        Some("hipModuleLoadData"),
    ),
    (
        semantic::MODULE_GET_FUNCTION,
        "ModuleGetFunction",
        Some("cuModuleGetFunction"),
        Some("hipModuleGetFunction"),
    ),
    (
        semantic::MODULE_LAUNCH_KERNEL,
        "ModuleLaunchKernel",
        Some("cuLaunchKernel"),
        Some("hipModuleLaunchKernel"),
    ),
    (
        semantic::LAUNCH_KERNEL,
        "LaunchKernel",
        Some("cudaLaunchKernel"),
        Some("hipLaunchKernel"),
    ),
    (
        semantic::LAUNCH_KERNEL_BY_HANDLE,
        "LaunchKernelByHandle",
        Some("__cudaLaunchKernel"),
        None,
    ),
    (semantic::UNREPLAYABLE, "Unreplayable", None, None),
];

/// Field ids shared by the semantic APIs' payloads.
pub mod fid {
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
    if let Some((_, n, _, _)) = SEMANTIC_APIS.iter().find(|(i, ..)| *i == id) {
        return n.to_string();
    }
    if id == crate::record::TRAILER_API_ID {
        return "Trailer".into();
    }
    format!("Api{id}")
}

/// Checks the table's internal consistency: unique ids and symbols, length references
/// that name a parameter of the same row. Tests and both binaries call it.
pub fn validate_table() -> Result<(), String> {
    let mut ids = std::collections::HashSet::new();
    let mut syms = std::collections::HashSet::new();
    for d in API_TABLE {
        if !ids.insert(d.id) {
            return Err(format!("API id {} is used twice", d.id));
        }
        for s in [d.cuda, d.hip].into_iter().flatten() {
            if !syms.insert(s) {
                return Err(format!("symbol {s} is declared twice"));
            }
        }
        for p in d.params {
            let refs: Vec<&str> = match p.kind {
                ParamKind::OutDevPtr(l)
                | ParamKind::OutHostPtr(l)
                | ParamKind::CopyDst(l)
                | ParamKind::CopySrc(l)
                | ParamKind::RegisterHostPtr(l) => vec![l],
                ParamKind::OutPitchedDevPtr(a, b) => vec![a, b],
                ParamKind::CopyDst2D(a, b, c) | ParamKind::CopySrc2D(a, b, c) => vec![a, b, c],
                _ => vec![],
            };
            for l in refs {
                if d.param_index(l).is_none() {
                    return Err(format!(
                        "{}: parameter {} names length {l}, which is not a parameter",
                        d.name, p.name
                    ));
                }
            }
        }
    }
    for (id, _, c, h) in SEMANTIC_APIS {
        if !ids.insert(*id) {
            return Err(format!("API id {id} is used twice"));
        }
        for s in [c, h].into_iter().flatten() {
            if !syms.insert(s) {
                return Err(format!("symbol {s} is declared twice"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        validate_table().unwrap();
        assert_eq!(desc(id::Malloc).unwrap().cuda, Some("cudaMalloc"));
        assert_eq!(desc(id::Malloc).unwrap().hip, Some("hipMalloc"));
        assert_eq!(
            desc(id::Malloc).unwrap().params[0].kind,
            ParamKind::OutDevPtr("size")
        );
        assert_eq!(api_name(semantic::LAUNCH_KERNEL), "LaunchKernel");
        assert_eq!(desc(id::StreamQuery).unwrap().ret, RetPolicy::Any);
    }
}
