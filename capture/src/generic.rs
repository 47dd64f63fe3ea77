//! Recording a table row from its parameter kinds: the shared capture policy for every
//! generic API (values, device pointers, handles, allocations, memcpy, memset).

use std::os::raw::c_int;

use hrr_archive::api::{
    self, memcpy3d, ApiDesc, CopyDir, ParamKind, Vendor, BLOB_FIELD, COPY_DIR_FIELD,
};
use hrr_archive::payload::{BlobRef, PayloadWriter};
use hrr_archive::writer::current_tid;

use crate::alloc::Space;
use crate::state::{self, Capture};

/// Reads `len` bytes the program handed to the runtime.
///
/// # Safety
/// `ptr` must be valid for `len` bytes, as the API contract of the call requires.
unsafe fn host_bytes<'a>(ptr: u64, len: u64) -> &'a [u8] {
    if ptr == 0 || len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract (the runtime itself reads or has written these bytes).
    unsafe { std::slice::from_raw_parts(ptr as usize as *const u8, len as usize) }
}

/// The 3D-copy parameter struct a row's `Copy3DParms` argument points at.
fn parms_3d(
    desc: &ApiDesc,
    args: &[u64],
) -> Option<(usize, memcpy3d::Parms, [u8; memcpy3d::SIZE])> {
    let i = desc
        .params
        .iter()
        .position(|p| p.kind == ParamKind::Copy3DParms)?;
    if args[i] == 0 {
        return None;
    }
    // SAFETY: the program passed a pointer to a cudaMemcpy3DParms / hipMemcpy3DParms, which
    // the runtime reads in full.
    let raw: [u8; memcpy3d::SIZE] = unsafe { host_bytes(args[i], memcpy3d::SIZE as u64) }
        .try_into()
        .ok()?;
    Some((i, memcpy3d::Parms::decode(&raw), raw))
}

/// The copied box of one side of a 3D copy, packed row after row, slice after slice.
///
/// # Safety
/// `side` must be the host side of a 3D copy the runtime reads or has written.
unsafe fn packed_box(side: &memcpy3d::Side, extent: [u64; 3]) -> Result<Vec<u8>, String> {
    let [w, h, d] = extent;
    let total = w
        .checked_mul(h)
        .and_then(|x| x.checked_mul(d))
        .filter(|&t| t <= MAX_2D_BYTES)
        .ok_or_else(|| format!("a {w} x {h} x {d} box is too large to record"))?;
    if w > side.pitch && (h > 1 || d > 1) {
        return Err(format!("width {w} exceeds pitch {}", side.pitch));
    }
    let mut out = Vec::with_capacity(total as usize);
    for k in 0..d {
        for j in 0..h {
            // SAFETY: the caller's contract: each row of the box is `w` bytes here.
            out.extend_from_slice(unsafe { host_bytes(side.row(j, k), w) });
        }
    }
    Ok(out)
}

fn copy_dir(cap: &Capture, desc: &ApiDesc, args: &[u64]) -> Option<CopyDir> {
    if let Some((_, parms, _)) = parms_3d(desc, args) {
        return CopyDir::resolve(
            parms.kind as i64,
            cap.allocs.is_device(parms.dst.ptr),
            cap.allocs.is_device(parms.src.ptr),
        );
    }
    let dst = desc
        .params
        .iter()
        .position(|p| matches!(p.kind, ParamKind::CopyDst(_) | ParamKind::CopyDst2D(..)))?;
    let src = desc
        .params
        .iter()
        .position(|p| matches!(p.kind, ParamKind::CopySrc(_) | ParamKind::CopySrc2D(..)))?;
    let kind = desc
        .params
        .iter()
        .position(|p| p.kind == ParamKind::CopyKind)?;
    CopyDir::resolve(
        args[kind] as i64,
        cap.allocs.is_device(args[dst]),
        cap.allocs.is_device(args[src]),
    )
}

fn len_of(desc: &ApiDesc, args: &[u64], name: &str) -> u64 {
    desc.param_index(name).map(|i| args[i]).unwrap_or(0)
}

/// Largest host footprint of one 2D copy recorded (larger geometry is refused loudly).
const MAX_2D_BYTES: u64 = 1 << 40;

