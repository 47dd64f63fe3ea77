//! The actions the workflows use, each pinned to a full commit SHA with its release in a
//! comment (a tag can be moved; a commit cannot). Newest releases seen on 2026-12-01
//! (`../shared/actions/README.md`); actions/cache from its v6.1.0 release (its `v6` and
//! `v6.1.0` tags, checked 2026-12-02: v4 runs on node20, which GitHub retires on its
//! runners; v5 and v6 run on node24 and need a runner of 2.327.1 or later).

/// One action at one commit.
#[derive(Clone, Copy, Debug)]
pub struct Pin {
    /// `owner/name` (plus a sub-action path such as `/restore`, see [`Pin::uses`]).
    pub action: &'static str,
    /// The release's full commit SHA.
    pub sha: &'static str,
    /// The release tag, written beside the SHA for readers and update tools.
    pub version: &'static str,
}

impl Pin {
    /// The `uses:` value with its version comment: `owner/name@SHA # vX.Y.Z`.
    pub fn uses(&self) -> String {
        self.uses_sub("")
    }

    /// The same for an action in a sub-folder of the repository (`actions/cache/restore`).
    pub fn uses_sub(&self, sub: &str) -> String {
        format!("{}{sub}@{} # {}", self.action, self.sha, self.version)
    }
}

pub const CHECKOUT: Pin = Pin {
    action: "actions/checkout",
    sha: "3d3c42e5aac5ba805825da76410c181273ba90b1",
    version: "v7.0.1",
};
pub const UPLOAD_ARTIFACT: Pin = Pin {
    action: "actions/upload-artifact",
    sha: "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
    version: "v7.0.0",
};
pub const DOWNLOAD_ARTIFACT: Pin = Pin {
    action: "actions/download-artifact",
    sha: "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
    version: "v8.0.1",
};
/// Used as `actions/cache/restore` and `actions/cache/save` (restore everywhere, save only
/// from trusted runs: see `steps::cargo_cache_save`).
pub const CACHE: Pin = Pin {
    action: "actions/cache",
    sha: "55cc8345863c7cc4c66a329aec7e433d2d1c52a9",
    version: "v6.1.0",
};

/// Every pinned action, for tests and for mapping them onto local copies (act).
pub const ALL: [Pin; 4] = [CHECKOUT, UPLOAD_ARTIFACT, DOWNLOAD_ARTIFACT, CACHE];
