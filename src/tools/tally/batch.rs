//! Routing a stream of ballots to panels, and closing each one into a tally.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::Write;

use anyhow::{Result, bail};

use crate::tools::tally::count::{CanaryAnswer, CountedRecord, PanelCount};
use crate::tools::tally::report::Sink;

// ---------------------------------------------------------------------------------------------
// Routing a stream of ballots to panels.

/// The panels of one stream. Without `each` there is one panel and a second candidate is an
/// error; with `each`, one open panel per candidate, closed as soon as it is complete.
#[derive(Default)]
pub struct Batch {
    each: bool,
    agree: Option<usize>,
    /// The panel of the previous ballot's candidate: the common case of records that arrive
    /// panel by panel never touches `waiting`.
    current: Option<PanelCount>,
    /// Other open panels, when panels interleave.
    waiting: HashMap<String, PanelCount>,
    /// A closed panel whose buffers the next one reuses.
    spare: Option<PanelCount>,
    next: u64,
    /// A rerun's record replaces the judge's earlier one.
    last_wins: bool,
    /// Hashes of the candidates whose tallies are written: a record about one of them would
    /// count a judge twice or make a second tally of one candidate. Eight bytes a panel.
    closed: HashSet<u64>,
    /// Canary answers not yet reported: each goes to the panel of its run (with one panel, to
    /// that panel), never into its counts.
    canaries: Vec<CanaryAnswer>,
    /// A seat that missed its canary, or has none, does not count (--require-canaries).
    require_canaries: bool,
}

impl Batch {
    pub fn new(each: bool, agree: Option<usize>, last_wins: bool) -> Batch {
        Batch {
            each,
            agree,
            last_wins,
            ..Batch::default()
        }
    }

    /// Counts a seat's verdicts only when it hit its canaries (--require-canaries).
    pub fn require_canaries(mut self, require: bool) -> Batch {
        self.require_canaries = require;
        self
    }

    pub fn add<W: Write>(
        &mut self,
        b: &CountedRecord,
        at: &dyn Fn() -> String,
        sink: &mut Sink<W>,
    ) -> Result<()> {
        if let Some(expected) = b.canary {
            // About another candidate, and never counted: kept for its panel's report.
            self.canaries.push(CanaryAnswer::new(b, expected));
            return Ok(());
        }
        if !self.each {
            // One panel: it closes only at the end, and PanelCount::add refuses another candidate.
            let last_wins = self.last_wins;
            let panel = self.current.get_or_insert_with(|| {
                let mut p = PanelCount::new(b.candidate);
                p.last_wins = last_wins;
                p
            });
            return panel.add(b, at);
        }
        let same = self
            .current
            .as_ref()
            .is_some_and(|p| p.candidate == b.candidate);
        if !same {
            if let Some(prev) = self.current.take() {
                if prev.size_unknown() {
                    // Unknown size: its records are taken to arrive together.
                    self.emit(prev, sink)?;
                } else {
                    self.waiting.insert(prev.candidate.clone(), prev);
                }
            }
            let panel = match self.waiting.remove(b.candidate) {
                Some(p) => p,
                None => {
                    if self.closed.contains(&seal_hash(b.candidate)) {
                        bail!(
                            "{}: a record about candidate {}, whose panel was complete and is \
                                tallied already: one judge counts once (a rerun's records go \
                                before the panel completes, with --last-wins)",
                            at(),
                            b.candidate
                        );
                    }
                    let mut p = self.spare.take().unwrap_or_default();
                    p.start(b.candidate, self.next);
                    p.last_wins = self.last_wins;
                    self.next += 1;
                    p
                }
            };
            self.current = Some(panel);
        }
        let panel = self.current.as_mut().expect("a current panel");
        panel.add(b, at)?;
        if panel.is_full() {
            let full = self.current.take().expect("a current panel");
            self.emit(full, sink)?;
        }
        Ok(())
    }

    fn emit<W: Write>(&mut self, panel: PanelCount, sink: &mut Sink<W>) -> Result<()> {
        let each = self.each;
        let (own, rest) = std::mem::take(&mut self.canaries)
            .into_iter()
            .partition(|c| !each || panel.has_run(&c.run));
        self.canaries = rest;
        let own: Vec<CanaryAnswer> = own;
        sink.tally(&panel.close_with(self.agree, &own, self.require_canaries)?)?;
        self.closed.insert(seal_hash(&panel.candidate));
        self.spare = Some(panel);
        Ok(())
    }

    /// Closes the panels still open, in the order they were first seen.
    pub fn finish<W: Write>(&mut self, sink: &mut Sink<W>) -> Result<()> {
        let mut rest: Vec<PanelCount> = self.waiting.drain().map(|(_, p)| p).collect();
        rest.extend(self.current.take());
        rest.sort_by_key(|p| p.seq);
        for panel in rest {
            self.emit(panel, sink)?;
        }
        if let Some(c) = self.canaries.first() {
            bail!(
                "canary {:?} of run {:?}: no panel of that run to report it with (a canary's \
                    record goes with its run's verdict records)",
                c.judge,
                c.run
            );
        }
        Ok(())
    }
}

fn seal_hash(candidate: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    candidate.hash(&mut h);
    h.finish()
}
