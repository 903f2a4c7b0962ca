//! `safe_fs`: how hrr opens what an archive (or a user) hands it, and how it
//! creates what it writes.
//!
//! Reading: only regular files. A FIFO in place of `events.ndjson` would
//! block `open` for ever, `/dev/zero` in place of `manifest.json` would be
//! read until memory runs out. [`open_regular`] checks the file type before
//! opening (no open side effects on devices), opens with `O_NONBLOCK` (a
//! FIFO swapped in meanwhile cannot block) and checks again on the open
//! descriptor; [`read_limited`] also bounds the size. Symlinks are followed
//! only where the caller says so ([`Follow::Yes`]: paths the user typed);
//! inside an archive nothing is a symlink (docs/FORMAT.md).
//!
//! Writing: [`DirFd`] is a directory opened with `O_NOFOLLOW`; files and
//! subdirectories are created relative to it (`openat`/`mkdirat` with
//! `O_CREAT | O_EXCL | O_NOFOLLOW`), so a symlink planted inside an archive
//! is never followed to create or overwrite something elsewhere.
//! Directories are created `0700`, files `0600`: an archive holds an
//! application's data.

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Mode of directories hrr creates.
pub const DIR_MODE: u32 = 0o700;
/// Mode of files hrr creates.
pub const FILE_MODE: u32 = 0o600;

/// Whether a symlink at the path's last component is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// A path the user gave: a symlink there is theirs to make.
    Yes,
    /// A file inside an archive: a symlink is refused.
    No,
}

/// A file that must not (or could not) be read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Looking at, opening or reading the file failed.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// There is no such file.
    #[error("{}: no such file", path.display())]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// A directory, FIFO, device or socket where a regular file should be.
    #[error("{}: is a {kind}, not a regular file; refusing to read it", path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is, in words ([`kind_name`]).
        kind: &'static str,
    },
    /// A symbolic link where [`Follow::No`] allows none.
    #[error("{}: is a symbolic link; refusing to follow it inside an archive", path.display())]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// Larger than what the reader bounds such a file to.
    #[error("{}: {len} bytes, more than the {limit} bytes a {what} may have", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The bound.
        limit: u64,
        /// What the file is, for the message (`"manifest"`, `"lock file"`…).
        what: &'static str,
    },
}

impl OpenError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OpenError::Io { path, .. }
            | OpenError::NotFound { path }
            | OpenError::NotRegular { path, .. }
            | OpenError::Symlink { path }
            | OpenError::TooLarge { path, .. } => path,
        }
    }

    fn io(path: &Path, source: io::Error) -> OpenError {
        if source.kind() == io::ErrorKind::NotFound {
            OpenError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            OpenError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// What a file is, in words (for messages).
pub fn kind_name(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "regular file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

fn check_type(path: &Path, meta: &Metadata) -> Result<(), OpenError> {
    let t = meta.file_type();
    if t.is_symlink() {
        return Err(OpenError::Symlink {
            path: path.to_path_buf(),
        });
    }
    if !t.is_file() {
        return Err(OpenError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(meta),
        });
    }
    Ok(())
}

/// Opens a regular file for reading (see the module docs); returns it with
/// its metadata, taken from the open descriptor.
pub fn open_regular(path: &Path, follow: Follow) -> Result<(File, Metadata), OpenError> {
    // Type first, so that opening a device (which can have side effects)
    // never happens; then again on the descriptor, which is what is read.
    let meta = match follow {
        Follow::Yes => std::fs::metadata(path),
        Follow::No => std::fs::symlink_metadata(path),
    }
    .map_err(|e| OpenError::io(path, e))?;
    check_type(path, &meta)?;
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if follow == Follow::No {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) && follow == Follow::No {
                OpenError::Symlink {
                    path: path.to_path_buf(),
                }
            } else {
                OpenError::io(path, e)
            }
        })?;
    let meta = file.metadata().map_err(|e| OpenError::io(path, e))?;
    check_type(path, &meta)?;
    Ok((file, meta))
}

