//! A sweep row's run and its line. A row of a small cell simulates in a few microseconds, so
//! what the row does around it must cost far less:
//! - what the rows of a cell share is worked out once per worker and cell ([`RowCache`]): the
//!   validated scenario, its parameter fields and their CSV, its seed label's hash (a
//!   replicate's seed hashes only `replicate=N`);
//! - a run's figures are taken from the engine's tally ([`Figure`], one per metric column,
//!   through [`Summary`]'s serialisation so its fields stay the columns), not from a report;
//! - the line is written straight from them: the parameters' CSV, then the replicate, the seed
//!   and each figure, formatted as every CSV of herd-sim formats numbers.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::ser::{self, Impossible, Serialize};

use crate::config::Scenario;
use crate::engine::{simulate_all_in, RunSpec};
use crate::metrics::{Summary, Tally};
use crate::overload::CallLoopResult;
use crate::report::call_metric_values;
use crate::rng::LabelHash;

use super::stats::{Accumulator, Described};
use super::{Layout, Plan, SweepError};

/// One metric's value in a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// Nothing: a metric that does not apply to the run.
    Empty,
    /// A count.
    Whole(u64),
    /// A fractional number, written in the shortest form that reads back exactly, without an
    /// exponent (`1` rather than `1.0`, `0.0000001` rather than `1e-7`), as Rust prints it.
    Real(f64),
    /// A figure already formatted (the call loop's).
    Text(String),
}

impl Figure {
    /// Appends the figure's CSV field (never quoted: numbers only).
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Figure::Empty => {}
            Figure::Whole(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Figure::Real(x) => write_real(*x, out),
            Figure::Text(text) => out.extend_from_slice(text.as_bytes()),
        }
    }

    /// The figure as a number, as its field reads back (`None` when empty).
    pub fn number(&self) -> Option<f64> {
        match self {
            Figure::Empty => None,
            Figure::Whole(n) => Some(*n as f64),
            Figure::Real(x) => Some(*x),
            Figure::Text(text) => text.parse().ok(),
        }
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut bytes = Vec::new();
        self.write(&mut bytes);
        f.write_str(std::str::from_utf8(&bytes).map_err(|_| std::fmt::Error)?)
    }
}

/// `x` as `x.to_string()` writes it, the shortest decimal that reads back as `x`.
///
/// Most figures are times in whole nanoseconds or whole percentages: below 2^22 a double's
/// spacing is under 10^-9, so when `n / 10^9` reads back as `x` no other multiple of 10^-9
/// does, and no shorter decimal either (it would be one), so the digits of `n` are the
/// shortest, written here without the formatter's general search. Other numbers go through
/// the standard library. (Ryu finds the same digits but for ties: it wrote
/// `-840847321408031.2` where the standard library writes `.3`.)
fn write_real(x: f64, out: &mut Vec<u8>) {
    const NANOS: f64 = 1e9;
    if x > 0.0 && x < f64::from(1u32 << 22) {
        let n = (x * NANOS).round();
        if n / NANOS == x {
            let n = n as u64;
            let (whole, fraction) = (n / 1_000_000_000, n % 1_000_000_000);
            out.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
            if fraction > 0 {
                // Nine digits with their leading zeros: those of 10^9 + fraction but the 1.
                let mut buffer = itoa::Buffer::new();
                let digits = buffer.format(fraction + 1_000_000_000).as_bytes();
                let kept = digits
                    .iter()
                    .rposition(|&d| d != b'0')
                    .map_or(1, |last| last + 1);
                out.push(b'.');
                out.extend_from_slice(&digits[1..kept]);
            }
            return;
        }
    }
    use std::io::Write as _;
    // Writing into a vector cannot fail.
    let _ = write!(out, "{x}");
}

/// What the rows of one cell share, worked out by the first of them a worker runs.
struct Cell {
    /// Which plan and cell.
    plan: u64,
    index: u64,
    scenario: Scenario,
    /// The run of the cell's one strategy, its seed set row by row.
    spec: RunSpec,
    /// The parameter columns.
    parameters: Vec<String>,
    /// The parameter columns as CSV, with the comma after the last.
    prefix: Vec<u8>,
    /// The hash of the seed label's cell part.
    label: LabelHash,
    /// The last row's tally, kept for the next row's run to count into when it holds at
    /// most [`KEPT_TALLY_BYTES`] ([`simulate_all_in`]).
    spare: Option<Tally>,
}

