//! Typed, length-prefixed payload fields: how an event's parameters are stored.
//!
//! A payload is a sequence of fields, each an 8-byte header then its value:
//! ```text
//! +0 2  field id (u16 LE; meaning defined per API in api.rs, shared ids in `fid`)
//! +2 1  type (FieldType)
//! +3 1  field flags (bit 0: value truncated at capture, bit 1: null pointer)
//! +4 4  value length (u32 LE)
//! +8 .  value
//! ```
//! A reader skips field ids it does not know, so new parameters need no version bump.
//! A field whose declared length runs past the payload is a decode error ("torn field"),
//! which is different from a field that is simply absent (`get` returns `None`).

use std::fmt;

use crate::hash::ContentHash;

pub const FIELD_HEADER_LEN: usize = 8;
pub const FIELD_FLAG_TRUNCATED: u8 = 1;
pub const FIELD_FLAG_NULL: u8 = 2;

/// The value types a field can hold.
/// Nested fields deeper than this are elided when rendered (the format itself nests only
/// a few levels: a launch's arguments, a struct's fields).
pub const MAX_RENDER_DEPTH: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FieldType {
    U64 = 1,
    I64 = 2,
    F64 = 3,
    Bytes = 4,
    Str = 5,
    /// An opaque runtime handle (stream, event, module, function) as captured.
    Handle = 6,
    /// A device address as captured.
    DevPtr = 7,
    /// A reference to a blob: 16-byte content hash then u64 LE length.
    Blob = 8,
    /// A nested payload (a sequence of fields), e.g. one kernel argument.
    Fields = 9,
    /// Packed u64 LE values, e.g. grid dimensions or a list of offsets.
    U64Array = 10,
}

impl FieldType {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            1 => FieldType::U64,
            2 => FieldType::I64,
            3 => FieldType::F64,
            4 => FieldType::Bytes,
            5 => FieldType::Str,
            6 => FieldType::Handle,
            7 => FieldType::DevPtr,
            8 => FieldType::Blob,
            9 => FieldType::Fields,
            10 => FieldType::U64Array,
            _ => return None,
        })
    }
}

/// A blob reference as stored in a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlobRef {
    pub hash: ContentHash,
    pub len: u64,
}

/// Builds a payload. Encoding cannot fail; lengths over u32 are the caller's bug and are
/// refused by [`PayloadWriter::bytes`] returning false (capture marks the event incomplete).
#[derive(Default, Clone, Debug)]
pub struct PayloadWriter {
    buf: Vec<u8>,
}

/// A field's header, written in one piece (launch records write a dozen fields each).
#[inline]
fn field_header(id: u16, ty: u8, flags: u8, len: u32) -> [u8; FIELD_HEADER_LEN] {
    let [i0, i1] = id.to_le_bytes();
    let [l0, l1, l2, l3] = len.to_le_bytes();
    [i0, i1, ty, flags, l0, l1, l2, l3]
}

