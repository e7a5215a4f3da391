//! Attempt traces (`--trace PATH`): every attempt of a run as one line, JSON lines or CSV,
//! streamed while the run goes on. Owns the engine's observer hook ([`Observer`], with the
//! do-nothing [`NoTrace`] every untraced run uses), the line format ([`TraceFormat`]), the
//! seeded client sample ([`Sample`]) and the writer ([`TraceWriter`]). The writer writes into
//! any [`Write`](std::io::Write) through a fixed buffer, so memory stays flat however many attempts there
//! are; opening the file (and replacing it whole) is [`crate::output`]'s.
//!
//! **Fields** (docs/reports.md lists them with their types): `run` (the strategy's place in
//! the run, from 0), `strategy`, `client`, `call` (the call's number within its client, from
//! 0: an item on the herd paths), `layer` (only with retry layers, which trace every layer's
//! attempts: 0 the outermost, the run's own policy the last), `attempt` (0 for a call's first, `k` for its `k`-th retry),
//! `sent`, `arrived` (null when it timed out before reaching the server), `ended` (when the
//! answer was read, or the timeout fired), in seconds as exact decimals of the integer
//! nanoseconds; `outcome` (`served`, `refused`, `timed_out`; an outer layer's `served`, `failed`); `next` (`done`, `retry`,
//! `gave_up`, `denied`, `paused`); `wait` (the strategy's draw before the next attempt, when
//! `next` is `retry`; a hidden tab's throttled timer or a throttle's token may send it
//! later: the next line's `sent` says when); `hidden` (whether the tab was hidden when the
//! attempt ended, null without tabs).
//!
//! **Order.** Runs in strategy order; within a run, attempts in the order the engine ends
//! them: the event queue and the call loop in simulated time, the independent paths client
//! by client (a traced run formats ranges of clients on the worker threads, each into its
//! own buffer, and writes the buffers in client order, so the trace does not depend on
//! `--threads`).
//!
//! **Sample** (`--trace-sample F`): client `i` of a run with run seed `s` is kept when word
//! number `i` (from 0) of the SplitMix64 stream started at `s XOR 0x7472616365` (`trace` in
//! ASCII) is below `F · 2^64`; the same clients for every strategy of a run.

mod handoff;
mod line;
mod record;
mod sample;
mod writer;

pub use handoff::{Handoff, HANDOFF_ATTEMPTS, HANDOFF_BYTES};
pub use line::TraceFormat;
pub use record::{Attempt, Next, NoTrace, Observer, Outcome};
pub use sample::Sample;
pub use writer::{
    part_clients, RunInfo, TracePart, TraceWriter, BUFFER_BYTES, LINE_BYTES_MAX, PARTS_PER_THREAD,
    PART_BYTES,
};
