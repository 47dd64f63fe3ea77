//! Coverage-guided fuzzing of the archive reader: `cargo fuzz run reader` from archive/.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = hrr_archive::Limits { max_events: 10_000, max_file_bytes: 1 << 20, max_host_bytes: 1 << 20 };
    if let Ok((events, _status)) = hrr_archive::reader::decode_log(std::path::Path::new("fuzz"), data, &limits) {
        for e in &events {
            if let Ok(p) = hrr_archive::payload::Payload::parse(&e.payload) {
                for f in p.iter() {
                    let _ = f.render();
                }
            }
        }
    }
    let _ = hrr_archive::blob::decode(
        std::path::Path::new("fuzz"),
        data,
        &hrr_archive::ContentHash::of(b""),
        &limits,
    );
});
