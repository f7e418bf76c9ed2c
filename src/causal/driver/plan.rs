//! The experiment plan: which sites, which speedups, how many rounds, in
//! which order.
//!
//! Each round visits the sites in a random order; a site is a *block* of its
//! speedup cells in random order, run back to back, so that a site's 0%
//! baseline is measured within seconds of its treatments. The order comes
//! from SplitMix64 seeded by `--seed`, never from results: systematic or
//! result-driven choices bias a profile.

use crate::rng::SplitMix64;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Site ids.
    pub sites: Vec<u16>,
    /// Speedups in percent, ascending, 0 always first.
    pub speedups: Vec<u8>,
    pub rounds: usize,
    pub seed: u64,
}

/// One experiment to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellSpec {
    pub round: usize,
    pub site: u16,
    pub pct: u8,
}

impl Plan {
    /// Builds a plan; 0% is added to the speedups when missing.
    pub(crate) fn new(sites: Vec<u16>, mut speedups: Vec<u8>, rounds: usize, seed: u64) -> Plan {
        speedups.push(0);
        speedups.sort_unstable();
        speedups.dedup();
        Plan {
            sites,
            speedups,
            rounds,
            seed,
        }
    }

    /// Every cell, in the order to run them.
    pub(crate) fn schedule(&self) -> Vec<CellSpec> {
        let mut rng = SplitMix64::new(self.seed);
        let mut cells = Vec::with_capacity(self.rounds * self.sites.len() * self.speedups.len());
        for round in 0..self.rounds {
            let mut sites = self.sites.clone();
            rng.shuffle(&mut sites);
            for site in sites {
                let mut speedups = self.speedups.clone();
                rng.shuffle(&mut speedups);
                cells.extend(
                    speedups
                        .into_iter()
                        .map(|pct| CellSpec { round, site, pct }),
                );
            }
        }
        cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_once_per_round_in_site_blocks() {
        let plan = Plan::new(vec![0, 1, 2], vec![50, 25], 5, 41);
        assert_eq!(plan.speedups, vec![0, 25, 50]);
        let cells = plan.schedule();
        assert_eq!(cells.len(), 5 * 3 * 3);
        for round in 0..5 {
            let in_round: Vec<_> = cells.iter().filter(|c| c.round == round).collect();
            assert_eq!(in_round.len(), 9);
            // Blocks: each site's three cells are adjacent.
            for chunk in in_round.chunks(3) {
                assert!(chunk.iter().all(|c| c.site == chunk[0].site));
                let mut pcts: Vec<u8> = chunk.iter().map(|c| c.pct).collect();
                pcts.sort_unstable();
                assert_eq!(pcts, vec![0, 25, 50]);
            }
        }
        assert_eq!(plan.schedule(), cells, "same seed, same order");
        assert_ne!(
            Plan::new(vec![0, 1, 2], vec![50, 25], 5, 42).schedule(),
            cells
        );
    }

    #[test]
    fn shuffles_are_not_fixed_points() {
        let mut rng = SplitMix64::new(7);
        let mut firsts = [0usize; 4];
        for _ in 0..4000 {
            let mut v = [0, 1, 2, 3];
            rng.shuffle(&mut v);
            firsts[v[0]] += 1;
        }
        assert!(
            firsts.iter().all(|&n| (800..1200).contains(&n)),
            "{firsts:?}"
        );
    }
}
