use super::*;
use hrr_archive::api::{desc, id};

const H2D: Option<CopyDir> = Some(CopyDir::HostToDevice);
const D2H: Option<CopyDir> = Some(CopyDir::DeviceToHost);

fn params_of(row: u16, args: &[u64]) -> Vec<Param> {
    let d = desc(row).unwrap();
    (0..d.params.len()).map(|i| decode(d, i, args)).collect()
}

#[test]
fn an_allocation_is_read_and_entered_only_when_the_call_succeeded() {
    // cudaMalloc(&p, 4096): the out pointer at 0x7000.
    let p = params_of(id::Malloc, &[0x7000, 4096]);
    let new = Param::OutAlloc {
        at: 0x7000,
        len: 4096,
        space: Space::Device,
    };
    assert_eq!(p, [new, Param::Value(4096)]);
    assert_eq!(
        plan(new, 0, None),
        Plan::NewAlloc {
            at: 0x7000,
            len: 4096,
            space: Space::Device
        }
    );
    assert_eq!(plan(new, 2, None), Plan::Null(FieldType::DevPtr));
    let no_out = Param::OutAlloc {
        at: 0,
        len: 1,
        space: Space::PinnedHost,
    };
    assert_eq!(plan(no_out, 0, None), Plan::Null(FieldType::DevPtr));
    // cudaMallocManaged(&p, 64, cudaMemAttachGlobal): one address for host and device.
    assert_eq!(
        params_of(id::MallocManaged, &[0x7000, 64, 1])[0],
        Param::OutAlloc {
            at: 0x7000,
            len: 64,
            space: Space::Managed
        }
    );
    assert_eq!(
        params_of(id::HostAlloc, &[0x7000, 64, 0])[0],
        Param::OutAlloc {
            at: 0x7000,
            len: 64,
            space: Space::PinnedHost
        }
    );
}

#[test]
fn frees_and_registrations_change_the_table_only_on_success() {
    assert_eq!(params_of(id::Free, &[0x1000]), [Param::Freed(0x1000)]);
    assert_eq!(plan(Param::Freed(0x1000), 0, None), Plan::Forget(0x1000));
    assert_eq!(plan(Param::Freed(0x1000), 1, None), Plan::DevPtr(0x1000));
    let reg = params_of(id::HostRegister, &[0x5000, 256, 0])[0];
    assert_eq!(
        plan(reg, 0, None),
        Plan::Pin {
            ptr: 0x5000,
            len: 256
        }
    );
    assert_eq!(plan(reg, 3, None), Plan::DevPtr(0x5000));
}

#[test]
fn out_values_handles_and_pitches() {
    assert_eq!(
        plan(Param::OutHandle { at: 8 }, 0, None),
        Plan::ReadHandle { at: 8 }
    );
    assert_eq!(
        plan(Param::OutHandle { at: 8 }, 1, None),
        Plan::Null(FieldType::Handle)
    );
    assert_eq!(
        plan(Param::OutU32 { at: 8 }, 0, None),
        Plan::ReadU32 { at: 8 }
    );
    assert_eq!(plan(Param::OutU32 { at: 0 }, 0, None), Plan::Skip);
    assert_eq!(plan(Param::OutSize { at: 8 }, 1, None), Plan::Skip);
    assert_eq!(plan(Param::OutStruct, 0, None), Plan::Skip);
    // cudaMallocPitch(&p, &pitch, width, height).
    let p = params_of(id::MallocPitch, &[0x10, 0x18, 100, 7]);
    let out = Param::OutPitched {
        at: 0x10,
        pitch_at: 0x18,
        height: 7,
    };
    assert_eq!(p[0], out);
    assert_eq!(p[1], Param::OutSize { at: 0x18 });
    assert!(matches!(plan(out, 0, None), Plan::NewPitchedAlloc { .. }));
    let no_pitch = Param::OutPitched {
        at: 0x10,
        pitch_at: 0,
        height: 7,
    };
    assert_eq!(plan(no_pitch, 0, None), Plan::Null(FieldType::DevPtr));
}

