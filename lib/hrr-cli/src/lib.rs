//! hrr-cli: what the hrr binaries share on the command line, kept in one
//! place instead of a copy per tool: choosing and opening the replay
//! backend ([`backend`], used by `hrr-play` and `hrr-extract`) and the
//! progress bar of long work ([`progress`]). The `backend` feature (on by
//! default) builds the first; without it, only the progress bar is built.

#[cfg(feature = "backend")]
pub mod backend;
pub mod progress;
