use super::*;
use hrr_archive::api::{self, id};
use hrr_archive::payload::{FieldType, PayloadWriter};

fn desc(id: u16) -> &'static ApiDesc {
    api::desc(id).unwrap()
}

/// Plans a call as `replay_generic` does: the direction from the payload first.
fn plan_of(id: u16, p: &Payload, max_host_bytes: u64) -> Result<CallPlan, EventError> {
    plan_call(desc(id), p, copy_dir(p)?, max_host_bytes)
}

fn payload(fill: impl FnOnce(&mut PayloadWriter)) -> Vec<u8> {
    let mut w = PayloadWriter::new();
    fill(&mut w);
    w.finish()
}

fn memcpy(dir: CopyDir, count: u64) -> Vec<u8> {
    payload(|w| {
        w.devptr(1, 0x1000)
            .devptr(2, 0x2000)
            .u64(3, count)
            .u64(4, 0);
        w.u64(COPY_DIR_FIELD, dir as u64);
    })
}

#[test]
fn vmm_calls_map_ranges_handles_and_access_and_an_attribute_keeps_its_id() {
    // cuMemMap(ptr, size, offset, handle, flags): the mapping must lie in one range.
    let bytes = payload(|w| {
        w.devptr(1, 0x7000_0000)
            .u64(2, 2 << 20)
            .u64(3, 0)
            .handle(4, 0x55)
            .u64(5, 0);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemMap, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args[..4],
        [
            ArgPlan::Range {
                what: "mapping",
                addr: 0x7000_0000,
                len: 2 << 20
            },
            ArgPlan::Value(2 << 20),
            ArgPlan::Value(0),
            ArgPlan::MemHandle(0x55),
        ]
    );
    // cuMemSetAccess(ptr, size, desc, count): the descriptors' bytes as captured.
    let descs = [1u8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0];
    let bytes = payload(|w| {
        w.devptr(1, 0x7000_0000).u64(2, 2 << 20);
        w.bytes(3, &descs, false);
        w.u64(4, 1);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemSetAccess, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[2], ArgPlan::HostBytes(descs.to_vec()));
    // cudaStreamSetAttribute(stream, AccessPolicyWindow, value).
    let mut value = [0u8; 64];
    value[..8].copy_from_slice(&0x9000u64.to_le_bytes());
    let bytes = payload(|w| {
        w.handle(1, 0xa0).u64(2, 1);
        w.bytes(3, &value, false);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::StreamSetAttribute, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args[2],
        ArgPlan::LaunchAttr(RecordedAttr { id: 1, value })
    );
}

#[test]
fn a_d2h_copy_stages_its_destination_and_translates_its_source() {
    let bytes = memcpy(CopyDir::DeviceToHost, 64);
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
    assert_eq!(copy_dir(&p).unwrap(), Some(CopyDir::DeviceToHost));
    assert_eq!(
        plan.args,
        vec![
            ArgPlan::Result {
                what: "expected output",
                len: 64
            },
            ArgPlan::Range {
                what: "src",
                addr: 0x2000,
                len: 64
            },
            ArgPlan::Value(64),
            ArgPlan::Value(0),
        ]
    );
    assert!(plan.pitch_override.is_empty());
}

#[test]
fn an_h2d_copy_stages_its_source_and_a_d2d_copy_translates_both() {
    let bytes = memcpy(CopyDir::HostToDevice, 8);
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
    let range = |what, addr| ArgPlan::Range { what, addr, len: 8 };
    assert_eq!(plan.args[0], range("dst", 0x1000));
    assert_eq!(
        plan.args[1],
        ArgPlan::Source {
            what: "source bytes",
            len: Some(8)
        }
    );
    let bytes = memcpy(CopyDir::DeviceToDevice, 8);
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[..2], [range("dst", 0x1000), range("src", 0x2000)]);
}

/// The host side of a 2D copy is recorded packed: its pitch becomes the width.
#[test]
fn a_2d_d2h_copy_is_packed_and_refused_above_the_limit() {
    // dst, dpitch, src, spitch, width, height, kind
    let bytes = payload(|w| {
        w.devptr(1, 0x1000)
            .u64(2, 512)
            .devptr(3, 0x2000)
            .u64(4, 256);
        w.u64(5, 100).u64(6, 3).u64(7, 2);
        w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Memcpy2D, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args[0],
        ArgPlan::Result {
            what: "expected rows",
            len: 300
        }
    );
    // The device side's last row ends 2 pitches and a width from its start.
    assert_eq!(
        plan.args[2],
        ArgPlan::Range {
            what: "src",
            addr: 0x2000,
            len: 2 * 256 + 100
        }
    );
    assert_eq!(plan.pitch_override, vec![(1, 100)]);
    let e = plan_of(id::Memcpy2D, &p, 299).unwrap_err();
    assert_eq!(
        e.to_string(),
        "2D copy of 100 x 3 bytes exceeds max_host_bytes"
    );
}

#[test]
fn out_parameters_get_slots_and_registration_a_stand_in() {
    let bytes = payload(|w| {
        w.devptr(1, 0x7000).u64(2, 4096);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Malloc, &p, 1 << 20).unwrap();
    assert_eq!(plan.args, vec![ArgPlan::OutSlot, ArgPlan::Value(4096)]);
    assert_eq!(copy_dir(&p).unwrap(), None);
    let bytes = payload(|w| {
        w.u64(1, 0x5000).u64(2, 4096).u64(3, 0);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::HostRegister, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[0], ArgPlan::RegisterHost(4096));
    let e = plan_of(id::HostRegister, &p, 4095).unwrap_err();
    assert_eq!(
        e.to_string(),
        "registering 4096 bytes exceeds max_host_bytes"
    );
}

#[test]
fn null_pointers_are_zero_and_absent_parameters_refused() {
    let bytes = payload(|w| {
        w.null(1, FieldType::DevPtr)
            .devptr(2, 0x2000)
            .u64(3, 1)
            .u64(4, 3);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args[0],
        ArgPlan::Range {
            what: "dst",
            addr: 0,
            len: 1
        }
    );
    let bytes = payload(|w| {
        w.devptr(1, 0x1000).u64(3, 1).u64(4, 3);
    });
    let p = Payload::parse(&bytes).unwrap();
    let e = plan_of(id::Memcpy, &p, 1 << 20).unwrap_err();
    assert_eq!(e.to_string(), "payload: parameter src (field 2) is absent");
    assert_eq!(e.kind(), hrr_contract::FailureKind::Error);
}

#[test]
fn a_3d_copy_of_a_box_over_the_limit_is_refused_and_an_array_side_needs_its_row_bytes() {
    let mut parms = memcpy3d::Parms {
        extent: [16, 4, 2],
        ..Default::default()
    };
    let encoded = |parms: &memcpy3d::Parms| {
        let raw = parms.encode();
        payload(|w| {
            w.bytes(1, &raw, false);
            w.u64(COPY_DIR_FIELD, CopyDir::DeviceToDevice as u64);
        })
    };
    let bytes = encoded(&parms);
    let p = Payload::parse(&bytes).unwrap();
    match plan_of(id::Memcpy3D, &p, 1 << 20).unwrap().args[0] {
        ArgPlan::Copy3D { total, layout, .. } => assert_eq!((total, layout), (128, None)),
        ref other => panic!("{other:?}"),
    }
    let e = plan_of(id::Memcpy3D, &p, 127).unwrap_err();
    assert!(e.to_string().ends_with("box exceeds max_host_bytes"), "{e}");
    // An array side: the host rows are the captured row length (the width counts
    // the array's elements); a record without it is inconsistent.
    parms.src_array = 0xa0;
    let bytes = encoded(&parms);
    let p = Payload::parse(&bytes).unwrap();
    let e = plan_of(id::Memcpy3D, &p, 1 << 20).unwrap_err();
    assert!(e.to_string().contains("row bytes"), "{e}");
    let raw = parms.encode();
    let bytes = payload(|w| {
        w.bytes(1, &raw, false);
        w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        w.u64(hrr_archive::api::fid::ARRAY_ROW_BYTES, 64);
    });
    let p = Payload::parse(&bytes).unwrap();
    match plan_of(id::Memcpy3D, &p, 1 << 20).unwrap().args[0] {
        ArgPlan::Copy3D {
            total, host_extent, ..
        } => assert_eq!((total, host_extent), (512, [64, 4, 2])),
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn descriptors_are_passed_rebuilt_and_objects_mapped_by_class() {
    // cudaCreateTextureObject(&t, &res, &tex, NULL).
    let res = vec![0u8; 144];
    let bytes = payload(|w| {
        w.handle(1, 0x3);
        w.bytes(2, &res, false);
        w.bytes(3, &[0u8; 72], false);
        w.null(4, FieldType::Bytes);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::CreateTextureObject, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[0], ArgPlan::OutSlot);
    assert_eq!(
        plan.args[1],
        ArgPlan::Layout {
            name: "resource_desc",
            raw: res
        }
    );
    assert_eq!(plan.args[3], ArgPlan::Value(0), "a null view stays null");
    let bytes = payload(|w| {
        w.handle(1, 0x3);
    });
    let p = Payload::parse(&bytes).unwrap();
    assert_eq!(
        plan_of(id::DestroySurfaceObject, &p, 1 << 20).unwrap().args,
        [ArgPlan::Object {
            surface: true,
            captured: 3
        }]
    );
    // cudaMalloc3DArray: the spilled registers pass nothing the callee reads.
    let bytes = payload(|w| {
        w.handle(1, 0xa0);
        w.bytes(2, &[0u8; 20], false);
        w.u64(3, 0);
        w.u64(7, 16).u64(8, 8).u64(9, 4);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::Malloc3DArray, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[3..6], [0, 0, 0].map(ArgPlan::Value));
    assert_eq!(plan.args[6..], [16, 8, 4].map(ArgPlan::Value));
}

#[test]
fn driver_copies_stage_by_their_apis_direction() {
    // cuMemcpyDtoH_v2(dstHost, srcDevice, count): the host side is the result.
    let bytes = payload(|w| {
        w.devptr(1, 0x10).devptr(2, 0x2000).u64(3, 32);
        w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemcpyDtoH, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args,
        vec![
            ArgPlan::Result {
                what: "expected output",
                len: 32
            },
            ArgPlan::Address(0x2000),
            ArgPlan::Value(32),
        ]
    );
    // cuMemcpyHtoDAsync_v2(dstDevice, srcHost, count, stream).
    let bytes = payload(|w| {
        w.devptr(1, 0x2000)
            .devptr(2, 0x10)
            .u64(3, 8)
            .handle(4, 0x55);
        w.u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemcpyHtoDAsync, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args[1],
        ArgPlan::Source {
            what: "source bytes",
            len: Some(8)
        }
    );
    assert_eq!(plan.args[3], ArgPlan::Handle(0x55));
}

#[test]
fn contexts_are_handles_and_out_slots() {
    // cuCtxCreate_v4(&ctx, NULL, flags, dev).
    let bytes = payload(|w| {
        w.handle(1, 0xc0)
            .null(2, FieldType::Bytes)
            .u64(3, 0)
            .u64(4, 0);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::CtxCreate, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args,
        vec![
            ArgPlan::OutSlot,
            ArgPlan::Value(0),
            ArgPlan::Value(0),
            ArgPlan::Value(0)
        ]
    );
    let bytes = payload(|w| {
        w.handle(1, 0xc0);
    });
    let p = Payload::parse(&bytes).unwrap();
    // A context argument: mapped like a handle, or adopted as the primary context
    // when no recorded call created it.
    assert_eq!(
        plan_of(id::CtxSetCurrent, &p, 1 << 20).unwrap().args,
        vec![ArgPlan::Context(0xc0)]
    );
    assert_eq!(
        plan_of(id::CtxDestroy, &p, 1 << 20).unwrap().args,
        vec![ArgPlan::Handle(0xc0)]
    );
}

#[test]
fn a_driver_2d_copy_is_planned_by_its_layout() {
    let l = drv_memcpy::Layout::Memcpy2D;
    let mut raw = vec![0u8; l.size()];
    let mut put = |i: usize, v: u64| raw[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    put(2, drv_memcpy::MEMORYTYPE_DEVICE);
    put(4, 0xd000);
    put(6, 256);
    put(9, drv_memcpy::MEMORYTYPE_HOST);
    put(10, 0x5000);
    put(13, 100);
    put(14, 64);
    put(15, 3);
    let bytes = payload(|w| {
        w.bytes(1, &raw, false);
        w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    let p = Payload::parse(&bytes).unwrap();
    match &plan_of(id::DrvMemcpy2D, &p, 1 << 20).unwrap().args[0] {
        ArgPlan::Copy3D {
            parms,
            total,
            layout,
            ..
        } => {
            assert_eq!((*total, *layout), (192, Some(l)));
            assert_eq!(
                (parms.src.ptr, parms.dst.ptr, parms.kind),
                (0xd000, 0x5000, 2)
            );
        }
        other => panic!("{other:?}"),
    }
    let e = plan_of(id::DrvMemcpy2D, &p, 191).unwrap_err();
    assert!(e.to_string().ends_with("box exceeds max_host_bytes"), "{e}");
    // A 3D struct's bytes under the 2D row: refused, naming both sizes.
    let bytes = payload(|w| {
        w.bytes(1, &[0u8; 200], false);
    });
    let p = Payload::parse(&bytes).unwrap();
    let e = plan_of(id::DrvMemcpy2D, &p, 1 << 20).unwrap_err();
    assert_eq!(e.to_string(), "copy parameters are 200 bytes, not 128");
}

#[test]
fn pools_map_as_handles_and_their_inputs_pass_by_pointer() {
    // cudaMemPoolCreate(&pool, &props): an out slot, and the props without the
    // captured host pointer.
    let mut props = [0u8; 88];
    props[0] = 1;
    props[16..24].fill(0x55);
    let bytes = payload(|w| {
        w.handle(1, 0x9000);
        w.bytes(2, &props, false);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemPoolCreate, &p, 1 << 20).unwrap();
    let mut want = props;
    want[16..24].fill(0);
    assert_eq!(
        plan.args,
        vec![ArgPlan::OutSlot, ArgPlan::HostBytes(want.to_vec())]
    );
    let short = payload(|w| {
        w.handle(1, 0x9000);
        w.bytes(2, &props[..80], false);
    });
    let p = Payload::parse(&short).unwrap();
    let e = plan_of(id::MemPoolCreate, &p, 1 << 20).unwrap_err();
    assert_eq!(e.to_string(), "pool properties are 80 bytes, not 88");
    // cudaMemPoolSetAttribute(pool, attr, &value): the value at its attribute's width.
    let set = |attr: u64| {
        payload(|w| {
            w.handle(1, 0x9000).u64(2, attr).u64(3, 0x1_0000_0007);
        })
    };
    let bytes = set(4);
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemPoolSetAttribute, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[0], ArgPlan::Handle(0x9000));
    assert_eq!(
        plan.args[2],
        ArgPlan::HostBytes(0x1_0000_0007u64.to_le_bytes().to_vec())
    );
    let bytes = set(2);
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemPoolSetAttribute, &p, 1 << 20).unwrap();
    assert_eq!(plan.args[2], ArgPlan::HostBytes(vec![7, 0, 0, 0]));
    let bytes = set(42);
    let p = Payload::parse(&bytes).unwrap();
    let e = plan_of(id::MemPoolSetAttribute, &p, 1 << 20).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot honour memory pool attribute 42"),
        "{e}"
    );
    // cudaMemPoolGetAttribute's value is an out slot; destroy maps its handle.
    let bytes = payload(|w| {
        w.handle(1, 0x9000).u64(2, 7);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemPoolGetAttribute, &p, 1 << 20);
    assert_eq!(plan.unwrap().args[2], ArgPlan::OutSlot);
    let bytes = payload(|w| {
        w.handle(1, 0x9000);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::MemPoolDestroy, &p, 1 << 20).unwrap();
    assert_eq!(plan.args, vec![ArgPlan::Handle(0x9000)]);
}

#[test]
fn the_packed_side_of_a_box_has_the_box_width_as_pitch() {
    let s = packed_side(0x9000, [32, 5, 7]);
    assert_eq!((s.ptr, s.pitch, s.xsize, s.ysize), (0x9000, 32, 32, 5));
    assert_eq!((s.x, s.y, s.z), (0, 0, 0));
}

#[test]
fn instantiation_parameters_keep_flags_and_map_the_upload_stream() {
    let mut raw = vec![0u8; 32];
    raw[..8].copy_from_slice(&1u64.to_le_bytes());
    raw[8..16].copy_from_slice(&0x5100u64.to_le_bytes());
    raw[16..24].copy_from_slice(&0xdeadu64.to_le_bytes());
    let bytes = payload(|w| {
        w.devptr(1, 0x10).handle(2, 0xa0);
        w.bytes(3, &raw, false);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::GraphInstantiateWithParams, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args,
        vec![
            ArgPlan::OutSlot,
            ArgPlan::Handle(0xa0),
            ArgPlan::Instantiate {
                flags: 1,
                upload_stream: 0x5100
            }
        ]
    );
    let bytes = payload(|w| {
        w.bytes(3, &raw[..16], false);
    });
    let e = plan_instantiate(&Payload::parse(&bytes).unwrap(), 2).unwrap_err();
    assert!(e.to_string().contains("16 bytes, not 32"), "{e}");
    let bytes = payload(|w| {
        w.null(3, FieldType::Bytes);
    });
    let p = Payload::parse(&bytes).unwrap();
    assert_eq!(plan_instantiate(&p, 2).unwrap(), ArgPlan::Value(0));
}

#[test]
fn graph_node_rows_plan_dependencies_and_parameters() {
    // cudaGraphAddMemcpyNode(&node, graph, deps, 2, &parms3d): a 3D copy node.
    let parms = memcpy3d::Parms {
        extent: [8, 2, 1],
        kind: 2,
        ..Default::default()
    };
    let raw = parms.encode();
    let bytes = payload(|w| {
        w.handle(1, 0x70).handle(2, 0xa0);
        w.u64_array(3, &[0x71, 0x72]).u64(4, 2);
        w.bytes(5, &raw, false);
        w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::GraphAddMemcpyNode, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args[..4],
        [
            ArgPlan::OutSlot,
            ArgPlan::Handle(0xa0),
            ArgPlan::Handles(vec![0x71, 0x72]),
            ArgPlan::Value(2)
        ]
    );
    assert!(matches!(plan.args[4], ArgPlan::Copy3D { total: 16, .. }));
    // cudaGraphExecMemsetNodeSetParams(exec, node, &params): handles and the struct.
    let bytes = payload(|w| {
        w.handle(1, 0xe0).handle(2, 0x71);
        w.bytes(3, &[0u8; 40], false);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::GraphExecMemsetNodeSetParams, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args,
        vec![
            ArgPlan::Handle(0xe0),
            ArgPlan::Handle(0x71),
            ArgPlan::MemsetParams(vec![0u8; 40])
        ]
    );
    // A HIP memset node's parameters are 48 bytes: 40 is refused.
    let e = plan_of(id::HipGraphExecMemsetNodeSetParams, &p, 1 << 20).unwrap_err();
    assert!(e.to_string().contains("40 bytes, not 48"), "{e}");
}

#[test]
fn a_capture_begins_relaxed_and_graph_handles_map() {
    let bytes = payload(|w| {
        w.handle(1, 0x5100).u64(2, 0);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::StreamBeginCapture, &p, 1 << 20).unwrap();
    assert_eq!(
        plan.args,
        vec![
            ArgPlan::Handle(0x5100),
            ArgPlan::Value(CAPTURE_MODE_RELAXED)
        ]
    );
    let bytes = payload(|w| {
        w.handle(1, 0xe0).handle(2, 0x5100);
    });
    let p = Payload::parse(&bytes).unwrap();
    let plan = plan_of(id::StreamEndCapture, &p, 1 << 20).unwrap();
    assert_eq!(plan.args, vec![ArgPlan::Handle(0xe0), ArgPlan::OutSlot]);
}