impl PayloadWriter {
    pub fn new() -> Self {
        PayloadWriter {
            buf: Vec::with_capacity(128),
        }
    }
    /// A writer whose buffer holds `n` bytes before it grows.
    pub fn with_capacity(n: usize) -> Self {
        PayloadWriter {
            buf: Vec::with_capacity(n),
        }
    }
    /// Empties the writer, keeping its buffer's capacity.
    pub fn clear(&mut self) {
        self.buf.clear();
    }
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
    fn raw(&mut self, id: u16, ty: FieldType, flags: u8, value: &[u8]) -> bool {
        let Ok(len) = u32::try_from(value.len()) else {
            return false;
        };
        self.buf.reserve(FIELD_HEADER_LEN + value.len());
        self.buf
            .extend_from_slice(&field_header(id, ty as u8, flags, len));
        self.buf.extend_from_slice(value);
        true
    }
    /// A field of one 8-byte value, header and value appended in one piece (the launch
    /// path writes several per launch).
    #[inline]
    fn word(&mut self, id: u16, ty: FieldType, v: u64) {
        let mut f = [0u8; FIELD_HEADER_LEN + 8];
        f[..FIELD_HEADER_LEN].copy_from_slice(&field_header(id, ty as u8, 0, 8));
        f[FIELD_HEADER_LEN..].copy_from_slice(&v.to_le_bytes());
        self.buf.extend_from_slice(&f);
    }
    pub fn u64(&mut self, id: u16, v: u64) -> &mut Self {
        self.word(id, FieldType::U64, v);
        self
    }
    pub fn i64(&mut self, id: u16, v: i64) -> &mut Self {
        self.raw(id, FieldType::I64, 0, &v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, id: u16, v: f64) -> &mut Self {
        self.raw(id, FieldType::F64, 0, &v.to_le_bytes());
        self
    }
    pub fn handle(&mut self, id: u16, v: u64) -> &mut Self {
        self.word(id, FieldType::Handle, v);
        self
    }
    pub fn devptr(&mut self, id: u16, v: u64) -> &mut Self {
        self.word(id, FieldType::DevPtr, v);
        self
    }
    pub fn str(&mut self, id: u16, v: &str) -> &mut Self {
        self.raw(id, FieldType::Str, 0, v.as_bytes());
        self
    }
    /// Stores bytes; `truncated` says the value is only a prefix of what the call used.
    pub fn bytes(&mut self, id: u16, v: &[u8], truncated: bool) -> bool {
        let flags = if truncated { FIELD_FLAG_TRUNCATED } else { 0 };
        self.raw(id, FieldType::Bytes, flags, v)
    }
    pub fn null(&mut self, id: u16, ty: FieldType) -> &mut Self {
        self.raw(id, ty, FIELD_FLAG_NULL, &[]);
        self
    }
    pub fn blob(&mut self, id: u16, r: BlobRef) -> &mut Self {
        let mut v = [0u8; 24];
        v[..16].copy_from_slice(&r.hash.0);
        v[16..].copy_from_slice(&r.len.to_le_bytes());
        self.raw(id, FieldType::Blob, 0, &v);
        self
    }
    pub fn u64_array(&mut self, id: u16, vals: &[u64]) -> &mut Self {
        let Ok(len) = u32::try_from(vals.len() * 8) else {
            return self;
        };
        let header = field_header(id, FieldType::U64Array as u8, 0, len);
        if let [a, b, c] = vals {
            // Grid and block: one piece.
            let mut f = [0u8; FIELD_HEADER_LEN + 24];
            f[..FIELD_HEADER_LEN].copy_from_slice(&header);
            f[8..16].copy_from_slice(&a.to_le_bytes());
            f[16..24].copy_from_slice(&b.to_le_bytes());
            f[24..].copy_from_slice(&c.to_le_bytes());
            self.buf.extend_from_slice(&f);
            return self;
        }
        self.buf.reserve(FIELD_HEADER_LEN + len as usize);
        self.buf.extend_from_slice(&header);
        for x in vals {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
        self
    }
    /// Appends fields another PayloadWriter encoded (a cached, per-kernel prefix).
    pub fn extend_encoded(&mut self, fields: &PayloadWriter) -> &mut Self {
        self.buf.extend_from_slice(&fields.buf);
        self
    }
    /// A nested field whose fields `fill` writes straight into this buffer (no second
    /// writer, no copy); false, with nothing written, if they exceed a field's length.
    pub fn nested_with(&mut self, id: u16, fill: impl FnOnce(&mut PayloadWriter)) -> bool {
        let start = self.buf.len();
        self.buf
            .extend_from_slice(&field_header(id, FieldType::Fields as u8, 0, 0));
        let body = self.buf.len();
        fill(self);
        let Ok(len) = u32::try_from(self.buf.len() - body) else {
            self.buf.truncate(start);
            return false;
        };
        self.buf[body - 4..body].copy_from_slice(&len.to_le_bytes());
        true
    }
    /// A kernel argument as launch records hold it: the nested field `id` holding
    /// `offset` (u64 field `offset_id`), `size` (u64 `size_id`), the value's bytes
    /// (bytes `bytes_id`), then each of `arrays` that is not empty (u64 arrays: the
    /// words that point into allocations, the words that hold objects). The same bytes
    /// as writing them through [`nested_with`](Self::nested_with), with one header
    /// written in one piece: the launch path writes one per argument per launch.
    pub fn argument(
        &mut self,
        id: u16,
        (offset_id, offset): (u16, u64),
        (size_id, size): (u16, u64),
        (bytes_id, bytes): (u16, &[u8]),
        arrays: [(u16, &[u64]); 2],
    ) -> bool {
        let arrays_len: usize = arrays
            .iter()
            .filter(|(_, a)| !a.is_empty())
            .map(|(_, a)| FIELD_HEADER_LEN + 8 * a.len())
            .sum();
        let body = 2 * (FIELD_HEADER_LEN + 8) + FIELD_HEADER_LEN + bytes.len() + arrays_len;
        let (Ok(body32), Ok(bytes32)) = (u32::try_from(body), u32::try_from(bytes.len())) else {
            return false;
        };
        let mut head = [0u8; 4 * FIELD_HEADER_LEN + 16];
        head[..8].copy_from_slice(&field_header(id, FieldType::Fields as u8, 0, body32));
        head[8..16].copy_from_slice(&field_header(offset_id, FieldType::U64 as u8, 0, 8));
        head[16..24].copy_from_slice(&offset.to_le_bytes());
        head[24..32].copy_from_slice(&field_header(size_id, FieldType::U64 as u8, 0, 8));
        head[32..40].copy_from_slice(&size.to_le_bytes());
        head[40..48].copy_from_slice(&field_header(bytes_id, FieldType::Bytes as u8, 0, bytes32));
        self.buf.reserve(FIELD_HEADER_LEN + body);
        self.buf.extend_from_slice(&head);
        self.buf.extend_from_slice(bytes);
        for (array_id, a) in arrays {
            if !a.is_empty() {
                self.u64_array(array_id, a);
            }
        }
        true
    }
    pub fn nested(&mut self, id: u16, inner: &PayloadWriter) -> bool {
        self.raw(id, FieldType::Fields, 0, &inner.buf)
    }
}

/// One decoded field, borrowing from the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    pub id: u16,
    /// The raw type byte; `FieldType::from_u8` is `None` for types newer than this reader.
    pub ty: u8,
    pub flags: u8,
    pub value: &'a [u8],
}

/// Why a payload could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldError {
    TornHeader {
        at: usize,
        available: usize,
    },
    TornValue {
        id: u16,
        at: usize,
        needed: u32,
        available: usize,
    },
    WrongType {
        id: u16,
        expected: FieldType,
        found: u8,
    },
    WrongLength {
        id: u16,
        expected: usize,
        found: usize,
    },
    Missing {
        id: u16,
        name: &'static str,
    },
    Truncated {
        id: u16,
    },
    BadUtf8 {
        id: u16,
    },
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldError::TornHeader { at, available } => {
                write!(f, "field header at payload byte {at} is torn ({available} of 8 bytes)")
            }
            FieldError::TornValue { id, at, needed, available } => write!(
                f,
                "field {id} at payload byte {at} is torn: value needs {needed} bytes, {available} remain"
            ),
            FieldError::WrongType { id, expected, found } => {
                write!(f, "field {id} has type {found}, expected {expected:?}")
            }
            FieldError::WrongLength { id, expected, found } => {
                write!(f, "field {id} is {found} bytes, expected {expected}")
            }
            FieldError::Missing { id, name } => write!(f, "field {id} ({name}) is absent"),
            FieldError::Truncated { id } => {
                write!(f, "field {id} was truncated at capture; its value is incomplete")
            }
            FieldError::BadUtf8 { id } => write!(f, "field {id} is not valid UTF-8"),
        }
    }
}

