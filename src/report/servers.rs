//! The table section of a server pool's run: one row per strategy and server, the attempts
//! the balancer routed to it and how they ended for their clients, and what it served.

use crate::experiment::Report;

/// The section, a blank line first; empty when no result ran a pool.
pub(super) fn servers_table(report: &Report) -> String {
    let pooled = report
        .results
        .iter()
        .any(|r| r.calls.as_ref().is_some_and(|c| !c.servers.is_empty()));
    if !pooled {
        return String::new();
    }
    let header = [
        "strategy",
        "server",
        "attempts",
        "succeeded",
        "refused",
        "timed out",
        "in flight",
        "served",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in &report.results {
        let Some(c) = r.calls.as_ref() else { continue };
        for s in &c.servers {
            rows.push(vec![
                r.strategy.name().to_string(),
                s.server.to_string(),
                s.attempts.to_string(),
                s.succeeded.to_string(),
                s.refused.to_string(),
                s.timed_out.to_string(),
                s.in_flight.to_string(),
                s.served.to_string(),
            ]);
        }
    }
    format!(
        "\nper server (the attempts routed to it and how they ended for their clients; served: \
         the requests it served, late ones included):\n{}",
        super::aligned(&rows, 1)
    )
}