/// The most a cell keeps of a row's tally for its next row: the buffers of a run's three
/// histograms over about ten thousand windows. A row that grew more returns it, so what a worker
/// holds between rows is never more than a row of its cell held while it ran.
const KEPT_TALLY_BYTES: usize = 256 * 1024;

/// A worker's copy of what its current cell's rows share (see the module documentation):
/// start one per worker (`Default`) and pass it to each row the worker runs.
#[derive(Default)]
pub struct RowCache {
    cell: Option<Box<Cell>>,
}

/// A number for each plan, so that a cache never mistakes one plan's cell for another's.
static PLANS: AtomicU64 = AtomicU64::new(0);

/// A new plan's number for [`RowCache`].
pub(super) fn plan_number() -> u64 {
    PLANS.fetch_add(1, Ordering::Relaxed)
}

/// One run of a row: its seed and its metrics' figures, in column order.
#[derive(Clone, Debug, PartialEq)]
pub struct RowRun {
    /// The run seed.
    pub seed: u64,
    /// One figure per metric column ([`Plan::metric_column`]).
    pub figures: Vec<Figure>,
}

impl Plan {
    /// The cell of `row` in `cache`, worked out unless it is there already, and the
    /// replicate (`None` for an aggregate row).
    fn cached<'c>(
        &self,
        row: u64,
        cache: &'c mut RowCache,
    ) -> Result<(&'c mut Cell, Option<u64>), SweepError> {
        let row = self.span.start + row;
        let (index, replicate) = match self.layout {
            Layout::Tidy => (row / self.seeds, Some(row % self.seeds)),
            Layout::Aggregate => (row, None),
        };
        let fresh = cache
            .cell
            .as_ref()
            .is_none_or(|c| c.plan != self.id || c.index != index);
        if fresh {
            let mut scenario = self.cell_scenario(index)?;
            // The sweep's seeds are its replicates: one run per row, with the row's own seed,
            // guarded with its share of the budget.
            scenario.replicates = 1;
            scenario.allow_in_flight(self.row_spare);
            let parameters = Self::parameter_fields(&scenario);
            let mut prefix = super::sink::line(&parameters);
            while prefix.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                prefix.pop();
            }
            prefix.push(b',');
            let label = LabelHash::default().then(self.seed_label(&scenario).as_bytes());
            // One run: the replicate spec of replicate 0 is the run spec.
            let spec = scenario.replicate_spec(scenario.strategies[0], 0);
            cache.cell = Some(Box::new(Cell {
                plan: self.id,
                index,
                scenario,
                spec,
                parameters,
                prefix,
                label,
                spare: None,
            }));
        }
        let cell = cache.cell.as_deref_mut().expect("filled above");
        Ok((cell, replicate))
    }

    /// The run seed of `replicate` of the cell whose label hashes to `label`.
    fn replicate_seed(&self, label: LabelHash, replicate: u64) -> u64 {
        label
            .then(b"replicate=")
            .then(itoa::Buffer::new().format(replicate).as_bytes())
            .seed(self.master_seed)
    }

    /// Runs `cell` with `seed` and gives its metric figures, in column order, to `out`; a run
    /// that outgrew what its guard allows is refused, as a plain run is.
    fn run_figures(
        &self,
        cell: &mut Cell,
        seed: u64,
        out: &mut impl FigureOut,
    ) -> Result<(), SweepError> {
        cell.spec.seed = seed;
        let scenario = &cell.scenario;
        let spare = cell
            .spare
            .take()
            .unwrap_or_else(|| Tally::new(cell.spec.bin));
        let (tally, calls) = simulate_all_in(&cell.spec, scenario.path, spare);
        let outgrown = calls
            .as_ref()
            .and_then(|c| c.outgrown)
            .map(|(at, calls, places)| (at.as_secs_f64(), calls, places));
        if tally.outgrown() || outgrown.is_some() {
            return Err(SweepError::Cell {
                cell: cell.index,
                description: format!("{}, seed {seed}", self.cell_description(cell.index)),
                problem: scenario.outgrown(outgrown, &scenario.strategies[0].to_string()),
            });
        }
        let mut summary = Summary::with_attempts(&tally, scenario.server.is_occ());
        summary.attempts = self.attempts.then_some(summary.requests);
        if tally.capacity_bytes() <= KEPT_TALLY_BYTES {
            cell.spare = Some(tally);
        }
        // The tab counts go in their own columns, after the call loop's, in every row.
        let tabs = [
            summary.hidden_clients.take(),
            summary.retries_while_hidden.take(),
            summary.paused.take(),
            summary.early_retries.take(),
        ];
        summary_figures(&summary, out);
        if self.calls {
            let calls = calls.map(|totals| {
                let o = &scenario.overload;
                // The descriptions are the report's, not a row's: left empty.
                CallLoopResult::new(
                    totals,
                    String::new(),
                    String::new(),
                    String::new(),
                    o.recovery_hold,
                    o.settle,
                )
                .with_controls(scenario.has_retry_controls())
            });
            for text in call_metric_values(calls.as_ref()) {
                out.push(match text.is_empty() {
                    true => Figure::Empty,
                    false => Figure::Text(text),
                });
            }
        }
        if self.tabs {
            for n in tabs {
                out.push(n.map_or(Figure::Empty, Figure::Whole));
            }
        }
        Ok(())
    }

    /// The metric figures of one run of `cell` with `seed`.
    fn figures(&self, cell: &mut Cell, seed: u64) -> Result<Vec<Figure>, SweepError> {
        let mut figures = Vec::with_capacity(self.metrics.len());
        self.run_figures(cell, seed, &mut figures)?;
        Ok(figures)
    }

    /// Runs tidy row `row` with `cache` (see [`RowCache`]) and returns its seed and figures.
    pub fn run_row(&self, row: u64, cache: &mut RowCache) -> Result<RowRun, SweepError> {
        let (cell, replicate) = self.cached(row, cache)?;
        let seed = match replicate {
            Some(replicate) => self.replicate_seed(cell.label, replicate),
            None => cell.scenario.seed,
        };
        Ok(RowRun {
            seed,
            figures: self.figures(cell, seed)?,
        })
    }

    /// The position of metric `name` among a [`RowRun`]'s figures.
    pub fn metric_column(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == name)
    }

    /// Runs row `row` (every seed of the cell when aggregated) with `cache` and returns its
    /// CSV line, as [`Plan::row`]'s fields would be written.
    pub fn row_line(&self, row: u64, cache: &mut RowCache) -> Result<Vec<u8>, SweepError> {
        let mut line = Vec::new();
        self.write_row(row, cache, &mut line)?;
        Ok(line)
    }

    /// [`Plan::row_line`], appended to `line`.
    pub(super) fn write_row(
        &self,
        row: u64,
        cache: &mut RowCache,
        line: &mut Vec<u8>,
    ) -> Result<(), SweepError> {
        let (cell, replicate) = self.cached(row, cache)?;
        match replicate {
            Some(replicate) => {
                line.reserve(cell.prefix.len() + 24 * (self.metrics.len() + 2));
                line.extend_from_slice(&cell.prefix);
                let seed = self.replicate_seed(cell.label, replicate);
                line.extend_from_slice(itoa::Buffer::new().format(replicate).as_bytes());
                line.push(b',');
                line.extend_from_slice(itoa::Buffer::new().format(seed).as_bytes());
                self.run_figures(cell, seed, &mut Line(line))?;
                line.push(b'\n');
            }
            None => {
                let parameters = cell.parameters.clone();
                let fields = self.aggregate_fields(cell, parameters)?;
                line.extend_from_slice(&super::sink::line(&fields));
            }
        }
        Ok(())
    }

    /// [`Plan::key`] with `cache`.
    pub(super) fn key_in(&self, row: u64, cache: &mut RowCache) -> Result<Vec<String>, SweepError> {
        let (cell, replicate) = self.cached(row, cache)?;
        let mut fields = cell.parameters.clone();
        match replicate {
            Some(replicate) => {
                fields.push(replicate.to_string());
                fields.push(self.replicate_seed(cell.label, replicate).to_string());
            }
            None => fields.push(self.seeds.to_string()),
        }
        Ok(fields)
    }

    /// Runs row `row` with `cache` and returns its fields (see [`Plan::row`]).
    pub fn row_in(&self, row: u64, cache: &mut RowCache) -> Result<Vec<String>, SweepError> {
        let (cell, replicate) = self.cached(row, cache)?;
        let mut fields = cell.parameters.clone();
        match replicate {
            Some(replicate) => {
                let seed = self.replicate_seed(cell.label, replicate);
                fields.push(replicate.to_string());
                fields.push(seed.to_string());
                fields.extend(self.figures(cell, seed)?.iter().map(Figure::to_string));
                Ok(fields)
            }
            None => self.aggregate_fields(cell, fields),
        }
    }

    /// An aggregate row's fields: `fields` (the parameters), the seeds, and each metric's
    /// statistics over them.
    fn aggregate_fields(
        &self,
        cell: &mut Cell,
        mut fields: Vec<String>,
    ) -> Result<Vec<String>, SweepError> {
        fields.push(self.seeds.to_string());
        // A few numbers a metric, whatever the seeds: memory does not grow with them.
        let mut columns = vec![Accumulator::default(); self.metrics.len()];
        for replicate in 0..self.seeds {
            let seed = self.replicate_seed(cell.label, replicate);
            for (column, figure) in columns.iter_mut().zip(self.figures(cell, seed)?) {
                // Empty (a metric that did not apply to this seed) is left out.
                if let Some(number) = figure.number() {
                    column.push(number);
                }
            }
        }
        for column in &columns {
            fields.extend(Described::fields(column.describe()));
        }
        Ok(fields)
    }
}

