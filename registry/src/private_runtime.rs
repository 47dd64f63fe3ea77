//! Libraries that run GPU code through a runtime of their own (cuBLAS and cuDNN link
//! the CUDA runtime statically): the rule that finds them in an ELF object, and how
//! such a library is named among a process's unmodelled calls.
//!
//! An object carries GPU code when it has a fat-binary section of a vendor
//! ([`RUNTIMES`]). It registers that code through the shared runtime, which capture
//! interposes, when it imports the vendor's registration function (an undefined dynamic
//! symbol). An object with GPU code that neither imports nor defines it (the runtime
//! itself defines it) registers its kernels with a private copy of the runtime: its
//! launches and copies never pass through a symbol capture sees. The scan reads only
//! the section headers, the section names and the dynamic symbols, each read bounded,
//! through a caller-given reader (the file may be anything: it is untrusted).

/// One vendor's fat-binary sections and registration function.
pub struct Runtime {
    /// "CUDA" or "HIP".
    pub name: &'static str,
    /// Sections that hold device code.
    pub code_sections: &'static [&'static str],
    /// The function the compiler's host stub calls to register the code.
    pub registration: &'static str,
}

/// Every vendor the scan knows.
pub const RUNTIMES: &[Runtime] = &[
    Runtime {
        name: "CUDA",
        code_sections: &[".nv_fatbin", ".nvFatBinSegment", "__nv_relfatbin"],
        registration: "__cudaRegisterFatBinary",
    },
    Runtime {
        name: "HIP",
        code_sections: &[".hip_fatbin", ".hipFatBinSegment"],
        registration: "__hipRegisterFatBinary",
    },
];

/// The name an object with a private runtime has among the unmodelled calls.
pub const API_PREFIX: &str = "private runtime: ";

/// `private runtime: FILE (CUDA)`: one entry per object, distinct by file name.
pub fn api_name(file: &str, runtime: &str) -> String {
    format!("{API_PREFIX}{file} ({runtime})")
}

/// Whether an unmodelled-call name is a private-runtime entry.
pub fn is_private_runtime(api: &str) -> bool {
    api.starts_with(API_PREFIX)
}

/// What the scan found in one object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectFacts {
    /// The vendors (`Runtime::name`) whose code sections it has.
    pub code_of: Vec<&'static str>,
    /// The registration functions it imports (undefined dynamic symbols).
    pub imports: Vec<&'static str>,
    /// The registration functions it defines (the runtime itself).
    pub defines: Vec<&'static str>,
}

impl ObjectFacts {
    /// The vendors whose code this object runs through a runtime of its own.
    pub fn private_runtimes(&self) -> Vec<&'static str> {
        RUNTIMES
            .iter()
            .filter(|r| {
                self.code_of.contains(&r.name)
                    && !self.imports.contains(&r.registration)
                    && !self.defines.contains(&r.registration)
            })
            .map(|r| r.name)
            .collect()
    }
}

/// Why an object could not be scanned.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ElfScanError {
    #[error("not a 64-bit little-endian ELF object")]
    NotElf64,
    #[error("{what} out of bounds or over the limit ({size} bytes at {offset})")]
    Bounds {
        what: &'static str,
        offset: u64,
        size: u64,
    },
    #[error("reading {what} failed")]
    Read { what: &'static str },
}

/// Most bytes one read of the scan asks for (section table, names, symbols, strings).
pub const MAX_READ: u64 = 256 << 20;

const SHT_DYNSYM: u32 = 11;
const SECTION_HEADER: usize = 64;
const SYMBOL: usize = 24;

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]))
}

/// The NUL-terminated name at `off` in `table`, if it is one.
fn name_at(table: &[u8], off: usize) -> Option<&[u8]> {
    let rest = table.get(off..)?;
    let end = rest.iter().position(|&c| c == 0)?;
    Some(&rest[..end])
}

struct Section {
    name: u32,
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
}

