//! Touching files inside directories we own without being led out of them: every file
//! the archive code creates, and every file it opens for reading, goes through here.
//!
//! Threat: someone who can write into an archive or a shared output directory plants a
//! symbolic link (at a temporary file's name, at a blob directory) or a FIFO (at a blob's
//! name). So:
//! - a directory we write into is opened with `O_DIRECTORY | O_NOFOLLOW`, and the file is
//!   created relative to that descriptor with `O_CREAT | O_EXCL | O_NOFOLLOW` under a
//!   fresh random name, then renamed within the same descriptor (`renameat` replaces a
//!   planted link at the destination instead of following it);
//! - a file we read is opened with `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` to
//!   be a regular file before anything can block on it (a FIFO never hangs a reader).

use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::{ArchiveError, Result};

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| ArchiveError::unsafe_path(path, "contains a NUL byte"))
}

/// Maps the errors `O_NOFOLLOW`/`O_DIRECTORY` give for a link or a non-directory to an
/// `UnsafePath` that says so; anything else stays an I/O error.
fn open_error(path: &Path, op: &'static str, e: io::Error) -> ArchiveError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => ArchiveError::unsafe_path(path, "is a symbolic link"),
        Some(libc::ENOTDIR) => ArchiveError::unsafe_path(path, "is not a directory"),
        _ => ArchiveError::io(path, op, e),
    }
}

/// Opens `dir` itself (its last component must not be a symbolic link).
pub fn open_dir(dir: &Path) -> Result<OwnedFd> {
    let c = c_path(dir)?;
    // SAFETY: a NUL-terminated path; the flags only restrict what open may do.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(open_error(
            dir,
            "open directory",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: `fd` was just returned by open and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes sure `dir` is a real directory, creating it (one level) if it is missing. A
/// symbolic link or any other kind of file at that name is refused.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                ensure_dir(parent)?;
            }
            fs::create_dir(dir)
                .or_else(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .map_err(|e| ArchiveError::io(dir, "create directory", e))?;
        }
        Err(e) => return Err(ArchiveError::io(dir, "create directory", e)),
    }
    let meta = fs::symlink_metadata(dir).map_err(|e| ArchiveError::io(dir, "stat", e))?;
    if meta.file_type().is_symlink() {
        return Err(ArchiveError::unsafe_path(dir, "is a symbolic link"));
    }
    if !meta.is_dir() {
        return Err(ArchiveError::unsafe_path(dir, "is not a directory"));
    }
    Ok(())
}

/// A per-call random word for temporary names: a planted file cannot guess it, and two
/// threads or processes never share one.
fn random_word() -> u64 {
    let mut w = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into our 8-byte buffer.
    let n = unsafe { libc::getrandom(w.as_mut_ptr().cast(), w.len(), libc::GRND_NONBLOCK) };
    if n == 8 {
        return u64::from_ne_bytes(w);
    }
    // No entropy yet (very early boot): time and thread id still make a name that O_EXCL
    // then checks; a collision is retried.
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    // SAFETY: gettid has no preconditions and cannot fail.
    t ^ (unsafe { libc::syscall(libc::SYS_gettid) } as u64).rotate_left(32)
}

/// A new file in `dir_fd`, created exclusively (never an existing file, never through a
/// link), under a fresh temporary name derived from `final_name`. Returns it and its name.
fn create_temp(dir: &Path, dir_fd: &OwnedFd, final_name: &str) -> Result<(File, CString)> {
    for _ in 0..16 {
        let name = format!(
            ".tmp-{}-{:016x}-{final_name}",
            std::process::id(),
            random_word()
        );
        let c = CString::new(name)
            .map_err(|_| ArchiveError::unsafe_path(dir, "file name contains a NUL byte"))?;
        // SAFETY: a descriptor we own and a NUL-terminated relative name; O_EXCL with
        // O_CREAT never opens an existing file or follows a link at that name.
        let fd = unsafe {
            libc::openat(
                dir_fd.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: `fd` was just returned by openat and is owned by nobody else.
            return Ok((unsafe { File::from_raw_fd(fd) }, c));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(ArchiveError::io(
                dir.join(c.to_string_lossy().as_ref()),
                "create",
                e,
            ));
        }
    }
    Err(ArchiveError::io(
        dir,
        "create a temporary file",
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            "16 fresh names were all taken",
        ),
    ))
}

