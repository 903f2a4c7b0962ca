//! `CodeCache`: code objects loaded on the replay device, keyed by blob, and
//! the functions resolved in them.
//!
//! Modules are loaded lazily, when a launch first needs one: a capture may
//! record hundreds of code objects of which a replay launches a handful.

use std::collections::HashMap;

use crate::device::{Device, DeviceError, Handle};
use crate::engine::launch_check::check_code_object;
use hrr_core::hex::BlobId;

#[derive(Debug, Default)]
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
    #[error("code object {0}: {1}")]
    Blob(BlobId, String),
    #[error("code object {0}: {1}")]
    Select(BlobId, String),
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
        fetch: impl FnOnce(&BlobId) -> Result<Vec<u8>, String>,
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
        fetch: impl FnOnce(&BlobId) -> Result<Vec<u8>, String>,
    ) -> Result<Handle, CodeError> {
        if let Some(m) = self.modules.get(&code) {
            return Ok(*m);
        }
        let bytes = fetch(&code).map_err(|e| CodeError::Blob(code, e))?;
        let m = load_for_device(dev, &bytes).map_err(|e| match e {
            LoadError::Select(msg) => CodeError::Select(code, msg),
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
    Select(String),
    Device(DeviceError),
}

/// Loads the device's code object: from a clang offload bundle, the entry
/// for the device's target, or, when the backend does not know its target,
/// the first entry the runtime accepts. Any other image (a bare ELF, a CUDA
/// fat binary) goes to the runtime unchanged.
fn load_for_device(dev: &mut dyn Device, bytes: &[u8]) -> Result<Handle, LoadError> {
    use hrr_codeobj::{ImageKind, bundle, identify};
    check_code_object(bytes).map_err(LoadError::Select)?;
    let bundle_bytes = match identify(bytes) {
        ImageKind::Bundle => std::borrow::Cow::Borrowed(bytes),
        ImageKind::CompressedBundle => std::borrow::Cow::Owned(
            bundle::decompress(bytes).map_err(|e| LoadError::Select(e.to_string()))?,
        ),
        _ => return dev.module_load(bytes).map_err(LoadError::Device),
    };
    let target = dev.target();
    if !target.is_empty() {
        let image =
            bundle::select(&bundle_bytes, &target).map_err(|e| LoadError::Select(e.to_string()))?;
        check_code_object(&image)
            .map_err(|why| LoadError::Select(format!("entry for {target}: {why}")))?;
        return dev.module_load(&image).map_err(LoadError::Device);
    }
    let parsed = bundle::parse(&bundle_bytes).map_err(|e| LoadError::Select(e.to_string()))?;
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
        || {
            LoadError::Select(format!(
                "bundle has no code object (entries: {})",
                parsed.ids().join(", ")
            ))
        },
        LoadError::Device,
    ))
}
