//! AMDGPU kernel metadata: the `NT_AMDGPU_METADATA` note of a code object (ELF, code
//! object v3 and later), a MessagePack map whose `amdhsa.kernels` list gives each kernel's
//! name and argument layout (`.offset`, `.size`, `.value_kind`). Capture uses it to record
//! HIP kernel arguments with their offsets and sizes, as the driver's param info does for
//! CUDA. Input is untrusted: every read is bounds-checked and nesting is limited.

use crate::codeobject;

/// Why a code object's kernel metadata could not be read (the input is untrusted: each
/// variant names what was wrong with it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error("not a 64-bit little-endian ELF file")]
    NotElf64,
    #[error("ELF machine {0:#x} is not AMDGPU (0xe0)")]
    NotAmdgpu(u64),
    #[error("truncated ELF header")]
    TruncatedHeader,
    #[error("ELF section header size {0} is too small")]
    SectionHeaderSize(usize),
    /// An offset or size whose sum does not fit in the address space.
    #[error("ELF offsets overflow")]
    Overflow,
    /// "section header" or "note section".
    #[error("{0} outside the file")]
    OutsideFile(&'static str),
    /// "note name" or "note descriptor".
    #[error("{0} outside its section")]
    OutsideSection(&'static str),
    #[error("no NT_AMDGPU_METADATA note (code object v2 or not a kernel object)")]
    NoNote,
    #[error("metadata truncated: {wanted} bytes wanted at offset {at}")]
    Truncated { wanted: usize, at: usize },
    #[error("metadata array of {0} elements exceeds the note")]
    ArrayTooLong(usize),
    #[error("metadata map of {0} entries exceeds the note")]
    MapTooLong(usize),
    #[error("metadata nested too deeply")]
    TooDeep,
    #[error("metadata uses the reserved MessagePack byte 0xc1")]
    ReservedByte,
    #[error("metadata has no amdhsa.kernels list")]
    NoKernelList,
    #[error("a kernel without .name")]
    KernelWithoutName,
    /// `field` is ".offset" or ".size".
    #[error("{kernel}: an argument without {field}")]
    ArgWithout { kernel: String, field: &'static str },
    #[error("{kernel}: argument at {offset}+{size} is outside the kernarg segment")]
    ArgOutside {
        kernel: String,
        offset: u64,
        size: u64,
    },
    #[error("the bundle holds no AMDGPU code object")]
    NoAmdgpuInBundle,
    /// The last AMDGPU entry of an offload bundle that failed, by its target.
    #[error("{target}: {source}")]
    InBundle {
        target: String,
        source: Box<MetadataError>,
    },
}

/// One kernel argument as the metadata declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArg {
    pub offset: u64,
    pub size: u64,
    /// `by_value`, `global_buffer`, `hidden_block_count_x`, ...
    pub value_kind: String,
    /// `global`, `constant`, ... for pointers.
    pub address_space: Option<String>,
}

impl KernelArg {
    /// Hidden arguments are added by the compiler; the program's `void** args` has one
    /// entry per argument that is not hidden.
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelMeta {
    /// The kernel's (mangled) name, as `__hipRegisterFunction` names it.
    pub name: String,
    /// Its kernel-descriptor symbol (`NAME.kd`).
    pub symbol: String,
    pub kernarg_segment_size: u64,
    pub args: Vec<KernelArg>,
}

impl KernelMeta {
    /// (offset, size) of each explicit argument, in order: what a launch's `void** args`
    /// points at.
    pub fn explicit_params(&self) -> Vec<(u64, u64)> {
        self.args
            .iter()
            .filter(|a| !a.is_hidden())
            .map(|a| (a.offset, a.size))
            .collect()
    }
}

/// A decoded MessagePack value (the subset metadata uses, plus what lets us skip the rest).
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Nil,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(kv) => kv
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
    fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
    fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

const MAX_DEPTH: u32 = 32;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], MetadataError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(MetadataError::Truncated {
                wanted: n,
                at: self.at,
            })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn uint(&mut self, n: usize) -> Result<u64, MetadataError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &x| (acc << 8) | x as u64))
    }
    fn str(&mut self, n: usize) -> Result<Value, MetadataError> {
        let s = self.take(n)?;
        Ok(Value::Str(String::from_utf8_lossy(s).into_owned()))
    }
    fn array(&mut self, n: usize, depth: u32) -> Result<Value, MetadataError> {
        // Each element takes at least one byte: a count beyond what is left is a lie.
        if n > self.b.len() - self.at {
            return Err(MetadataError::ArrayTooLong(n));
        }
        (0..n)
            .map(|_| self.value(depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array)
    }
    fn map(&mut self, n: usize, depth: u32) -> Result<Value, MetadataError> {
        if n.saturating_mul(2) > self.b.len() - self.at {
            return Err(MetadataError::MapTooLong(n));
        }
        let mut kv = Vec::with_capacity(n);
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            kv.push((k, v));
        }
        Ok(Value::Map(kv))
    }
    fn value(&mut self, depth: u32) -> Result<Value, MetadataError> {
        if depth > MAX_DEPTH {
            return Err(MetadataError::TooDeep);
        }
        let t = self.take(1)?[0];
        Ok(match t {
            0x00..=0x7f => Value::Int(t as i128),
            0x80..=0x8f => return self.map((t & 0x0f) as usize, depth),
            0x90..=0x9f => return self.array((t & 0x0f) as usize, depth),
            0xa0..=0xbf => return self.str((t & 0x1f) as usize),
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (t - 0xc4))? as usize;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xc7..=0xc9 => {
                let n = self.uint(1 << (t - 0xc7))? as usize;
                self.take(1 + n)?;
                Value::Nil
            }
            0xca => Value::Float(f32::from_bits(self.uint(4)? as u32) as f64),
            0xcb => Value::Float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Value::Int(self.uint(1 << (t - 0xcc))? as i128),
            0xd0..=0xd3 => {
                let n = 1usize << (t - 0xd0);
                let u = self.uint(n)?;
                let shift = 64 - 8 * n as u32;
                Value::Int((((u << shift) as i64) >> shift) as i128)
            }
            0xd4..=0xd8 => {
                self.take(1 + (1 << (t - 0xd4)))?;
                Value::Nil
            }
            0xd9..=0xdb => {
                let n = self.uint(1 << (t - 0xd9))? as usize;
                return self.str(n);
            }
            0xdc | 0xdd => {
                let n = self.uint(if t == 0xdc { 2 } else { 4 })? as usize;
                return self.array(n, depth);
            }
            0xde | 0xdf => {
                let n = self.uint(if t == 0xde { 2 } else { 4 })? as usize;
                return self.map(n, depth);
            }
            0xe0..=0xff => Value::Int((t as i8) as i128),
            0xc1 => return Err(MetadataError::ReservedByte),
        })
    }
}

