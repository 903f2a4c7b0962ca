//! `JobProcess`: one process archive of a job.

use serde::{Deserialize, Serialize};

use crate::process_info::ProcessInfo;

/// One entry of [`super::JobManifest::processes`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobProcess {
    /// The process's archive: a directory beside the job file, by name.
    pub archive: String,
    /// Whether that archive was complete when the job file was written.
    pub complete: bool,
    /// The recorded process (a replay job keeps the capture's, so both
    /// pair the same way).
    #[serde(flatten)]
    pub process: ProcessInfo,
}
