//! Arrays, textures and surfaces at replay: descriptors rebuilt around replay's own
//! arrays and allocations (`api::texture` layouts), texture and surface objects mapped
//! (their captured handles may be small integers, so they have a map of their own), and
//! kernel argument words that held an object at capture given replay's object.

use std::collections::HashMap;

use hrr_archive::api::{self, fid, memcpy3d, texture, ApiDesc, Vendor};
use hrr_archive::payload::Payload;

use super::error::EventError;
use super::resource::Resource;
use super::translation::Translation;
use crate::runtime::Runtime;

/// Texture and surface objects: captured handle -> replay's, per class (CUDA numbers
/// each class's objects from small integers, so a texture and a surface may share a
/// captured value), and the replay objects not destroyed yet.
#[derive(Default)]
pub(super) struct Objects {
    textures: HashMap<u64, u64>,
    surfaces: HashMap<u64, u64>,
    live: Vec<(bool, u64)>,
    /// Whether replay made its own object of the class (texture, surface) before the
    /// program's first (`Ctx::offset_object_numbering`).
    offset: [bool; 2],
}

impl Objects {
    fn class(&mut self, surface: bool) -> &mut HashMap<u64, u64> {
        match surface {
            true => &mut self.surfaces,
            false => &mut self.textures,
        }
    }
    pub(super) fn created(&mut self, surface: bool, captured: u64, replay: u64) {
        self.class(surface).insert(captured, replay);
        self.live.push((surface, replay));
    }
    pub(super) fn destroyed(&mut self, surface: bool, captured: u64) {
        if let Some(replay) = self.class(surface).remove(&captured) {
            if let Some(k) = self.live.iter().position(|&l| l == (surface, replay)) {
                self.live.swap_remove(k);
            }
        }
    }
    /// Replay's object of a class for a captured handle.
    pub(super) fn get(&mut self, surface: bool, captured: u64) -> Result<u64, EventError> {
        self.class(surface)
            .get(&captured)
            .copied()
            .ok_or(EventError::UnknownHandle(captured))
    }
    /// Replay's object for a captured value found in a kernel argument, whose class the
    /// value alone does not say: None when no live object had it, an error when a
    /// texture and a surface had it and replay's two differ.
    pub(super) fn in_argument(&self, captured: u64) -> Result<Option<u64>, EventError> {
        match (self.textures.get(&captured), self.surfaces.get(&captured)) {
            (Some(t), Some(s)) if t != s => Err(EventError::CannotHonour {
                what: format!("kernel argument word {captured:#x}"),
                why: format!(
                    "it was both a texture and a surface object at capture, and replay's are {t:#x} and {s:#x}"
                ),
            }),
            (Some(r), _) | (_, Some(r)) => Ok(Some(*r)),
            (None, None) => Ok(None),
        }
    }
    /// Destroys the objects the program left (before the arrays they read are freed).
    pub(super) fn release(&mut self, rt: &Runtime) {
        for (surface, h) in std::mem::take(&mut self.live) {
            let row = match surface {
                true => api::id::DestroySurfaceObject,
                false => api::id::DestroyTextureObject,
            };
            // SAFETY: the row that destroys an object of this class, given an object this
            // replay created and has not destroyed.
            let _ = unsafe { rt.call_table(row, &[h]) };
        }
        self.textures.clear();
        self.surfaces.clear();
    }
}

/// A descriptor parameter's captured bytes (None: the program passed null).
pub(super) fn captured_layout(
    p: &Payload,
    i: usize,
    name: &'static str,
) -> Result<Option<Vec<u8>>, EventError> {
    let id = ApiDesc::field_id(i);
    match p.get(id) {
        Some(f) if f.is_null() => Ok(None),
        Some(_) => Ok(Some(p.bytes(id, name)?.to_vec())),
        None => Err(EventError::Inconsistent(format!(
            "payload: descriptor {name} (field {id}) is absent"
        ))),
    }
}