fn le(b: &[u8], at: usize, n: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(n)?)?;
    Some(s.iter().rev().fold(0u64, |acc, &x| (acc << 8) | x as u64))
}

const NT_AMDGPU_METADATA: u64 = 32;
const EM_AMDGPU: u64 = 0xe0;

/// The metadata note's MessagePack bytes of an ELF64 AMDGPU code object.
fn metadata_note(elf: &[u8]) -> Result<&[u8], MetadataError> {
    if elf.get(..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err(MetadataError::NotElf64);
    }
    if le(elf, 18, 2) != Some(EM_AMDGPU) {
        return Err(MetadataError::NotAmdgpu(le(elf, 18, 2).unwrap_or(0)));
    }
    let shoff = le(elf, 0x28, 8).ok_or(MetadataError::TruncatedHeader)? as usize;
    let shentsize = le(elf, 0x3a, 2).ok_or(MetadataError::TruncatedHeader)? as usize;
    let shnum = le(elf, 0x3c, 2).ok_or(MetadataError::TruncatedHeader)? as usize;
    if shentsize < 64 {
        return Err(MetadataError::SectionHeaderSize(shentsize));
    }
    for i in 0..shnum {
        let sh = shoff
            .checked_add(i.checked_mul(shentsize).ok_or(MetadataError::Overflow)?)
            .ok_or(MetadataError::Overflow)?;
        let ty = le(elf, sh + 4, 4).ok_or(MetadataError::OutsideFile("section header"))?;
        if ty != 7 {
            continue; // SHT_NOTE only
        }
        let off =
            le(elf, sh + 0x18, 8).ok_or(MetadataError::OutsideFile("section header"))? as usize;
        let size =
            le(elf, sh + 0x20, 8).ok_or(MetadataError::OutsideFile("section header"))? as usize;
        let notes = elf
            .get(off..off.checked_add(size).ok_or(MetadataError::Overflow)?)
            .ok_or(MetadataError::OutsideFile("note section"))?;
        let mut at = 0usize;
        while at + 12 <= notes.len() {
            let namesz = le(notes, at, 4).unwrap_or(0) as usize;
            let descsz = le(notes, at + 4, 4).unwrap_or(0) as usize;
            let ty = le(notes, at + 8, 4).unwrap_or(0);
            let name_at = at + 12;
            let desc_at = name_at + namesz.div_ceil(4) * 4;
            let next = desc_at
                .checked_add(descsz.div_ceil(4) * 4)
                .ok_or(MetadataError::Overflow)?;
            let name = notes
                .get(name_at..name_at + namesz)
                .ok_or(MetadataError::OutsideSection("note name"))?;
            if ty == NT_AMDGPU_METADATA && name.starts_with(b"AMDGPU") {
                return notes
                    .get(desc_at..desc_at + descsz)
                    .ok_or(MetadataError::OutsideSection("note descriptor"));
            }
            at = next;
        }
    }
    Err(MetadataError::NoNote)
}