/// Scans an object of `len` bytes; `read(offset, size)` returns exactly those bytes or
/// None. Every read is checked against `len` and [`MAX_READ`] first.
pub fn scan_elf(
    len: u64,
    mut read: impl FnMut(u64, usize) -> Option<Vec<u8>>,
) -> Result<ObjectFacts, ElfScanError> {
    let mut bounded = |what: &'static str, offset: u64, size: u64| {
        let end = offset.checked_add(size);
        if end.is_none_or(|e| e > len) || size > MAX_READ {
            return Err(ElfScanError::Bounds { what, offset, size });
        }
        read(offset, size as usize).ok_or(ElfScanError::Read { what })
    };
    let eh = bounded("ELF header", 0, 64).map_err(|_| ElfScanError::NotElf64)?;
    if eh[..4] != *b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return Err(ElfScanError::NotElf64);
    }
    let shoff = u64_at(&eh, 0x28);
    let shentsize = u16_at(&eh, 0x3A) as usize;
    let shnum = u16_at(&eh, 0x3C) as u64;
    let shstrndx = u16_at(&eh, 0x3E) as usize;
    if shoff == 0 || shnum == 0 {
        // No section table (stripped of it): nothing to see.
        return Ok(ObjectFacts::default());
    }
    if shentsize != SECTION_HEADER {
        return Err(ElfScanError::NotElf64);
    }
    let table = bounded("section headers", shoff, shnum * SECTION_HEADER as u64)?;
    let sections: Vec<Section> = table
        .chunks_exact(SECTION_HEADER)
        .map(|s| Section {
            name: u32_at(s, 0),
            kind: u32_at(s, 4),
            offset: u64_at(s, 0x18),
            size: u64_at(s, 0x20),
            link: u32_at(s, 0x28),
        })
        .collect();
    let Some(names) = sections.get(shstrndx) else {
        return Ok(ObjectFacts::default());
    };
    let names = bounded("section names", names.offset, names.size)?;
    let mut facts = ObjectFacts::default();
    for s in &sections {
        let Some(name) = name_at(&names, s.name as usize) else {
            continue;
        };
        for r in RUNTIMES {
            if r.code_sections.iter().any(|c| c.as_bytes() == name)
                && !facts.code_of.contains(&r.name)
            {
                facts.code_of.push(r.name);
            }
        }
    }
    if facts.code_of.is_empty() {
        return Ok(facts);
    }
    for s in sections.iter().filter(|s| s.kind == SHT_DYNSYM) {
        let Some(strtab) = sections.get(s.link as usize) else {
            continue;
        };
        let syms = bounded("dynamic symbols", s.offset, s.size)?;
        let strs = bounded("dynamic symbol names", strtab.offset, strtab.size)?;
        for sym in syms.chunks_exact(SYMBOL) {
            let Some(name) = name_at(&strs, u32_at(sym, 0) as usize) else {
                continue;
            };
            let Some(r) = RUNTIMES.iter().find(|r| r.registration.as_bytes() == name) else {
                continue;
            };
            let list = if u16_at(sym, 6) == 0 {
                &mut facts.imports
            } else {
                &mut facts.defines
            };
            if !list.contains(&r.registration) {
                list.push(r.registration);
            }
        }
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 object: the given sections (name, type, contents), a section-name
    /// table last.
    fn elf(sections: &[(&str, u32, Vec<u8>, u32)]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut body = Vec::new();
        let mut headers = vec![[0u8; 64]];
        let data_start = 64u64;
        let mut all: Vec<(String, u32, Vec<u8>, u32)> = sections
            .iter()
            .map(|(n, t, d, l)| (n.to_string(), *t, d.clone(), *l))
            .collect();
        all.push((".shstrtab".into(), 3, Vec::new(), 0));
        let mut name_offsets = Vec::new();
        for (n, ..) in &all {
            name_offsets.push(names.len() as u32);
            names.extend_from_slice(n.as_bytes());
            names.push(0);
        }
        let last = all.len() - 1;
        all[last].2 = names.clone();
        for (i, (_, t, d, l)) in all.iter().enumerate() {
            let off = data_start + body.len() as u64;
            body.extend_from_slice(d);
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name_offsets[i].to_le_bytes());
            h[4..8].copy_from_slice(&t.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&off.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(d.len() as u64).to_le_bytes());
            h[0x28..0x2C].copy_from_slice(&l.to_le_bytes());
            headers.push(h);
        }
        let shoff = data_start + body.len() as u64;
        let mut eh = vec![0u8; 64];
        eh[..4].copy_from_slice(b"\x7fELF");
        eh[4] = 2;
        eh[5] = 1;
        eh[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        eh[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        eh[0x3C..0x3E].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        eh[0x3E..0x40].copy_from_slice(&(headers.len() as u16 - 1).to_le_bytes());
        let mut out = eh;
        out.extend_from_slice(&body);
        for h in headers {
            out.extend_from_slice(&h);
        }
        out
    }

    /// .dynsym and .dynstr contents for (name, defined) symbols; dynsym links to index
    /// `strtab_index`.
    fn dynsyms(syms: &[(&str, bool)]) -> (Vec<u8>, Vec<u8>) {
        let mut strs = vec![0u8];
        let mut table = vec![0u8; SYMBOL];
        for (n, defined) in syms {
            let mut s = [0u8; SYMBOL];
            s[0..4].copy_from_slice(&(strs.len() as u32).to_le_bytes());
            s[6..8].copy_from_slice(&(if *defined { 12u16 } else { 0 }).to_le_bytes());
            strs.extend_from_slice(n.as_bytes());
            strs.push(0);
            table.extend_from_slice(&s);
        }
        (table, strs)
    }

    fn scan(bytes: &[u8]) -> Result<ObjectFacts, ElfScanError> {
        scan_elf(bytes.len() as u64, |o, n| {
            bytes.get(o as usize..o as usize + n).map(<[u8]>::to_vec)
        })
    }

    fn object(code: &str, syms: &[(&str, bool)]) -> Vec<u8> {
        let (sym, strs) = dynsyms(syms);
        // Indices: 1 the code section, 2 .dynsym, 3 .dynstr.
        elf(&[
            (code, 1, vec![1, 2, 3, 4], 0),
            (".dynsym", SHT_DYNSYM, sym, 3),
            (".dynstr", 3, strs, 0),
        ])
    }

    #[test]
    fn a_fat_binary_without_the_shared_registration_is_a_private_runtime() {
        let f = scan(&object(".nv_fatbin", &[("cudaMalloc", false)])).unwrap();
        assert_eq!(f.code_of, vec!["CUDA"]);
        assert_eq!(f.private_runtimes(), vec!["CUDA"]);
        let f = scan(&object(".hip_fatbin", &[])).unwrap();
        assert_eq!(f.private_runtimes(), vec!["HIP"]);
    }

    #[test]
    fn importing_or_defining_the_registration_is_the_shared_runtime() {
        let f = scan(&object(
            "__nv_relfatbin",
            &[("__cudaRegisterFatBinary", false)],
        ))
        .unwrap();
        assert_eq!(f.imports, vec!["__cudaRegisterFatBinary"]);
        assert!(f.private_runtimes().is_empty());
        let f = scan(&object(".nv_fatbin", &[("__cudaRegisterFatBinary", true)])).unwrap();
        assert_eq!(f.defines, vec!["__cudaRegisterFatBinary"]);
        assert!(f.private_runtimes().is_empty());
        // The other vendor's registration does not count.
        let f = scan(&object(
            ".hipFatBinSegment",
            &[("__cudaRegisterFatBinary", false)],
        ))
        .unwrap();
        assert_eq!(f.private_runtimes(), vec!["HIP"]);
    }

    #[test]
    fn objects_without_gpu_code_and_hostile_files_are_refused_or_clean() {
        assert!(scan(&object(".text", &[])).unwrap().code_of.is_empty());
        assert_eq!(scan(b"not an elf file at all"), Err(ElfScanError::NotElf64));
        // A section table that points past the end of the file.
        let mut bad = object(".nv_fatbin", &[]);
        let n = bad.len() as u64;
        bad[0x28..0x30].copy_from_slice(&(n - 8).to_le_bytes());
        assert!(matches!(scan(&bad), Err(ElfScanError::Bounds { .. })));
        // A symbol table whose size wraps around.
        let mut huge = object(".nv_fatbin", &[]);
        let shoff = u64_at(&huge, 0x28) as usize;
        let dynsym = shoff + 2 * 64;
        huge[dynsym + 0x20..dynsym + 0x28].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(scan(&huge), Err(ElfScanError::Bounds { .. })));
        // Names that run off their table are skipped, not read past.
        let mut odd = object(".nv_fatbin", &[]);
        odd[shoff + 64..shoff + 68].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(scan(&odd).unwrap().code_of.is_empty());
    }

    #[test]
    fn names_are_distinct_per_object_and_recognised() {
        let a = api_name("libcublas.so.13", "CUDA");
        assert_eq!(a, "private runtime: libcublas.so.13 (CUDA)");
        assert!(is_private_runtime(&a));
        assert!(!is_private_runtime("cudaGraphicsMapResources"));
    }
}