/// Rewrites the words of `slot` (one kernel argument) that held an object at capture
/// with `map`'s object; an object replay does not have is an error.
pub(super) fn map_object_words(
    slot: &mut [u8],
    words: &[u8],
    mut map: impl FnMut(u64) -> Result<Option<u64>, EventError>,
) -> Result<(), EventError> {
    if !words.len().is_multiple_of(8) {
        return Err(EventError::Inconsistent(format!(
            "payload: object-word list of {} bytes is not whole words",
            words.len()
        )));
    }
    for w in words.chunks_exact(8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8])) as usize;
        let Some(word) = slot
            .get_mut(w..w.saturating_add(8))
            .filter(|s| s.len() == 8)
        else {
            return Err(EventError::Inconsistent(format!(
                "payload: object word at {w} lies outside its argument"
            )));
        };
        let v = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        let Some(r) = map(v)? else {
            return Err(EventError::Inconsistent(format!(
                "a kernel argument holds texture or surface object {v:#x}, which replay never created"
            )));
        };
        word.copy_from_slice(&r.to_le_bytes());
    }
    Ok(())
}

/// The host box of a 3D copy: with an array side, its rows are the captured row length
/// (`fid::ARRAY_ROW_BYTES`: the width counts the array's elements), else the extent.
pub(super) fn host_extent(p: &Payload, parms: &memcpy3d::Parms) -> Result<[u64; 3], EventError> {
    if parms.src_array == 0 && parms.dst_array == 0 {
        return Ok(parms.extent);
    }
    let row = p.u64(fid::ARRAY_ROW_BYTES, "row bytes of a 3D copy with an array")?;
    Ok([row, parms.extent[1], parms.extent[2]])
}

/// The sentinel objects' backing: 64 four-byte float texels.
const SENTINEL_TEXELS: u64 = 64;
/// `cudaChannelFormatKindFloat` / `hipChannelFormatKindFloat`.
const CHANNEL_FLOAT: u32 = 2;
/// `cudaArraySurfaceLoadStore` / `hipArraySurfaceLoadStore`.
const ARRAY_SURFACE_LOAD_STORE: u64 = 2;

fn put(bytes: &mut [u8], at: usize, v: &[u8]) {
    bytes[at..at + v.len()].copy_from_slice(v);
}

impl Objects {
    /// Before the program's first texture (or surface) object is created, replay makes
    /// one of its own, over memory of its own holding other bytes, and keeps it until
    /// the end. A runtime that numbers its objects from small integers (CUDA does) then
    /// never gives the program's objects at replay the numbers they had at capture, so
    /// an object handle a kernel argument passed untranslated reads the wrong texels
    /// and fails its check instead of passing by coincidence. Best effort: where the
    /// runtime refuses, replay goes on without it. Returns the memory under the object,
    /// for the caller to own.
    pub(super) fn offset_numbering(
        &mut self,
        rt: &Runtime,
        surface: bool,
    ) -> Option<(u64, Resource)> {
        if std::mem::replace(&mut self.offset[surface as usize], true) {
            return None;
        }
        let (object, backing) = sentinel_object(rt, surface);
        if let Some(object) = object {
            self.live.push((surface, object));
        }
        backing
    }
}

