//! How a tune picks the candidates it runs, for grids too large to run whole: a seeded Latin
//! hypercube over the grid's levels (McKay, Beckman & Conover 1979, "A Comparison of Three
//! Methods for Selecting Values of Input Variables in the Analysis of Output from a Computer
//! Code", Technometrics 21(2), <https://doi.org/10.2307/1268522>), then successive halving
//! (Karnin, Koren & Somekh 2013, "Almost Optimal Exploration in Multi-Armed Bandits", ICML,
//! <https://proceedings.mlr.press/v28/karnin13.html>; Jamieson & Talwalkar 2016, "Non-stochastic
//! Best Arm Identification and Hyperparameter Optimization", AISTATS,
//! <https://proceedings.mlr.press/v51/jamieson16.html>): every candidate of the design runs with
//! the file's seeds, the best 1/η of them (by [`rank`]) go on with η times the seeds, and so on
//! until η or fewer are left or the next rung would pass `max_seeds`. Seeds a candidate already
//! has are kept (the run cache), so a rung only adds the new ones. Pure: the design depends on
//! the master seed alone, the ranking on the means, so the search is the same for any thread
//! count.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::rng::derive_seed;

use super::tune_file::TuneFile;
use super::tune_frontier::{frontier, rule_order, Evaluated};

/// `n` candidates of `file`'s grid (grid positions, ascending, each once) by a Latin hypercube
/// drawn from `seed`: for each dimension of `L` levels, the `n` points take the `n` strata of
/// [0, 1) in a random order, a uniform draw within its stratum, and the level `⌊u · L⌋`, so each
/// dimension's levels are covered as evenly as `n` points allow. Points falling on the same
/// grid position are kept once; with `n` at least the grid, the whole grid.
pub fn latin_hypercube(file: &TuneFile, n: u64, seed: u64) -> Vec<u64> {
    let size = file.grid_size();
    if n >= size {
        return (0..size).collect();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, "tune-latin-hypercube"));
    let n = n as usize;
    let mut coordinates = vec![vec![0usize; file.dimensions.len()]; n];
    for (d, dimension) in file.dimensions.iter().enumerate() {
        let levels = dimension.levels.len();
        let mut strata: Vec<usize> = (0..n).collect();
        strata.shuffle(&mut rng);
        for (point, &stratum) in coordinates.iter_mut().zip(&strata) {
            let u = (stratum as f64 + rng.random::<f64>()) / n as f64;
            point[d] = ((u * levels as f64) as usize).min(levels - 1);
        }
    }
    let mut indices: Vec<u64> = coordinates
        .iter()
        .map(|point| {
            point
                .iter()
                .zip(&file.dimensions)
                .fold(0u64, |index, (&l, d)| {
                    index * d.levels.len() as u64 + l as u64
                })
        })
        .collect();
    indices.sort_unstable();
    indices.dedup();
    indices
}

/// How far `e` misses its constraints: the sum over constraints of the shortfall of its mean,
/// each relative to the bound's size (0 when it meets them all; a missing value counts 1).
pub fn violation(e: &Evaluated, file: &TuneFile) -> f64 {
    file.constraints
        .iter()
        .map(|c| match e.stat(&c.term) {
            None => 1.0,
            Some(s) if c.op.holds(s.mean, c.bound) => 0.0,
            Some(s) => (s.mean - c.bound).abs() / c.bound.abs().max(1e-9),
        })
        .sum()
}

/// The order successive halving keeps candidates in (best first, as indices into
/// `evaluated`): those meeting the constraints first, by Pareto layer (the frontier, then the
/// frontier of the rest, ...), within a layer by the recommendation rule; then the others by
/// how far they miss, then grid order.
pub fn rank(evaluated: &[Evaluated], file: &TuneFile) -> Vec<usize> {
    let mut layer = vec![usize::MAX; evaluated.len()];
    let mut left: Vec<usize> = (0..evaluated.len())
        .filter(|&i| evaluated[i].feasible && evaluated[i].objectives.is_some())
        .collect();
    let mut depth = 0;
    while !left.is_empty() {
        let points: Vec<_> = left
            .iter()
            .map(|&i| evaluated[i].objectives.clone().unwrap_or_default())
            .collect();
        let front: Vec<usize> = frontier(&points).into_iter().map(|k| left[k]).collect();
        for &i in &front {
            layer[i] = depth;
        }
        left.retain(|i| !front.contains(i));
        depth += 1;
    }
    let missed: Vec<f64> = evaluated.iter().map(|e| violation(e, file)).collect();
    let mut order: Vec<usize> = (0..evaluated.len()).collect();
    order.sort_by(|&a, &b| {
        layer[a]
            .cmp(&layer[b])
            .then_with(|| missed[a].total_cmp(&missed[b]))
            .then_with(|| match layer[a] {
                usize::MAX => evaluated[a]
                    .candidate
                    .index
                    .cmp(&evaluated[b].candidate.index),
                _ => rule_order(&evaluated[a], &evaluated[b]),
            })
    });
    order
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn file(params: &str) -> TuneFile {
        let text = format!(
            "[[scenario]]\nname = \"a\"\n[params]\n{params}\n[objectives]\nminimize = [\"retries\"]\n"
        );
        TuneFile::parse(&text, Path::new("."), "t.toml").unwrap()
    }

    #[test]
    fn a_latin_hypercube_covers_each_dimensions_levels_evenly() {
        // 10 retries × 10 bases, 10 points: each retries level and each base exactly once.
        let f = file("retries = \"1..10\"\nbase = \"100ms..1s step 100ms\"");
        let points = latin_hypercube(&f, 10, 7);
        assert_eq!(points.len(), 10, "{points:?}");
        let mut rows: Vec<u64> = points.iter().map(|i| i / 10).collect();
        let mut columns: Vec<u64> = points.iter().map(|i| i % 10).collect();
        rows.sort_unstable();
        columns.sort_unstable();
        assert_eq!(rows, (0..10).collect::<Vec<_>>());
        assert_eq!(columns, (0..10).collect::<Vec<_>>());
        // The same seed, the same design; another seed, another one.
        assert_eq!(latin_hypercube(&f, 10, 7), points);
        assert_ne!(latin_hypercube(&f, 10, 8), points);
        // Asking for the whole grid gives it.
        assert_eq!(latin_hypercube(&f, 100, 7).len(), 100);
    }
}
