//! `CodeCache`: code objects loaded on the replay device, keyed by blob, and
//! the functions resolved in them.
//!
//! Modules are loaded lazily, when a launch first needs one: a capture may
//! record hundreds of code objects of which a replay launches a handful.

use std::collections::HashMap;

use crate::device::{Device, DeviceError, Handle};
use crate::engine::launch_check::{CodeObjectCheckError, check_code_object};
use hrr_codeobj::CodeObjError;
use hrr_core::blob_store::BlobError;
use hrr_core::hex::BlobId;

#[derive(Debug, Default)]
/// Loaded modules and resolved functions, by code blob.
pub struct CodeCache {
    modules: HashMap<BlobId, Handle>,
    /// Per code object, by kernel name: looked up with `&str`, so a launch
    /// allocates nothing here.
    functions: HashMap<BlobId, HashMap<String, Handle>>,
    /// The last function returned: launch loops hit it without hashing.
    last: Option<(BlobId, String, Handle)>,
}

/// Why a launch's code could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    /// The code object's blob could not be read.
    #[error("code object {code}")]
    Blob {
        /// The code object.
        code: BlobId,
        /// Why.
        #[source]
        source: BlobError,
    },
    /// No entry of the code object's offload bundle could be picked.
    #[error("code object {code}")]
    Select {
        /// The code object.
        code: BlobId,
        /// Why.
        #[source]
        source: CodeObjError,
    },
    /// The code object is one no runtime can be handed safely (empty, or
    /// its headers reach past the blob).
    #[error("code object {code}")]
    Refused {
        /// The code object.
        code: BlobId,
        /// Why.
        #[source]
        source: CodeObjectCheckError,
    },
    /// The bundle's entry for the device's target is one no runtime can be
    /// handed safely.
    #[error("code object {code}: entry for {target}")]
    EntryRefused {
        /// The code object.
        code: BlobId,
        /// The device's target.
        target: String,
        /// Why.
        #[source]
        source: CodeObjectCheckError,
    },
    /// The bundle holds no code object at all.
    #[error("code object {code}: bundle has no code object (entries: {entries})")]
    EmptyBundle {
        /// The code object.
        code: BlobId,
        /// The bundle's entry ids, comma-separated.
        entries: String,
    },
    /// The runtime refused the code object or the kernel.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

impl CodeCache {
    /// The live function `name` in code blob `code`, loading it on first use.
    /// `fetch` supplies the blob's bytes.
    pub fn function(
        &mut self,
        dev: &mut dyn Device,
        code: BlobId,
        name: &str,
        fetch: impl FnOnce(&BlobId) -> Result<Vec<u8>, BlobError>,
    ) -> Result<Handle, CodeError> {
        if let Some((c, n, f)) = &self.last
            && *c == code
            && n == name
        {
            return Ok(*f);
        }
        if let Some(&f) = self.functions.get(&code).and_then(|m| m.get(name)) {
            self.last = Some((code, name.to_string(), f));
            return Ok(f);
        }
        let module = self.module(dev, code, fetch)?;
        let f = dev.function(module, name)?;
        self.functions
            .entry(code)
            .or_default()
            .insert(name.to_string(), f);
        self.last = Some((code, name.to_string(), f));
        Ok(f)
    }

    /// The live module of code blob `code`, loading it on first use.
    pub fn module(
        &mut self,
        dev: &mut dyn Device,
        code: BlobId,
        fetch: impl FnOnce(&BlobId) -> Result<Vec<u8>, BlobError>,
    ) -> Result<Handle, CodeError> {
        if let Some(m) = self.modules.get(&code) {
            return Ok(*m);
        }
        let bytes = fetch(&code).map_err(|source| CodeError::Blob { code, source })?;
        let m = load_for_device(dev, &bytes).map_err(|e| match e {
            LoadError::Select(source) => CodeError::Select { code, source },
            LoadError::Refused(source) => CodeError::Refused { code, source },
            LoadError::Entry { target, source } => CodeError::EntryRefused {
                code,
                target,
                source,
            },
            LoadError::Empty(entries) => CodeError::EmptyBundle { code, entries },
            LoadError::Device(d) => CodeError::Device(d),
        })?;
        self.modules.insert(code, m);
        Ok(m)
    }

    /// Unloads every module (end of a replay iteration).
    pub fn unload_all(&mut self, dev: &mut dyn Device) {
        for (_, m) in self.modules.drain() {
            let _ = dev.module_unload(m);
        }
        self.functions.clear();
        self.last = None;
    }
}

enum LoadError {
    Select(CodeObjError),
    /// The blob itself failed [`check_code_object`].
    Refused(CodeObjectCheckError),
    /// The bundle entry for the target failed it.
    Entry {
        target: String,
        source: CodeObjectCheckError,
    },
    /// The bundle's entry ids.
    Empty(String),
    Device(DeviceError),
}

/// Loads the device's code object: from a clang offload bundle, the entry
/// for the device's target, or, when the backend does not know its target,
/// the first entry the runtime accepts. Any other image (a bare ELF, a CUDA
/// fat binary) goes to the runtime unchanged.
fn load_for_device(dev: &mut dyn Device, bytes: &[u8]) -> Result<Handle, LoadError> {
    use hrr_codeobj::{ImageKind, bundle, identify};
    check_code_object(bytes).map_err(LoadError::Refused)?;
    let bundle_bytes = match identify(bytes) {
        ImageKind::Bundle => std::borrow::Cow::Borrowed(bytes),
        ImageKind::CompressedBundle => {
            std::borrow::Cow::Owned(bundle::decompress(bytes).map_err(LoadError::Select)?)
        }
        _ => return dev.module_load(bytes).map_err(LoadError::Device),
    };
    let target = dev.target();
    if !target.is_empty() {
        let image = bundle::select(&bundle_bytes, &target).map_err(LoadError::Select)?;
        check_code_object(&image).map_err(|source| LoadError::Entry { target, source })?;
        return dev.module_load(&image).map_err(LoadError::Device);
    }
    let parsed = bundle::parse(&bundle_bytes).map_err(LoadError::Select)?;
    let mut last = None;
    for entry in &parsed.entries {
        let Ok(image) = entry.data(&bundle_bytes) else {
            continue;
        };
        if check_code_object(image).is_err() {
            continue;
        }
        match dev.module_load(image) {
            Ok(m) => return Ok(m),
            Err(e) => last = Some(e),
        }
    }
    Err(last.map_or_else(
        || LoadError::Empty(parsed.ids().join(", ")),
        LoadError::Device,
    ))
}
