//! Atomic file writes, the one way every file of a run (and every export) is written: the
//! content goes to a temporary name in the same directory (`.tmp<pid>-<seq>-<name>`), is
//! fsynced, renamed over the final name, and the directory is fsynced, so that after a crash the
//! path holds the old content or the new, never a part, and the rename itself is on disk.
//! Temporary names all start with [`TMP_PREFIX`], which is how leftovers of a killed writer are
//! recognised ([`is_temporary`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How every temporary file name starts.
pub const TMP_PREFIX: &str = ".tmp";

/// Whether a file name is a temporary file of an atomic write.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with(TMP_PREFIX)
}

/// A fresh temporary path beside `path`: unique per process and call, and keeping the final
/// name's extension (libraries that pick a format by extension see the right one).
pub fn temporary_path(path: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(
        "{TMP_PREFIX}{}-{seq}-{}",
        std::process::id(),
        path.file_name().unwrap_or_default().to_string_lossy()
    ))
}

/// Fsyncs a directory, so that a rename into it survives a crash. File systems that cannot
/// sync a directory (some network mounts answer EINVAL) are taken as having nothing to sync.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    match std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
        other => other,
    }
}

/// Where an atomic write failed: the path concerned and the OS error.
#[derive(Debug)]
pub struct WriteError {
    /// The temporary file, the final path or the directory, whichever failed.
    pub path: PathBuf,
    /// The OS error.
    pub source: std::io::Error,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `path` atomically with `fill`, which writes the whole content to the temporary path it
/// is given (and may close it). The temporary file is removed when anything fails.
pub fn write_with<E: From<WriteError>>(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    let tmp = temporary_path(path);
    let at = |p: &Path| {
        let p = p.to_path_buf();
        move |source| WriteError { path: p, source }
    };
    let done = fill(&tmp).and_then(|_| {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(at(&tmp))
            .and_then(|_| std::fs::rename(&tmp, path).map_err(at(path)))
            .map_err(E::from)
    });
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    sync_dir(dir).map_err(at(dir)).map_err(E::from)
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_with(path, |tmp| {
        std::fs::File::create(tmp)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|source| WriteError {
                path: tmp.to_path_buf(),
                source,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("atomic-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_content_and_leaves_no_temporary() {
        let d = dir("replace");
        let p = d.join("state.json");
        write_bytes(&p, b"old").unwrap();
        write_bytes(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(names(&d), ["state.json"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_fill_keeps_the_old_file_and_removes_the_temporary() {
        let d = dir("fail");
        let p = d.join("model.safetensors");
        write_bytes(&p, b"old").unwrap();
        let r = write_with(&p, |tmp| {
            assert!(is_temporary(&tmp.file_name().unwrap().to_string_lossy()));
            assert_eq!(tmp.extension().unwrap(), "safetensors");
            std::fs::write(tmp, b"half").unwrap();
            Err(WriteError {
                path: tmp.to_path_buf(),
                source: std::io::Error::other("disk full"),
            })
        });
        assert_eq!(r.unwrap_err().source.to_string(), "disk full");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(names(&d), ["model.safetensors"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_missing_directory_names_the_path() {
        let d = dir("missing");
        let p = d.join("no/such/dir/x.json");
        let e = write_bytes(&p, b"x").unwrap_err();
        assert!(e.path.starts_with(d.join("no/such/dir")), "{e}");
        assert_eq!(e.source.kind(), std::io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn temporary_names_are_unique_and_recognised() {
        let p = Path::new("/x/y/000001.json");
        let (a, b) = (temporary_path(p), temporary_path(p));
        assert_ne!(a, b);
        assert_eq!(a.parent(), p.parent());
        for t in [&a, &b] {
            assert!(is_temporary(&t.file_name().unwrap().to_string_lossy()));
        }
        assert!(!is_temporary("000001.json"));
        sync_dir(Path::new("")).unwrap();
    }
}
