//! A window of a long listing, as `ccc ls --limit/--offset` and the
//! server's `?limit=&offset=` ask for one: a value the HTTP layer parses
//! and the catalog's queries apply, so neither depends on the other for it.

/// A window of a long listing: the `offset` rows first in its order are
/// skipped, then at most `limit` rows are listed (all of them when None).
/// `ccc ls --limit/--offset` and the server's `?limit=&offset=`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Page {
    pub offset: u64,
    pub limit: Option<u64>,
}

impl Page {
    /// Every row.
    pub(crate) const ALL: Page = Page {
        offset: 0,
        limit: None,
    };

    /// The window of `rows`.
    pub(crate) fn apply<T>(self, rows: Vec<T>) -> Vec<T> {
        let skip = usize::try_from(self.offset).unwrap_or(usize::MAX);
        let take = self
            .limit
            .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        rows.into_iter().skip(skip).take(take).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_skips_then_takes() {
        let rows: Vec<u32> = (0..10).collect();
        assert_eq!(Page::ALL.apply(rows.clone()), rows);
        let page = Page {
            offset: 8,
            limit: Some(5),
        };
        assert_eq!(page.apply(rows.clone()), vec![8, 9]);
        let page = Page {
            offset: 2,
            limit: Some(0),
        };
        assert!(page.apply(rows).is_empty());
    }
}
