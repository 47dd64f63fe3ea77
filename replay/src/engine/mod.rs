//! The replay engine: re-issues a process's events in sequence order on the GPU,
//! rebuilding handles and addresses, and checks every device-to-host result.

use std::collections::HashMap;
use std::os::raw::{c_int, c_uint, c_void};

use hrr_archive::api::{
    self, fid, semantic, ApiDesc, CopyDir, ParamKind, RetPolicy, Vendor, BLOB_FIELD, COPY_DIR_FIELD,
};
use hrr_archive::payload::{FieldError, Payload};
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
pub use hrr_archive::replay_result::{Counts, Failure};
use hrr_archive::{Event, ProcessArchive};

use crate::runtime::{call_row, Runtime};
use crate::staging::{Role, Staging};
use crate::translate::{AddressMap, Translated};

pub struct Options {
    pub continue_on_error: bool,
}

struct Ctx<'a> {
    rt: &'a Runtime,
    proc_: &'a ProcessArchive,
    addrs: AddressMap,
    handles: HashMap<u64, u64>,
    modules: HashMap<String, u64>,
    /// Code object -> kernel name -> replay function (two levels: a launch looks both up
    /// by the &str its payload holds, allocating nothing).
    functions: HashMap<String, HashMap<String, u64>>,
    /// Host buffers replay page-locked in place of the captured process's registered
    /// memory (HostRegister), by their replay address.
    registered: HashMap<u64, Vec<u8>>,
    /// Reused host buffers for copies' sources, results and expected bytes.
    staging: Staging<'a>,
    /// What this replay created and has not released yet, by replay address or handle:
    /// released when the process's replay ends, so the next archive replayed in the same
    /// process (`hrr-replay --serve`) starts on an empty device.
    live: HashMap<u64, Resource>,
    counts: Counts,
    failures: Vec<Failure>,
}

/// A device resource a replay owns until the program's own call releases it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    DeviceMemory,
    PinnedHostMemory,
    Stream,
    Event,
}

impl Resource {
    /// The API table row that releases it.
    fn release_row(self) -> u16 {
        match self {
            Resource::DeviceMemory => api::id::Free,
            Resource::PinnedHostMemory => api::id::FreeHost,
            Resource::Stream => api::id::StreamDestroy,
            Resource::Event => api::id::EventDestroy,
        }
    }
}

/// Why an event could not be replayed (turned into a Failure with its seq and API).
type EvResult = Result<(), String>;

fn field_err(e: FieldError) -> String {
    format!("payload: {e}")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether two buffers hold the same bytes; large ones are compared by several threads
/// (one thread compares at a fraction of memory bandwidth).
fn equal(a: &[u8], b: &[u8]) -> bool {
    const PARALLEL_BYTES: usize = 64 << 20;
    if a.len() != b.len() {
        return false;
    }
    if a.len() < PARALLEL_BYTES {
        return a == b;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let step = a.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = a
            .chunks(step)
            .zip(b.chunks(step))
            .map(|(x, y)| s.spawn(move || x == y))
            .collect();
        parts.into_iter().all(|h| h.join().unwrap_or(false))
    })
}

/// Compares replayed bytes with the captured expectation; None when equal.
pub fn compare(expected: &[u8], found: &[u8]) -> Option<(u64, u64, String, String)> {
    if equal(expected, found) {
        return None;
    }
    let n = expected.len().min(found.len());
    let first = (0..n).find(|&i| expected[i] != found[i]).unwrap_or(n);
    let differing =
        (0..n).filter(|&i| expected[i] != found[i]).count() + expected.len().abs_diff(found.len());
    let end = |v: &[u8]| v[first.min(v.len())..(first + 16).min(v.len())].to_vec();
    Some((
        differing as u64,
        first as u64,
        hex(&end(expected)),
        hex(&end(found)),
    ))
}

impl<'a> Ctx<'a> {
    fn fail(&mut self, ev: &Event, kind: &str, message: String) {
        self.failures.push(Failure {
            pid: self.proc_.entry.pid,
            seq: ev.header.seq,
            api: self.event_api_label(ev),
            kind: kind.into(),
            message,
            bytes: None,
            differing_bytes: None,
            first_differing_offset: None,
            expected_hex: None,
            found_hex: None,
        });
    }

    /// The API an event stands for; an unreplayable event names the real API it recorded.
    fn event_api_label(&self, ev: &Event) -> String {
        if ev.header.api_id == semantic::UNREPLAYABLE {
            if let Ok(p) = Payload::parse(&ev.payload) {
                if let Ok(name) = p.str(fid::API_NAME, "api") {
                    return name.to_string();
                }
            }
        }
        self.api_label(ev.header.api_id)
    }

