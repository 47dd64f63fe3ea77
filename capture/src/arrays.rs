//! Recording arrays, texture and surface objects and their descriptors: the plans of the
//! table's array and object kinds, turned into fields, with the object table
//! (`objects`) kept up to date; and the host box of a 3D copy with an array side.

use hrr_archive::api::{fid, memcpy3d, texture, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::ffi::{host_bytes, read_at};
use crate::objects::ObjectTable;
use crate::params::{ArrayFormat, Plan};

/// The bytes of one element of the array a 3D copy names (its source's, else its
/// destination's); None when no side is an array.
fn copy_element(objects: &ObjectTable, p: &memcpy3d::Parms) -> Option<Option<u64>> {
    let array = [p.src_array, p.dst_array].into_iter().find(|&a| a != 0)?;
    Some(objects.element_bytes(array))
}

/// The 3D parameters whose box the host side is measured by: with an array side the
/// width counts the array's elements, so the host rows are `width * element` bytes.
pub fn host_box(objects: &ObjectTable, mut p: memcpy3d::Parms) -> memcpy3d::Parms {
    if let Some(Some(e)) = copy_element(objects, &p) {
        p.extent[0] = p.extent[0].saturating_mul(e);
    }
    p
}

/// On a 3D copy with an array side: the host row length ([`host_box`]'s width) as
/// `fid::ARRAY_ROW_BYTES`; Some(why) when the array's element size is unknown.
pub fn record_row_bytes(
    objects: &ObjectTable,
    host: &memcpy3d::Parms,
    p: &mut PayloadWriter,
) -> Option<String> {
    match copy_element(objects, host)? {
        Some(_) => {
            p.u64(fid::ARRAY_ROW_BYTES, host.extent[0]);
            None
        }
        None => Some("a 3D copy names an array capture did not see allocated".into()),
    }
}

/// The bytes of one element of the array plane `plane`, as the driver describes it
/// (`cuArrayGetDescriptor_v2`: a plane has a format of its own, which its multi-planar
/// array's does not give); None where the driver has no answer.
fn plane_element_bytes(plane: u64) -> Option<u64> {
    type GetDescriptor = unsafe extern "C" fn(*mut u8, u64) -> std::os::raw::c_int;
    let f = real!(driver cuArrayGetDescriptor_v2: GetDescriptor).get()?;
    let mut desc = [0u8; 24];
    // SAFETY: a 24-byte CUDA_ARRAY_DESCRIPTOR out, and the plane the call just returned.
    if unsafe { f(desc.as_mut_ptr(), plane) } != 0 {
        return None;
    }
    texture::array_element_bytes("drv_array_desc", &desc)
}

/// Encodes one of the array and object plans; Err(why) leaves the record incomplete.
pub fn encode(
    objects: &ObjectTable,
    vendor: Vendor,
    p: &mut PayloadWriter,
    field: u16,
    plan: Plan,
) -> Result<(), String> {
    match plan {
        Plan::NewArray { at, format } => {
            // SAFETY: on success the call stored the array's handle at `at`.
            let h = unsafe { read_at::<u64>(at) };
            p.handle(field, h);
            let element = match format {
                ArrayFormat::Descriptor { at: 0, .. } => None,
                ArrayFormat::Descriptor { at, layout } => {
                    let size = texture::layout(layout, vendor).map_or(0, |l| l.size);
                    // SAFETY: the call read the descriptor it was given, of this layout.
                    texture::array_element_bytes(layout, unsafe { host_bytes(at, size as u64) })
                }
                ArrayFormat::LevelOf(mipmap) => objects.element_bytes(mipmap),
                ArrayFormat::Plane => plane_element_bytes(h),
            };
            objects.insert_array(h, element);
        }
        Plan::ForgetArray(h) => {
            p.handle(field, h);
            objects.remove_array(h);
        }
        Plan::NewObject { at } => {
            // SAFETY: on success the call stored the object's handle at `at`.
            let h = unsafe { read_at::<u64>(at) };
            p.handle(field, h);
            objects.insert_object(h);
        }
        Plan::ForgetObject(h) => {
            p.handle(field, h);
            objects.remove_object(h);
        }
        Plan::LayoutBytes { at, name } => {
            let Some(l) = texture::layout(name, vendor) else {
                return Err(format!("no {name} layout for {}", vendor.as_str()));
            };
            // SAFETY: a descriptor of this layout, which the call reads in full.
            p.bytes(field, unsafe { host_bytes(at, l.size as u64) }, false);
        }
        _ => {}
    }
    Ok(())
}
