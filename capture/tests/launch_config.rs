//! Launch configuration and stream-ordered memory under capture, against the stand-in
//! runtime (no GPU): a function setting names its kernel as a launch does (an
//! unregistered one is recorded incomplete), a cooperative launch and a launch with
//! attributes are their own records (attributes verbatim, padding dropped), device limits
//! and pools are table rows (pool properties by their layout, attribute values at their
//! width), and a stream-ordered allocation enters the allocation table like any other
//! (a kernel argument pointing into it is a pointer word).

use hrr_archive::api::{fid, id, semantic, ApiDesc};
use hrr_archive::payload::Payload;
use hrr_archive::{Archive, Limits, ProcessArchive};

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;
use stand_in::StandIn;

fn payload(p: &ProcessArchive, i: usize) -> Payload<'_> {
    Payload::parse(&p.events[i].payload).unwrap()
}

#[test]
fn settings_cooperative_and_attributed_launches_and_pools_are_recorded() {
    let Some(s) = StandIn::build("launch-config", "launch_config.c") else {
        return;
    };
    let out = s.path().join("archive");
    let run = s.command(&out, &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The program saw the runtime's results: success, and for the setting of a kernel it
    // never registered cudaErrorInvalidDeviceFunction (98).
    for line in stdout.lines() {
        let want = if line.starts_with("func_attribute_unregistered=") {
            "=98"
        } else {
            "=0"
        };
        assert!(line.ends_with(want), "{line}");
    }
    assert_eq!(stdout.lines().count(), 19, "{stdout}");

    let mut a = Archive::open(&out, Limits::default()).unwrap_or_else(|e| {
        panic!(
            "{e}\ncapture said: {}",
            String::from_utf8_lossy(&run.stderr)
        )
    });
    // The program's calls in order; the coverage markers of unmodelled calls (the end of
    // its fat binary's registration) are not this test's subject.
    a.processes[0]
        .events
        .retain(|e| e.header.api_id != semantic::UNMODELLED_CALL);
    let p = &a.processes[0];
    let ids: Vec<u16> = p.events.iter().map(|e| e.header.api_id).collect();
    assert_eq!(
        ids,
        [
            semantic::REGISTER_FAT_BINARY,
            semantic::REGISTER_FUNCTION,
            id::StreamCreate,
            semantic::FUNC_SET_ATTRIBUTE,
            semantic::FUNC_SET_CACHE_CONFIG,
            semantic::FUNC_SET_ATTRIBUTE,
            id::DeviceSetLimit,
            id::DeviceGetLimit,
            id::DeviceGetDefaultMemPool,
            id::MemPoolSetAttribute,
            id::MemPoolCreate,
            id::MemPoolSetAttribute,
            id::MallocAsync,
            id::MallocFromPoolAsync,
            semantic::LAUNCH_COOPERATIVE,
            semantic::LAUNCH_KERNEL_EX,
            id::MemPoolGetAttribute,
            id::FreeAsync,
            id::FreeAsync,
            id::MemPoolTrimTo,
            id::MemPoolDestroy,
        ]
    );
    // Only the setting of an unregistered kernel is incomplete, and says why.
    let incomplete: Vec<usize> = (0..p.events.len())
        .filter(|&i| p.events[i].header.flags != 0)
        .collect();
    assert_eq!(incomplete, [5]);
    assert!(p.manifest.capture_failures[0]
        .reason
        .contains("was never registered"));

    // cudaFuncSetAttribute(stub, MaxDynamicSharedMemorySize, 64 KiB): the kernel by name.
    let attr = payload(p, 3);
    assert_eq!(attr.str(fid::NAME, "name").unwrap(), "kernel");
    assert!(attr.str(fid::CODE_OBJECT, "code object").is_ok());
    assert_eq!(attr.i64(fid::FUNC_ATTRIBUTE, "attr").unwrap(), 8);
    assert_eq!(attr.i64(fid::CONFIG_VALUE, "value").unwrap(), 64 * 1024);
    assert_eq!(payload(p, 4).i64(fid::CONFIG_VALUE, "cache").unwrap(), 1);
    // cudaDeviceGetLimit(&v, 2): the value the runtime wrote (the 8 MiB malloc heap).
    assert_eq!(
        payload(p, 7).u64(ApiDesc::field_id(0), "value").unwrap(),
        8 << 20
    );

    // Pool attribute values at their width: the threshold a u64, the reuse flag an int.
    assert_eq!(payload(p, 9).u64(3, "threshold").unwrap(), u64::MAX);
    assert_eq!(payload(p, 11).u64(3, "reuse").unwrap(), 1);
    // The properties by their layout, verbatim (replay clears the host pointer).
    let props = payload(p, 10).bytes(2, "props").unwrap().to_vec();
    assert_eq!(props.len(), 88);
    assert_eq!((props[0], props[8]), (1, 1));
    assert_eq!(props[16..24], [0x44; 8]);
    // The pool the runtime made: the one allocated from, then destroyed.
    let pool = payload(p, 10).handle(1, "pool").unwrap();
    assert_ne!(pool, 0);
    assert_eq!(payload(p, 13).handle(3, "pool").unwrap(), pool);
    assert_eq!(payload(p, 20).handle(1, "pool").unwrap(), pool);

    // Both launches carry the arguments, each a pointer into a stream-ordered allocation.
    for i in [14, 15] {
        let l = payload(p, i);
        assert_eq!(l.str(fid::NAME, "name").unwrap(), "kernel");
        let args: Vec<Payload> = l.all(fid::ARG).map(|a| a.as_nested().unwrap()).collect();
        assert_eq!(args.len(), 2);
        for a in &args {
            assert_eq!(
                a.u64_array(fid::ARG_POINTER_WORDS, "words").unwrap(),
                [0],
                "event {i}"
            );
        }
    }
    // The launch attributes in order, each id and its 64-byte value; no padding.
    let ex = payload(p, 15);
    assert_eq!(ex.u64(fid::SHARED_MEM, "shmem").unwrap(), 256);
    let attrs: Vec<(u64, Vec<u8>)> = ex
        .all(fid::LAUNCH_ATTR)
        .map(|f| {
            let n = f.as_nested().unwrap();
            let v = n.bytes(fid::LAUNCH_ATTR_VALUE, "value").unwrap().to_vec();
            (n.u64(fid::LAUNCH_ATTR_ID, "id").unwrap(), v)
        })
        .collect();
    let mut cluster = vec![0u8; 64];
    cluster[0] = 2;
    cluster[4] = 1;
    cluster[8] = 1;
    let mut priority = vec![0u8; 64];
    priority[0] = 3;
    assert_eq!(attrs, [(4, cluster), (8, priority)]);
    assert!(
        p.manifest.unreplayable_apis.is_empty(),
        "attributes are replayed, not listed"
    );
}