/// Every kernel of an AMDGPU code object (ELF), with its argument layout.
pub fn kernels(elf: &[u8]) -> Result<Vec<KernelMeta>, MetadataError> {
    let note = metadata_note(elf)?;
    let mut r = Reader { b: note, at: 0 };
    let root = r.value(0)?;
    let list = match root.get("amdhsa.kernels") {
        Some(Value::Array(v)) => v,
        _ => return Err(MetadataError::NoKernelList),
    };
    let mut out = Vec::new();
    for k in list {
        let name = k
            .get(".name")
            .and_then(Value::as_str)
            .ok_or(MetadataError::KernelWithoutName)?
            .to_string();
        let symbol = k
            .get(".symbol")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let kernarg_segment_size = k
            .get(".kernarg_segment_size")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut args = Vec::new();
        if let Some(Value::Array(a)) = k.get(".args") {
            for arg in a {
                let offset = arg.get(".offset").and_then(Value::as_u64).ok_or_else(|| {
                    MetadataError::ArgWithout {
                        kernel: name.clone(),
                        field: ".offset",
                    }
                })?;
                let size = arg.get(".size").and_then(Value::as_u64).ok_or_else(|| {
                    MetadataError::ArgWithout {
                        kernel: name.clone(),
                        field: ".size",
                    }
                })?;
                if offset
                    .checked_add(size)
                    .is_none_or(|e| e > kernarg_segment_size.max(1 << 20))
                {
                    return Err(MetadataError::ArgOutside {
                        kernel: name,
                        offset,
                        size,
                    });
                }
                args.push(KernelArg {
                    offset,
                    size,
                    value_kind: arg
                        .get(".value_kind")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    address_space: arg
                        .get(".address_space")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            }
        }
        out.push(KernelMeta {
            name,
            symbol,
            kernarg_segment_size,
            args,
        });
    }
    Ok(out)
}

/// Kernels of a registered HIP code object: an offload bundle (the first AMDGPU entry;
/// argument layouts are the same for every target) or a bare ELF.
pub fn kernels_of_code_object(bytes: &[u8]) -> Result<Vec<KernelMeta>, MetadataError> {
    if let Some(entries) = codeobject::bundle_entries(bytes) {
        let mut last_err = MetadataError::NoAmdgpuInBundle;
        for (target, elf) in entries {
            if !target.contains("amdgcn") {
                continue;
            }
            match kernels(elf) {
                Ok(k) => return Ok(k),
                Err(e) => {
                    last_err = MetadataError::InBundle {
                        target: target.to_string(),
                        source: Box::new(e),
                    }
                }
            }
        }
        return Err(last_err);
    }
    kernels(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msgpack_subset_decodes() {
        // {"a": [1, -2, "x", true, nil, 300], "b": 1.5}
        let b = [
            0x82, 0xa1, b'a', 0x96, 0x01, 0xfe, 0xa1, b'x', 0xc3, 0xc0, 0xcd, 0x01, 0x2c, 0xa1,
            b'b', 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,
        ];
        let v = Reader { b: &b, at: 0 }.value(0).unwrap();
        assert_eq!(
            v.get("a"),
            Some(&Value::Array(vec![
                Value::Int(1),
                Value::Int(-2),
                Value::Str("x".into()),
                Value::Bool(true),
                Value::Nil,
                Value::Int(300)
            ]))
        );
        assert_eq!(v.get("b"), Some(&Value::Float(1.5)));
    }

    #[test]
    fn hostile_msgpack_is_refused_without_panicking() {
        for bad in [
            &[0xdd, 0xff, 0xff, 0xff, 0xff][..],
            &[0xdf, 0x7f, 0xff, 0xff, 0xff],
            &[0xd9, 0x10, b'a'],
            &[0xc1],
            &[0x91; 100],
        ] {
            assert!(Reader { b: bad, at: 0 }.value(0).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn errors_say_what_was_wrong() {
        assert_eq!(
            Reader { b: &[0xc1], at: 0 }.value(0),
            Err(MetadataError::ReservedByte)
        );
        assert_eq!(
            Reader {
                b: &[0xd9, 0x10, b'a'],
                at: 0
            }
            .value(0),
            Err(MetadataError::Truncated { wanted: 16, at: 2 })
        );
        assert_eq!(kernels(b"\x7fELF"), Err(MetadataError::NotElf64));
        let e = MetadataError::InBundle {
            target: "hipv4-amdgcn-amd-amdhsa--gfx90a".into(),
            source: Box::new(MetadataError::NoNote),
        };
        assert_eq!(
            e.to_string(),
            "hipv4-amdgcn-amd-amdhsa--gfx90a: no NT_AMDGPU_METADATA note (code object v2 or not a kernel object)"
        );
    }
}