/// A texture object over a small allocation of replay's own (bytes 0xa5), or a surface
/// object over an array of replay's own: the object, and the allocation or array under
/// it (replay's to release), as far as the runtime made them.
fn sentinel_object(rt: &Runtime, surface: bool) -> (Option<u64>, Option<(u64, Resource)>) {
    let vendor = rt.vendor;
    let Some(res_layout) = texture::layout("resource_desc", vendor) else {
        return (None, None);
    };
    let mut res = vec![0u8; res_layout.size];
    let mut channel = [0u8; 20];
    put(&mut channel, 0, &32u32.to_le_bytes());
    put(&mut channel, 16, &CHANNEL_FLOAT.to_le_bytes());
    let mut out = 0u64;
    let out_ptr = &mut out as *mut u64 as u64;
    let ok = |r: Result<i32, crate::runtime::RuntimeError>| matches!(r, Ok(0));
    if surface {
        // SAFETY: MallocArray(&out, &channel, width, 0, flags): the runtime writes the
        // array into `out` and reads the 20-byte channel descriptor, both live here.
        let r = unsafe {
            rt.call_table(
                api::id::MallocArray,
                &[
                    out_ptr,
                    channel.as_ptr() as u64,
                    SENTINEL_TEXELS,
                    0,
                    ARRAY_SURFACE_LOAD_STORE,
                ],
            )
        };
        if !ok(r) || out == 0 {
            return (None, None);
        }
        let backing = Some((out, Resource::Array));
        put(&mut res, 0, &texture::RESOURCE_ARRAY.to_le_bytes());
        put(&mut res, 8, &out.to_le_bytes());
        let mut object = 0u64;
        // SAFETY: CreateSurfaceObject(&object, &res): `res` is a resource descriptor
        // of this runtime's size naming replay's array; `object` receives the handle.
        let r = unsafe {
            rt.call_table(
                api::id::CreateSurfaceObject,
                &[&mut object as *mut u64 as u64, res.as_ptr() as u64],
            )
        };
        return ((ok(r) && object != 0).then_some(object), backing);
    }
    let bytes = SENTINEL_TEXELS * 4;
    // SAFETY: Malloc(&out, bytes): the runtime writes the allocation into `out`.
    if !ok(unsafe { rt.call_table(api::id::Malloc, &[out_ptr, bytes]) }) || out == 0 {
        return (None, None);
    }
    let backing = Some((out, Resource::DeviceMemory));
    // SAFETY: Memset over the `bytes` replay just allocated.
    if !ok(unsafe { rt.call_table(api::id::Memset, &[out, 0xa5, bytes]) }) {
        return (None, backing);
    }
    let Some(tex_layout) = texture::layout("texture_desc", vendor) else {
        return (None, backing);
    };
    let tex = vec![0u8; tex_layout.size];
    put(&mut res, 0, &texture::RESOURCE_LINEAR.to_le_bytes());
    put(&mut res, 8, &out.to_le_bytes());
    put(&mut res, 16, &channel);
    put(&mut res, 40, &bytes.to_le_bytes());
    let mut object = 0u64;
    // SAFETY: CreateTextureObject(&object, &res, &tex, null): descriptors of this
    // runtime's sizes (a linear resource over replay's allocation; a zeroed texture
    // descriptor: wrap, point sampling, element reads), no view.
    let r = unsafe {
        rt.call_table(
            api::id::CreateTextureObject,
            &[
                &mut object as *mut u64 as u64,
                res.as_ptr() as u64,
                tex.as_ptr() as u64,
                0,
            ],
        )
    };
    ((ok(r) && object != 0).then_some(object), backing)
}

/// A captured descriptor of layout `name`, rebuilt around replay's arrays and
/// allocations.
pub(super) fn rebuild_layout(
    tr: &mut Translation,
    vendor: Vendor,
    name: &'static str,
    raw: &[u8],
) -> Result<Vec<u8>, EventError> {
    let layout = texture::layout(name, vendor)
        .ok_or_else(|| EventError::Inconsistent(format!("no {name} layout for this runtime")))?;
    texture::rebuild(layout, raw, |meaning, v| match meaning {
        texture::Meaning::Array | texture::Meaning::MipmappedArray => tr.handle(v),
        texture::Meaning::DevPtr => Ok(tr.translate(v)),
    })
    .unwrap_or_else(|| {
        Err(EventError::Inconsistent(format!(
            "{name} is {} bytes, not {}",
            raw.len(),
            layout.size
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_words_are_mapped_and_an_unknown_object_is_named() {
        let mut slot = [0u8; 16];
        slot[8..].copy_from_slice(&3u64.to_le_bytes());
        let words = 8u64.to_le_bytes();
        map_object_words(&mut slot, &words, |v| Ok((v == 3).then_some(0x77))).unwrap();
        assert_eq!(u64::from_le_bytes(slot[8..].try_into().unwrap()), 0x77);
        assert_eq!(slot[..8], [0; 8]);
        let e = map_object_words(&mut slot, &words, |_| Ok(None)).unwrap_err();
        assert!(e.to_string().contains("never created"), "{e}");
        let outside = 16u64.to_le_bytes();
        assert!(map_object_words(&mut slot, &outside, |v| Ok(Some(v))).is_err());
        assert!(map_object_words(&mut slot, &[0u8; 3], |v| Ok(Some(v))).is_err());
    }

    #[test]
    fn a_value_both_classes_had_is_mapped_only_when_replay_agrees() {
        let mut o = Objects::default();
        o.created(false, 1, 5);
        assert_eq!(o.in_argument(1).unwrap(), Some(5));
        o.created(true, 1, 5);
        assert_eq!(o.in_argument(1).unwrap(), Some(5));
        o.destroyed(true, 1);
        o.created(true, 1, 6);
        assert!(o.in_argument(1).is_err());
        assert_eq!(o.get(true, 1).unwrap(), 6);
        o.destroyed(false, 1);
        o.destroyed(true, 1);
        assert_eq!(o.in_argument(1).unwrap(), None);
        assert!(o.live.is_empty());
    }
}
