//! Sizing device code handed to the runtime by pointer only: CUDA fat binaries and
//! clang offload bundles (HIP). Capture must know how many bytes to store; these parse
//! the headers through a `peek(offset, len)` reader so capture never reads past them.

pub const CUDA_WRAPPER_MAGIC: u32 = 0x466243b1;
pub const CUDA_FATBIN_MAGIC: u32 = 0xBA55ED50;
pub const HIP_WRAPPER_MAGIC: u32 = 0x48495046;
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// No code object we accept is larger than this (a corrupt header would say more).
pub const MAX_CODE_OBJECT: u64 = 4 << 30;

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Size of a CUDA fat binary (header magic 0xBA55ED50): header size + payload size.
pub fn cuda_fatbin_size(header: &[u8]) -> Option<u64> {
    if u32_at(header, 0)? != CUDA_FATBIN_MAGIC {
        return None;
    }
    let size = u16_at(header, 6)? as u64 + u64_at(header, 8)?;
    (size <= MAX_CODE_OBJECT).then_some(size)
}

/// Size of a clang offload bundle: the end of its furthest entry.
pub fn bundle_size(peek: impl Fn(u64, u64) -> Option<Vec<u8>>) -> Option<u64> {
    let head = peek(0, 32)?;
    if &head[..24] != BUNDLE_MAGIC {
        return None;
    }
    let n = u64_at(&head, 24)?;
    if n == 0 || n > 4096 {
        return None;
    }
    let mut at = 32u64;
    let mut end = at;
    for _ in 0..n {
        let e = peek(at, 24)?;
        let (off, size, tlen) = (u64_at(&e, 0)?, u64_at(&e, 8)?, u64_at(&e, 16)?);
        if tlen > 4096 {
            return None;
        }
        at += 24 + tlen;
        end = end.max(off.checked_add(size)?).max(at);
    }
    (end <= MAX_CODE_OBJECT).then_some(end)
}

/// The entries of a bundle held in memory: (target triple, code object bytes).
pub fn bundle_entries(b: &[u8]) -> Option<Vec<(String, &[u8])>> {
    if b.get(..24)? != BUNDLE_MAGIC {
        return None;
    }
    let n = u64_at(b, 24)?;
    let mut at = 32usize;
    let mut out = Vec::new();
    for _ in 0..n.min(4096) {
        let (off, size, tlen) = (
            u64_at(b, at)? as usize,
            u64_at(b, at + 8)? as usize,
            u64_at(b, at + 16)? as usize,
        );
        let triple = String::from_utf8_lossy(b.get(at + 24..at + 24 + tlen)?).into_owned();
        out.push((triple, b.get(off..off.checked_add(size)?)?));
        at += 24 + tlen;
    }
    Some(out)
}

/// Size of an ELF image in memory (section header table is last in the files compilers
/// emit): max(e_shoff + e_shnum * e_shentsize, program headers' file extents).
pub fn elf_size(peek: impl Fn(u64, u64) -> Option<Vec<u8>>) -> Option<u64> {
    let h = peek(0, 64)?;
    if &h[..4] != b"\x7fELF" || h[4] != 2 {
        return None;
    }
    let shoff = u64_at(&h, 0x28)?;
    let shentsize = u16_at(&h, 0x3A)? as u64;
    let shnum = u16_at(&h, 0x3C)? as u64;
    let size = shoff.checked_add(shentsize * shnum)?.max(64);
    (size <= MAX_CODE_OBJECT).then_some(size)
}

/// The size of a binary code object a program hands to a module-load call, from its own
/// header: a CUDA fat binary, a clang offload bundle or an ELF (cubin or AMDGPU). None for
/// anything else (PTX text is sized by its NUL, by the caller).
pub fn module_image_size(peek: impl Fn(u64, u64) -> Option<Vec<u8>>) -> Option<u64> {
    let head = peek(0, 16)?;
    if let Some(n) = cuda_fatbin_size(&head) {
        return Some(n);
    }
    if head.starts_with(b"\x7fELF") {
        return elf_size(&peek);
    }
    if head.starts_with(&BUNDLE_MAGIC[..16]) {
        return bundle_size(&peek);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatbin_size_from_header() {
        let mut h = vec![0u8; 16];
        h[..4].copy_from_slice(&CUDA_FATBIN_MAGIC.to_le_bytes());
        h[6..8].copy_from_slice(&16u16.to_le_bytes());
        h[8..16].copy_from_slice(&1000u64.to_le_bytes());
        assert_eq!(cuda_fatbin_size(&h), Some(1016));
        h[0] = 0;
        assert_eq!(cuda_fatbin_size(&h), None);
    }

    #[test]
    fn bundle_size_and_entries() {
        let mut b = BUNDLE_MAGIC.to_vec();
        b.extend_from_slice(&2u64.to_le_bytes());
        let triples = [
            "host-x86_64-unknown-linux-gnu",
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
        ];
        let header_len = 32 + triples.iter().map(|t| 24 + t.len()).sum::<usize>();
        let mut off = header_len as u64;
        for (i, t) in triples.iter().enumerate() {
            let size = if i == 0 { 0 } else { 8 };
            b.extend_from_slice(&off.to_le_bytes());
            b.extend_from_slice(&(size as u64).to_le_bytes());
            b.extend_from_slice(&(t.len() as u64).to_le_bytes());
            b.extend_from_slice(t.as_bytes());
            off += size as u64;
        }
        b.extend_from_slice(b"\x7fELFcode");
        let peek = |o: u64, l: u64| b.get(o as usize..(o + l) as usize).map(|s| s.to_vec());
        assert_eq!(bundle_size(peek), Some(b.len() as u64));
        let e = bundle_entries(&b).unwrap();
        assert_eq!(e[1].0, triples[1]);
        assert_eq!(e[1].1, b"\x7fELFcode");
    }
}