/// Where a run's figures go, in column order: a vector of them, or a CSV line ([`Line`]).
trait FigureOut {
    /// Takes the next figure.
    fn push(&mut self, figure: Figure);
}

impl FigureOut for Vec<Figure> {
    fn push(&mut self, figure: Figure) {
        Vec::push(self, figure);
    }
}

/// A CSV line the figures are written straight into, each after a comma.
struct Line<'a>(&'a mut Vec<u8>);

impl FigureOut for Line<'_> {
    #[inline]
    fn push(&mut self, figure: Figure) {
        self.0.push(b',');
        figure.write(self.0);
    }
}

/// Gives `out` the figures of `summary`'s fields, in declaration order, as its CSV
/// serialisation has them (a field skipped there is skipped here).
fn summary_figures(summary: &Summary, out: &mut impl FigureOut) {
    // Every field of a summary is a number or an absent one: nothing else can fail.
    let _ = summary.serialize(Fields(out));
}

/// The summary's fields as figures: a serializer of one struct of numbers.
struct Fields<'a, F>(&'a mut F);

/// A summary field that is not a number (none is).
#[derive(Debug)]
struct NotANumber;

impl std::fmt::Display for NotANumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a summary field that is not a number")
    }
}

impl std::error::Error for NotANumber {}

