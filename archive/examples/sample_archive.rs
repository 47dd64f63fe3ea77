//! Writes a small sample archive with the real writer, as capture would for a program
//! that allocates, uploads, and reads back a buffer: `cargo run --example sample_archive DIR`.
//! Used by the README's first command to show `hrr-replay --info` on a machine without a GPU.

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::{CaptureSettings, ProcessWriter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: sample_archive DIR")?;
    let w = ProcessWriter::create(std::path::Path::new(&dir), CaptureSettings::default(), 0)?;
    w.update_runtime(|r| r.vendor = "cuda".into());
    let dev = 0x7f00_0000_0000u64;
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), dev)
        .u64(ApiDesc::field_id(1), 4096);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes());
    let input: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    for (dir_, bytes) in [
        (CopyDir::HostToDevice, &input),
        (CopyDir::DeviceToHost, &input),
    ] {
        let r = w.put_blob(bytes)?;
        let (dst, src) = if dir_ == CopyDir::HostToDevice {
            (dev, 0x5000)
        } else {
            (0x5000, dev)
        };
        let blob_field = if dir_ == CopyDir::HostToDevice {
            BLOB_FIELD | 2
        } else {
            BLOB_FIELD | 1
        };
        let mut p = PayloadWriter::new();
        p.devptr(1, dst)
            .devptr(2, src)
            .u64(3, 4096)
            .u64(4, dir_ as u64)
            .blob(blob_field, r)
            .u64(COPY_DIR_FIELD, dir_ as u64);
        w.append(id::Memcpy, 0, 1, 0, p.as_bytes());
    }
    let mut p = PayloadWriter::new();
    p.devptr(1, dev);
    w.append(id::Free, 0, 1, 0, p.as_bytes());
    let s = w.finish()?;
    println!(
        "wrote {} events and {} blobs into {}",
        s.events,
        s.blobs,
        s.dir.display()
    );
    Ok(())
}
