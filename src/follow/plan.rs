//! Which of a replica's LTX files take a copy from where it is to the
//! replica's newest transaction.
//!
//! Litestream keeps a replica as files named `MIN-MAX.ltx` (transaction
//! ids, 16 hex digits) in `ltx/LEVEL/`: level 0 holds one file per sync,
//! levels 1 to 8 merge older ranges of the level below (keeping each
//! page's last image), and level 9 holds snapshots, whole databases. A file
//! of range MIN..MAX applied to a copy at transaction P, where
//! MIN <= P + 1 <= MAX, leaves the copy at MAX: every page changed after P
//! is in it with its image as of MAX, and every other page already is.
//!
//! So a plan starts from the copy's position, or from the newest snapshot
//! when the copy has none, and keeps taking, among the files that start at
//! or before the next transaction, the one that reaches furthest (on a tie,
//! the smaller range). Snapshots are used only to start: a copy that can
//! go on from where it is never rewrites the whole database. A plan that
//! cannot reach the replica's newest transaction from the copy's position
//! (the files after it were merged away while the follower was down) starts
//! again from a snapshot.

/// The level Litestream keeps snapshots at.
pub(crate) const SNAPSHOT_LEVEL: u8 = 9;

/// One LTX file of a replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LtxFile {
    pub level: u8,
    pub min_txid: u64,
    pub max_txid: u64,
    /// Where it is: a path for a replica in a directory, the object's key
    /// in S3 (`source`).
    pub key: String,
}

impl LtxFile {
    pub(crate) fn new(level: u8, (min_txid, max_txid): (u64, u64), key: String) -> LtxFile {
        LtxFile {
            level,
            min_txid,
            max_txid,
            key,
        }
    }
}

/// `MIN-MAX.ltx`, each 16 hex digits.
pub(crate) fn parse_name(name: &str) -> Option<(u64, u64)> {
    let (min, max) = name.strip_suffix(".ltx")?.split_once('-')?;
    if min.len() != 16 || max.len() != 16 {
        return None;
    }
    let min = u64::from_str_radix(min, 16).ok()?;
    let max = u64::from_str_radix(max, 16).ok()?;
    (min >= 1 && min <= max).then_some((min, max))
}

/// The newest transaction the replica holds, if any.
pub(crate) fn newest(files: &[LtxFile]) -> Option<u64> {
    files.iter().map(|f| f.max_txid).max()
}

/// The files to apply, in order, to take a copy at `position` (None: no
/// usable copy) to `newest(files)`. Empty when the copy is there already.
/// None when no chain of files gets there: no snapshot, or a gap.
pub(crate) fn plan(files: &[LtxFile], position: Option<u64>) -> Option<Vec<&LtxFile>> {
    let target = newest(files)?;
    // From where the copy is, if the replica still goes on from there (a
    // replica that restarted its numbering is behind the copy).
    if let Some(at) = position.filter(|&at| at <= target)
        && let Some(steps) = chain(files, at, target)
    {
        return Some(steps);
    }
    let snapshot = files
        .iter()
        .filter(|f| f.level == SNAPSHOT_LEVEL)
        .max_by_key(|f| f.max_txid)?;
    let mut steps = vec![snapshot];
    steps.extend(chain(files, snapshot.max_txid, target)?);
    Some(steps)
}

/// Files below the snapshot level that take a copy at `at` to `target`.
fn chain(files: &[LtxFile], mut at: u64, target: u64) -> Option<Vec<&LtxFile>> {
    let mut steps = Vec::new();
    while at < target {
        let next = files
            .iter()
            .filter(|f| f.level < SNAPSHOT_LEVEL && f.min_txid <= at + 1 && f.max_txid > at)
            .max_by_key(|f| (f.max_txid, f.min_txid))?;
        at = next.max_txid;
        steps.push(next);
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(level: u8, min_txid: u64, max_txid: u64) -> LtxFile {
        LtxFile::new(
            level,
            (min_txid, max_txid),
            format!("{level}/{min_txid}-{max_txid}"),
        )
    }

    fn ranges(steps: Option<Vec<&LtxFile>>) -> Option<Vec<(u8, u64, u64)>> {
        steps.map(|s| {
            s.iter()
                .map(|f| (f.level, f.min_txid, f.max_txid))
                .collect()
        })
    }

    #[test]
    fn names_are_two_sixteen_digit_ids() {
        assert_eq!(
            parse_name("0000000000000001-000000000000000a.ltx"),
            Some((1, 10))
        );
        assert_eq!(parse_name("0000000000000002-0000000000000001.ltx"), None);
        assert_eq!(parse_name("1-2.ltx"), None);
        assert_eq!(
            parse_name("0000000000000001-0000000000000001.ltx.tmp"),
            None
        );
    }

    #[test]
    fn a_copy_goes_on_from_where_it_is_without_the_snapshot() {
        let files = [
            file(9, 1, 5),
            file(0, 5, 5),
            file(0, 6, 6),
            file(0, 7, 7),
            file(1, 1, 6),
        ];
        assert_eq!(
            ranges(plan(&files, Some(5))),
            Some(vec![(0, 6, 6), (0, 7, 7)])
        );
        assert_eq!(
            ranges(plan(&files, Some(4))),
            Some(vec![(1, 1, 6), (0, 7, 7)])
        );
        assert_eq!(ranges(plan(&files, Some(7))), Some(vec![]));
    }

    #[test]
    fn no_copy_starts_from_the_newest_snapshot() {
        let files = [file(9, 1, 3), file(9, 1, 6), file(0, 6, 6), file(0, 7, 7)];
        assert_eq!(ranges(plan(&files, None)), Some(vec![(9, 1, 6), (0, 7, 7)]));
    }

    #[test]
    fn a_gap_or_a_restarted_replica_starts_again_from_a_snapshot() {
        // Files 4 and 5 were merged away; the snapshot reaches 6.
        let files = [file(9, 1, 6), file(0, 6, 6), file(0, 7, 7)];
        assert_eq!(
            ranges(plan(&files, Some(3))),
            Some(vec![(9, 1, 6), (0, 7, 7)])
        );
        // The copy is ahead of everything: the replica was started over.
        let files = [file(9, 1, 2), file(0, 2, 2)];
        assert_eq!(ranges(plan(&files, Some(40))), Some(vec![(9, 1, 2)]));
    }

    #[test]
    fn nothing_reaches_the_newest_without_a_snapshot() {
        assert_eq!(ranges(plan(&[file(0, 4, 4)], None)), None);
        assert_eq!(ranges(plan(&[], None)), None);
        let files = [file(9, 1, 2), file(0, 5, 5)];
        assert_eq!(ranges(plan(&files, None)), None);
    }
}
