//! Writing the archive: the ordered, crash-tolerant event stream
//! ([`event_sink`], its clock [`event_clock`], a thread's run of repeated
//! lines [`repeat_run`]), content-addressed blobs ([`blob_writer`]; small ones written with the events buffer,
//! [`blob_batch`]; large ones hashed in the recorder's own threads,
//! [`hash_pool`]; compressed once written by threads of the recorder's
//! own, [`blob_zst`]), and the one-process-per-archive rule
//! ([`archive_claim`]).

pub mod archive_claim;
pub mod blob_batch;
pub mod blob_writer;
pub mod blob_zst;
pub mod event_clock;
pub mod event_sink;
pub mod hash_pool;
pub mod repeat_run;
