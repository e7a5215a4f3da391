//! The cut of a grid's rows into shards by estimated cost ([`Partition`]): each row's cost,
//! and the integer rule that gives every machine the same contiguous blocks.

use std::ops::Range;

use super::{Shard, MAX_ROW_COST, ROW_OVERHEAD};
use crate::config::Scenario;
use crate::sweep::{Layout, Plan, SweepError};

/// The estimated cost of one run of `scenario` (see the module documentation).
pub fn row_cost(scenario: &Scenario) -> u128 {
    (ROW_OVERHEAD + scenario.requests_per_run()).min(MAX_ROW_COST)
}

/// How a grid's rows are cut into shards: the cost of each cell's rows and the running sums.
#[derive(Clone, Debug)]
pub struct Partition {
    rows_per_cell: u64,
    rows: u64,
    /// Cost of one row of each cell.
    cost: Vec<u128>,
    /// Requests of one row of each cell, at most (for `--max-requests`).
    requests: Vec<u128>,
    /// Cost of every row before each cell; one more entry, the total.
    before: Vec<u128>,
}

impl Partition {
    /// The costs of `plan`'s whole grid (its span is ignored).
    pub fn of(plan: &Plan) -> Result<Partition, SweepError> {
        let rows_per_cell = match plan.layout {
            Layout::Tidy => plan.seeds,
            Layout::Aggregate => 1,
        };
        let per_run = match plan.layout {
            Layout::Tidy => 1,
            Layout::Aggregate => u128::from(plan.seeds),
        };
        let mut cost = Vec::with_capacity(plan.cells as usize);
        let mut requests = Vec::with_capacity(plan.cells as usize);
        let mut before = Vec::with_capacity(plan.cells as usize + 1);
        let mut sum = 0u128;
        for cell in 0..plan.cells {
            let scenario = plan.cell_scenario(cell)?;
            let c = row_cost(&scenario) * per_run;
            requests.push(scenario.attempts_per_run() * per_run);
            before.push(sum);
            cost.push(c);
            sum += c * u128::from(rows_per_cell);
        }
        before.push(sum);
        Ok(Partition {
            rows_per_cell,
            rows: plan.grid_rows(),
            cost,
            requests,
            before,
        })
    }

    /// The most requests the rows `rows` can send.
    pub fn requests(&self, rows: Range<u64>) -> u128 {
        let mut total = 0;
        let mut row = rows.start;
        while row < rows.end {
            let cell = row / self.rows_per_cell;
            let end = ((cell + 1) * self.rows_per_cell).min(rows.end);
            total += u128::from(end - row) * self.requests[cell as usize];
            row = end;
        }
        total
    }

    /// The estimated cost of the whole grid.
    pub fn total(&self) -> u128 {
        self.before.last().copied().unwrap_or(0)
    }

    fn cost_of(&self, row: u64) -> u128 {
        self.cost[(row / self.rows_per_cell) as usize]
    }

    /// The cost of the rows before `row`.
    fn before(&self, row: u64) -> u128 {
        let cell = (row / self.rows_per_cell) as usize;
        self.before[cell] + u128::from(row % self.rows_per_cell) * self.cost[cell]
    }

    /// The shard of `count` that row `row` belongs to.
    pub fn shard_of(&self, row: u64, count: u64) -> u64 {
        let middle = 2 * self.before(row) + self.cost_of(row);
        let shard = u128::from(count) * middle / (2 * self.total());
        (shard as u64).min(count - 1)
    }

    /// The block of rows of `shard` (empty when the shard has none).
    pub fn range(&self, shard: Shard) -> Range<u64> {
        self.first_row_of(shard.index, shard.count)..self.first_row_of(shard.index + 1, shard.count)
    }

    /// The first row whose shard is `index` or later (`rows` when none is).
    fn first_row_of(&self, index: u64, count: u64) -> u64 {
        let (mut low, mut high) = (0, self.rows);
        while low < high {
            let mid = low + (high - low) / 2;
            if self.shard_of(mid, count) < index {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }
}
