//! hrr-cli: what the hrr binaries share on the command line, kept in one
//! place instead of a copy per tool: choosing and opening the replay
//! backend ([`backend`], used by `hrr-play` and `hrr-extract`) and the
//! progress bar of long work ([`progress`]).

pub mod backend;
pub mod progress;
