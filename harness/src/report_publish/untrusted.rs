//! Reading a file that came from a pull request's artifacts (`report publish`): a regular
//! file, opened without following a symlink in its last component (an artifact's
//! `summary.md -> /proc/self/environ` would otherwise publish the token), and at most
//! `cap` bytes of it: a larger file is refused, never read whole.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Why an untrusted file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: a symbolic link: an artifact's files are read only as regular files", path.display())]
    Symlink { path: PathBuf },
    #[error("{}: not a regular file", path.display())]
    NotFile { path: PathBuf },
    #[error("{}: larger than the {cap} bytes it may have", path.display())]
    TooLarge { path: PathBuf, cap: u64 },
}

/// The bytes of `path`, when it is a regular file of at most `cap` bytes.
pub fn read(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                ReadError::Symlink {
                    path: path.to_path_buf(),
                }
            } else {
                io(e)
            }
        })?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ReadError::NotFile {
            path: path.to_path_buf(),
        });
    }
    let too_large = || ReadError::TooLarge {
        path: path.to_path_buf(),
        cap,
    };
    if meta.len() > cap {
        return Err(too_large());
    }
    // The file may grow after the check: read one byte past the cap to notice.
    let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap + 1).read_to_end(&mut data).map_err(io)?;
    if data.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_within_the_cap_only() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("junit.xml");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read(&f, 10).unwrap(), b"0123456789");
        let e = read(&f, 9).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { cap: 9, .. }), "{e}");
        let link = d.path().join("summary.md");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let e = read(&link, 100).unwrap_err();
        assert!(matches!(e, ReadError::Symlink { .. }), "{e}");
        let e = read(d.path(), 100).unwrap_err();
        assert!(matches!(e, ReadError::NotFile { .. }), "{e}");
        let e = read(&d.path().join("absent"), 100).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }), "{e}");
    }
}