    fn api_label(&self, id: u16) -> String {
        if let Some(d) = api::desc(id) {
            if let Some(s) = d.symbol(self.rt.vendor) {
                return s.to_string();
            }
        }
        api::api_name(id)
    }

    fn handle(&self, captured: u64) -> Result<u64, String> {
        // 0 is the default stream; 1 and 2 are the legacy / per-thread default streams.
        if captured <= 2 {
            return Ok(captured);
        }
        self.handles
            .get(&captured)
            .copied()
            .ok_or_else(|| format!("handle {captured:#x} was never created in this capture"))
    }

    fn translate(&mut self, addr: u64) -> u64 {
        match self.addrs.translate(addr) {
            Translated::Null => 0,
            Translated::Mapped(a) => a,
            Translated::Unmapped => {
                self.counts.untranslated_pointers += 1;
                0
            }
        }
    }

    fn check_ret(&mut self, ev: &Event, policy: RetPolicy, got: c_int) -> EvResult {
        if policy == RetPolicy::Any {
            return Ok(());
        }
        let want = ev.header.ret;
        if got == want {
            if want != 0 {
                self.counts.failed_as_captured += 1;
            }
            return Ok(());
        }
        Err(format!("returned {got}, capture returned {want}"))
    }

    /// Waits for the stream of a copy whose host buffer is about to be read or reused.
    fn stream_sync(&mut self, stream: u64, what: &str) -> EvResult {
        let sync = match self.rt.vendor {
            Vendor::Cuda => "cudaStreamSynchronize",
            Vendor::Hip => "hipStreamSynchronize",
        };
        match self.rt.call_ptr(sync, stream)? {
            0 => Ok(()),
            r => Err(format!(
                "waiting for the copy's stream ({what}) failed ({r})"
            )),
        }
    }

    /// Loads an H2D copy's source blob (payload field `BLOB_FIELD | id`) into the source
    /// buffer and returns its address; `len`, where the copy's geometry fixes it, must
    /// be the blob's.
    fn stage_source(
        &mut self,
        p: &Payload,
        id: u16,
        what: &'static str,
        len: Option<u64>,
    ) -> Result<u64, String> {
        let r = p.blob(BLOB_FIELD | id, what).map_err(field_err)?;
        if let Some(n) = len.filter(|&n| n != r.len) {
            return Err(format!(
                "{what}: the blob holds {} bytes, the copy is {n}",
                r.len
            ));
        }
        let n = self.host_len(r.len, what)?;
        if let Some(buf) = self.staging.reuse_expected_as_source(&r.hash, n) {
            return Ok(buf.as_ptr() as u64);
        }
        let buf = self.staging.get(Role::Source, n);
        self.proc_
            .load_blob_into(&r, buf)
            .map_err(|e| e.to_string())?;
        Ok(buf.as_ptr() as u64)
    }

    /// Loads a D2H copy's expected blob and returns where its `n`-byte result is to land,
    /// with the (result, expected) lengths the check compares.
    fn stage_result(
        &mut self,
        p: &Payload,
        id: u16,
        what: &'static str,
        n: u64,
    ) -> Result<(u64, (usize, usize)), String> {
        let r = p.blob(BLOB_FIELD | id, what).map_err(field_err)?;
        let expected_len = self.host_len(r.len, what)?;
        let result_len = self.host_len(n, "the copy's result")?;
        let buf = self.staging.get(Role::Expected, expected_len);
        self.proc_
            .load_blob_into(&r, buf)
            .map_err(|e| e.to_string())?;
        self.staging.set_expected_content(r.hash, expected_len);
        let dst = self.staging.get(Role::Result, result_len).as_ptr() as u64;
        self.staging.poison_result(result_len, expected_len);
        Ok((dst, (result_len, expected_len)))
    }

    /// A host buffer length from the archive, refused above `max_host_bytes`.
    fn host_len(&self, n: u64, what: &str) -> Result<usize, String> {
        usize::try_from(n)
            .ok()
            .filter(|_| n <= self.proc_.limits.max_host_bytes)
            .ok_or_else(|| {
                format!(
                    "{what}: {n} bytes exceeds max_host_bytes ({})",
                    self.proc_.limits.max_host_bytes
                )
            })
    }

    fn d2h_verdict(
        &mut self,
        ev: &Event,
        expected_len: usize,
        verdict: Option<(u64, u64, String, String)>,
    ) {
        match verdict {
            None => self.counts.d2h_pass += 1,
            Some((differing, first, exp, got)) => {
                self.counts.d2h_fail += 1;
                let api = self.api_label(ev.header.api_id);
                self.failures.push(Failure {
                    pid: self.proc_.entry.pid,
                    seq: ev.header.seq,
                    api: api.clone(),
                    kind: "d2h_mismatch".into(),
                    message: format!(
                        "D2H check failed at seq {} {api}: {differing} of {expected_len} bytes differ, first at offset {first}: expected {exp}, found {got}",
                        ev.header.seq,
                    ),
                    bytes: Some(expected_len as u64),
                    differing_bytes: Some(differing),
                    first_differing_offset: Some(first),
                    expected_hex: Some(exp),
                    found_hex: Some(got),
                });
            }
        }
    }