impl std::error::Error for FieldError {}

/// Iterates the fields of a payload, stopping with an error at a torn field.
pub struct FieldIter<'a> {
    buf: &'a [u8],
    at: usize,
    failed: bool,
}

impl<'a> Iterator for FieldIter<'a> {
    type Item = Result<Field<'a>, FieldError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.buf.len() {
            return None;
        }
        let rest = &self.buf[self.at..];
        if rest.len() < FIELD_HEADER_LEN {
            self.failed = true;
            return Some(Err(FieldError::TornHeader {
                at: self.at,
                available: rest.len(),
            }));
        }
        let id = u16::from_le_bytes([rest[0], rest[1]]);
        let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
        let available = rest.len() - FIELD_HEADER_LEN;
        if len as usize > available {
            self.failed = true;
            return Some(Err(FieldError::TornValue {
                id,
                at: self.at,
                needed: len,
                available,
            }));
        }
        let field = Field {
            id,
            ty: rest[2],
            flags: rest[3],
            value: &rest[FIELD_HEADER_LEN..FIELD_HEADER_LEN + len as usize],
        };
        self.at += FIELD_HEADER_LEN + len as usize;
        Some(Ok(field))
    }
}

pub fn fields(payload: &[u8]) -> FieldIter<'_> {
    FieldIter {
        buf: payload,
        at: 0,
        failed: false,
    }
}

