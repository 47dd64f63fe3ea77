//! Batched copies, recorded as the copies they make: `cudaMemcpyBatchAsync` and
//! `cudaMemcpyWithAttributesAsync` (and their `_ptsz` forms), the driver's
//! `cuMemcpyBatchAsync[_v2]` (what nvcc's static runtime calls; `_ptsz` too) and
//! `cuMemcpyWithAttributesAsync`; the 3D forms `cudaMemcpy3DBatchAsync`,
//! `cudaMemcpy3DWithAttributesAsync`, the driver's `cuMemcpy3DBatchAsync[_v2]` and
//! `cuMemcpy3DWithAttributesAsync`, each copy as the `cudaMemcpy3DAsync` it equals
//! (`api::batch_op`: elements counted as the array side's, whose size capture knows from
//! its allocation; a copy with an array capture did not see allocated is unreplayable by
//! name, and with it the batch).
//!
//! Capture first waits for its own pending reads of the host memory the batch's copies
//! touch, as before any copy. The program's call is passed on unchanged. Once it
//! succeeded, each copy is recorded,
//! in the batch's order, as the asynchronous copy it is on the batch's stream:
//! `cudaMemcpyAsync` with kind `cudaMemcpyDefault` (the batch names no direction: the
//! pointers decide, as they do for the runtime), or the driver's `cuMemcpyAsync`. Each
//! record does what that row's record does (a host source read, a host destination read
//! once the copy completed, pointers translated), so replay re-creates the batch with
//! copies of its own. The attributes (when the source may be read, location hints, the
//! overlap hint) change when and where the runtime reads, not what it copies, and a
//! batch's copies are unordered among themselves (the runtime's contract: dependent
//! copies in one batch are undefined), so replaying them in order copies the same bytes.
//! A batch the runtime refused is recorded unreplayable, by name: replay, copying one by
//! one, would not re-create the refusal.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::{self, batch_op, Vendor};

use crate::ffi::{bytes_at, read_at};
use crate::generic::capture_row;
use crate::per_thread::per_thread;
use crate::real::NO_REAL_FUNCTION;

/// `cudaMemcpyDefault`: the pointers decide the direction.
const DEFAULT_KIND: u64 = 4;

/// Copies in one batch beyond which capture stops recording them one by one.
const MAX_BATCH: usize = 1 << 20;

const REFUSED: &str = "is a batch of copies the runtime refused: replay, which copies a batch one copy at a time, would not re-create the refusal";

const TOO_MANY: &str = "is a batch of over 2^20 copies, which capture does not record one by one";

/// Whose copy row a batch's copies are recorded as.
#[derive(Clone, Copy)]
enum Form {
    /// `cudaMemcpyAsync(dst, src, count, cudaMemcpyDefault, stream)`.
    Runtime,
    /// `cuMemcpyAsync(dst, src, count, stream)`.
    Driver,
}

/// One copy of a batch.
#[derive(Clone, Copy)]
struct Copy1 {
    dst: u64,
    src: u64,
    size: u64,
}

/// Records a batch's copies after the real call returned `ret`: each as the row of
/// `form` on `stream` (as recorded: a per-thread form's stream 0 already mapped).
fn record(api_name: &'static str, form: Form, copies: &[Copy1], stream: u64, ret: c_int) {
    if ret != 0 {
        crate::unreplayable::record(Vendor::Cuda, api_name, REFUSED, ret, &[]);
        return;
    }
    let row = match form {
        Form::Runtime => api::id::MemcpyAsync,
        Form::Driver => api::id::CuMemcpyAsync,
    };
    let Some(desc) = api::desc(row) else {
        return;
    };
    for c in copies {
        let args: Vec<u64> = match form {
            Form::Runtime => vec![c.dst, c.src, c.size, DEFAULT_KIND, stream],
            Form::Driver => vec![c.dst, c.src, c.size, stream],
        };
        // The copy was made by the batch; the row's record is all that is left to do.
        capture_row(desc, Vendor::Cuda, &args, || ret);
    }
}