    fn replay_generic(&mut self, ev: &Event, desc: &'static ApiDesc) -> EvResult {
        let p = Payload::parse(&ev.payload).map_err(field_err)?;
        let sym = desc
            .symbol(self.rt.vendor)
            .ok_or_else(|| format!("{} has no {} symbol", desc.name, self.rt.vendor.as_str()))?;
        let f = self.rt.require(sym)?;
        let dir = p
            .get(COPY_DIR_FIELD)
            .map(|f| f.as_u64())
            .transpose()
            .map_err(field_err)?
            .and_then(CopyDir::from_u64);
        if dir == Some(CopyDir::HostToHost) {
            return Ok(()); // host memory of the captured process: nothing to re-execute
        }
        let mut args = Vec::with_capacity(desc.params.len());
        let mut slots: Vec<Box<[u64; 2048]>> = Vec::new();
        let mut keep: Vec<Vec<u8>> = Vec::new();
        // A D2H copy's (result length, expected length), both in the staging buffers.
        let mut d2h: Option<(usize, usize)> = None;
        // The copy reads a page-locked source after an asynchronous call returns.
        let mut source_in_flight = false;
        // Param index -> its out slot; pitch arguments replaced because the host side of a
        // 2D copy is recorded packed (pitch = width).
        let mut slot_of: HashMap<usize, usize> = HashMap::new();
        let mut pitch_override: Vec<(usize, u64)> = Vec::new();
        let mut registering: Option<u64> = None;
        for (i, param) in desc.params.iter().enumerate() {
            let id = ApiDesc::field_id(i);
            let val = |name| -> Result<u64, String> {
                match p.get(id) {
                    Some(f) if f.is_null() => Ok(0),
                    Some(f) => f.as_u64().map_err(field_err),
                    None => Err(format!("payload: parameter {name} (field {id}) is absent")),
                }
            };
            let a = match param.kind {
                ParamKind::Value | ParamKind::CopyKind => val(param.name)?,
                ParamKind::DevPtr | ParamKind::FreeDevPtr | ParamKind::FreeHostPtr => {
                    let v = val(param.name)?;
                    self.translate(v)
                }
                ParamKind::Stream | ParamKind::Event => self.handle(val(param.name)?)?,
                ParamKind::OutDevPtr(_)
                | ParamKind::OutHostPtr(_)
                | ParamKind::OutStream
                | ParamKind::OutEvent
                | ParamKind::OutValue
                | ParamKind::OutStruct
                | ParamKind::OutSize
                | ParamKind::OutPitchedDevPtr(..) => {
                    slots.push(Box::new([0u64; 2048]));
                    slot_of.insert(i, slots.len() - 1);
                    slots.last().map(|s| s.as_ptr() as u64).unwrap_or(0)
                }
                ParamKind::RegisterHostPtr(len) => {
                    let n = desc
                        .param_index(len)
                        .map(|j| p.u64(ApiDesc::field_id(j), "size"))
                        .transpose()
                        .map_err(field_err)?
                        .unwrap_or(0);
                    if n > self.proc_.limits.max_host_bytes {
                        return Err(format!("registering {n} bytes exceeds max_host_bytes"));
                    }
                    // A page-aligned buffer of our own stands in for the program's memory.
                    let mut buf = vec![0u8; n as usize + 4096];
                    let base = buf.as_mut_ptr() as u64;
                    let aligned = (base + 4095) & !4095;
                    self.registered.insert(aligned, buf);
                    registering = Some(aligned);
                    aligned
                }
                ParamKind::Copy3DParms => {
                    let raw = p.bytes(id, "3D copy parameters").map_err(field_err)?;
                    let raw: &[u8; api::memcpy3d::SIZE] = raw.try_into().map_err(|_| {
                        format!(
                            "3D copy parameters are {} bytes, not {}",
                            raw.len(),
                            api::memcpy3d::SIZE
                        )
                    })?;
                    let mut parms = api::memcpy3d::Parms::decode(raw);
                    if parms.src_array != 0 || parms.dst_array != 0 {
                        return Err("3D copies to or from arrays are not replayable".into());
                    }
                    let total = parms
                        .box_bytes()
                        .filter(|&t| t <= self.proc_.limits.max_host_bytes)
                        .ok_or_else(|| {
                            format!("a {:?} box exceeds max_host_bytes", parms.extent)
                        })?;
                    let [w, h, _] = parms.extent;
                    let packed = |ptr: u64| api::memcpy3d::Side {
                        ptr,
                        pitch: w,
                        xsize: w,
                        ysize: h,
                        x: 0,
                        y: 0,
                        z: 0,
                    };
                    match dir {
                        Some(CopyDir::HostToDevice) => {
                            let src = self.stage_source(&p, id, "source box", Some(total))?;
                            source_in_flight = true;
                            parms.src = packed(src);
                            parms.dst.ptr = self.translate(parms.dst.ptr);
                        }
                        Some(CopyDir::DeviceToHost) => {
                            let (dst, lens) = self.stage_result(&p, id, "expected box", total)?;
                            d2h = Some(lens);
                            parms.dst = packed(dst);
                            parms.src.ptr = self.translate(parms.src.ptr);
                        }
                        _ => {
                            parms.src.ptr = self.translate(parms.src.ptr);
                            parms.dst.ptr = self.translate(parms.dst.ptr);
                        }
                    }
                    keep.push(parms.encode().to_vec());
                    keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
                }
                ParamKind::CopySrc2D(pitch, width, height)
                | ParamKind::CopyDst2D(pitch, width, height) => {
                    let captured = val(param.name)?;
                    let is_dst = matches!(param.kind, ParamKind::CopyDst2D(..));
                    let geo = |name: &str| -> Result<(usize, u64), String> {
                        let j = desc
                            .param_index(name)
                            .ok_or_else(|| format!("{} has no parameter {name}", desc.name))?;
                        Ok((
                            j,
                            p.u64(ApiDesc::field_id(j), "geometry").map_err(field_err)?,
                        ))
                    };
                    let ((pi, _pt), (_, w), (_, h)) = (geo(pitch)?, geo(width)?, geo(height)?);
                    let total = w
                        .checked_mul(h)
                        .filter(|&t| t <= self.proc_.limits.max_host_bytes)
                        .ok_or_else(|| {
                            format!("2D copy of {w} x {h} bytes exceeds max_host_bytes")
                        })?;
                    match (dir, is_dst) {
                        (Some(CopyDir::HostToDevice), false) => {
                            pitch_override.push((pi, w));
                            source_in_flight = true;
                            self.stage_source(&p, id, "source rows", Some(total))?
                        }
                        (Some(CopyDir::DeviceToHost), true) => {
                            pitch_override.push((pi, w));
                            let (dst, lens) = self.stage_result(&p, id, "expected rows", total)?;
                            d2h = Some(lens);
                            dst
                        }
                        _ => self.translate(captured),
                    }
                }
                ParamKind::CopySrc(len) | ParamKind::CopyDst(len) => {
                    let captured = val(param.name)?;
                    let is_dst = matches!(param.kind, ParamKind::CopyDst(_));
                    let n = desc
                        .param_index(len)
                        .map(|j| p.u64(ApiDesc::field_id(j), "length"))
                        .transpose()
                        .map_err(field_err)?
                        .unwrap_or(0);
                    match (dir, is_dst) {
                        (Some(CopyDir::HostToDevice), false) => {
                            source_in_flight = true;
                            self.stage_source(&p, id, "source bytes", None)?
                        }
                        (Some(CopyDir::DeviceToHost), true) => {
                            let (dst, lens) = self.stage_result(&p, id, "expected output", n)?;
                            d2h = Some(lens);
                            dst
                        }
                        _ => self.translate(captured),
                    }
                }
            };
            args.push(a);
        }
        for (i, v) in pitch_override {
            args[i] = v;
        }
        // SAFETY: `f` is the runtime's definition of this row's symbol; pointers are
        // translated replay addresses or buffers that live until after the call.
        let ret = unsafe { call_row(desc.id, f, &args) }
            .ok_or_else(|| format!("{} arguments for {}", args.len(), desc.name))?;
        if let Some(buf) = registering {
            if ret != 0 {
                self.registered.remove(&buf);
            }
        }
        self.check_ret(ev, desc.ret, ret)?;
        let mut slot = slots.iter();
        for (i, param) in desc.params.iter().enumerate() {
            let id = ApiDesc::field_id(i);
            match param.kind {
                ParamKind::OutPitchedDevPtr(pitch, height) => {
                    let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                    let pj = desc.param_index(pitch).unwrap_or(0);
                    let replay_pitch = slot_of.get(&pj).map(|&k| slots[k][0]).unwrap_or(0);
                    let captured_pitch = p.u64(ApiDesc::field_id(pj), "pitch").unwrap_or(0);
                    if let Some(captured) = p
                        .get(id)
                        .filter(|f| !f.is_null())
                        .and_then(|f| f.as_u64().ok())
                    {
                        if ret == 0 && replay_pitch != captured_pitch {
                            return Err(format!(
                                "pitch {replay_pitch} at replay, {captured_pitch} at capture: kernels given the captured pitch would address the wrong rows"
                            ));
                        }
                        let h = desc.param_index(height).map(|j| args[j]).unwrap_or(0);
                        self.addrs
                            .insert(captured, captured_pitch.saturating_mul(h), replay);
                        if ret == 0 {
                            self.live.insert(replay, Resource::DeviceMemory);
                        }
                    }
                }
                ParamKind::OutSize => {
                    slot.next();
                }
                ParamKind::RegisterHostPtr(len) if ret == 0 => {
                    if let (Some(captured), Some(buf)) =
                        (p.get(id).and_then(|f| f.as_u64().ok()), registering)
                    {
                        let size = desc.param_index(len).map(|j| args[j]).unwrap_or(0);
                        self.addrs.insert(captured, size, buf);
                    }
                }
                ParamKind::OutDevPtr(len) | ParamKind::OutHostPtr(len) => {
                    let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                    if let Some(captured) = p
                        .get(id)
                        .filter(|f| !f.is_null())
                        .and_then(|f| f.as_u64().ok())
                    {
                        let size = desc.param_index(len).map(|j| args[j]).unwrap_or(0);
                        self.addrs.insert(captured, size, replay);
                    }
                    if ret == 0 && replay != 0 {
                        let kind = if matches!(param.kind, ParamKind::OutDevPtr(_)) {
                            Resource::DeviceMemory
                        } else {
                            Resource::PinnedHostMemory
                        };
                        self.live.insert(replay, kind);
                    }
                }
                ParamKind::OutStream | ParamKind::OutEvent => {
                    let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                    if let Some(captured) = p
                        .get(id)
                        .filter(|f| !f.is_null())
                        .and_then(|f| f.as_u64().ok())
                    {
                        self.handles.insert(captured, replay);
                    }
                    if ret == 0 && replay != 0 {
                        let kind = if param.kind == ParamKind::OutStream {
                            Resource::Stream
                        } else {
                            Resource::Event
                        };
                        self.live.insert(replay, kind);
                    }
                }
                ParamKind::OutValue | ParamKind::OutStruct => {
                    slot.next();
                }
                ParamKind::FreeDevPtr | ParamKind::FreeHostPtr if ret == 0 => {
                    if let Some(captured) = p.get(id).and_then(|f| f.as_u64().ok()) {
                        self.addrs.remove(captured);
                    }
                    // An unregistered stand-in buffer is ours to free.
                    self.registered.remove(&args[i]);
                    self.live.remove(&args[i]);
                }
                ParamKind::Stream | ParamKind::Event
                    if ret == 0
                        && (desc.id == api::id::StreamDestroy
                            || desc.id == api::id::EventDestroy) =>
                {
                    self.live.remove(&args[i]);
                }
                _ => {}
            }
        }
        let stream = desc
            .params
            .iter()
            .position(|p| p.kind == ParamKind::Stream)
            .map(|si| args[si]);
        // An asynchronous copy still reads a page-locked source after the call returns:
        // it must finish before the next event refills the buffer.
        if let Some(s) = stream.filter(|_| {
            ret == 0 && source_in_flight && self.staging.needs_stream_sync(Role::Source)
        }) {
            self.stream_sync(s, "source")?;
        }
        if let Some((result_len, expected_len)) = d2h {
            if ret == 0 {
                if let Some(s) = stream {
                    self.stream_sync(s, "result")?;
                }
                let (found, expected) = self.staging.result_and_expected(result_len, expected_len);
                let verdict = compare(expected, found);
                self.d2h_verdict(ev, expected_len, verdict);
            } else {
                self.counts.d2h_skipped += 1;
            }
        }
        drop(keep);
        Ok(())
    }

