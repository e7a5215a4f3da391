//! Each server's series in a pool's run: per window of the run's series, the attempts the
//! balancer routed to each server, how they ended for their clients (succeeded, refused,
//! timed out), the requests it served and the requests in it at the window's end
//! ([`ServerWindow`]), built as the run's windows close ([`ServerSeriesBuilder`]).
//!
//! **Counted without a hook.** The call loop already keeps each server's running totals
//! ([`ServerCount`]); a window's row is the difference between the totals at its end and at
//! its start, taken when the run's series closes the window (a cold path, once a window). So
//! the events themselves do nothing more in a pool, and a run of one server builds nothing.
//!
//! **Windows written.** A window is written, one row for every server, when something was
//! counted at any server in it (an attempt sent, an answer read, a timeout, a request served)
//! or a server holds requests at its end (windows passed with requests in a server are
//! written too, as the run's series writes them); the others are all zeros. Each server's
//! rows are the same windows. Summed over the servers, a window's attempts, successes,
//! refusals, timeouts and requests in the server are the run's series' (its windows with
//! nothing counted at a server, only calls started or rejected locally, have no rows here);
//! `served` has no column in the run's series (late answers are in it).

use super::ServerCount;

/// One server's counts in one window. Field names are the JSON and CSV names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerWindow {
    /// The window's index: it starts at `window × series_bin`.
    pub window: u64,
    /// Attempts routed to the server.
    pub attempts: u64,
    /// Answers from it read in time that were successes.
    pub succeeded: u64,
    /// Refusals from it read in time.
    pub refused: u64,
    /// Attempts at it abandoned at their timeout.
    pub timed_out: u64,
    /// Requests it served (late ones included).
    pub served: u64,
    /// Requests in it at the window's end, abandoned ones included (0 for a server without
    /// a queue).
    pub in_system: u64,
}

impl ServerWindow {
    /// The counts between two of a server's running totals, `before` then `after`.
    fn between(window: u64, before: &ServerCount, after: &ServerCount, in_system: u64) -> Self {
        ServerWindow {
            window,
            attempts: after.attempts - before.attempts,
            succeeded: after.succeeded - before.succeeded,
            refused: after.refused - before.refused,
            timed_out: after.timed_out - before.timed_out,
            served: after.served - before.served,
            in_system,
        }
    }

    fn is_quiet(&self) -> bool {
        self.attempts == 0
            && self.succeeded == 0
            && self.refused == 0
            && self.timed_out == 0
            && self.served == 0
    }
}

/// Builds every server's rows as the run's windows close: the totals at the open window's
/// start, and the rows written, one vector a server.
#[derive(Clone, Debug)]
pub struct ServerSeriesBuilder {
    bin: u64,
    /// The open window.
    open: u64,
    /// Each server's totals when the open window started.
    start: Vec<ServerCount>,
    rows: Vec<Vec<ServerWindow>>,
}

impl ServerSeriesBuilder {
    /// The builder of `servers` servers' rows in windows of `bin` ns (not zero), window 0
    /// open.
    pub fn new(servers: usize, bin: u64) -> Self {
        assert!(bin > 0, "series bin must be positive");
        ServerSeriesBuilder {
            bin,
            open: 0,
            start: vec![ServerCount::default(); servers],
            rows: vec![Vec::new(); servers],
        }
    }

    /// Time has reached `now` (ns; never earlier than before): closes the open window when
    /// `now` is past it. `totals` are the servers' running totals before the event at `now`
    /// is handled and `in_system` the requests in each, which is what they were at every
    /// window end passed.
    pub fn advance(&mut self, now: u64, totals: &[ServerCount], in_system: &[u64]) {
        let window = now / self.bin;
        if window > self.open {
            self.close(totals, in_system, window);
        }
    }