/// The copies of a batch the runtime accepted: `count` destinations, sources and sizes.
/// None: more than capture records one by one.
///
/// # Safety
/// After a successful batch call: `dsts`, `srcs` and `sizes` each hold `count` entries
/// (the runtime has just read them).
unsafe fn copies_of(
    dsts: *const u64,
    srcs: *const u64,
    sizes: *const usize,
    count: usize,
) -> Option<Vec<Copy1>> {
    if count > MAX_BATCH {
        return None;
    }
    let word = |base: *const u64, i: usize| {
        // SAFETY: the caller's contract: `count` entries, `i < count`.
        unsafe { read_at::<u64>(base as u64 + 8 * i as u64) }
    };
    Some(
        (0..count)
            .map(|i| Copy1 {
                dst: word(dsts, i),
                src: word(srcs, i),
                size: word(sizes.cast(), i),
            })
            .collect(),
    )
}

/// Before the real call: capture's pending reads of host memory a copy of the batch
/// reads or writes are waited for, as before any copy (`outputs::before_row`: a read
/// still pending would otherwise see what the batch wrote).
fn wait_for_reads(ranges: impl Iterator<Item = (u64, u64)>) {
    if !crate::reads::any() {
        return;
    }
    for (start, len) in ranges {
        crate::outputs::wait_overlapping(start, start.saturating_add(len));
    }
}

/// [`wait_for_reads`] for a 1D batch's copies, both sides of each.
///
/// # Safety
/// As [`copies_of`], before the call: the arrays the program passes the runtime.
unsafe fn wait_for_batch(dsts: *const u64, srcs: *const u64, sizes: *const usize, count: usize) {
    if !crate::reads::any() || dsts.is_null() || srcs.is_null() || sizes.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    if let Some(copies) = unsafe { copies_of(dsts, srcs, sizes, count) } {
        wait_for_reads(
            copies
                .iter()
                .flat_map(|c| [(c.dst, c.size), (c.src, c.size)]),
        );
    }
}

/// [`wait_for_reads`] for a 3D batch's pointer sides (each from its first row to the end
/// of its last, whole rows).
///
/// # Safety
/// `ops` is null or holds `count` operations the program passes the runtime.
unsafe fn wait_for_batch_3d(ops: *const u8, count: usize) {
    if !crate::reads::any() || ops.is_null() || count > MAX_BATCH {
        return;
    }
    for i in 0..count {
        // SAFETY: the caller's contract: `count` operations of `batch_op::SIZE` bytes.
        let op = unsafe { bytes_at(ops.add(i * batch_op::SIZE), batch_op::SIZE) };
        // Elements of at most 16 bytes: the widest a pointer side can span.
        let Ok(p) = batch_op::to_parms(op, |_| Some(16)) else {
            continue;
        };
        let (h, d) = (p.extent[1].max(1), p.extent[2].max(1));
        let sides = [(p.src_array, p.src), (p.dst_array, p.dst)];
        wait_for_reads(sides.iter().filter(|(array, _)| *array == 0).map(|(_, s)| {
            let start = s.row(0, 0);
            (
                start,
                s.row(h - 1, d - 1)
                    .saturating_add(s.pitch)
                    .saturating_sub(start),
            )
        }));
    }
}

/// A batch call's record: its copies, or unreplayable when there are too many.
///
/// # Safety
/// As [`copies_of`] when `ret` is 0.
#[allow(clippy::too_many_arguments)]
unsafe fn batch(
    api_name: &'static str,
    form: Form,
    dsts: *const u64,
    srcs: *const u64,
    sizes: *const usize,
    count: usize,
    stream: u64,
    ret: c_int,
) {
    if ret != 0 || count == 0 {
        return record(api_name, form, &[], stream, ret);
    }
    // SAFETY: the caller's contract.
    match unsafe { copies_of(dsts, srcs, sizes, count) } {
        Some(copies) => record(api_name, form, &copies, stream, ret),
        None => crate::unreplayable::record(Vendor::Cuda, api_name, TOO_MANY, ret, &[]),
    }
}