    /// The replay module of a captured code object, loaded on first use.
    fn module(&mut self, code_object: &str) -> Result<u64, String> {
        if let Some(m) = self.modules.get(code_object) {
            return Ok(*m);
        }
        let image = self
            .proc_
            .load_code_object(code_object)
            .map_err(|e| e.to_string())?;
        let load = match self.rt.vendor {
            Vendor::Cuda => "cuModuleLoadData",
            Vendor::Hip => "hipModuleLoadData",
        };
        let f = self.rt.require(load)?;
        let mut m: *mut c_void = std::ptr::null_mut();
        // SAFETY: cuModuleLoadData / hipModuleLoadData(module*, const void* image);
        // the image is copied by the driver before the call returns.
        let r = unsafe {
            let f: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int =
                std::mem::transmute(f);
            f(&mut m, image.as_ptr().cast())
        };
        if r != 0 {
            return Err(format!("{load} of code object {code_object} failed ({r})"));
        }
        self.modules.insert(code_object.to_string(), m as u64);
        Ok(m as u64)
    }

    /// A `__device__`/`__constant__` variable's captured address, mapped to the same
    /// variable in the replay module (`cuModuleGetGlobal` / `hipModuleGetGlobal`).
    fn replay_symbol_address(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload).map_err(field_err)?;
        let name = p
            .str(fid::NAME, "variable name")
            .map_err(field_err)?
            .to_string();
        let co = p
            .str(fid::CODE_OBJECT, "code object")
            .map_err(field_err)?
            .to_string();
        let captured = p
            .devptr(fid::DEVICE_ADDRESS, "device address")
            .map_err(field_err)?;
        let size = p.u64(fid::SIZE, "size").map_err(field_err)?;
        let module = self.module(&co)?;
        let get = match self.rt.vendor {
            Vendor::Cuda => "cuModuleGetGlobal_v2",
            Vendor::Hip => "hipModuleGetGlobal",
        };
        let g = self.rt.require(get)?;
        let cname = std::ffi::CString::new(name.as_str())
            .map_err(|_| format!("variable name {name:?} holds a NUL"))?;
        let mut dptr: u64 = 0;
        let mut bytes: usize = 0;
        // SAFETY: cuModuleGetGlobal_v2 / hipModuleGetGlobal(devptr*, size_t*, module, const char*).
        let r = unsafe {
            let g: unsafe extern "C" fn(
                *mut u64,
                *mut usize,
                *mut c_void,
                *const std::os::raw::c_char,
            ) -> c_int = std::mem::transmute(g);
            g(
                &mut dptr,
                &mut bytes,
                module as usize as *mut c_void,
                cname.as_ptr(),
            )
        };
        if r != 0 {
            return Err(format!("{get}({name}) failed ({r})"));
        }
        if bytes as u64 != size {
            return Err(format!(
                "variable {name}: {bytes} bytes in the replay module, {size} at capture"
            ));
        }
        self.addrs.insert(captured, size, dptr);
        Ok(())
    }

    fn function(&mut self, code_object: &str, name: &str) -> Result<u64, String> {
        if let Some(f) = self.functions.get(code_object).and_then(|m| m.get(name)) {
            return Ok(*f);
        }
        let module = self.module(code_object)?;
        let get = match self.rt.vendor {
            Vendor::Cuda => "cuModuleGetFunction",
            Vendor::Hip => "hipModuleGetFunction",
        };
        let g = self.rt.require(get)?;
        let cname = std::ffi::CString::new(name)
            .map_err(|_| format!("kernel name {name:?} holds a NUL"))?;
        let mut func: *mut c_void = std::ptr::null_mut();
        // SAFETY: cuModuleGetFunction / hipModuleGetFunction(function*, module, const char*).
        let r = unsafe {
            let g: unsafe extern "C" fn(
                *mut *mut c_void,
                *mut c_void,
                *const std::os::raw::c_char,
            ) -> c_int = std::mem::transmute(g);
            g(&mut func, module as usize as *mut c_void, cname.as_ptr())
        };
        if r != 0 {
            return Err(format!("{get}({name}) failed ({r})"));
        }
        self.functions
            .entry(code_object.to_string())
            .or_default()
            .insert(name.to_string(), func as u64);
        Ok(func as u64)
    }

    fn replay_launch(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload).map_err(field_err)?;
        let name = p.str(fid::NAME, "kernel name").map_err(field_err)?;
        let co = p.str(fid::CODE_OBJECT, "code object").map_err(field_err)?;
        let grid: [u64; 3] = p.u64_array_of(fid::GRID, "grid").map_err(field_err)?;
        let block: [u64; 3] = p.u64_array_of(fid::BLOCK, "block").map_err(field_err)?;
        let shmem = p.u64(fid::SHARED_MEM, "shared memory").map_err(field_err)?;
        let stream = self.handle(p.handle(fid::STREAM, "stream").map_err(field_err)?)?;
        // Pinned host memory the kernel reads directly, as it was at capture.
        for snap in p.all(fid::PINNED_SNAPSHOT) {
            let snap = snap.as_nested().map_err(field_err)?;
            let start = snap
                .u64(fid::SNAPSHOT_START, "snapshot start")
                .map_err(field_err)?;
            let len = snap
                .u64(fid::SNAPSHOT_SIZE, "snapshot size")
                .map_err(field_err)?;
            let r = snap
                .blob(fid::SNAPSHOT_BYTES, "snapshot bytes")
                .map_err(field_err)?;
            let data = self.proc_.load_blob(&r).map_err(|e| e.to_string())?;
            let (first, last) = (
                self.addrs.translate(start),
                self.addrs.translate(start + len.max(1) - 1),
            );
            match (first, last) {
                (Translated::Mapped(a), Translated::Mapped(b)) if b == a + len.max(1) - 1 && data.len() as u64 == len => {
                    // SAFETY: [a, a+len) lies inside one replay pinned host allocation (both
                    // ends map into the same range), which replay allocated and owns.
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), a as usize as *mut u8, len as usize) };
                }
                _ => {
                    return Err(format!(
                        "pinned snapshot of {len} bytes at {start:#x} maps to no replay pinned allocation of that size"
                    ))
                }
            }
        }
        // Every argument's bytes in one 16-byte-aligned block, each at a 16-byte
        // boundary (parameters are read at their natural alignment), pointer words
        // translated in place.
        let args: Vec<Payload> = p
            .all(fid::ARG)
            .map(|a| a.as_nested())
            .collect::<Result<_, _>>()
            .map_err(field_err)?;
        let mut offsets = Vec::with_capacity(args.len());
        let mut total = 0usize;
        for arg in &args {
            let n = arg
                .bytes(fid::ARG_BYTES, "argument bytes")
                .map_err(field_err)?
                .len();
            offsets.push(total);
            total += n.div_ceil(16) * 16;
        }
        // Over-allocated by 16 so the first slot can start at a 16-byte boundary.
        let mut arg_block = vec![0u8; total + 16];
        let pad = arg_block.as_ptr().align_offset(16).min(16);
        for (arg, &at) in args.iter().zip(&offsets) {
            let value = arg
                .bytes(fid::ARG_BYTES, "argument bytes")
                .map_err(field_err)?;
            let slot = &mut arg_block[pad + at..pad + at + value.len()];
            slot.copy_from_slice(value);
            if let Some(words) = arg.get(4) {
                if !words.value.len().is_multiple_of(8) {
                    return Err(format!(
                        "payload: pointer-word list of {} bytes is not whole words",
                        words.value.len()
                    ));
                }
                for w in words.value.chunks_exact(8) {
                    let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8])) as usize;
                    if w.checked_add(8).is_some_and(|end| end <= slot.len()) {
                        let v = u64::from_le_bytes(slot[w..w + 8].try_into().unwrap_or([0; 8]));
                        let t = self.translate(v);
                        slot[w..w + 8].copy_from_slice(&t.to_le_bytes());
                    }
                }
            }
        }
        let func = self.function(co, name)?;
        let mut params: Vec<*mut c_void> = offsets
            .iter()
            .map(|&at| arg_block[pad + at..].as_mut_ptr().cast())
            .collect();
        let launch = match self.rt.vendor {
            Vendor::Cuda => "cuLaunchKernel",
            Vendor::Hip => "hipModuleLaunchKernel",
        };
        let f = self.rt.require(launch)?;
        // SAFETY: cuLaunchKernel / hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem,
        // stream, void** params, void** extra); params point at live argument buffers.
        let r = unsafe {
            type Launch = unsafe extern "C" fn(
                *mut c_void,
                c_uint,
                c_uint,
                c_uint,
                c_uint,
                c_uint,
                c_uint,
                c_uint,
                *mut c_void,
                *mut *mut c_void,
                *mut *mut c_void,
            ) -> c_int;
            let f: Launch = std::mem::transmute(f);
            f(
                func as usize as *mut c_void,
                grid[0] as c_uint,
                grid[1] as c_uint,
                grid[2] as c_uint,
                block[0] as c_uint,
                block[1] as c_uint,
                block[2] as c_uint,
                shmem as c_uint,
                stream as usize as *mut c_void,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        // The runtime's and the driver's error numbers differ; compare success/failure.
        match (ev.header.ret == 0, r == 0) {
            (true, true) => {
                self.counts.kernels_launched += 1;
                Ok(())
            }
            (false, false) => {
                self.counts.failed_as_captured += 1;
                Ok(())
            }
            _ => Err(format!(
                "{launch} of {name} returned {r}, capture returned {}",
                ev.header.ret
            )),
        }
    }

    fn replay_event(&mut self, ev: &Event) -> EvResult {
        if ev.header.flags & RECORD_FLAG_INCOMPLETE != 0 {
            let why = self
                .proc_
                .manifest
                .capture_failures
                .iter()
                .find(|f| f.seq == ev.header.seq)
                .map(|f| f.reason.clone())
                .unwrap_or_else(|| "capture could not record it whole".into());
            return Err(format!("not replayable: {why}"));
        }
        if let Some(desc) = api::desc(ev.header.api_id) {
            if desc.id == api::id::DeviceReset {
                // The reset would drop the staging buffers' registrations under them.
                self.staging.unpin_all();
            }
            let r = self.replay_generic(ev, desc);
            if desc.id == api::id::DeviceReset && ev.header.ret == 0 {
                // A reset destroys every allocation, module, stream and event of the
                // device: nothing captured before it may be translated to a stale handle.
                self.addrs = AddressMap::default();
                self.modules.clear();
                self.functions.clear();
                self.handles.clear();
                self.live.clear();
                // Registrations went with the context; the buffers are still ours.
                self.registered.clear();
            }
            return r;
        }
        match ev.header.api_id {
            // Code objects are loaded by hash when a launch or a variable needs them.
            semantic::REGISTER_FAT_BINARY
            | semantic::REGISTER_FUNCTION
            | semantic::REGISTER_VAR
            | semantic::UNREGISTER_FAT_BINARY
            | semantic::MODULE_LOAD
            | semantic::MODULE_GET_FUNCTION => Ok(()),
            semantic::LAUNCH_KERNEL
            | semantic::LAUNCH_KERNEL_BY_HANDLE
            | semantic::MODULE_LAUNCH_KERNEL => self.replay_launch(ev),
            semantic::SYMBOL_ADDRESS => self.replay_symbol_address(ev),
            semantic::UNREPLAYABLE => {
                self.counts.unreplayable_refused += 1;
                let p = Payload::parse(&ev.payload).map_err(field_err)?;
                let name = p.str(fid::API_NAME, "api").unwrap_or("?").to_string();
                let reason = p.str(fid::REASON, "reason").unwrap_or("?").to_string();
                Err(format!("unreplayable: {name}: {reason}"))
            }
            other => Err(format!(
                "unknown API id {other} (archive from a newer capture?)"
            )),
        }
    }
}

