//! Small ELF helpers on top of the `object` crate.

use object::read::elf::{FileHeader, SectionHeader};
use object::{Endianness, elf};

use crate::error::{CodeObjError, Result};

/// `e_machine` for AMDGPU code objects.
pub const EM_AMDGPU: u16 = 224;
/// `e_machine` for NVIDIA cubins.
pub const EM_CUDA: u16 = 190;
/// `e_machine` for x86-64 (CPU code objects built on an x86-64 host).
pub const EM_X86_64: u16 = 62;
/// `e_machine` for AArch64.
pub const EM_AARCH64: u16 = 183;

/// True when `data` starts with the ELF magic.
pub fn is_elf(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF")
}

/// `e_machine` of an ELF header, read by hand (works on 32 and 64 bit, both
/// endians) without parsing the rest of the file.
pub fn machine(data: &[u8]) -> Option<u16> {
    if !is_elf(data) || data.len() < 20 {
        return None;
    }
    let b = [data[18], data[19]];
    match data[5] {
        1 => Some(u16::from_le_bytes(b)),
        2 => Some(u16::from_be_bytes(b)),
        _ => None,
    }
}

pub(crate) fn elf_err(e: object::read::Error) -> CodeObjError {
    CodeObjError::Elf {
        what: e.to_string(),
    }
}

/// An ELF note: (owner name, type, descriptor).
pub(crate) type Note<'a> = (&'a [u8], u32, &'a [u8]);

/// A parsed 64-bit ELF: header, endian and section table.
pub(crate) struct Elf64<'a> {
    pub data: &'a [u8],
    pub header: &'a elf::FileHeader64<Endianness>,
    pub endian: Endianness,
    pub sections: object::read::elf::SectionTable<'a, elf::FileHeader64<Endianness>>,
}

impl<'a> Elf64<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        if !is_elf(data) {
            return Err(CodeObjError::BadMagic {
                format: "ELF",
                offset: 0,
                expected: "7f454c46 (\\x7fELF)".into(),
                found: crate::error::hex_prefix(data, 4),
            });
        }
        if data.get(4) != Some(&2) {
            return Err(CodeObjError::Unsupported {
                format: "ELF",
                what: format!(
                    "class {} (only 64-bit ELF code objects exist)",
                    data.get(4).copied().unwrap_or(0)
                ),
            });
        }
        let header = elf::FileHeader64::<Endianness>::parse(data).map_err(elf_err)?;
        let endian = header.endian().map_err(elf_err)?;
        let sections = header.sections(endian, data).map_err(elf_err)?;
        Ok(Elf64 {
            data,
            header,
            endian,
            sections,
        })
    }

    pub fn machine(&self) -> u16 {
        self.header.e_machine(self.endian)
    }

    pub fn flags(&self) -> u32 {
        self.header.e_flags(self.endian)
    }

    /// Sections as (name, header), names that cannot be read skipped.
    pub fn named_sections(
        &self,
    ) -> impl Iterator<Item = (&'a [u8], &'a elf::SectionHeader64<Endianness>)> + '_ {
        self.sections
            .iter()
            .filter_map(move |s| Some((self.sections.section_name(self.endian, s).ok()?, s)))
    }

    pub fn section_data(
        &self,
        s: &'a elf::SectionHeader64<Endianness>,
        name: &str,
    ) -> Result<&'a [u8]> {
        if s.sh_type(self.endian) == elf::SHT_NOBITS {
            return Ok(&[]);
        }
        s.data(self.endian, self.data)
            .map_err(|_| CodeObjError::Elf {
                what: format!(
                    "section {name}: data [{}, +{}) lies outside the {} byte file",
                    s.sh_offset(self.endian),
                    s.sh_size(self.endian),
                    self.data.len()
                ),
            })
    }

    /// Every ELF note (from SHT_NOTE sections, or from PT_NOTE segments when
    /// the file has no note sections) as (owner name, type, descriptor).
    pub fn notes(&self) -> Result<Vec<Note<'a>>> {
        let mut out = Vec::new();
        let mut saw_section = false;
        for s in self.sections.iter() {
            let Some(mut it) = s.notes(self.endian, self.data).map_err(elf_err)? else {
                continue;
            };
            saw_section = true;
            while let Some(n) = it.next().map_err(elf_err)? {
                out.push((n.name(), n.n_type(self.endian), n.desc()));
            }
        }
        if !saw_section {
            use object::read::elf::ProgramHeader;
            for p in self
                .header
                .program_headers(self.endian, self.data)
                .map_err(elf_err)?
            {
                let Some(mut it) = p.notes(self.endian, self.data).map_err(elf_err)? else {
                    continue;
                };
                while let Some(n) = it.next().map_err(elf_err)? {
                    out.push((n.name(), n.n_type(self.endian), n.desc()));
                }
            }
        }
        Ok(out)
    }
}