/// Records a 3D batch's `count` operations at `ops` after the real call returned `ret`,
/// each as `cudaMemcpy3DAsync` on `stream` (as recorded).
///
/// # Safety
/// When `ret` is 0: `ops` holds `count` operations (the runtime has just read them).
unsafe fn batch_3d(api_name: &'static str, ops: *const u8, count: usize, stream: u64, ret: c_int) {
    if ret != 0 {
        crate::unreplayable::record(Vendor::Cuda, api_name, REFUSED, ret, &[]);
        return;
    }
    if count > MAX_BATCH {
        crate::unreplayable::record(Vendor::Cuda, api_name, TOO_MANY, ret, &[]);
        return;
    }
    let (Some(cap), Some(desc)) = (crate::state::current(), api::desc(api::id::Memcpy3DAsync))
    else {
        return;
    };
    let element = |a: u64| cap.objects.element_bytes(a);
    let mut all = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the caller's contract: `count` operations of `batch_op::SIZE` bytes.
        let op = unsafe { bytes_at(ops.add(i * batch_op::SIZE), batch_op::SIZE) };
        match batch_op::to_parms(op, element) {
            Ok(p) => all.push(p.encode()),
            Err(why) => {
                crate::unreplayable::record(Vendor::Cuda, api_name, why, ret, &[]);
                return;
            }
        }
    }
    for parms in &all {
        capture_row(desc, Vendor::Cuda, &[parms.as_ptr() as u64, stream], || ret);
    }
}

/// `(numOps, opList, flags, stream)`: the runtime's and the driver's v2 3D batch.
type Batch3dFn = unsafe extern "C" fn(usize, *const u8, u64, *mut c_void) -> c_int;
/// The driver's first 3D batch, with `failIdx` before the flags.
type Batch3dFailIdxFn =
    unsafe extern "C" fn(usize, *const u8, *mut usize, u64, *mut c_void) -> c_int;
/// `(op, flags, stream)`.
type With3dFn = unsafe extern "C" fn(*const u8, u64, *mut c_void) -> c_int;

macro_rules! batch_3d_shim {
    ($name:ident, $stream:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            count: usize,
            ops: *const u8,
            flags: u64,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: Batch3dFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the operations the program passes the runtime.
            unsafe { wait_for_batch_3d(ops, count) };
            // SAFETY: the program's own arguments, passed on unchanged.
            let ret = unsafe { f(count, ops, flags, stream) };
            let recorded: fn(u64) -> u64 = $stream;
            // SAFETY: the operations the runtime has just read.
            unsafe { batch_3d(stringify!($name), ops, count, recorded(stream as u64), ret) };
            ret
        }
    };
}

macro_rules! batch_3d_fail_idx_shim {
    ($name:ident, $stream:expr) => {
        /// # Safety
        /// Called by the program with the driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            count: usize,
            ops: *const u8,
            fail_idx: *mut usize,
            flags: u64,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: Batch3dFailIdxFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the operations the program passes the driver.
            unsafe { wait_for_batch_3d(ops, count) };
            // SAFETY: the program's own arguments, passed on unchanged.
            let ret = unsafe { f(count, ops, fail_idx, flags, stream) };
            let recorded: fn(u64) -> u64 = $stream;
            // SAFETY: the operations the driver has just read.
            unsafe { batch_3d(stringify!($name), ops, count, recorded(stream as u64), ret) };
            ret
        }
    };
}

macro_rules! with_3d_shim {
    ($name:ident, $stream:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(op: *const u8, flags: u64, stream: *mut c_void) -> c_int {
            let Some(f) = real!($name: With3dFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the one operation the program passes the runtime.
            unsafe { wait_for_batch_3d(op, 1) };
            // SAFETY: the program's own arguments, passed on unchanged.
            let ret = unsafe { f(op, flags, stream) };
            let recorded: fn(u64) -> u64 = $stream;
            // SAFETY: the one operation the runtime has just read.
            unsafe { batch_3d(stringify!($name), op, 1, recorded(stream as u64), ret) };
            ret
        }
    };
}

batch_3d_shim!(cudaMemcpy3DBatchAsync, as_passed);
batch_3d_shim!(cudaMemcpy3DBatchAsync_ptsz, per_thread);
batch_3d_shim!(cuMemcpy3DBatchAsync_v2, as_passed);
batch_3d_shim!(cuMemcpy3DBatchAsync_v2_ptsz, per_thread);
batch_3d_fail_idx_shim!(cuMemcpy3DBatchAsync, as_passed);
batch_3d_fail_idx_shim!(cuMemcpy3DBatchAsync_ptsz, per_thread);
with_3d_shim!(cudaMemcpy3DWithAttributesAsync, as_passed);
with_3d_shim!(cudaMemcpy3DWithAttributesAsync_ptsz, per_thread);
with_3d_shim!(cuMemcpy3DWithAttributesAsync, as_passed);

/// `(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream)`: the runtime's and
/// the driver's v2 batch.
type BatchFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const usize,
    usize,
    *mut c_void,
    *mut usize,
    usize,
    *mut c_void,
) -> c_int;

