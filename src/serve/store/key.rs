//! The cache's key: one file of one exact version, its three names in one
//! allocation, and the form borrowed from a request that a cache hit is
//! looked up with, so that a hit copies no names. A key may also name a
//! dictionary: the entry then holds the asset with its deltas against
//! that dictionary (`serve::stored`), beside the entry without one.
//!
//! A key's names are hashed once, when the request's key is made: a miss
//! looks its key up in the cache and in the file index, asks the cache's
//! admission about it and wraps it in an entry, and each hashes the
//! key's digest (a `u64`) instead of its names.

use crate::serve::cache::{self, Lookup};
use crate::serve::prepared::Prepared;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, LazyLock};

/// The digest of a key's names and dictionary: seeded once a process, so
/// that no request can choose keys that collide.
fn digest(package: &str, version: &str, path: &str, dictionary: Option<&[u8; 32]>) -> u64 {
    static SEED: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);
    SEED.hash_one((package, version, path, dictionary))
}

/// A cache key: one file of one exact version. The three names share one
/// allocation (a miss makes one key, and a cached asset keeps it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetKey {
    /// Package, version and path, one after the other.
    names: Box<str>,
    /// Where the version starts in `names`, and where the path does.
    version_at: usize,
    path_at: usize,
    /// The SHA-256 of the dictionary a request named, for an entry with
    /// the asset's deltas against it.
    dictionary: Option<[u8; 32]>,
    /// [`digest`] of the names and the dictionary.
    digest: u64,
}

/// An [`AssetKey`] borrowed from a request: what a cache hit is looked up
/// with, so a hit copies no names. It hashes as its key does. Its fields
/// are set only with its digest (by [`AssetKeyRef::of`], and by
/// `with_dictionary`), so the two always agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssetKeyRef<'a> {
    package: &'a str,
    version: &'a str,
    path: &'a str,
    dictionary: Option<[u8; 32]>,
    digest: u64,
}

impl AssetKey {
    pub fn new(package: &str, version: &str, path: &str) -> AssetKey {
        AssetKeyRef::of(package, version, path).to_key()
    }

    pub(crate) fn dictionary(&self) -> Option<&[u8; 32]> {
        self.dictionary.as_ref()
    }

    pub(crate) fn package(&self) -> &str {
        &self.names[..self.version_at]
    }

    pub(crate) fn version(&self) -> &str {
        &self.names[self.version_at..self.path_at]
    }

    pub(crate) fn path(&self) -> &str {
        &self.names[self.path_at..]
    }

    /// The heap its names hold, for the cache's byte budget.
    pub(crate) fn weight(&self) -> u64 {
        cache::allocation(self.names.len())
    }

    pub fn borrowed(&self) -> AssetKeyRef<'_> {
        AssetKeyRef {
            package: self.package(),
            version: self.version(),
            path: self.path(),
            dictionary: self.dictionary,
            digest: self.digest,
        }
    }
}

/// As the borrowed form hashes, so a hit finds its key without making one.
impl Hash for AssetKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.digest);
    }
}

/// Its digest, made when the key was: the names are not read again.
impl Hash for AssetKeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.digest);
    }
}

impl<'a> AssetKeyRef<'a> {
    /// A borrowed key without a dictionary.
    pub fn of(package: &'a str, version: &'a str, path: &'a str) -> AssetKeyRef<'a> {
        AssetKeyRef {
            package,
            version,
            path,
            dictionary: None,
            digest: digest(package, version, path, None),
        }
    }

    /// The key of the asset's entry with its deltas against `dictionary`.
    pub(crate) fn with_dictionary(self, dictionary: Option<[u8; 32]>) -> AssetKeyRef<'a> {
        AssetKeyRef {
            dictionary,
            digest: digest(self.package, self.version, self.path, dictionary.as_ref()),
            ..self
        }
    }

    /// The owned key, its digest as made.
    pub(crate) fn to_key(self) -> AssetKey {
        let mut names =
            String::with_capacity(self.package.len() + self.version.len() + self.path.len());
        names.push_str(self.package);
        names.push_str(self.version);
        names.push_str(self.path);
        AssetKey {
            names: names.into_boxed_str(),
            version_at: self.package.len(),
            path_at: self.package.len() + self.version.len(),
            dictionary: self.dictionary,
            digest: self.digest,
        }
    }
}

impl Lookup<AssetKey> for AssetKeyRef<'_> {
    fn matches(&self, key: &AssetKey) -> bool {
        // The path first: it differs between most keys of a bucket.
        self.path == key.path()
            && self.version == key.version()
            && self.package == key.package()
            && self.dictionary == key.dictionary
    }
}

/// An asset as the store hands it out: shared with the cache, responses
/// prepared.
pub(crate) type Asset = Arc<cache::Entry<AssetKey, Prepared>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::store::testing::key;

    #[test]
    fn a_borrowed_key_hashes_and_matches_as_the_key() {
        let hasher = foldhash::fast::RandomState::default();
        let owned = key("js/a.js");
        let borrowed = owned.borrowed();
        assert_eq!(hasher.hash_one(&owned), hasher.hash_one(borrowed));
        assert!(borrowed.matches(&owned));
        let other = AssetKeyRef::of(borrowed.package, borrowed.version, "js/b.js");
        assert!(!other.matches(&owned));
        assert_ne!(hasher.hash_one(other), hasher.hash_one(borrowed));
        assert_eq!(borrowed.to_key(), owned);
        // The entry with a dictionary's deltas is another entry.
        let with = borrowed.with_dictionary(Some([1; 32])).to_key();
        assert!(!borrowed.matches(&with));
        assert!(with.borrowed().matches(&with));
        assert_eq!(hasher.hash_one(&with), hasher.hash_one(with.borrowed()));
        assert_ne!(hasher.hash_one(&with), hasher.hash_one(borrowed));
    }
}