    /// Closes the open window; the windows after it up to `next` (excluded) are written when
    /// a server holds requests over them; `next` opens.
    fn close(&mut self, totals: &[ServerCount], in_system: &[u64], next: u64) {
        let open = self.open;
        let rows: Vec<ServerWindow> = (0..self.rows.len())
            .map(|k| ServerWindow::between(open, &self.start[k], &totals[k], in_system[k]))
            .collect();
        let held = in_system.iter().any(|&n| n > 0);
        if held || rows.iter().any(|r| !r.is_quiet()) {
            for (k, row) in rows.into_iter().enumerate() {
                self.rows[k].push(row);
            }
        }
        if held {
            for window in open.saturating_add(1)..next {
                for (k, &n) in in_system.iter().enumerate() {
                    self.rows[k].push(ServerWindow {
                        window,
                        in_system: n,
                        ..ServerWindow::default()
                    });
                }
            }
        }
        self.start.copy_from_slice(totals);
        self.open = next;
    }

    /// Closes the last window and returns each server's rows, server 0 first.
    pub fn finish(mut self, totals: &[ServerCount], in_system: &[u64]) -> Vec<Vec<ServerWindow>> {
        let next = self.open.saturating_add(1);
        self.close(totals, in_system, next);
        self.rows
    }

    /// Bytes a window's rows take, for `servers` servers (the memory estimate's unit).
    pub const fn window_bytes(servers: u64) -> u64 {
        servers.saturating_mul(std::mem::size_of::<ServerWindow>() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(attempts: u64, succeeded: u64, refused: u64, served: u64) -> ServerCount {
        ServerCount {
            attempts,
            succeeded,
            refused,
            served,
            ..ServerCount::default()
        }
    }

    #[test]
    fn a_window_is_the_difference_of_the_totals_at_its_ends() {
        // Two servers, windows of 10 ns. By t = 10: server 0 sent 3, 2 succeeded; server 1
        // sent 1, refused. By t = 35 (windows 1 and 2 pass, server 0 holding 2 requests):
        // server 0 sent 5 in all. Nothing after, the servers empty at the end.
        let mut b = ServerSeriesBuilder::new(2, 10);
        b.advance(3, &[count(0, 0, 0, 0); 2], &[0, 0]);
        let at_10 = [count(3, 2, 0, 2), count(1, 0, 1, 0)];
        b.advance(10, &at_10, &[2, 0]);
        let at_35 = [count(5, 2, 0, 2), count(1, 0, 1, 0)];
        b.advance(35, &at_35, &[0, 0]);
        let rows = b.finish(&[count(5, 4, 0, 4), count(1, 0, 1, 0)], &[0, 0]);
        let w = |window, attempts, succeeded, refused, served, in_system| ServerWindow {
            window,
            attempts,
            succeeded,
            refused,
            timed_out: 0,
            served,
            in_system,
        };
        assert_eq!(
            rows[0],
            [
                w(0, 3, 2, 0, 2, 2),
                w(1, 2, 0, 0, 0, 0),
                w(3, 0, 2, 0, 2, 0)
            ]
        );
        assert_eq!(
            rows[1],
            [
                w(0, 1, 0, 1, 0, 0),
                w(1, 0, 0, 0, 0, 0),
                w(3, 0, 0, 0, 0, 0)
            ]
        );
        // Window 2 passed with both servers empty and nothing counted: not written.
        let mut b = ServerSeriesBuilder::new(1, 10);
        b.advance(25, &[count(1, 1, 0, 1)], &[3]);
        b.advance(55, &[count(1, 1, 0, 1)], &[0]);
        let rows = b.finish(&[count(1, 1, 0, 1)], &[0]);
        let windows: Vec<u64> = rows[0].iter().map(|r| r.window).collect();
        // Window 0 counted (and held 3), 1 held 3 as time passed; 2, closed at 55, had
        // nothing counted or held, nor had 3 and 4; 5, the last, is quiet.
        assert_eq!(windows, [0, 1]);
        assert_eq!(rows[0][1].in_system, 3);
    }
}
