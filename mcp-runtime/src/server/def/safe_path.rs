//! [`SafePath`]: a relative path from a URI template variable, checked before the handler
//! runs.

use schemars::JsonSchema;
use serde::de;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// A relative path from a URI template variable (`{+path}`), checked before the handler
/// runs: no `..` or `.` segments (also when sent percent-encoded as `%2e%2e`), no absolute
/// path or drive prefix, no NUL, no backslash, no empty segment.
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
    /// Joins it under `root` (which it cannot escape).
    pub fn under(&self, root: impl AsRef<Path>) -> PathBuf {
        root.as_ref().join(&self.0)
    }
}

impl<'de> Deserialize<'de> for SafePath {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SafePath::new(&s).map_err(de::Error::custom)
    }
}
