//! Bounds-checked little-endian reads. Every read names the structure it is
//! reading so that a short input gives a precise [`CodeObjError::Truncated`].

use crate::error::{CodeObjError, Result};

/// A view of the whole input, so offsets in errors are absolute.
#[derive(Clone, Copy)]
pub(crate) struct Bytes<'a> {
    pub data: &'a [u8],
    pub format: &'static str,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8], format: &'static str) -> Self {
        Bytes { data, format }
    }

    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// `len` bytes at `offset`, or a Truncated error naming `what`.
    pub fn slice(&self, offset: u64, len: u64, what: &str) -> Result<&'a [u8]> {
        let end = offset.checked_add(len).ok_or_else(|| {
            CodeObjError::malformed(
                self.format,
                offset,
                format!("{what}: offset {offset} + size {len} overflows"),
            )
        })?;
        if end > self.len() {
            return Err(CodeObjError::Truncated {
                format: self.format,
                what: what.to_string(),
                offset,
                need: len,
                have: self.len(),
            });
        }
        // end <= data.len() <= usize::MAX, so these casts are lossless.
        Ok(&self.data[offset as usize..end as usize])
    }

    pub fn u16(&self, offset: u64, what: &str) -> Result<u16> {
        let s = self.slice(offset, 2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }

    pub fn u32(&self, offset: u64, what: &str) -> Result<u32> {
        let s = self.slice(offset, 4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    pub fn u64(&self, offset: u64, what: &str) -> Result<u64> {
        let s = self.slice(offset, 8, what)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(s);
        Ok(u64::from_le_bytes(b))
    }
}

pub(crate) fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

pub(crate) fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

pub(crate) fn align_up(v: u64, a: u64) -> Option<u64> {
    if a <= 1 {
        return Some(v);
    }
    let r = v % a;
    if r == 0 {
        Some(v)
    } else {
        v.checked_add(a - r)
    }
}
