//! hrr-cli: what the hrr binaries share on the command line, kept in one
//! place instead of a copy per tool: choosing and opening the replay
//! backend ([`backend`], used by `hrr-play` and `hrr-extract`), the
//! progress bar of long work ([`progress`]) and each tool's man page and
//! shell completions (`TOOL --generate WHAT`, [`generate`]). The `backend`
//! feature (on by default) builds the first; without it, only the other two
//! are built.
#![forbid(unsafe_code)]

#[cfg(feature = "backend")]
pub mod backend;
pub mod generate;
pub mod progress;
