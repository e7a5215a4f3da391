//! The point estimate of the boundary from the evaluated points: the collapse probabilities
//! made monotone along the axis (isotonic regression by pool-adjacent-violators, each point
//! weighted by its seeds: Ayer et al. 1955, Barlow et al. 1972), then the level's crossing
//! by linear interpolation between the two fitted points either side of it. Pure arithmetic.

use super::search::Point;

/// The isotonic fit of the points' estimates (`rising` or falling along the axis), one value
/// a point, in the points' order (which must be by value).
pub fn isotonic(points: &[Point], rising: bool) -> Vec<f64> {
    // Blocks of (weighted mean, weight, points pooled); a falling fit is a rising fit of −p.
    let sign = if rising { 1.0 } else { -1.0 };
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for point in points {
        let weight = point.seeds() as f64;
        blocks.push((sign * point.estimate().p, weight, 1));
        while blocks.len() > 1 {
            let (m2, w2, n2) = blocks[blocks.len() - 1];
            let (m1, w1, n1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = ((m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, n1 + n2);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(mean, _, n)| std::iter::repeat_n(sign * mean, n))
        .collect()
}

/// Where the isotonic fit crosses `level`, in integer units as a fraction (interpolated
/// between points); `None` when it stays on one side over every point. A run of points fitted
/// exactly at the level gives the middle of the run.
pub fn crossing(points: &[Point], level: f64, rising: bool) -> Option<f64> {
    let fit = isotonic(points, rising);
    let x = |i: usize| points[i].value as f64;
    // The first point at or past the level, in the curve's direction.
    let past = |f: f64| if rising { f >= level } else { f <= level };
    let first = fit.iter().position(|&f| past(f))?;
    if fit[first] == level {
        let last = (first..fit.len())
            .take_while(|&i| fit[i] == level)
            .last()
            .unwrap_or(first);
        return Some((x(first) + x(last)) / 2.0);
    }
    if first == 0 {
        return None;
    }
    let (f0, f1) = (fit[first - 1], fit[first]);
    Some(x(first - 1) + (level - f0) / (f1 - f0) * (x(first) - x(first - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::search::Outcome;

    fn point(value: u64, collapsed: u64, seeds: u64) -> Point {
        Point {
            value,
            outcomes: (0..seeds)
                .map(|i| Outcome {
                    seed: i,
                    collapsed: i < collapsed,
                })
                .collect(),
        }
    }

    #[test]
    fn violators_are_pooled_by_weight() {
        // 0.2 (10 seeds), 0.6 (10), 0.4 (30), 0.9 (10): the middle two pool to
        // (6 + 12) / 40 = 0.45.
        let points = [
            point(0, 2, 10),
            point(1, 6, 10),
            point(2, 12, 30),
            point(3, 9, 10),
        ];
        let fit = isotonic(&points, true);
        assert_eq!(fit, vec![0.2, 0.45, 0.45, 0.9]);
        // 0.45 at x = 2 and 0.9 at x = 3: 0.5 is crossed at 2 + 0.05 / 0.45.
        let x = crossing(&points, 0.5, true).unwrap();
        assert!((x - (2.0 + 0.05 / 0.45)).abs() < 1e-12, "{x}");
        // Falling: the mirror image crosses at the same place.
        let mirrored: Vec<Point> = points
            .iter()
            .map(|p| point(10 - p.value, p.collapsed(), p.seeds()))
            .rev()
            .collect();
        let y = crossing(&mirrored, 0.5, false).unwrap();
        assert!((y - (10.0 - x)).abs() < 1e-12, "{y}");
    }

    #[test]
    fn a_curve_on_one_side_has_no_crossing_and_a_flat_run_its_middle() {
        assert_eq!(
            crossing(&[point(0, 0, 10), point(5, 3, 10)], 0.5, true),
            None
        );
        assert_eq!(
            crossing(&[point(0, 8, 10), point(5, 9, 10)], 0.5, true),
            None
        );
        let flat = [
            point(0, 1, 10),
            point(2, 5, 10),
            point(4, 5, 10),
            point(6, 9, 10),
        ];
        assert_eq!(crossing(&flat, 0.5, true), Some(3.0));
    }
}
