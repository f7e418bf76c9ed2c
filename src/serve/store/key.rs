//! The cache's key: one file of one exact version, its three names in one
//! allocation, and the form borrowed from a request that a cache hit is
//! looked up with, so that a hit copies no names. A key may also name a
//! dictionary: the entry then holds the asset with its deltas against
//! that dictionary (`serve::stored`), beside the entry without one.

use crate::serve::cache::{self, Lookup};
use crate::serve::prepared::Prepared;
use std::sync::Arc;

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
}

/// An [`AssetKey`] borrowed from a request: what a cache hit is looked up
/// with, so a hit copies no names. It hashes as its key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AssetKeyRef<'a> {
    pub package: &'a str,
    pub version: &'a str,
    pub path: &'a str,
    pub dictionary: Option<[u8; 32]>,
}

impl AssetKey {
    pub fn new(package: &str, version: &str, path: &str) -> AssetKey {
        let mut names = String::with_capacity(package.len() + version.len() + path.len());
        names.push_str(package);
        names.push_str(version);
        names.push_str(path);
        AssetKey {
            names: names.into_boxed_str(),
            version_at: package.len(),
            path_at: package.len() + version.len(),
            dictionary: None,
        }
    }

    /// The key of the asset's entry with its deltas against `dictionary`.
    pub(crate) fn with_dictionary(mut self, dictionary: Option<[u8; 32]>) -> AssetKey {
        self.dictionary = dictionary;
        self
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
        }
    }
}

/// As the borrowed form hashes, so a hit finds its key without making one.
impl std::hash::Hash for AssetKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.borrowed().hash(state);
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
        }
    }

    pub(crate) fn to_key(self) -> AssetKey {
        AssetKey::new(self.package, self.version, self.path).with_dictionary(self.dictionary)
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
        use std::hash::BuildHasher;
        let hasher = foldhash::fast::RandomState::default();
        let owned = key("js/a.js");
        let borrowed = owned.borrowed();
        assert_eq!(hasher.hash_one(&owned), hasher.hash_one(borrowed));
        assert!(borrowed.matches(&owned));
        let other = AssetKeyRef {
            path: "js/b.js",
            ..borrowed
        };
        assert!(!other.matches(&owned));
        assert_eq!(borrowed.to_key(), owned);
        // The entry with a dictionary's deltas is another entry.
        let with = owned.clone().with_dictionary(Some([1; 32]));
        assert!(!borrowed.matches(&with));
        assert!(with.borrowed().matches(&with));
        assert_eq!(hasher.hash_one(&with), hasher.hash_one(with.borrowed()));
        assert_ne!(hasher.hash_one(&with), hasher.hash_one(borrowed));
    }
}
