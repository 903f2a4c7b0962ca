//! How the ranks of one communicator exchange data: files in a directory
//! of their own, named by the unique id, under `$HRR_NCCL_CPU_DIR` (else
//! the temporary directory). A rank publishes a file whole (written under
//! a temporary name, then renamed) and waits for another's by polling, for
//! at most [`TIMEOUT`]. Ranks of one machine only, as the CPU runtime's
//! devices are.
//!
//! Files of a collective are removed two collectives later by their
//! writer: by then every rank has read them (a rank that wrote collective
//! `k` had read every file of `k - 1`, so all of `k - 2` was read).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a rank waits for another's file.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The first bytes of a unique id this library made.
pub const MAGIC: &[u8; 8] = b"HRRNCCL1";

/// The directory the ranks of `id` exchange in.
pub fn dir_of(id: &[u8; 128]) -> io::Result<PathBuf> {
    if &id[..8] != MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a unique id of libhrr_nccl_cpu (ncclGetUniqueId makes them)",
        ));
    }
    let base = std::env::var_os("HRR_NCCL_CPU_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let hex: String = id[8..24].iter().map(|b| format!("{b:02x}")).collect();
    Ok(base.join(format!("hrr-nccl-{hex}")))
}

/// One rank's side of the exchange.
#[derive(Debug)]
pub struct Exchange {
    dir: PathBuf,
    rank: usize,
    nranks: usize,
}

impl Exchange {
    /// Joins the exchange of `id` as `rank` of `nranks`.
    pub fn open(id: &[u8; 128], rank: usize, nranks: usize) -> io::Result<Exchange> {
        let dir = dir_of(id)?;
        std::fs::create_dir_all(&dir)?;
        Ok(Exchange { dir, rank, nranks })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Publishes `bytes` as `name`.
    pub fn publish(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let tmp = self.dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, self.dir.join(name))
    }

    /// Waits for `name` and reads it.
    pub fn wait(&self, name: &str) -> io::Result<Vec<u8>> {
        let p = self.dir.join(name);
        let start = Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            match std::fs::read(&p) {
                Ok(b) => return Ok(b),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            if start.elapsed() > TIMEOUT {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{} did not appear in {} s", p.display(), TIMEOUT.as_secs()),
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// Removes `name` (written by this rank), if there.
    pub fn remove(&self, name: &str) {
        let _ = std::fs::remove_file(self.dir.join(name));
    }

    /// Publishes `mine` as this rank's part of step `tag` and returns every
    /// rank's, in rank order.
    pub fn all(&self, tag: &str, mine: &[u8]) -> io::Result<Vec<Vec<u8>>> {
        self.publish(&format!("{tag}-r{}", self.rank), mine)?;
        (0..self.nranks)
            .map(|r| {
                if r == self.rank {
                    Ok(mine.to_vec())
                } else {
                    self.wait(&format!("{tag}-r{r}"))
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> [u8; 128] {
        let mut id = [n; 128];
        id[..8].copy_from_slice(MAGIC);
        id
    }

    #[test]
    fn ranks_see_each_other() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("x");
        std::fs::create_dir_all(&dir).unwrap();
        let a = Exchange {
            dir: dir.clone(),
            rank: 0,
            nranks: 2,
        };
        let b = Exchange {
            dir,
            rank: 1,
            nranks: 2,
        };
        let t = std::thread::spawn(move || b.all("c0", b"one").unwrap());
        let ra = a.all("c0", b"zero").unwrap();
        let rb = t.join().unwrap();
        assert_eq!(ra, vec![b"zero".to_vec(), b"one".to_vec()]);
        assert_eq!(ra, rb);
    }

    #[test]
    fn foreign_ids_are_refused() {
        assert!(dir_of(&[0; 128]).is_err());
        assert!(
            dir_of(&id(3))
                .unwrap()
                .to_string_lossy()
                .contains("hrr-nccl-0303")
        );
    }
}
