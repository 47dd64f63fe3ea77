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
    pub fn u64(&mut self, id: u16, v: u64) -> &mut Self {
        self.raw(id, FieldType::U64, 0, &v.to_le_bytes());
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
        self.raw(id, FieldType::Handle, 0, &v.to_le_bytes());
        self
    }
    pub fn devptr(&mut self, id: u16, v: u64) -> &mut Self {
        self.raw(id, FieldType::DevPtr, 0, &v.to_le_bytes());
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
        self.buf.reserve(FIELD_HEADER_LEN + len as usize);
        self.buf
            .extend_from_slice(&field_header(id, FieldType::U64Array as u8, 0, len));
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
mod tests {
    #[test]
    fn nested_with_encodes_as_nested() {
        let mut inner = PayloadWriter::new();
        inner.u64(1, 7).u64_array(2, &[3, 4]);
        let mut a = PayloadWriter::new();
        a.u64(9, 1).nested(5, &inner);
        let mut b = PayloadWriter::new();
        b.u64(9, 1).nested_with(5, |w| {
            w.u64(1, 7).u64_array(2, &[3, 4]);
        });
        assert_eq!(a.as_bytes(), b.as_bytes());
    }

    use super::*;

    #[test]
    fn every_field_type_round_trips() {
        let mut inner = PayloadWriter::new();
        inner.u64(1, 8).devptr(2, 0xdead_0000);
        let mut w = PayloadWriter::new();
        w.u64(1, 5)
            .i64(2, -7)
            .f64(3, 1.5)
            .handle(4, 0x10)
            .devptr(5, 0x7f00)
            .str(6, "kern");
        assert!(w.bytes(7, &[1, 2, 3], false));
        w.blob(
            8,
            BlobRef {
                hash: ContentHash::of(b"x"),
                len: 1,
            },
        );
        w.u64_array(9, &[1, 2, 3]);
        assert!(w.nested(10, &inner));
        w.null(11, FieldType::DevPtr);
        let bytes = w.finish();
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(p.u64(1, "a").unwrap(), 5);
        assert_eq!(p.i64(2, "b").unwrap(), -7);
        assert_eq!(f64::from_bits(p.get(3).unwrap().as_u64().unwrap()), 1.5);
        assert_eq!(p.handle(4, "d").unwrap(), 0x10);
        assert_eq!(p.devptr(5, "e").unwrap(), 0x7f00);
        assert_eq!(p.str(6, "f").unwrap(), "kern");
        assert_eq!(p.bytes(7, "g").unwrap(), &[1, 2, 3]);
        assert_eq!(p.blob(8, "h").unwrap().hash, ContentHash::of(b"x"));
        assert_eq!(p.u64_array(9, "i").unwrap(), vec![1, 2, 3]);
        let n = p.get(10).unwrap().as_nested().unwrap();
        assert_eq!(n.devptr(2, "inner").unwrap(), 0xdead_0000);
        assert!(p.get(11).unwrap().is_null());
    }

    #[test]
    fn unknown_fields_are_skipped_and_absent_differs_from_torn() {
        let mut w = PayloadWriter::new();
        w.u64(1, 5);
        let mut bytes = w.finish();
        // A field from a newer writer: unknown id 900, unknown type 200.
        bytes.extend_from_slice(&900u16.to_le_bytes());
        bytes.push(200);
        bytes.push(0);
        bytes.extend_from_slice(&2u32.to_le_bytes());
        bytes.extend_from_slice(&[9, 9]);
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(p.u64(1, "a").unwrap(), 5);
        assert_eq!(p.u64(2, "b"), Err(FieldError::Missing { id: 2, name: "b" }));
        // Tear the last value: decoding names the torn field.
        let torn = &bytes[..bytes.len() - 1];
        assert!(matches!(
            Payload::parse(torn),
            Err(FieldError::TornValue {
                id: 900,
                needed: 2,
                available: 1,
                ..
            })
        ));
    }

    #[test]
    fn truncated_bytes_are_refused_by_typed_access() {
        let mut w = PayloadWriter::new();
        w.bytes(1, &[1, 2], true);
        let bytes = w.finish();
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(p.bytes(1, "a"), Err(FieldError::Truncated { id: 1 }));
    }

    #[test]
    fn deep_nesting_renders_without_recursing_without_bound() {
        // 100,000 levels of nested fields, each an 8-byte field header around the next.
        let depth = 100_000usize;
        let mut v: Vec<u8> = Vec::with_capacity(depth * 8);
        for level in 0..depth {
            v.extend_from_slice(&1u16.to_le_bytes());
            v.push(FieldType::Fields as u8);
            v.push(0);
            v.extend_from_slice(&(((depth - level - 1) * 8) as u32).to_le_bytes());
        }
        let p = Payload::parse(&v).unwrap();
        let shown = p.iter().next().unwrap().render();
        assert!(
            shown.contains("nested deeper than 16"),
            "{}",
            &shown[..shown.len().min(200)]
        );
    }
}