/// The copied rows of a pitched host buffer, packed end to end (width * height bytes).
///
/// # Safety
/// `ptr` must be the host side of a 2D copy the runtime reads or has written with this
/// geometry: `height` rows of `width` bytes, `pitch` apart.
unsafe fn packed_rows(ptr: u64, pitch: u64, width: u64, height: u64) -> Result<Vec<u8>, String> {
    if width > pitch && height > 1 {
        return Err(format!("width {width} exceeds pitch {pitch}"));
    }
    let total = width
        .checked_mul(height)
        .filter(|&t| t <= MAX_2D_BYTES)
        .ok_or_else(|| format!("{width} x {height} bytes is too large to record"))?;
    let mut out = Vec::with_capacity(total as usize);
    for row in 0..height {
        // SAFETY: the caller's contract: each row is `width` bytes at ptr + row * pitch.
        out.extend_from_slice(unsafe { host_bytes(ptr + row * pitch, width) });
    }
    Ok(out)
}

fn geometry(
    desc: &ApiDesc,
    args: &[u64],
    pitch: &str,
    width: &str,
    height: &str,
) -> (u64, u64, u64) {
    (
        len_of(desc, args, pitch),
        len_of(desc, args, width),
        len_of(desc, args, height),
    )
}

/// The stream parameter of a row, if it has one.
fn stream_of(desc: &ApiDesc, args: &[u64]) -> Option<u64> {
    desc.params
        .iter()
        .position(|p| p.kind == ParamKind::Stream)
        .map(|i| args[i])
}

/// Waits for an asynchronous copy's stream, so its host destination holds the result
/// before capture reads it; Some(why) when waiting failed.
fn wait_for_copy(vendor: Vendor, desc: &ApiDesc, args: &[u64]) -> Option<String> {
    let s = stream_of(desc, args)?;
    let r = sync_stream(vendor, s);
    (r != 0).then(|| format!("waiting for stream {s:#x} before reading the copy failed ({r})"))
}

/// Waits for `stream` with the real runtime (never through our shim).
fn sync_stream(vendor: Vendor, stream: u64) -> c_int {
    let f = match vendor {
        Vendor::Cuda => &crate::shims::REAL_CUDA_STREAM_SYNCHRONIZE,
        Vendor::Hip => &crate::shims::REAL_HIP_STREAM_SYNCHRONIZE,
    };
    let p = f.get();
    if p.is_null() {
        return -1;
    }
    // SAFETY: cudaStreamSynchronize / hipStreamSynchronize: int(void*), resolved by name.
    unsafe {
        let f: unsafe extern "C" fn(*mut std::os::raw::c_void) -> c_int = std::mem::transmute(p);
        f(stream as usize as *mut _)
    }
}