#[test]
fn a_copy_reads_its_source_before_and_its_destination_after_a_d2h_success() {
    // cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind).
    let p = params_of(id::Memcpy2D, &[0xd000, 64, 0x5000, 32, 16, 4, 2]);
    let dst = HostRegion::Rows {
        ptr: 0xd000,
        pitch: 64,
        width: 16,
        height: 4,
    };
    assert_eq!(p[0], Param::CopyDst { region: dst });
    assert_eq!(source(p[2], None).map(|r| r.ptr()), Some(0x5000));
    assert_eq!(source(p[0], None), None);
    assert_eq!(
        plan(p[0], 0, D2H),
        Plan::Destination {
            ptr: 0xd000,
            expected: Some(dst)
        }
    );
    for (ret, dir) in [(1, D2H), (0, H2D), (0, None)] {
        assert_eq!(
            plan(p[0], ret, dir),
            Plan::Destination {
                ptr: 0xd000,
                expected: None
            }
        );
    }
    assert_eq!(plan(p[2], 0, H2D), Plan::Source { ptr: 0x5000 });
    assert_eq!(plan(p[6], 0, D2H), Plan::U64(2));
}

#[test]
fn a_3d_copy_is_planned_from_its_struct() {
    assert_eq!(
        plan(Param::Parms3D { at: 0 }, 0, D2H),
        Plan::Null(FieldType::Bytes)
    );
    assert_eq!(
        plan(Param::Parms3D { at: 0x40 }, 0, D2H),
        Plan::Parms3D {
            at: 0x40,
            expect_output: true
        }
    );
    let mut parms = memcpy3d::Parms::default();
    parms.src.ptr = 0x100;
    parms.dst.ptr = 0x200;
    parms.extent = [4, 2, 1];
    parms.kind = 4;
    let src = source(Param::Parms3D { at: 0x40 }, Some(&parms)).unwrap();
    assert_eq!((src.ptr(), destination_box(&parms).ptr()), (0x100, 0x200));
    let d = desc(id::Memcpy3D).unwrap();
    // "default": the direction follows where the pointers live.
    let dir = copy_dir(d, &[0x40], Some(&parms), |a| a == 0x100);
    assert_eq!(dir, Some(CopyDir::DeviceToHost));
}

#[test]
fn driver_copies_have_the_direction_their_api_names() {
    let dev = |a: u64| a >= 0x1000;
    // cuMemcpyDtoH_v2(dstHost, srcDevice, count): a host destination, expected output.
    let d = desc(id::MemcpyDtoH).unwrap();
    let p = params_of(id::MemcpyDtoH, &[0x10, 0x2000, 8]);
    assert_eq!(copy_dir(d, &[0x10, 0x2000, 8], None, dev), D2H);
    let region = HostRegion::Linear { ptr: 0x10, len: 8 };
    assert_eq!(p[0], Param::CopyDst { region });
    assert_eq!(p[1], Param::DevPtr(0x2000));
    assert_eq!(
        plan(p[0], 0, D2H),
        Plan::Destination {
            ptr: 0x10,
            expected: Some(region)
        }
    );
    // cuMemcpyHtoDAsync_v2(dstDevice, srcHost, count, stream).
    let args = [0x2000, 0x10, 8, 0x77];
    let d = desc(id::MemcpyHtoDAsync).unwrap();
    assert_eq!(copy_dir(d, &args, None, dev), H2D);
    let p = params_of(id::MemcpyHtoDAsync, &args);
    assert_eq!(source(p[1], None).map(|r| r.ptr()), Some(0x10));
    assert_eq!(p[3], Param::Handle(0x77));
    // cuMemcpy(dst, src, count): unified addressing, the direction by the pointers.
    let d = desc(id::CuMemcpy).unwrap();
    assert_eq!(copy_dir(d, &[0x10, 0x2000, 8], None, dev), D2H);
    assert_eq!(copy_dir(d, &[0x2000, 0x10, 8], None, dev), H2D);
    // cuMemcpyDtoD_v2: device pointers only, no direction needed.
    let d = desc(id::MemcpyDtoD).unwrap();
    assert_eq!(copy_dir(d, &[0x2000, 0x3000, 8], None, dev), None);
}