/// Writes `dest` atomically and without following a link: a new temporary file in the
/// same directory (opened as above), filled by `fill`, optionally fsync'd, then renamed
/// over `dest`. On any error the temporary file is removed.
pub fn write_atomic_with(
    dest: &Path,
    fsync: bool,
    fill: impl FnOnce(&File, &Path) -> Result<()>,
) -> Result<()> {
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dest
        .file_name()
        .ok_or_else(|| ArchiveError::unsafe_path(dest, "has no file name"))?;
    let final_c = CString::new(name.as_bytes())
        .map_err(|_| ArchiveError::unsafe_path(dest, "contains a NUL byte"))?;
    let dir_fd = open_dir(dir)?;
    let (f, tmp) = create_temp(dir, &dir_fd, &name.to_string_lossy())?;
    let tmp_path = dir.join(tmp.to_string_lossy().as_ref());
    let result = (|| {
        fill(&f, &tmp_path)?;
        if fsync {
            f.sync_all()
                .map_err(|e| ArchiveError::io(&tmp_path, "fsync", e))?;
        }
        drop(f);
        // SAFETY: both names are NUL-terminated and relative to the same descriptor we
        // own; renameat replaces whatever is at the destination name without following it.
        let rc = unsafe {
            libc::renameat(
                dir_fd.as_raw_fd(),
                tmp.as_ptr(),
                dir_fd.as_raw_fd(),
                final_c.as_ptr(),
            )
        };
        if rc != 0 {
            return Err(ArchiveError::io(
                dest,
                "rename into place",
                io::Error::last_os_error(),
            ));
        }
        Ok(())
    })();
    if result.is_err() {
        // SAFETY: as above; unlinking our own temporary name.
        unsafe {
            libc::unlinkat(dir_fd.as_raw_fd(), tmp.as_ptr(), 0);
        }
    }
    result
}

/// Opens an existing file for reading: no symbolic link, nothing that could block the
/// open (a FIFO or a device), and a regular file by `fstat` on the open descriptor.
/// Returns the file and its length.
pub fn open_regular(path: &Path) -> Result<(File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| open_error(path, "open", e))?;
    let meta = f
        .metadata()
        .map_err(|e| ArchiveError::io(path, "stat", e))?;
    if !meta.is_file() {
        return Err(ArchiveError::unsafe_path(path, "is not a regular file"));
    }
    Ok((f, meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::symlink;

    fn write(dest: &Path, bytes: &[u8]) -> Result<()> {
        write_atomic_with(dest, false, |mut f, p| {
            f.write_all(bytes)
                .map_err(|e| ArchiveError::io(p, "write", e))
        })
    }

    #[test]
    fn a_link_at_the_destination_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        fs::write(&outside, b"keep").unwrap();
        let inside = d.path().join("archive");
        fs::create_dir(&inside).unwrap();
        symlink(&outside, inside.join("events.bin")).unwrap();
        write(&inside.join("events.bin"), b"new").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep");
        assert!(!fs::symlink_metadata(inside.join("events.bin"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(inside.join("events.bin")).unwrap(), b"new");
    }

    #[test]
    fn a_linked_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        fs::create_dir(&outside).unwrap();
        let blobs = d.path().join("blobs");
        fs::create_dir(&blobs).unwrap();
        symlink(&outside, blobs.join("ab")).unwrap();
        let e = write(&blobs.join("ab").join("x.blob"), b"x").unwrap_err();
        assert!(matches!(e, ArchiveError::UnsafePath { .. }), "{e}");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert!(matches!(
            ensure_dir(&blobs.join("ab")),
            Err(ArchiveError::UnsafePath { .. })
        ));
    }

    #[test]
    fn planted_temporary_names_are_never_opened() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        fs::write(&outside, b"keep").unwrap();
        // Every name the old writer would have used, planted as links.
        for i in 0..64 {
            symlink(
                &outside,
                d.path()
                    .join(format!(".tmp-{}-{i}-m.json", std::process::id())),
            )
            .unwrap();
        }
        write(&d.path().join("m.json"), b"{}").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo.blob");
        let c = c_path(&p).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&p).unwrap_err();
        assert!(matches!(e, ArchiveError::UnsafePath { .. }), "{e}");
    }

    #[test]
    fn a_failed_fill_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let e = write_atomic_with(&d.path().join("x"), false, |_, p| {
            Err(ArchiveError::invalid(p, "refused"))
        });
        assert!(e.is_err());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
