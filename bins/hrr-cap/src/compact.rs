//! After the application (and the blob check): the archive's raw blobs
//! compressed where that pays (`BlobStore::compact`: each compressed file
//! decoded and hashed before it takes its name, the raw file removed only
//! after). The capture library writes blobs raw, from the application's
//! threads and memory; compressing them here costs the application
//! nothing. A failure leaves raw blobs, which every reader reads.

use std::path::Path;
use std::time::{Duration, Instant};

use hrr_core::blob_store::BlobStore;

/// Compactions above this long say how long they took.
const SAY_TIME_FROM: Duration = Duration::from_secs(1);

/// Compresses the blobs of the archive `dir`; says so on stderr when it
/// fails or takes long.
pub fn run(dir: &Path) {
    let start = Instant::now();
    let threads = hrr_core::cores().min(4);
    match BlobStore::of_archive(dir).compact(threads) {
        Ok(c) => {
            let took = start.elapsed();
            if took >= SAY_TIME_FROM {
                eprintln!(
                    "hrr-cap: compressed {} of {} blobs ({} to {} bytes) in {:.1} s",
                    c.compressed,
                    c.blobs,
                    c.raw_bytes,
                    c.disk_bytes,
                    took.as_secs_f64()
                );
            }
        }
        Err(e) => eprintln!(
            "hrr-cap: blobs left uncompressed: {}: {e}",
            dir.join(hrr_core::blob_store::BLOBS_DIR).display()
        ),
    }
}