/// Captures one call of a generic table row. `call` makes the real call exactly once.
pub fn capture_row(
    desc: &'static ApiDesc,
    vendor: Vendor,
    args: &[u64],
    call: impl FnOnce() -> c_int,
) -> c_int {
    let Some((cap, _guard)) = state::enter(vendor) else {
        return call();
    };
    let writer = cap.writer();
    // Before the call: host bytes the call reads (H2D sources).
    let pre = state::guarded(desc.name, || {
        let dir = copy_dir(cap, desc, args);
        let mut src_blob: Option<Result<BlobRef, String>> = None;
        if dir == Some(CopyDir::HostToDevice) {
            for (i, p) in desc.params.iter().enumerate() {
                if let ParamKind::CopySrc(len) = p.kind {
                    // SAFETY: an H2D copy reads `len` bytes at the source (API contract).
                    let bytes = unsafe { host_bytes(args[i], len_of(desc, args, len)) };
                    src_blob = Some(writer.put_blob(bytes).map_err(|e| e.to_string()));
                }
                if p.kind == ParamKind::Copy3DParms {
                    if let Some((_, parms, _)) = parms_3d(desc, args) {
                        // SAFETY: an H2D 3D copy reads this box at the source.
                        src_blob = Some(
                            unsafe { packed_box(&parms.src, parms.extent) }
                                .and_then(|rows| writer.put_blob(&rows).map_err(|e| e.to_string())),
                        );
                    }
                }
                if let ParamKind::CopySrc2D(pitch, width, height) = p.kind {
                    let (pt, w, h) = geometry(desc, args, pitch, width, height);
                    // SAFETY: an H2D 2D copy reads these rows at the source (API contract).
                    src_blob = Some(
                        unsafe { packed_rows(args[i], pt, w, h) }
                            .and_then(|rows| writer.put_blob(&rows).map_err(|e| e.to_string())),
                    );
                }
            }
        }
        (dir, src_blob)
    });
    let ret = call();
    let Some((dir, src_blob)) = pre else {
        return ret;
    };
    state::guarded(desc.name, || {
        let mut p = PayloadWriter::new();
        let mut flags = 0u16;
        let mut failure: Option<String> = None;
        for (i, param) in desc.params.iter().enumerate() {
            let fid = ApiDesc::field_id(i);
            let a = args[i];
            match param.kind {
                ParamKind::Value | ParamKind::CopyKind => {
                    p.u64(fid, a);
                }
                ParamKind::DevPtr | ParamKind::FreeDevPtr | ParamKind::FreeHostPtr => {
                    p.devptr(fid, a);
                    if ret == 0 && param.kind != ParamKind::DevPtr {
                        cap.allocs.remove(a);
                    }
                }
                ParamKind::Stream | ParamKind::Event => {
                    p.handle(fid, a);
                }
                ParamKind::OutDevPtr(len) | ParamKind::OutHostPtr(len) => {
                    if ret == 0 && a != 0 {
                        // SAFETY: on success the call stored a pointer at `a` (T** out).
                        let v = unsafe { *(a as usize as *const u64) };
                        p.devptr(fid, v);
                        let space = if matches!(param.kind, ParamKind::OutDevPtr(_)) {
                            Space::Device
                        } else {
                            Space::PinnedHost
                        };
                        cap.allocs.insert(v, len_of(desc, args, len), space);
                    } else {
                        p.null(fid, hrr_archive::payload::FieldType::DevPtr);
                    }
                }
                ParamKind::OutStream | ParamKind::OutEvent => {
                    if ret == 0 && a != 0 {
                        // SAFETY: on success the call stored a handle at `a`.
                        p.handle(fid, unsafe { *(a as usize as *const u64) });
                    } else {
                        p.null(fid, hrr_archive::payload::FieldType::Handle);
                    }
                }
                ParamKind::OutValue => {
                    if ret == 0 && a != 0 {
                        // SAFETY: every OutValue in the table is a 4-byte int or float out.
                        p.u64(fid, unsafe { *(a as usize as *const u32) } as u64);
                    }
                }
                ParamKind::OutStruct => {}
                ParamKind::Copy3DParms => match parms_3d(desc, args) {
                    Some((_, parms, raw)) => {
                        p.bytes(fid, &raw, false);
                        if parms.src_array != 0 || parms.dst_array != 0 {
                            failure = Some("3D copy to or from an array (cudaArray/hipArray): arrays are not captured".into());
                        }
                        if let Some(Ok(r)) = &src_blob {
                            p.blob(BLOB_FIELD | fid, *r);
                        } else if let Some(Err(e)) = &src_blob {
                            failure = Some(format!("source box not recorded: {e}"));
                        }
                        if dir == Some(CopyDir::DeviceToHost) && ret == 0 {
                            if let Some(why) = wait_for_copy(vendor, desc, args) {
                                failure = Some(why);
                            }
                            // SAFETY: the completed D2H 3D copy wrote this box.
                            match unsafe { packed_box(&parms.dst, parms.extent) }
                                .and_then(|rows| writer.put_blob(&rows).map_err(|e| e.to_string()))
                            {
                                Ok(r) => {
                                    p.blob(BLOB_FIELD | fid, r);
                                }
                                Err(e) => {
                                    failure = Some(format!("expected output not recorded: {e}"))
                                }
                            }
                        }
                    }
                    None => {
                        p.null(fid, hrr_archive::payload::FieldType::Bytes);
                    }
                },
                ParamKind::OutSize => {
                    if ret == 0 && a != 0 {
                        // SAFETY: a size_t out the call wrote.
                        p.u64(fid, unsafe { *(a as usize as *const u64) });
                    }
                }
                ParamKind::OutPitchedDevPtr(pitch, height) => {
                    let pitch_ptr = len_of(desc, args, pitch);
                    if ret == 0 && a != 0 && pitch_ptr != 0 {
                        // SAFETY: on success the call stored the pointer at `a` and the
                        // pitch at `pitch_ptr`.
                        let (v, pt) = unsafe {
                            (
                                *(a as usize as *const u64),
                                *(pitch_ptr as usize as *const u64),
                            )
                        };
                        p.devptr(fid, v);
                        cap.allocs.insert(
                            v,
                            pt.saturating_mul(len_of(desc, args, height)),
                            Space::Device,
                        );
                    } else {
                        p.null(fid, hrr_archive::payload::FieldType::DevPtr);
                    }
                }
                ParamKind::RegisterHostPtr(len) => {
                    p.devptr(fid, a);
                    if ret == 0 {
                        cap.allocs
                            .insert(a, len_of(desc, args, len), Space::PinnedHost);
                    }
                }
                ParamKind::CopySrc(_) | ParamKind::CopySrc2D(..) => {
                    p.devptr(fid, a);
                    if let Some(b) = &src_blob {
                        match b {
                            Ok(r) => {
                                p.blob(BLOB_FIELD | fid, *r);
                            }
                            Err(e) => failure = Some(format!("source bytes not recorded: {e}")),
                        }
                    }
                }
                ParamKind::CopyDst(len) => {
                    p.devptr(fid, a);
                    if dir == Some(CopyDir::DeviceToHost) && ret == 0 {
                        // The expected output: read only once the copy has completed.
                        if let Some(why) = wait_for_copy(vendor, desc, args) {
                            failure = Some(why);
                        }
                        // SAFETY: the completed D2H copy wrote `len` bytes at `a`.
                        let bytes = unsafe { host_bytes(a, len_of(desc, args, len)) };
                        match writer.put_blob(bytes) {
                            Ok(r) => {
                                p.blob(BLOB_FIELD | fid, r);
                            }
                            Err(e) => failure = Some(format!("expected output not recorded: {e}")),
                        }
                    }
                }
                ParamKind::CopyDst2D(pitch, width, height) => {
                    p.devptr(fid, a);
                    if dir == Some(CopyDir::DeviceToHost) && ret == 0 {
                        if let Some(why) = wait_for_copy(vendor, desc, args) {
                            failure = Some(why);
                        }
                        let (pt, w, h) = geometry(desc, args, pitch, width, height);
                        // SAFETY: the completed 2D D2H copy wrote these rows at `a`.
                        match unsafe { packed_rows(a, pt, w, h) }
                            .and_then(|rows| writer.put_blob(&rows).map_err(|e| e.to_string()))
                        {
                            Ok(r) => {
                                p.blob(BLOB_FIELD | fid, r);
                            }
                            Err(e) => failure = Some(format!("expected output not recorded: {e}")),
                        }
                    }
                }
            }
        }
        if let Some(d) = dir {
            p.u64(COPY_DIR_FIELD, d as u64);
        }
        if failure.is_some() {
            flags |= hrr_archive::record::RECORD_FLAG_INCOMPLETE;
        }
        if let Some(seq) = writer.append(desc.id, flags, current_tid(), ret, p.as_bytes()) {
            if let Some(f) = failure {
                writer.note_capture_failure(seq, desc.symbol(vendor).unwrap_or(desc.name), &f);
            }
        }
        if desc.id == api::id::Malloc && ret == 0 {
            crate::kernels::note_runtime_once(vendor);
        }
    });
    ret
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pitched_rows_are_packed_without_their_padding() {
        // 3 rows of 4 bytes, 10 apart, padding 0xee.
        let mut buf = [0xeeu8; 30];
        for r in 0..3 {
            for c in 0..4 {
                buf[r * 10 + c] = (r * 4 + c) as u8;
            }
        }
        // SAFETY: the geometry stays inside `buf`.
        let packed = unsafe { packed_rows(buf.as_ptr() as u64, 10, 4, 3) }.unwrap();
        assert_eq!(packed, (0..12).collect::<Vec<u8>>());
        // SAFETY: refused before reading anything.
        assert!(unsafe { packed_rows(buf.as_ptr() as u64, 2, 4, 3) }
            .unwrap_err()
            .contains("exceeds pitch"));
        assert!(unsafe { packed_rows(buf.as_ptr() as u64, 10, 4, u64::MAX) }
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn a_3d_box_is_packed_slice_by_slice_from_its_position() {
        // Volume: pitch 8 bytes, 4 rows a slice, 3 slices; box 2 x 2 x 2 at (1, 1, 1).
        let vol: Vec<u8> = (0..96).collect();
        let side = memcpy3d::Side {
            ptr: vol.as_ptr() as u64,
            pitch: 8,
            xsize: 8,
            ysize: 4,
            x: 1,
            y: 1,
            z: 1,
        };
        // SAFETY: the box stays inside `vol`.
        let packed = unsafe { packed_box(&side, [2, 2, 2]) }.unwrap();
        let at = |x: usize, y: usize, z: usize| (z * 32 + y * 8 + x) as u8;
        assert_eq!(
            packed,
            vec![
                at(1, 1, 1),
                at(2, 1, 1),
                at(1, 2, 1),
                at(2, 2, 1),
                at(1, 1, 2),
                at(2, 1, 2),
                at(1, 2, 2),
                at(2, 2, 2)
            ]
        );
    }
}
