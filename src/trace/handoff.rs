//! A single-threaded run's trace formatted on a second thread: the run's loop (the call loop,
//! the event queue) copies each attempt into a batch of fixed size ([`Handoff`]), and the
//! second thread tells the batches, in order, to the observer that formats and writes them.
//! Two batches exist, swapped between the threads over bounded channels: the loop fills one
//! while the other is told, so memory stays at [`HANDOFF_BYTES`] however long the run, and
//! the lines are those the observer would have written told directly.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::record::{Attempt, Observer};

/// Attempts a batch holds: a few hundred microseconds of a run's loop, so that the threads
/// meet rarely.
pub const HANDOFF_ATTEMPTS: usize = 4096;

/// Bytes the two batches hold.
pub const HANDOFF_BYTES: usize = 2 * HANDOFF_ATTEMPTS * std::mem::size_of::<Attempt>();

/// The observer a run's loop tells when its attempts are told on another thread (made by
/// [`Observer::handing_off`]): it copies each into its batch and hands the batch over full.
pub struct Handoff {
    batch: Vec<Attempt>,
    /// Full batches, to the thread that tells them.
    full: SyncSender<Vec<Attempt>>,
    /// Batches told, back for filling.
    told: Receiver<Vec<Attempt>>,
}

impl Handoff {
    /// Swaps the full batch for the other one, once the other thread has told it.
    #[cold]
    #[inline(never)]
    fn hand_over(&mut self) {
        match self.told.recv() {
            Ok(empty) => {
                let full = std::mem::replace(&mut self.batch, empty);
                // The other thread holds no batch now: this does not wait.
                let _ = self.full.send(full);
            }
            // The other thread has stopped (it panicked: joining it says why).
            Err(_) => self.batch.clear(),
        }
    }
}

impl Observer for Handoff {
    const ON: bool = true;

    #[inline]
    fn attempt(&mut self, a: &Attempt) {
        self.batch.push(*a);
        if self.batch.len() == HANDOFF_ATTEMPTS {
            self.hand_over();
        }
    }
}

/// Runs `run` with a [`Handoff`] whose attempts a second thread tells `observer`, in the
/// order `run` told them; returns once every attempt has been told.
pub(super) fn hand_off<O: Observer + Send, R>(
    observer: &mut O,
    run: impl FnOnce(&mut Handoff) -> R,
) -> R {
    let (full, to_tell) = sync_channel::<Vec<Attempt>>(1);
    // Room for both batches: the teller never waits to give one back.
    let (give_back, told) = sync_channel::<Vec<Attempt>>(2);
    give_back
        .send(Vec::with_capacity(HANDOFF_ATTEMPTS))
        .expect("the receiver is held here");
    std::thread::scope(|scope| {
        let teller = scope.spawn(move || {
            for mut batch in to_tell {
                for a in &batch {
                    observer.attempt(a);
                }
                batch.clear();
                let _ = give_back.send(batch);
            }
        });
        let mut handoff = Handoff {
            batch: Vec::with_capacity(HANDOFF_ATTEMPTS),
            full,
            told,
        };
        let result = run(&mut handoff);
        let Handoff { batch, full, told } = handoff;
        // The last batch, partly full; then the channel's end stops the teller.
        let _ = full.send(batch);
        drop(full);
        if let Err(panic) = teller.join() {
            std::panic::resume_unwind(panic);
        }
        drop(told);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};
    use crate::trace::{Next, Outcome, RunInfo, Sample, TraceFormat, TraceWriter};

    /// Attempts of every shape: waits, timeouts before arriving, tabs, several clients; with
    /// `layered`, of three layers (an outer layer's failed attempts among them).
    fn attempts(n: u32, layered: bool) -> impl Iterator<Item = Attempt> {
        (0..n).map(move |i| {
            let sent = SimTime::ZERO.saturating_add(SimDuration::from_nanos(u64::from(i) * 7_919));
            Attempt {
                client: i % 13,
                call: Some(i / 13),
                layer: layered.then_some((i % 3) as u16),
                attempt: i % 4,
                sent: Some(sent),
                arrived: (i % 5 != 0).then(|| sent.saturating_add(SimDuration::from_millis(3))),
                ended: sent.saturating_add(SimDuration::from_millis(u64::from(i % 9))),
                outcome: if layered && i % 7 == 0 {
                    Outcome::Failed
                } else {
                    [Outcome::Served, Outcome::Refused, Outcome::TimedOut][(i % 3) as usize]
                },
                next: match i % 4 {
                    _ if layered && i % 11 == 0 => Next::Abandoned,
                    0 => Next::Done,
                    1 => Next::Retry(SimDuration::from_nanos(u64::from(i) * 1_001)),
                    2 => Next::GaveUp,
                    _ => Next::Denied,
                },
                hidden: [None, Some(false), Some(true)][(i % 3) as usize],
            }
        })
    }

    fn written(format: TraceFormat, handed_off: bool, n: u32, layered: bool) -> (Vec<u8>, u64) {
        let mut bytes = Vec::new();
        let mut writer = TraceWriter::new(&mut bytes, format, Sample::default());
        writer.begin_run(RunInfo {
            index: 0,
            strategy: "full-jitter".into(),
            seed: 1,
            clients: 13,
            per_client: false,
            layered,
        });
        if handed_off {
            hand_off(&mut writer, |handoff| {
                attempts(n, layered).for_each(|a| handoff.attempt(&a))
            });
        } else {
            attempts(n, layered).for_each(|a| writer.attempt(&a));
        }
        let lines = writer.finish().unwrap();
        (bytes, lines)
    }

    #[test]
    fn handed_off_attempts_are_the_same_lines_in_the_same_order() {
        // Two full batches and part of a third; none; less than one.
        for (n, layered) in [
            (2 * HANDOFF_ATTEMPTS as u32 + 123, false),
            (0, false),
            (5, false),
            (HANDOFF_ATTEMPTS as u32 + 77, true),
        ] {
            for format in [TraceFormat::JsonLines, TraceFormat::Csv] {
                let (direct, direct_lines) = written(format, false, n, layered);
                let (handed, handed_lines) = written(format, true, n, layered);
                assert_eq!(direct_lines, u64::from(n));
                assert_eq!(handed_lines, u64::from(n));
                let header = u64::from(format == TraceFormat::Csv);
                assert_eq!(
                    handed.iter().filter(|&&b| b == b'\n').count() as u64,
                    u64::from(n) + header
                );
                assert!(direct == handed, "{n} attempts, {format:?}");
                // A layered run's lines name their layer after the call, in both formats.
                let text = String::from_utf8(direct).unwrap();
                let first = text.lines().next().unwrap_or("");
                match (format, layered) {
                    (TraceFormat::Csv, true) => assert!(first.contains(",call,layer,attempt,")),
                    (TraceFormat::Csv, false) => assert!(first.contains(",call,attempt,")),
                    (_, true) => assert!(first.contains(r#""call":0,"layer":0,"attempt":0,"#)),
                    (_, false) => assert!(!text.contains("layer")),
                }
                if layered {
                    assert!(text.contains("failed"), "{format:?}");
                    assert!(text.contains("abandoned"), "{format:?}");
                }
            }
        }
    }

    #[test]
    fn a_layered_line_keeps_the_record_as_small_as_before() {
        // The batches' memory (HANDOFF_BYTES, in the trace's estimate) did not grow with the
        // layer.
        assert_eq!(std::mem::size_of::<Attempt>(), 80);
    }
}
