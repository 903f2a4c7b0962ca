//! The one error type of this crate. Every variant says *what* went wrong and
//! *where*: a byte offset, an entry index or a field path.

/// Error returned by every parser in this crate.
///
/// Parsers never panic on untrusted input; corrupt, truncated and hostile
/// images come back as one of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeObjError {
    /// The input ends before a structure it announces.
    #[error("{format}: truncated {what} at offset {offset}: need {need} bytes, input has {have}")]
    Truncated {
        /// The format being read.
        format: &'static str,
        /// The structure cut short.
        what: String,
        /// Its offset.
        offset: u64,
        /// Bytes it needs.
        need: u64,
        /// Bytes the input has from there.
        have: u64,
    },
    /// The magic number at the start of a structure is wrong.
    #[error("{format}: bad magic at offset {offset}: expected {expected}, found {found}")]
    BadMagic {
        /// The format being read.
        format: &'static str,
        /// The structure's offset.
        offset: u64,
        /// The magic expected.
        expected: String,
        /// The bytes found.
        found: String,
    },
    /// A structural field is inconsistent (bad offset, overflow, impossible count).
    #[error("{format}: {what} (at offset {offset})")]
    Malformed {
        /// The format being read.
        format: &'static str,
        /// The field's offset.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// One entry of a table (bundle entry, fatbin entry, note) is bad.
    #[error("{format}: entry {index}: {what}")]
    BadEntry {
        /// The format being read.
        format: &'static str,
        /// The entry's index.
        index: usize,
        /// What is wrong.
        what: String,
    },
    /// A metadata field is missing or has the wrong type or value.
    /// `field` is a path such as `amdhsa.kernels[2].args[0].offset`.
    #[error("{format}: field `{field}`: {what}")]
    BadField {
        /// The format being read.
        format: &'static str,
        /// Its path.
        field: String,
        /// What is wrong.
        what: String,
    },
    /// A well-formed input in a variant this crate does not handle.
    #[error("{format}: unsupported {what}")]
    Unsupported {
        /// The format being read.
        format: &'static str,
        /// What is not handled.
        what: String,
    },
    /// Compressed data could not be inflated, or inflated to the wrong size.
    #[error("{format}: decompression failed at offset {offset}: {what}")]
    Decompress {
        /// The format being read.
        format: &'static str,
        /// The compressed data's offset.
        offset: u64,
        /// What failed.
        what: String,
    },
    /// The ELF container itself could not be read.
    #[error("ELF: {what}")]
    Elf {
        /// The ELF reader's message.
        what: String,
    },
    /// The image has no kernel metadata where it should have some.
    #[error("{format}: no kernel metadata: {what}")]
    NoMetadata {
        /// The format being read.
        format: &'static str,
        /// Where it was looked for.
        what: String,
    },
    /// No bundle entry matches the device target.
    #[error("no code object for target `{target}`; available targets: [{}]", available.join(", "))]
    NoMatchingTarget {
        /// The device's target.
        target: String,
        /// The bundle's targets.
        available: Vec<String>,
    },
    /// The image is a container holding several code objects: pick one first.
    #[error("image is a {format} holding code objects for [{}]; pick one first with {hint}", targets.join(", "))]
    NeedsSelect {
        /// The container's format.
        format: &'static str,
        /// What picks one (a function name).
        hint: &'static str,
        /// The targets it holds.
        targets: Vec<String>,
    },
    /// The bytes are no code object format this crate knows.
    #[error(
        "unrecognised code object: first bytes {magic} (expected ELF, __CLANG_OFFLOAD_BUNDLE__, CCOB or a CUDA fatbin)"
    )]
    Unrecognised {
        /// The first bytes, in hex.
        magic: String,
    },
}

impl CodeObjError {
    /// For a [`CodeObjError::Truncated`] error: how many bytes from the start of
    /// the input the parser needs to get further (`offset + need`).
    ///
    /// Lets a caller that only holds a pointer (e.g. `__hipRegisterFatBinary`)
    /// read a header incrementally: start with a small slice and grow it.
    pub fn needed_len(&self) -> Option<u64> {
        match self {
            CodeObjError::Truncated { offset, need, .. } => offset.checked_add(*need),
            _ => None,
        }
    }

    pub(crate) fn malformed(format: &'static str, offset: u64, what: impl Into<String>) -> Self {
        CodeObjError::Malformed {
            format,
            offset,
            what: what.into(),
        }
    }

    pub(crate) fn field(
        format: &'static str,
        field: impl Into<String>,
        what: impl Into<String>,
    ) -> Self {
        CodeObjError::BadField {
            format,
            field: field.into(),
            what: what.into(),
        }
    }

    pub(crate) fn entry(format: &'static str, index: usize, what: impl Into<String>) -> Self {
        CodeObjError::BadEntry {
            format,
            index,
            what: what.into(),
        }
    }
}

/// Shorthand for this crate's results.
pub type Result<T, E = CodeObjError> = std::result::Result<T, E>;

/// Hex dump of up to 8 leading bytes, for error messages.
pub(crate) fn hex_prefix(data: &[u8], n: usize) -> String {
    let mut s = String::new();
    for b in data.iter().take(n) {
        s.push_str(&format!("{b:02x}"));
    }
    if s.is_empty() {
        s.push_str("(empty)");
    }
    s
}
