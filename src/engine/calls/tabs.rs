//! The call loop's browser-tab events: a retry timer coming due in a tab that may be hidden,
//! a throttled timer's wake-up, a paused call's tab becoming visible. The rules are
//! [`TabRules`](crate::engine::browser::TabRules)'; this file only schedules what they say.
//!
//! With retry controls, each retry is judged once: a call paused before its strategy decided
//! asks the control when its tab is visible again (on its last attempt's outcome); a retry
//! the control allowed and a hidden tab then paused is redrawn without being charged again.

use crate::engine::browser::Timer;
use crate::time::SimTime;

use super::windows::Windows;
use super::{Ev, Loop};
use crate::trace::Observer;

impl<O: Observer, W: Windows> Loop<'_, O, W> {
    /// The retry timer of the call in `slot` is due at `now`: sent now, at the hidden tab's
    /// throttled wake-up, or paused until the tab is visible.
    pub(super) fn timer_due(&mut self, now: SimTime, slot: u32) {
        let Some(t) = &mut self.tabs else {
            self.send(now, slot);
            return;
        };
        let call = &mut self.calls[slot as usize];
        match t.rules.timer(&mut t.tabs[call.process as usize], now) {
            Timer::Runs(at) if at == now => self.send(now, slot),
            Timer::Runs(at) => {
                let attempt = call.attempt;
                self.push(
                    at,
                    Ev::Wake {
                        call: slot,
                        attempt,
                    },
                )
            }
            Timer::Paused => {
                // The retry is not sent: it is drawn again once visible, already charged.
                call.retries_made -= 1;
                call.charged = true;
                self.pause(slot);
            }
        }
    }

    /// The call in `slot` waits for its tab to become visible; paused for good (its slot
    /// freed, no finish) if it never does. Such a tab never flips, so it was hidden when the
    /// call's first attempt failed: the call paused before its strategy decided, with
    /// nothing charged to a retry control, and no call of the tab ever ends failed to open
    /// a breaker. Its control has nothing to be told.
    pub(super) fn pause(&mut self, slot: u32) {
        let Some(t) = &mut self.tabs else { return };
        let process = self.calls[slot as usize].process as usize;
        match t.rules.resume_at(&t.tabs[process]) {
            Some(visible) => self.push(visible, Ev::Visible { call: slot }),
            None => self.free.push(slot),
        }
    }

    /// The paused call in `slot` sees its tab become visible at `now`: its strategy draws
    /// the next wait, with what the tab read of the last refusal counted from now.
    pub(super) fn visible(&mut self, now: SimTime, slot: u32) {
        let outcome = self.calls[slot as usize].outcome;
        // The attempt was traced when it ended (paused).
        self.retry_or_fail(now, slot, &Default::default(), outcome);
    }
}