#[test]
fn contexts_mapped_addresses_and_unrecorded_structs() {
    // cuCtxCreate_v4(&ctx, params, flags, dev).
    let p = params_of(id::CtxCreate, &[0x40, 0, 0, 0]);
    assert_eq!(p[0], Param::OutHandle { at: 0x40 });
    assert_eq!(plan(p[1], 0, None), Plan::Null(FieldType::Bytes));
    let p = params_of(id::CtxCreate, &[0x40, 0x80, 0, 0]);
    assert_eq!(plan(p[1], 0, None), Plan::Unrecorded(0x80));
    assert_eq!(params_of(id::CtxDestroy, &[0x99]), [Param::Handle(0x99)]);
    // cuMemHostGetDevicePointer_v2(&dptr, host, 0).
    let p = params_of(id::MemHostGetDevicePointer, &[0x48, 0x5000, 0]);
    let out = Param::OutMapped {
        at: 0x48,
        host: 0x5000,
    };
    assert_eq!(p[0], out);
    assert_eq!(
        plan(out, 0, None),
        Plan::NewMapping {
            at: 0x48,
            host: 0x5000
        }
    );
    assert_eq!(plan(out, 1, None), Plan::Null(FieldType::DevPtr));
    // A driver 2D copy struct is planned like the runtime's 3D parameters.
    assert_eq!(
        params_of(id::DrvMemcpy2DAsync, &[0x60, 0])[0],
        Param::Parms3D { at: 0x60 }
    );
}

#[test]
fn graph_handles_are_handles_and_instantiation_parameters_their_bytes() {
    // cudaStreamEndCapture(stream, &graph): a handle in, a handle out.
    let p = params_of(id::StreamEndCapture, &[0x51, 0x7000]);
    assert_eq!(p, [Param::Handle(0x51), Param::OutHandle { at: 0x7000 }]);
    assert_eq!(plan(p[1], 0, None), Plan::ReadHandle { at: 0x7000 });
    assert_eq!(plan(p[1], 901, None), Plan::Null(FieldType::Handle));
    // The capture mode is recorded as given.
    let p = params_of(id::StreamBeginCapture, &[0x51, 0]);
    assert_eq!(p[1], Param::Value(0));
    // cudaGraphInstantiateWithParams(&exec, graph, &params).
    let p = params_of(id::GraphInstantiateWithParams, &[0x10, 0xa0, 0x40]);
    assert_eq!(p[2], Param::Struct { at: 0x40, len: 32 });
    assert_eq!(plan(p[2], 0, None), Plan::StructBytes { at: 0x40, len: 32 });
    let none = params_of(id::GraphInstantiateWithParams, &[0x10, 0xa0, 0])[2];
    assert_eq!(plan(none, 1, None), Plan::Null(FieldType::Bytes));
    assert_eq!(
        params_of(id::GraphDestroy, &[0xa0]),
        [Param::Handle(0xa0)],
        "a graph is no allocation: destroying it changes no allocation table"
    );
}

#[test]
fn pools_are_handles_and_their_inputs_are_read_by_their_width() {
    // cudaMemPoolCreate(&pool, &props).
    let p = params_of(id::MemPoolCreate, &[0x10, 0x20]);
    assert_eq!(p[0], Param::OutHandle { at: 0x10 });
    assert_eq!(p[1], Param::InStruct { at: 0x20, len: 88 });
    assert_eq!(plan(p[1], 0, None), Plan::ReadBytes { at: 0x20, len: 88 });
    // Read even when the call failed: replay passes the same struct and expects the
    // same failure.
    assert_eq!(plan(p[1], 1, None), Plan::ReadBytes { at: 0x20, len: 88 });
    assert_eq!(
        plan(Param::InStruct { at: 0, len: 88 }, 1, None),
        Plan::Null(FieldType::Bytes)
    );
    assert_eq!(
        params_of(id::MemPoolDestroy, &[0x30]),
        [Param::Handle(0x30)]
    );
    // cudaMemPoolSetAttribute(pool, attr, &value): an int for the reuse flags, a
    // u64 for the release threshold; an attribute capture does not know is null.
    let int = params_of(id::MemPoolSetAttribute, &[0x30, 1, 0x40])[2];
    assert_eq!(plan(int, 0, None), Plan::ReadU32 { at: 0x40 });
    let wide = params_of(id::MemPoolSetAttribute, &[0x30, 4, 0x40])[2];
    assert_eq!(plan(wide, 0, None), Plan::ReadU64 { at: 0x40 });
    let unknown = params_of(id::MemPoolSetAttribute, &[0x30, 99, 0x40])[2];
    assert_eq!(plan(unknown, 0, None), Plan::Null(FieldType::U64));
    let got = params_of(id::MemPoolGetAttribute, &[0x30, 7, 0x40])[2];
    assert_eq!(got, Param::OutSize { at: 0x40 });
    let got = params_of(id::MemPoolGetAttribute, &[0x30, 2, 0x40])[2];
    assert_eq!(got, Param::OutU32 { at: 0x40 });
    // cudaMallocFromPoolAsync(&p, size, pool, stream): a device allocation.
    let p = params_of(id::MallocFromPoolAsync, &[0x50, 4096, 0x30, 0x60]);
    assert_eq!(
        p[0],
        Param::OutAlloc {
            at: 0x50,
            len: 4096,
            space: Space::Device
        }
    );
    assert_eq!((p[2], p[3]), (Param::Handle(0x30), Param::Handle(0x60)));
}