/// Replays one process. Returns counts and failures; Err only when replay cannot start.
pub fn replay_process(
    rt: &Runtime,
    proc_: &ProcessArchive,
    opts: &Options,
) -> (Counts, Vec<Failure>) {
    let mut ctx = Ctx {
        rt,
        proc_,
        addrs: AddressMap::default(),
        handles: HashMap::new(),
        modules: HashMap::new(),
        functions: HashMap::new(),
        registered: HashMap::new(),
        staging: Staging::new(rt),
        live: HashMap::new(),
        counts: Counts {
            events_total: proc_.events.len() as u64,
            ..Counts::default()
        },
        failures: Vec::new(),
    };
    for ev in &proc_.events {
        match ctx.replay_event(ev) {
            Ok(()) => ctx.counts.events_replayed += 1,
            Err(msg) => {
                let kind = if msg.starts_with("unreplayable") {
                    "unreplayable"
                } else if msg.starts_with("returned") {
                    "return_code"
                } else {
                    "error"
                };
                ctx.fail(ev, kind, msg);
                if !opts.continue_on_error {
                    break;
                }
            }
        }
    }
    ctx.release_all();
    (ctx.counts, ctx.failures)
}

impl Ctx<'_> {
    /// Releases what the replayed program left allocated, registered or loaded (a
    /// program need not free before it exits; a replay process serving several archives
    /// must). Failures here change no result: the device is checked before the next
    /// archive (`--serve`).
    fn release_all(&mut self) {
        let sync = match self.rt.vendor {
            Vendor::Cuda => "cudaDeviceSynchronize",
            Vendor::Hip => "hipDeviceSynchronize",
        };
        let _ = self.rt.call_void(sync);
        for (handle, kind) in std::mem::take(&mut self.live) {
            // SAFETY: the row that releases `kind`, given the handle or address this
            // replay's own call created and nothing has released since.
            let _ = unsafe { self.rt.call_table(kind.release_row(), &[handle]) };
        }
        for buf in std::mem::take(&mut self.registered).keys() {
            // SAFETY: HostUnregister of a buffer this replay registered; the buffer is
            // dropped only after the call.
            let _ = unsafe { self.rt.call_table(api::id::HostUnregister, &[*buf]) };
        }
        let unload = match self.rt.vendor {
            Vendor::Cuda => "cuModuleUnload",
            Vendor::Hip => "hipModuleUnload",
        };
        for (_, m) in std::mem::take(&mut self.modules) {
            let _ = self.rt.call_ptr(unload, m);
        }
        self.functions.clear();
        self.staging.unpin_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_names_first_offset_and_bytes() {
        assert_eq!(compare(b"abcd", b"abcd"), None);
        let (n, first, exp, got) = compare(b"abcdef", b"abXdeY").unwrap();
        assert_eq!((n, first), (2, 2));
        assert_eq!(exp, hex(b"cdef"));
        assert_eq!(got, hex(b"XdeY"));
        let (n, first, ..) = compare(b"abc", b"ab").unwrap();
        assert_eq!((n, first), (1, 2));
    }
}
