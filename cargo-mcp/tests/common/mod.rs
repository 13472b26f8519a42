//! What the integration tests of `cargo-mcp` share.

use std::path::PathBuf;

/// A fresh, empty folder under the system's temporary one, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// `cargo-mcp-TAG-PID` under the temporary folder, emptied first.
    pub fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("cargo-mcp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
