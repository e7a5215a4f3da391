//! Triggers usable with any server model: outages (requests arriving in one are refused at
//! once, as `down` refuses) and degradations (service capacity times a factor for requests
//! starting in one). Intervals are `[from, to)` in simulated time; plain data, no state.

use crate::time::SimTime;

/// A degradation: requests starting service in `[from, to)` get capacity times `factor`
/// (their service time divided by it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Degrade {
    /// Start (inclusive).
    pub from: SimTime,
    /// End (exclusive).
    pub to: SimTime,
    /// Capacity factor in [0.001, 1] (`MIN_DEGRADE_FACTOR`): 0.5 doubles service times.
    pub factor: f64,
}

/// The outages and degradations of a run.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Triggers {
    /// Outages `[from, to)`, in time order, not overlapping.
    pub outages: Vec<(SimTime, SimTime)>,
    /// Degradations, in time order, not overlapping.
    pub degrades: Vec<Degrade>,
}

impl Triggers {
    /// True when the server is out at `t`.
    #[inline]
    pub fn out_at(&self, t: SimTime) -> bool {
        self.outages.iter().any(|&(from, to)| t >= from && t < to)
    }

    /// The capacity factor at `t` (1 outside every degradation).
    #[inline]
    pub fn factor_at(&self, t: SimTime) -> f64 {
        self.degrades
            .iter()
            .find(|d| t >= d.from && t < d.to)
            .map_or(1.0, |d| d.factor)
    }

    /// True when there is no trigger.
    pub fn is_empty(&self) -> bool {
        self.outages.is_empty() && self.degrades.is_empty()
    }

    /// When the last trigger ends; `None` without triggers.
    pub fn last_end(&self) -> Option<SimTime> {
        self.outages
            .iter()
            .map(|&(_, to)| to)
            .chain(self.degrades.iter().map(|d| d.to))
            .max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_half_open() {
        let t = Triggers {
            outages: vec![(SimTime(10), SimTime(20))],
            degrades: vec![Degrade {
                from: SimTime(30),
                to: SimTime(40),
                factor: 0.5,
            }],
        };
        assert!(!t.out_at(SimTime(9)) && t.out_at(SimTime(10)) && !t.out_at(SimTime(20)));
        assert_eq!(t.factor_at(SimTime(29)), 1.0);
        assert_eq!(t.factor_at(SimTime(30)), 0.5);
        assert_eq!(t.factor_at(SimTime(40)), 1.0);
        assert_eq!(t.last_end(), Some(SimTime(40)));
        assert_eq!(Triggers::default().last_end(), None);
    }
}
