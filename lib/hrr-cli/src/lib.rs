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

/// Whether an archive a tool writes keeps its events and blobs plain:
/// the tool's `--plain` flag, or `HRR_EVENTS=plain` as for `hrr-cap`.
pub fn plain_asked(flag: bool) -> bool {
    flag || std::env::var_os("HRR_EVENTS")
        .is_some_and(|v| v.to_string_lossy().eq_ignore_ascii_case("plain"))
}