/// Reads a whole regular file of at most `limit` bytes (`what` names the
/// kind of file in the error).
pub fn read_limited(
    path: &Path,
    follow: Follow,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, OpenError> {
    let (file, meta) = open_regular(path, follow)?;
    let too_large = |len| OpenError::TooLarge {
        path: path.to_path_buf(),
        len,
        limit,
        what,
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    // The file may grow meanwhile: read one byte past the limit at most.
    file.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| OpenError::io(path, e))?;
    if buf.len() as u64 > limit {
        return Err(too_large(buf.len() as u64));
    }
    Ok(buf)
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file name contains a NUL byte"))
}

/// A single path component: no `/`, not `.` or `..`, not empty.
fn check_name(name: &OsStr) -> io::Result<()> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(())
}

/// A directory held open; everything created through it stays inside it
/// and never follows a symlink (see the module docs).
#[derive(Debug)]
pub struct DirFd {
    fd: OwnedFd,
    path: PathBuf,
}

impl DirFd {
    /// Opens the directory at `path`, refusing a symlink there when `follow`
    /// is [`Follow::No`].
    pub fn open(path: &Path, follow: Follow) -> io::Result<DirFd> {
        let mut flags = libc::O_DIRECTORY | libc::O_CLOEXEC;
        if follow == Follow::No {
            flags |= libc::O_NOFOLLOW;
        }
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)
            .map_err(|e| symlink_error(e, path))?;
        Ok(DirFd {
            fd: f.into(),
            path: path.to_path_buf(),
        })
    }

    /// Creates directory `path` (mode `0700`; the parent must exist) and
    /// opens it. An existing empty directory is accepted when `existing_ok`
    /// (the caller checks emptiness); a symlink never is.
    pub fn create(path: &Path, existing_ok: bool) -> io::Result<DirFd> {
        let c = cstr(path.as_os_str())?;
        // SAFETY: `c` is a NUL-terminated path; mkdir has no other preconditions.
        let rc = unsafe { libc::mkdir(c.as_ptr(), DIR_MODE as libc::mode_t) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if !(existing_ok && e.kind() == io::ErrorKind::AlreadyExists) {
                return Err(e);
            }
        }
        DirFd::open(path, Follow::No)
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates subdirectory `name` (`0700`) unless a real directory of that
    /// name exists, and opens it; a symlink there is an error.
    pub fn subdir(&self, name: &str) -> io::Result<DirFd> {
        let n = OsStr::new(name);
        check_name(n)?;
        let c = cstr(n)?;
        // SAFETY: valid directory fd and NUL-terminated single-component name.
        let rc =
            unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), DIR_MODE as libc::mode_t) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::AlreadyExists {
                return Err(e);
            }
        }
        let flags = libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_RDONLY;
        // SAFETY: as above; openat returns a new descriptor or -1.
        let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags) };
        if fd < 0 {
            return Err(symlink_error(
                io::Error::last_os_error(),
                &self.path.join(name),
            ));
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(DirFd {
            fd,
            path: self.path.join(name),
        })
    }

    /// Creates file `name` (`0600`), which must not exist (`O_EXCL`: a
    /// symlink of that name is not followed either), open for writing; with
    /// `append`, writes go to its end.
    pub fn create_file(&self, name: &str, append: bool) -> io::Result<File> {
        let n = OsStr::new(name);
        check_name(n)?;
        let c = cstr(n)?;
        let mut flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        if append {
            flags |= libc::O_APPEND;
        }
        // SAFETY: valid directory fd, NUL-terminated single-component name;
        // openat returns a new descriptor or -1.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                flags,
                FILE_MODE as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Opens existing file `name` for reading and writing without following
    /// a symlink, or creates it (`0600`) when absent. For lock files.
    pub fn open_or_create(&self, name: &str) -> io::Result<File> {
        let n = OsStr::new(name);
        check_name(n)?;
        let c = cstr(n)?;
        let flags =
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: as in create_file.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                flags,
                FILE_MODE as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(symlink_error(
                io::Error::last_os_error(),
                &self.path.join(name),
            ));
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let f = unsafe { File::from_raw_fd(fd) };
        let meta = f.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::other(format!(
                "{}: is a {}, not a regular file",
                self.path.join(name).display(),
                kind_name(&meta)
            )));
        }
        Ok(f)
    }

    /// Renames `from` to `to`, both inside this directory (replacing `to`).
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        check_name(OsStr::new(from))?;
        check_name(OsStr::new(to))?;
        let (a, b) = (cstr(OsStr::new(from))?, cstr(OsStr::new(to))?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid directory fd and NUL-terminated names.
        let rc = unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes file `name` (not following a symlink: the link itself goes).
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        check_name(OsStr::new(name))?;
        let c = cstr(OsStr::new(name))?;
        // SAFETY: valid directory fd and NUL-terminated name.
        let rc = unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Writes `name` atomically: a temporary `.NAME.tmp-PID-N` created here
    /// (`O_EXCL | O_NOFOLLOW`, `0600`), fsynced, renamed over `name` (a
    /// symlink at `name` is replaced, never followed), then this directory
    /// fsynced. A failure removes the temporary.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        use std::io::Write;
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let tmp = format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let result = (|| {
            let mut f = self.create_file(&tmp, false)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            self.rename(&tmp, name)?;
            self.sync()
        })();
        if result.is_err() {
            let _ = self.remove_file(&tmp);
        }
        result
    }

    /// fsyncs the directory (makes renames and creations in it durable).
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: fsync on a descriptor we own.
        if unsafe { libc::fsync(self.fd.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn symlink_error(e: io::Error, path: &Path) -> io::Error {
    // O_NOFOLLOW on a symlink: ELOOP; O_DIRECTORY|O_NOFOLLOW on one: ENOTDIR.
    if e.raw_os_error() == Some(libc::ELOOP)
        || (e.raw_os_error() == Some(libc::ENOTDIR)
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()))
    {
        return io::Error::other(format!(
            "{}: is a symbolic link; refusing to follow it",
            path.display()
        ));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn only_regular_files_are_read() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(read_limited(&f, Follow::No, 3, "test").unwrap(), b"abc");
        let e = read_limited(&f, Follow::No, 2, "test file").unwrap_err();
        assert!(
            e.to_string()
                .ends_with("f: 3 bytes, more than the 2 bytes a test file may have"),
            "{e}"
        );
        // A FIFO: refused at once, never opened for a blocking read.
        let fifo = t.path().join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo, Follow::Yes).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("is a FIFO, not a regular file; refusing to read it"),
            "{e}"
        );
        let e = open_regular(Path::new("/dev/zero"), Follow::Yes).unwrap_err();
        assert!(e.to_string().contains("is a character device"), "{e}");
        let e = open_regular(t.path(), Follow::Yes).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let e = open_regular(&t.path().join("nope"), Follow::Yes).unwrap_err();
        assert!(matches!(e, OpenError::NotFound { .. }), "{e}");
        // Symlinks: followed only when asked to.
        let link = t.path().join("link");
        symlink(&f, &link).unwrap();
        assert!(open_regular(&link, Follow::Yes).is_ok());
        let e = open_regular(&link, Follow::No).unwrap_err();
        assert!(matches!(e, OpenError::Symlink { .. }), "{e}");
    }

    #[test]
    fn created_files_and_dirs_never_follow_links_and_are_private() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let d = DirFd::create(&t.path().join("a.hrr"), false).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(d.path()), 0o700);
        let f = d.create_file("x", false).unwrap();
        drop(f);
        assert_eq!(mode(&d.path().join("x")), 0o600);
        // A planted symlink is neither followed to create nor opened.
        symlink(outside.path().join("victim"), d.path().join("evil")).unwrap();
        assert!(d.create_file("evil", false).is_err());
        assert!(d.open_or_create("evil").is_err());
        symlink(outside.path(), d.path().join("sub")).unwrap();
        let e = d.subdir("sub").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        // Not a single component.
        assert!(d.create_file("../y", false).is_err());
        // A directory symlink itself is refused as a DirFd.
        let e = DirFd::open(&d.path().join("sub"), Follow::No).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }
}