/// A decoded payload with typed look-ups by field id.
#[derive(Clone, Debug)]
pub struct Payload<'a> {
    fields: Vec<Field<'a>>,
}

impl<'a> Payload<'a> {
    /// Decodes the whole payload; a torn field is an error, unknown ids and types are kept.
    pub fn parse(payload: &'a [u8]) -> Result<Self, FieldError> {
        // A field takes at least 8 header bytes and most carry 8 or more of value: sized
        // once, the list is not grown field by field (replay parses every event).
        let mut list = Vec::with_capacity((payload.len() / 16).clamp(4, 64));
        for f in fields(payload) {
            list.push(f?);
        }
        Ok(Payload { fields: list })
    }
    pub fn iter(&self) -> impl Iterator<Item = &Field<'a>> {
        self.fields.iter()
    }
    /// The first field with `id`, or `None` if absent.
    pub fn get(&self, id: u16) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.id == id)
    }
    /// Every field with `id`, in order (repeated fields, e.g. kernel arguments).
    pub fn all(&self, id: u16) -> impl Iterator<Item = &Field<'a>> {
        self.fields.iter().filter(move |f| f.id == id)
    }
    fn typed(&self, id: u16, name: &'static str, ty: FieldType) -> Result<&Field<'a>, FieldError> {
        let f = self.get(id).ok_or(FieldError::Missing { id, name })?;
        f.expect_type(ty)?;
        Ok(f)
    }
    pub fn u64(&self, id: u16, name: &'static str) -> Result<u64, FieldError> {
        self.typed(id, name, FieldType::U64)?.as_u64()
    }
    pub fn i64(&self, id: u16, name: &'static str) -> Result<i64, FieldError> {
        Ok(self.typed(id, name, FieldType::I64)?.as_u64()? as i64)
    }
    pub fn handle(&self, id: u16, name: &'static str) -> Result<u64, FieldError> {
        self.typed(id, name, FieldType::Handle)?.as_u64()
    }
    pub fn devptr(&self, id: u16, name: &'static str) -> Result<u64, FieldError> {
        self.typed(id, name, FieldType::DevPtr)?.as_u64()
    }
    pub fn str(&self, id: u16, name: &'static str) -> Result<&'a str, FieldError> {
        self.typed(id, name, FieldType::Str)?.as_str()
    }
    pub fn blob(&self, id: u16, name: &'static str) -> Result<BlobRef, FieldError> {
        self.typed(id, name, FieldType::Blob)?.as_blob()
    }
    pub fn bytes(&self, id: u16, name: &'static str) -> Result<&'a [u8], FieldError> {
        let f = self.typed(id, name, FieldType::Bytes)?;
        if f.flags & FIELD_FLAG_TRUNCATED != 0 {
            return Err(FieldError::Truncated { id });
        }
        Ok(f.value)
    }
    pub fn u64_array(&self, id: u16, name: &'static str) -> Result<Vec<u64>, FieldError> {
        self.typed(id, name, FieldType::U64Array)?.as_u64_array()
    }
    /// A u64 array of exactly `N` elements (a grid or block), without allocating.
    pub fn u64_array_of<const N: usize>(
        &self,
        id: u16,
        name: &'static str,
    ) -> Result<[u64; N], FieldError> {
        let f = self.typed(id, name, FieldType::U64Array)?;
        if f.value.len() != N * 8 {
            return Err(FieldError::WrongLength {
                id,
                expected: N * 8,
                found: f.value.len(),
            });
        }
        let mut out = [0u64; N];
        for (o, c) in out.iter_mut().zip(f.value.chunks_exact(8)) {
            *o = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        }
        Ok(out)
    }
}

impl<'a> Field<'a> {
    pub fn field_type(&self) -> Option<FieldType> {
        FieldType::from_u8(self.ty)
    }
    pub fn is_null(&self) -> bool {
        self.flags & FIELD_FLAG_NULL != 0
    }
    pub fn expect_type(&self, ty: FieldType) -> Result<(), FieldError> {
        if self.ty != ty as u8 {
            return Err(FieldError::WrongType {
                id: self.id,
                expected: ty,
                found: self.ty,
            });
        }
        Ok(())
    }
    pub fn as_u64(&self) -> Result<u64, FieldError> {
        let b: [u8; 8] = self.value.try_into().map_err(|_| FieldError::WrongLength {
            id: self.id,
            expected: 8,
            found: self.value.len(),
        })?;
        Ok(u64::from_le_bytes(b))
    }
    pub fn as_str(&self) -> Result<&'a str, FieldError> {
        std::str::from_utf8(self.value).map_err(|_| FieldError::BadUtf8 { id: self.id })
    }
    pub fn as_blob(&self) -> Result<BlobRef, FieldError> {
        if self.value.len() != 24 {
            return Err(FieldError::WrongLength {
                id: self.id,
                expected: 24,
                found: self.value.len(),
            });
        }
        let mut h = [0u8; 16];
        h.copy_from_slice(&self.value[..16]);
        let mut l = [0u8; 8];
        l.copy_from_slice(&self.value[16..]);
        Ok(BlobRef {
            hash: ContentHash(h),
            len: u64::from_le_bytes(l),
        })
    }
    pub fn as_u64_array(&self) -> Result<Vec<u64>, FieldError> {
        if !self.value.len().is_multiple_of(8) {
            return Err(FieldError::WrongLength {
                id: self.id,
                expected: self.value.len() / 8 * 8,
                found: self.value.len(),
            });
        }
        Ok(self
            .value
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }
    pub fn as_nested(&self) -> Result<Payload<'a>, FieldError> {
        self.expect_type(FieldType::Fields)?;
        Payload::parse(self.value)
    }
    /// A short human-readable rendering for `hrr-replay --events`.
    pub fn render(&self) -> String {
        self.render_at(0)
    }

    /// `render` at a nesting depth: fields nested deeper than [`MAX_RENDER_DEPTH`] are
    /// elided, so a hostile record cannot exhaust the stack.
    fn render_at(&self, depth: usize) -> String {
        if self.is_null() {
            return "null".into();
        }
        match self.field_type() {
            Some(FieldType::U64) => self
                .as_u64()
                .map(|v| v.to_string())
                .unwrap_or_else(|e| e.to_string()),
            Some(FieldType::I64) => self
                .as_u64()
                .map(|v| (v as i64).to_string())
                .unwrap_or_else(|e| e.to_string()),
            Some(FieldType::F64) => self
                .as_u64()
                .map(|v| f64::from_bits(v).to_string())
                .unwrap_or_else(|e| e.to_string()),
            Some(FieldType::Handle) | Some(FieldType::DevPtr) => self
                .as_u64()
                .map(|v| format!("{v:#x}"))
                .unwrap_or_else(|e| e.to_string()),
            Some(FieldType::Str) => match self.as_str() {
                Ok(s) => format!("{s:?}"),
                Err(e) => e.to_string(),
            },
            Some(FieldType::Blob) => match self.as_blob() {
                Ok(b) => format!("blob:{}({}B)", b.hash, b.len),
                Err(e) => e.to_string(),
            },
            Some(FieldType::U64Array) => match self.as_u64_array() {
                Ok(v) => format!("{v:?}"),
                Err(e) => e.to_string(),
            },
            Some(FieldType::Fields) if depth >= MAX_RENDER_DEPTH => {
                format!("{{… nested deeper than {MAX_RENDER_DEPTH}}}")
            }
            Some(FieldType::Fields) => match self.as_nested() {
                Ok(p) => {
                    let inner: Vec<String> = p
                        .iter()
                        .map(|f| format!("{}={}", f.id, f.render_at(depth + 1)))
                        .collect();
                    format!("{{{}}}", inner.join(" "))
                }
                Err(e) => format!("<{e}>"),
            },
            Some(FieldType::Bytes) => {
                let shown: String = self
                    .value
                    .iter()
                    .take(16)
                    .map(|b| format!("{b:02x}"))
                    .collect();
                let more = if self.value.len() > 16 { "…" } else { "" };
                let trunc = if self.flags & FIELD_FLAG_TRUNCATED != 0 {
                    " TRUNCATED"
                } else {
                    ""
                };
                format!("0x{shown}{more}({}B{trunc})", self.value.len())
            }
            None => format!("<unknown type {} ({}B)>", self.ty, self.value.len()),
        }
    }
}

#[cfg(test)]
mod tests;
