//! [`SafePath`]: a relative path from a URI template variable, checked before the handler
//! runs, and opened under a root it cannot leave, symlinks included.

use schemars::JsonSchema;
use serde::de;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A relative path from a URI template variable (`{+path}`), checked before the handler
/// runs: no `..` or `.` segments (also when sent percent-encoded as `%2e%2e`), no absolute
/// path or drive prefix, no NUL, no backslash, no empty segment.
///
/// Read it with [`SafePath::read_under`] or [`SafePath::open_under`]: they resolve
/// symlinks and refuse anything that ends up outside the root (on Linux in one `openat2`
/// with `RESOLVE_BENEATH`, so a link swapped in between cannot redirect the open). A
/// refused path reads as "not found" (`io::ErrorKind::NotFound`), which a resource turns
/// into resource-not-found without saying why.
///
/// ```
/// use mcp_runtime::SafePath;
/// let p: SafePath = serde_json::from_value(serde_json::json!("notes/2026/today.md")).unwrap();
/// assert_eq!(p.as_path(), std::path::Path::new("notes/2026/today.md"));
/// assert!(serde_json::from_value::<SafePath>(serde_json::json!("../etc/passwd")).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub struct SafePath(PathBuf);

impl SafePath {
    /// Checks `s`.
    pub fn new(s: &str) -> Result<SafePath, String> {
        if s.is_empty() {
            return Err("the path is empty".into());
        }
        if s.contains('\0') || s.contains('\\') {
            return Err("the path contains NUL or a backslash".into());
        }
        if s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
            return Err("the path is absolute".into());
        }
        for seg in s.split('/') {
            if seg.is_empty() || seg == "." || seg == ".." {
                return Err("the path has an empty, `.` or `..` segment".into());
            }
        }
        let path = PathBuf::from(s);
        if !path.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err("the path is not a plain relative path".into());
        }
        Ok(SafePath(path))
    }
    /// The path.
    pub fn as_path(&self) -> &Path {
        &self.0
    }
    /// Joins it under `root`, lexically: the path itself cannot climb out, but a symlink
    /// inside `root` can point anywhere. To read, use [`SafePath::read_under`] or
    /// [`SafePath::open_under`], which resolve links and stay beneath `root`.
    pub fn under(&self, root: impl AsRef<Path>) -> PathBuf {
        root.as_ref().join(&self.0)
    }

    /// Opens the file for reading, beneath `root`: symlinks are followed only while they
    /// stay beneath it; a path that leaves it, or is not a regular file, is `NotFound`,
    /// as is one the file system refuses (not a directory, name too long, permission
    /// denied): none of them says more about the file system than "not found". The open
    /// does not wait: a FIFO or a device under the root is refused, not waited on.
    ///
    /// The root itself failing to open (missing, not a directory, not permitted) is the
    /// server's own error, not hidden, and logged at `warn` with the root's path.
    pub fn open_under(&self, root: impl AsRef<Path>) -> io::Result<File> {
        let file = open_beneath(root.as_ref(), &self.0)?;
        if !file.metadata()?.is_file() {
            return Err(outside());
        }
        // Opened without blocking (so a FIFO could not hold the open); a regular file
        // reads the same either way, but the caller gets an ordinary blocking file.
        #[cfg(unix)]
        {
            use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
            fcntl_setfl(&file, fcntl_getfl(&file)? - OFlags::NONBLOCK)?;
        }
        Ok(file)
    }

    /// The whole file beneath `root` (see [`SafePath::open_under`]), read on the blocking
    /// pool.
    pub async fn read_under(&self, root: impl AsRef<Path>) -> io::Result<Vec<u8>> {
        let (root, rel) = (root.as_ref().to_path_buf(), self.0.clone());
        crate::spawn_blocking_counted(move || {
            use std::io::Read;
            let mut file = SafePath(rel).open_under(&root)?;
            let mut out = Vec::new();
            file.read_to_end(&mut out)?;
            Ok(out)
        })
        .await
        .map_err(io::Error::other)?
    }

    /// The canonical path beneath `root`, symlinks resolved; `NotFound` when it leaves
    /// `root`. For checks only: between this and an open, a link can change (opening
    /// goes through [`SafePath::open_under`]).
    pub fn resolve_under(&self, root: impl AsRef<Path>) -> io::Result<PathBuf> {
        let root = root.as_ref().canonicalize()?;
        let path = root.join(&self.0).canonicalize().map_err(hidden)?;
        if path.starts_with(&root) {
            Ok(path)
        } else {
            Err(outside())
        }
    }
}

/// The error of a path that leaves its root (worded like any missing file).
fn outside() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no such file under the root")
}

/// `e` as [`outside`] when it is about the path (missing, not a directory, a directory,
/// too long, a loop, not permitted), which would tell a client what is on the file system
/// ("Not a directory" says the path up to there is a file); other errors (out of file
/// descriptors, I/O) stay what they are.
fn hidden(e: io::Error) -> io::Error {
    use io::ErrorKind as K;
    // `ErrorKind::FilesystemLoop` is not stable: a loop is known by its code.
    #[cfg(unix)]
    let looped = e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error());
    #[cfg(not(unix))]
    let looped = false;
    match e.kind() {
        K::NotFound
        | K::NotADirectory
        | K::IsADirectory
        | K::InvalidFilename
        | K::CrossesDevices
        | K::PermissionDenied
        | K::InvalidInput => outside(),
        _ if looped => outside(),
        _ => e,
    }
}

/// Linux: one `openat2` relative to the root, with `RESOLVE_BENEATH` (no component may
/// leave it, symlinks included) and no magic links.
#[cfg(target_os = "linux")]
fn open_beneath(root: &Path, rel: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags, ResolveFlags, open, openat2};
    use rustix::io::Errno;
    let dir = open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| root_failed(root, e.into()))?;
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match openat2(
        &dir,
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
        how,
    ) {
        Ok(fd) => Ok(File::from(fd)),
        // A kernel older than 5.6, or a sandbox (seccomp) refusing the call it does
        // not know with EPERM (an open for reading gets EACCES, not EPERM): the
        // portable way.
        Err(Errno::NOSYS | Errno::PERM) => open_checked(root, rel),
        Err(Errno::XDEV | Errno::LOOP) => Err(outside()),
        Err(e) => Err(hidden(e.into())),
    }
}

/// The error of a root that does not open, logged: no path under it can be served.
fn root_failed(root: &Path, e: io::Error) -> io::Error {
    tracing::warn!(root = %root.display(), "SafePath root cannot be opened: {e}");
    e
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(root: &Path, rel: &Path) -> io::Result<File> {
    open_checked(root, rel)
}

/// Resolves, checks containment, opens, and checks that the file opened is the one that
/// was checked (same device and inode on Unix).
fn open_checked(root: &Path, rel: &Path) -> io::Result<File> {
    let canonical = root.canonicalize().map_err(|e| root_failed(root, e))?;
    let path = SafePath(rel.to_path_buf()).resolve_under(&canonical)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(&path).map_err(hidden)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let checked = std::fs::metadata(&path).map_err(hidden)?;
        let opened = file.metadata()?;
        if (opened.dev(), opened.ino()) != (checked.dev(), checked.ino()) {
            return Err(outside());
        }
    }
    Ok(file)
}

impl<'de> Deserialize<'de> for SafePath {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SafePath::new(&s).map_err(de::Error::custom)
    }
}
