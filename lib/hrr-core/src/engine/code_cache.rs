//! `CodeCache`: code objects loaded on the replay device, keyed by blob, and
//! the functions resolved in them.
//!
//! Modules are loaded lazily, when a launch first needs one: a capture may
//! record hundreds of code objects of which a replay launches a handful.

use std::collections::HashMap;

use crate::device::{Device, DeviceError, Handle};
use crate::hex::BlobId;

#[derive(Debug, Default)]
pub struct CodeCache {
    modules: HashMap<BlobId, Handle>,
    functions: HashMap<(BlobId, String), Handle>,
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
        if let Some(f) = self.functions.get(&(code, name.to_string())) {
            return Ok(*f);
        }
        let module = match self.modules.get(&code) {
            Some(m) => *m,
            None => {
                let bytes = fetch(&code).map_err(|e| CodeError::Blob(code, e))?;
                let image = select_image(&bytes, &dev.target())
                    .map_err(|e| CodeError::Select(code, e))?;
                let m = dev.module_load(&image)?;
                self.modules.insert(code, m);
                m
            }
        };
        let f = dev.function(module, name)?;
        self.functions.insert((code, name.to_string()), f);
        Ok(f)
    }

    /// Unloads every module (end of a replay iteration).
    pub fn unload_all(&mut self, dev: &mut dyn Device) {
        for (_, m) in self.modules.drain() {
            let _ = dev.module_unload(m);
        }
        self.functions.clear();
    }
}

/// Picks the device's code object out of a clang offload bundle; any other
/// image (a bare ELF, a CUDA fat binary) goes to the runtime unchanged.
fn select_image<'a>(bytes: &'a [u8], target: &str) -> Result<std::borrow::Cow<'a, [u8]>, String> {
    if hrr_codeobj::bundle::is_bundle(bytes) {
        hrr_codeobj::bundle::select(bytes, target).map_err(|e| e.to_string())
    } else {
        Ok(std::borrow::Cow::Borrowed(bytes))
    }
}