impl ser::Error for NotANumber {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NotANumber
    }
}

/// The methods of a serializer that takes none of these values.
macro_rules! refuse {
    ($($method:ident($($ty:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $ty),*) -> Result<Self::Ok, NotANumber> { Err(NotANumber) })*
    };
}

/// A serializer's compound values, none taken (but a struct, left to each).
macro_rules! refuse_compounds {
    ($ok:ty) => {
        type SerializeSeq = Impossible<$ok, NotANumber>;
        type SerializeTuple = Impossible<$ok, NotANumber>;
        type SerializeTupleStruct = Impossible<$ok, NotANumber>;
        type SerializeTupleVariant = Impossible<$ok, NotANumber>;
        type SerializeMap = Impossible<$ok, NotANumber>;
        type SerializeStructVariant = Impossible<$ok, NotANumber>;

        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotANumber> {
            Err(NotANumber)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotANumber> {
            Err(NotANumber)
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, NotANumber> {
            Err(NotANumber)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, NotANumber> {
            Err(NotANumber)
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotANumber> {
            Err(NotANumber)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, NotANumber> {
            Err(NotANumber)
        }
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<$ok, NotANumber> {
            Err(NotANumber)
        }
        refuse!(
            serialize_bool(bool),
            serialize_i8(i8),
            serialize_i16(i16),
            serialize_i32(i32),
            serialize_i64(i64),
            serialize_char(char),
            serialize_str(&str),
            serialize_bytes(&[u8]),
            serialize_unit(),
            serialize_unit_struct(&'static str),
            serialize_unit_variant(&'static str, u32, &'static str),
        );
    };
}

impl<F: FigureOut> ser::Serializer for Fields<'_, F> {
    type Ok = ();
    type Error = NotANumber;
    type SerializeStruct = Self;
    refuse_compounds!(());
    refuse!(
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_none(),
    );
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), NotANumber> {
        Err(NotANumber)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), NotANumber> {
        Err(NotANumber)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, NotANumber> {
        Ok(self)
    }
}

impl<F: FigureOut> ser::SerializeStruct for Fields<'_, F> {
    type Ok = ();
    type Error = NotANumber;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        _: &'static str,
        value: &T,
    ) -> Result<(), NotANumber> {
        self.0.push(value.serialize(Number)?);
        Ok(())
    }
    fn end(self) -> Result<(), NotANumber> {
        Ok(())
    }
}

/// One field's figure.
struct Number;

impl ser::Serializer for Number {
    type Ok = Figure;
    type Error = NotANumber;
    type SerializeStruct = Impossible<Figure, NotANumber>;
    refuse_compounds!(Figure);
    // No summary field is an `f32`: its shortest form is not its `f64`'s.
    refuse!(serialize_f32(f32));

    fn serialize_u8(self, v: u8) -> Result<Figure, NotANumber> {
        Ok(Figure::Whole(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Figure, NotANumber> {
        Ok(Figure::Whole(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Figure, NotANumber> {
        Ok(Figure::Whole(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Figure, NotANumber> {
        Ok(Figure::Whole(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Figure, NotANumber> {
        Ok(Figure::Real(v))
    }
    fn serialize_none(self) -> Result<Figure, NotANumber> {
        Ok(Figure::Empty)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Figure, NotANumber> {
        value.serialize(Number)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Figure, NotANumber> {
        value.serialize(Number)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotANumber> {
        Err(NotANumber)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Tally;
    use crate::sweep::metric_values;
    use crate::time::{SimDuration, SimTime};

    fn written(figure: &Figure) -> String {
        let mut bytes = Vec::new();
        figure.write(&mut bytes);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_real_is_written_as_the_standard_library_prints_it() {
        let mut state = 0x5eed_u64;
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            // A tie: exactly halfway between two shortest decimals.
            -840_847_321_408_031.0 - 0.25,
            0.1,
            100.0,
            1e15,
            1e16,
            1e17,
            1e21,
            1e-5,
            1e-7,
            123.456e-10,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for _ in 0..200_000 {
            let word = crate::rng::splitmix64(&mut state);
            // Every bit pattern, and numbers of the size a run reports.
            values.push(f64::from_bits(word));
            values.push((word % 100_000_000_000) as f64 / 1e9);
            values.push((word % (1 << 52)) as f64 / 1e9);
            values.push((word % 100_000) as f64);
            values.push(f64::from_bits(
                0x4150_0000_0000_0000 - (1 << 20) + word % (1 << 21),
            ));
        }
        for x in values {
            assert_eq!(written(&Figure::Real(x)), x.to_string(), "{:e}", x);
        }
    }

    #[test]
    fn a_summarys_figures_are_its_sweep_fields() {
        // The figures, written, are the fields the summary's CSV serialisation gives.
        let mut tally = Tally::new(SimDuration::from_millis(100));
        for i in 0..7u64 {
            tally.request(SimTime(250_000_000 * i + 1), i % 3 == 0, i > 0);
        }
        for attempts in [false, true] {
            let mut summary = Summary::with_attempts(&tally, attempts);
            let mut figures = Vec::new();
            summary_figures(&summary, &mut figures);
            let fields: Vec<String> = figures.iter().map(Figure::to_string).collect();
            assert_eq!(fields, metric_values(&summary));
            assert_eq!(fields.len(), crate::sweep::metric_names(attempts).len());
            summary.last_success_s = None;
            summary.hidden_clients = Some(3);
            let mut figures = Vec::new();
            summary_figures(&summary, &mut figures);
            let fields: Vec<String> = figures.iter().map(Figure::to_string).collect();
            assert_eq!(fields, metric_values(&summary));
        }
    }

    #[test]
    fn a_figure_reads_back_as_its_field() {
        for figure in [
            Figure::Empty,
            Figure::Whole(18_446_744_073_709_551_557),
            Figure::Real(9.607058693),
            Figure::Real(f64::NAN),
            Figure::Text("1.0269387755102042".into()),
        ] {
            let read = figure.to_string().parse::<f64>().ok();
            match (figure.number(), read) {
                (Some(a), Some(b)) if a.is_nan() => assert!(b.is_nan()),
                (a, b) => assert_eq!(a, b, "{figure:?}"),
            }
        }
    }
}