/// The driver's first batch, with `failIdx` before the stream.
type BatchFailIdxFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const usize,
    usize,
    *mut c_void,
    *mut usize,
    usize,
    *mut usize,
    *mut c_void,
) -> c_int;

/// `(dst, src, size, attr, stream)`.
type WithAttributesFn = unsafe extern "C" fn(u64, u64, usize, *mut c_void, *mut c_void) -> c_int;

/// A batch entry point: `$stream` maps the program's stream to the recorded one.
macro_rules! batch_shim {
    ($name:ident, $form:expr, $stream:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            dsts: *const u64,
            srcs: *const u64,
            sizes: *const usize,
            count: usize,
            attrs: *mut c_void,
            attrs_idxs: *mut usize,
            num_attrs: usize,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: BatchFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the arrays the program passes the runtime.
            unsafe { wait_for_batch(dsts, srcs, sizes, count) };
            // SAFETY: the program's own arguments, passed on unchanged.
            let ret = unsafe { f(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream) };
            let recorded: fn(u64) -> u64 = $stream;
            // SAFETY: the arrays the runtime has just read, `count` entries each.
            unsafe { batch(stringify!($name), $form, dsts, srcs, sizes, count, recorded(stream as u64), ret) };
            ret
        }
    };
}

/// The driver's first batch form, with `failIdx`.
macro_rules! batch_fail_idx_shim {
    ($name:ident, $stream:expr) => {
        /// # Safety
        /// Called by the program with the driver function's own arguments.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            dsts: *const u64,
            srcs: *const u64,
            sizes: *const usize,
            count: usize,
            attrs: *mut c_void,
            attrs_idxs: *mut usize,
            num_attrs: usize,
            fail_idx: *mut usize,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: BatchFailIdxFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the arrays the program passes the driver.
            unsafe { wait_for_batch(dsts, srcs, sizes, count) };
            // SAFETY: the program's own arguments, passed on unchanged.
            let ret = unsafe {
                f(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, fail_idx, stream)
            };
            let recorded: fn(u64) -> u64 = $stream;
            // SAFETY: the arrays the driver has just read, `count` entries each.
            unsafe { batch(stringify!($name), Form::Driver, dsts, srcs, sizes, count, recorded(stream as u64), ret) };
            ret
        }
    };
}

/// A single copy with attributes: a batch of one.
macro_rules! with_attributes_shim {
    ($name:ident, $form:expr, $stream:expr) => {
        /// # Safety
        /// Called by the program with the runtime or driver function's own arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            dst: u64,
            src: u64,
            size: usize,
            attr: *mut c_void,
            stream: *mut c_void,
        ) -> c_int {
            let Some(f) = real!($name: WithAttributesFn).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            wait_for_reads([(dst, size as u64), (src, size as u64)].into_iter());
            // SAFETY: the program's own arguments, passed on unchanged.
            let ret = unsafe { f(dst, src, size, attr, stream) };
            let recorded: fn(u64) -> u64 = $stream;
            let copy = Copy1 {
                dst,
                src,
                size: size as u64,
            };
            record(stringify!($name), $form, &[copy], recorded(stream as u64), ret);
            ret
        }
    };
}

fn as_passed(stream: u64) -> u64 {
    stream
}

batch_shim!(cudaMemcpyBatchAsync, Form::Runtime, as_passed);
batch_shim!(cudaMemcpyBatchAsync_ptsz, Form::Runtime, per_thread);
batch_shim!(cuMemcpyBatchAsync_v2, Form::Driver, as_passed);
batch_shim!(cuMemcpyBatchAsync_v2_ptsz, Form::Driver, per_thread);
batch_fail_idx_shim!(cuMemcpyBatchAsync, as_passed);
batch_fail_idx_shim!(cuMemcpyBatchAsync_ptsz, per_thread);
with_attributes_shim!(cudaMemcpyWithAttributesAsync, Form::Runtime, as_passed);
with_attributes_shim!(
    cudaMemcpyWithAttributesAsync_ptsz,
    Form::Runtime,
    per_thread
);
with_attributes_shim!(cuMemcpyWithAttributesAsync, Form::Driver, as_passed);