#[test]
fn the_direction_comes_from_the_kind_or_the_table() {
    let d = desc(id::Memcpy).unwrap();
    let dev = |a: u64| a >= 0x1000;
    assert_eq!(
        copy_dir(d, &[0x10, 0x2000, 8, 1], None, dev),
        Some(CopyDir::HostToDevice)
    );
    assert_eq!(
        copy_dir(d, &[0x10, 0x2000, 8, 4], None, dev),
        Some(CopyDir::DeviceToHost)
    );
    assert_eq!(copy_dir(d, &[0x10, 0x2000, 8, 9], None, dev), None);
    assert_eq!(
        copy_dir(desc(id::Malloc).unwrap(), &[0, 0], None, dev),
        None
    );
}

#[test]
fn arrays_and_objects_enter_and_leave_their_tables_on_success() {
    // cudaMallocArray(&a, &desc, w, h, flags).
    let p = params_of(id::MallocArray, &[0x10, 0x20, 64, 8, 0]);
    let out = Param::OutArray {
        at: 0x10,
        format: ArrayFormat::Descriptor {
            at: 0x20,
            layout: "channel_desc",
        },
    };
    assert_eq!(p[0], out);
    assert_eq!(
        p[1],
        Param::Layout {
            at: 0x20,
            name: "channel_desc"
        }
    );
    assert!(matches!(
        plan(out, 0, None),
        Plan::NewArray { at: 0x10, .. }
    ));
    assert_eq!(plan(out, 2, None), Plan::Null(FieldType::Handle));
    // cudaMalloc3DArray: the spilled registers record nothing.
    let p = params_of(id::Malloc3DArray, &[0x10, 0x20, 0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(plan(p[3], 0, None), Plan::Skip);
    assert_eq!(p[6], Param::Value(4));
    let free = params_of(id::FreeArray, &[0xa0])[0];
    assert_eq!(plan(free, 0, None), Plan::ForgetArray(0xa0));
    assert_eq!(plan(free, 1, None), Plan::Handle(0xa0));
    // cudaCreateTextureObject(&t, &res, &tex, NULL).
    let p = params_of(id::CreateTextureObject, &[0x30, 0x40, 0x50, 0]);
    assert_eq!(plan(p[0], 0, None), Plan::NewObject { at: 0x30 });
    assert_eq!(plan(p[3], 0, None), Plan::Null(FieldType::Bytes));
    let gone = params_of(id::DestroySurfaceObject, &[7])[0];
    assert_eq!(plan(gone, 0, None), Plan::ForgetObject(7));
}

#[test]
fn an_array_side_is_the_device_side() {
    let host = |_: u64| false;
    // cudaMemcpy2DToArray(dst array, x, y, src, spitch, w, h, default).
    let args = [0xa0, 0, 0, 0x10, 64, 64, 4, 4];
    let d = desc(id::Memcpy2DToArray).unwrap();
    assert_eq!(copy_dir(d, &args, None, host), H2D);
    // cudaMemcpyFromArray(dst, src array, x, y, count, default).
    let d = desc(id::MemcpyFromArray).unwrap();
    assert_eq!(copy_dir(d, &[0x10, 0xa0, 0, 0, 64, 4], None, host), D2H);
    let d = desc(id::Memcpy2DArrayToArray).unwrap();
    let dir = copy_dir(d, &[0xa0, 0, 0, 0xb0, 0, 0, 8, 8, 4], None, host);
    assert_eq!(dir, Some(CopyDir::DeviceToDevice));
}
