//! Counting one panel: counts and one short row per judge, never the whole records. Memory
//! grows with the panels open at once, never with the length of the stream: a panel keeps its
//! text in one buffer that the next panel reuses.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use anyhow::{Result, bail};

use crate::records::tally::{Abstention, CanaryRow, Counts, JudgeOf, JudgeRow, Tally};
use crate::records::{Decision, Status, Usage, Verdict};
use crate::rules::consensus::consensus;
use crate::rules::{canary, decision};

/// What the counter needs from one record, borrowed from the line it was read from. A panel
/// copies what it keeps.
#[derive(Clone, Debug)]
pub struct CountedRecord<'a> {
    /// The seal of the candidate; a panel is about one candidate.
    pub candidate: &'a str,
    /// How many judges the panel has; 0 when unknown.
    pub panel_size: usize,
    pub usage: Option<&'a Usage>,
    pub judge: JudgeRow<'a>,
    /// The run folder the answer is kept in.
    pub run: &'a str,
    /// A canary's expected verdict: the ballot is about a candidate whose answer is known, and
    /// is never counted in the panel.
    pub canary: Option<Verdict>,
}

// Counting one panel.

/// A piece of a panel's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    start: usize,
    end: usize,
}

impl Span {
    pub fn of(self, text: &str) -> &str {
        &text[self.start..self.end]
    }
}

pub fn keep(text: &mut String, s: &str) -> Span {
    let start = text.len();
    text.push_str(s);
    Span {
        start,
        end: text.len(),
    }
}

/// One judge of a panel, its text kept in the panel's one buffer.
#[derive(Clone, Copy, Debug)]
struct Row {
    answer: JudgeOf<Span>,
    /// Index into the panel's runs.
    run: usize,
}

/// Rows and groups are searched one by one up to this many; past it, through a hash.
const SCAN: usize = 32;

/// Counts by a key (lens, family), in first-seen order until reported.
#[derive(Debug, Default)]
struct Groups {
    keys: Vec<(Span, Counts)>,
    /// Filled only once there are more than [`SCAN`] keys.
    index: HashMap<String, usize>,
}

impl Groups {
    fn find(&self, text: &str, key: &str) -> Option<usize> {
        if self.keys.len() <= SCAN {
            self.keys.iter().position(|(k, _)| k.of(text) == key)
        } else {
            self.index.get(key).copied()
        }
    }

    fn add(&mut self, text: &mut String, key: &str, verdict: Option<Verdict>) {
        let i = match self.find(text, key) {
            Some(i) => i,
            None => {
                self.keys.push((keep(text, key), Counts::default()));
                if self.keys.len() > SCAN {
                    for (i, (k, _)) in self.keys.iter().enumerate().skip(self.index.len()) {
                        self.index.insert(k.of(text).to_string(), i);
                    }
                }
                self.keys.len() - 1
            }
        };
        self.keys[i].1.add(verdict);
    }

    /// Takes back an [`Groups::add`]; the key stays, perhaps with no judge.
    fn remove(&mut self, text: &str, key: &str, verdict: Option<Verdict>) {
        if let Some(i) = self.find(text, key) {
            self.keys[i].1.remove(verdict);
        }
    }

    /// Sorted by key, bytewise.
    fn report<'a>(&self, text: &'a str) -> Vec<(&'a str, Counts)> {
        let mut out: Vec<(&str, Counts)> =
            self.keys.iter().map(|(k, c)| (k.of(text), *c)).collect();
        out.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.index.clear();
    }
}

/// One panel being counted: counts and one short row per judge, never the whole records.
/// A closed panel's buffers are reused for the next one.
#[derive(Debug, Default)]
pub struct PanelCount {
    pub(super) candidate: String,
    /// When it was first seen in the stream.
    pub(super) seq: u64,
    counts: Counts,
    text: String,
    rows: Vec<Row>,
    /// Hashes of the judges' names, once the rows are too many to scan.
    seen: HashSet<u64>,
    /// A judge's record from a later run (a rerun) replaces its earlier one; else it is refused.
    pub(super) last_wins: bool,
    by_lens: Groups,
    by_family: Groups,
    /// The runs (panel-judge invocations) whose records make up the panel.
    runs: Vec<FolderCount>,
    usage: Option<Usage>,
}

/// One run folder: how many judges its records announced (`panelSize`, 0 when unknown) and
/// how many of them were counted.
#[derive(Clone, Copy, Debug)]
struct FolderCount {
    folder: Span,
    size: usize,
    counted: usize,
}

impl PanelCount {
    pub fn new(candidate: &str) -> PanelCount {
        let mut p = PanelCount::default();
        p.start(candidate, 0);
        p
    }

    /// Empties the panel for another candidate, keeping its buffers.
    pub(super) fn start(&mut self, candidate: &str, seq: u64) {
        self.candidate.clear();
        self.candidate.push_str(candidate);
        self.seq = seq;
        self.counts = Counts::default();
        self.text.clear();
        self.rows.clear();
        self.seen.clear();
        self.by_lens.clear();
        self.by_family.clear();
        self.runs.clear();
        self.usage = None;
    }

    /// Counts one ballot of this panel's candidate.
    pub fn add(&mut self, b: &CountedRecord, at: &dyn Fn() -> String) -> Result<()> {
        if b.candidate != self.candidate {
            bail!(
                "{}: a record about candidate {}, but the records before it are about {}",
                at(),
                short_seal(b.candidate),
                short_seal(&self.candidate)
            );
        }
        let j = &b.judge;
        let run = self.run(b.run, b.panel_size, at)?;
        let earlier = self.counted(j.judge);
        if let Some(i) = earlier {
            let first = self.runs[self.rows[i].run].folder.of(&self.text);
            if self.rows[i].run == run {
                bail!(
                    "{}: judge {:?} of run {:?} is already counted",
                    at(),
                    j.judge,
                    b.run
                );
            }
            if !self.last_wins {
                bail!(
                    "{}: judge {:?} of run {:?} is counted already, from run {first:?}: one judge \
                        counts once (--last-wins counts the later record in place of the earlier)",
                    at(),
                    j.judge,
                    b.run
                );
            }
            self.take_back(i);
        }
        self.counts.add(j.verdict);
        self.runs[run].counted += 1;
        self.by_lens.add(&mut self.text, j.lens, j.verdict);
        let family = j.family.unwrap_or("unknown");
        self.by_family.add(&mut self.text, family, j.verdict);
        let t = &mut self.text;
        let row = Row {
            answer: j.map(|s| keep(t, s)),
            run,
        };
        match earlier {
            Some(i) => self.rows[i] = row,
            None => self.rows.push(row),
        }
        // Both runs were paid for; a judge never launched was not, nor is its estimate.
        if let Some(u) = b.usage {
            let u = match b.judge.status {
                Status::Cancelled => &Usage {
                    estimate_usd: None,
                    ..u.clone()
                },
                _ => u,
            };
            self.usage.get_or_insert_with(Usage::default).add(u);
        }
        Ok(())
    }

    /// The index of the ballot's run, checking the size it announces against its run's.
    fn run(&mut self, folder: &str, size: usize, at: &dyn Fn() -> String) -> Result<usize> {
        let Some(i) = self
            .runs
            .iter()
            .position(|r| r.folder.of(&self.text) == folder)
        else {
            let folder = keep(&mut self.text, folder);
            self.runs.push(FolderCount {
                folder,
                size,
                counted: 0,
            });
            return Ok(self.runs.len() - 1);
        };
        let run = &mut self.runs[i];
        if run.size == 0 {
            run.size = size;
        } else if size != 0 && size != run.size {
            bail!(
                "{}: panelSize {size} here, but {} in the records of run {folder:?} before it",
                at(),
                run.size
            );
        }
        Ok(i)
    }

    /// The row of this judge if it is counted already (from any run); remembers it otherwise.
    fn counted(&mut self, judge: &str) -> Option<usize> {
        let text = &self.text;
        let same = |r: &Row| r.answer.judge.of(text) == judge;
        if self.rows.len() < SCAN {
            return self.rows.iter().position(same);
        }
        if self.seen.is_empty() {
            for r in &self.rows {
                self.seen.insert(name_hash(r.answer.judge.of(text)));
            }
        }
        // A hash seen before is most likely the same judge; the scan makes sure.
        if self.seen.insert(name_hash(judge)) {
            None
        } else {
            self.rows.iter().position(same)
        }
    }

    /// Takes row `i`'s verdict out of the counts, for its rerun to take its place.
    fn take_back(&mut self, i: usize) {
        let r = self.rows[i].answer;
        let text = &self.text;
        self.counts.remove(r.verdict);
        self.by_lens.remove(text, r.lens.of(text), r.verdict);
        let family = r.family.map_or("unknown", |f| f.of(text));
        self.by_family.remove(text, family, r.verdict);
    }

    /// True when every judge the records announced has been counted.
    pub fn is_full(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|r| r.size != 0 && r.counted >= r.size)
    }

    /// True when some run did not say how many judges it has.
    pub(super) fn size_unknown(&self) -> bool {
        self.runs.iter().any(|r| r.size == 0)
    }

    /// Whether the panel counts records of this run folder.
    pub fn has_run(&self, folder: &str) -> bool {
        self.runs.iter().any(|r| r.folder.of(&self.text) == folder)
    }

    /// The panel's tally. `agree` is checked against the panel's size here, because the
    /// size is known only once the records are read.
    pub fn close(&self, agree: Option<usize>) -> Result<Tally<'_>> {
        self.close_with(agree, &[], false)
    }

    /// The panel's tally, with the answers of its seats' canaries; with `require`, the verdicts
    /// of a seat that missed its canary, or has none, do not count (`rules::canary`).
    pub fn close_with<'a>(
        &'a self,
        agree: Option<usize>,
        canaries: &'a [CanaryAnswer],
        require: bool,
    ) -> Result<Tally<'a>> {
        let text = &self.text;
        let missing = self.runs.iter().map(|r| missing(r.size, r.counted)).sum();
        let mut counts = self.counts;
        counts.judges += missing;
        counts.abstained += missing;
        let mut judges: Vec<JudgeRow> = self
            .rows
            .iter()
            .map(|r| r.answer.map(|s| s.of(text)))
            .collect();
        judges.sort_by(|a, b| glob_order(a.judge, b.judge));
        let canary_rows: Vec<CanaryRow> = canaries.iter().map(CanaryAnswer::row).collect();
        let mut canary_missed: Vec<&str> = canary_rows
            .iter()
            .filter(|c| !c.hit)
            .map(|c| c.seat)
            .collect();
        canary_missed.sort_unstable();
        canary_missed.dedup();
        let mut by_lens = self.by_lens.report(text);
        let mut by_family = self.by_family.report(text);
        if require {
            for j in judges.iter_mut().filter(|j| j.verdict.is_some()) {
                let answers = canary_rows
                    .iter()
                    .filter(|c| c.seat == j.seat)
                    .map(|c| (c.canary, c.verdict));
                let Some(why) = canary::discounted(answers) else {
                    continue;
                };
                let family = j.family.unwrap_or("unknown");
                for (groups, key) in [(&mut by_lens, j.lens), (&mut by_family, family)] {
                    if let Some((_, c)) = groups.iter_mut().find(|(k, _)| *k == key) {
                        c.remove(j.verdict);
                        c.add(None);
                    }
                }
                counts.remove(j.verdict);
                counts.add(None);
                j.verdict = None;
                j.status = Status::CanaryMissed;
                j.cause = Some(why);
            }
        }
        let threshold = decision::required(agree, counts.judges)?;
        let decision = decision::decide(counts.holds, counts.abstained, threshold);
        let cancelled: Vec<&str> = judges
            .iter()
            .filter(|j| j.status == Status::Cancelled)
            .map(|j| j.judge)
            .collect();
        let decided_early = (!cancelled.is_empty()).then_some(decision != Decision::NoDecision);
        let abstentions = judges
            .iter()
            .filter(|j| j.verdict.is_none())
            .map(|j| Abstention {
                judge: j.judge,
                status: j.status,
                cause: j.cause,
            })
            .collect();
        Ok(Tally {
            kind: "tally",
            candidate: &self.candidate,
            outcome: consensus(&counts),
            passed: decision == Decision::Pass,
            decided: decision != Decision::NoDecision,
            threshold,
            agreed: agree.is_some(),
            counts,
            missing,
            judges,
            by_lens,
            by_family,
            abstentions,
            runs: self
                .runs
                .iter()
                .map(|r| r.folder.of(text))
                .filter(|r| !r.is_empty())
                .collect(),
            usage: self.usage.clone().filter(|u| !u.is_empty()),
            canaries: canary_rows,
            canary_missed,
            cancelled,
            decided_early,
        })
    }
}

/// A canary's answer, kept beside the panels until the panel of its run closes.
#[derive(Clone, Debug)]
pub struct CanaryAnswer {
    pub judge: String,
    pub seat: String,
    pub run: String,
    pub expected: Verdict,
    pub verdict: Option<Verdict>,
    pub status: Status,
}

impl CanaryAnswer {
    pub fn new(b: &CountedRecord, expected: Verdict) -> CanaryAnswer {
        CanaryAnswer {
            judge: b.judge.judge.to_string(),
            seat: b.judge.seat.to_string(),
            run: b.run.to_string(),
            expected,
            verdict: b.judge.verdict,
            status: b.judge.status,
        }
    }

    fn row(&self) -> CanaryRow<'_> {
        CanaryRow {
            judge: &self.judge,
            seat: &self.seat,
            canary: self.expected,
            verdict: self.verdict,
            status: self.status,
            hit: canary::hit(self.expected, self.verdict),
        }
    }
}

fn name_hash(judge: &str) -> u64 {
    let mut h = DefaultHasher::new();
    judge.hash(&mut h);
    h.finish()
}

// The tally is a record type (`records::tally`); what it decided is the rule's.
impl Tally<'_> {
    /// What this panel decided.
    pub fn decision(&self) -> Decision {
        decision::decide(self.counts.holds, self.counts.abstained, self.threshold)
    }
}

/// Judges a run announced but never sent.
pub fn missing(size: usize, counted: usize) -> usize {
    size.saturating_sub(counted)
}

/// Orders judges as the seed script's `"$OUT"/*.json` glob lists their files in the C locale:
/// bytewise on the file name, so `a-b` (`a-b.json`) comes before `a` (`a.json`).
pub fn glob_order(a: &str, b: &str) -> Ordering {
    a.bytes().chain(*b".json").cmp(b.bytes().chain(*b".json"))
}

/// A seal short enough for a message: `sha256:` and 12 hex digits.
pub fn short_seal(seal: &str) -> String {
    let cut = seal
        .char_indices()
        .nth("sha256:".len() + 12)
        .map_or(seal.len(), |(i, _)| i);
    if cut < seal.len() {
        format!("{}…", &seal[..cut])
    } else {
        seal.to_string()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::records::tally::Consensus;

    pub(crate) fn at() -> String {
        "in: line 7".into()
    }

    pub(crate) fn ballot(
        judge: &str,
        verdict: Option<Verdict>,
        status: Status,
    ) -> CountedRecord<'_> {
        CountedRecord {
            candidate: "sha256:aaaa",
            panel_size: 0,
            usage: None,
            run: "/tmp/run",
            canary: None,
            judge: JudgeRow {
                judge,
                lens: "edges",
                seat: "claude:haiku",
                family: Some("claude"),
                verdict,
                status,
                reason: Some("because"),
                confidence: Some(0.5),
                cause: Some("no answer in 60 s"),
                said: None,
            },
        }
    }

    pub(crate) fn counts(holds: usize, breaks: usize, abstained: usize) -> Counts {
        Counts {
            judges: holds + breaks + abstained,
            holds,
            breaks,
            abstained,
        }
    }

    pub(crate) fn abstained(status: Status) -> Abstention<'static> {
        Abstention {
            judge: "j",
            status,
            cause: None,
        }
    }

    #[test]
    fn a_panel_refuses_a_judge_counted_twice_and_another_candidate() {
        let mut p = PanelCount::new("sha256:aaaa");
        p.add(&ballot("edges", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap();
        let err = p
            .add(&ballot("edges", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 7: judge \"edges\" of run \"/tmp/run\" is already counted"
        );
        // From another run (a rerun), it is refused too, naming both runs, unless the later
        // record is to win.
        let mut rerun = ballot("edges", None, Status::Timeout);
        rerun.run = "/tmp/run2";
        let err = p.add(&rerun, &at).unwrap_err().to_string();
        assert!(
            err.contains(
                "judge \"edges\" of run \"/tmp/run2\" is counted already, from run \"/tmp/run\""
            ),
            "{err}"
        );
        p.last_wins = true;
        p.add(&rerun, &at).unwrap();
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(0, 0, 1));
        assert_eq!(t.by_lens, [("edges", counts(0, 0, 1))]);
        let mut other = ballot("x", Some(Verdict::Holds), Status::Ok);
        other.candidate = "sha256:bbbb";
        assert!(p.add(&other, &at).unwrap_err().to_string().contains(
            "about candidate sha256:bbbb, but the records before it are about sha256:aaaa"
        ));
    }

    #[test]
    fn large_panels_find_a_judge_counted_twice_through_the_hash() {
        let names: Vec<String> = (0..100).map(|i| format!("j{i}")).collect();
        let mut p = PanelCount::new("sha256:aaaa");
        for (i, name) in names.iter().enumerate() {
            let mut b = ballot(name, Some(Verdict::Holds), Status::Ok);
            let lens = format!("lens{i}");
            b.judge.lens = &lens;
            p.add(&b, &at).unwrap();
        }
        for name in ["j0", "j40", "j99"] {
            assert!(
                p.add(&ballot(name, Some(Verdict::Holds), Status::Ok), &at)
                    .is_err()
            );
        }
        p.add(&ballot("j100", None, Status::Failed), &at).unwrap();
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(100, 0, 1));
        assert_eq!(t.by_lens.len(), 101);
        assert_eq!(t.by_lens[0], ("edges", counts(0, 0, 1)));
        assert_eq!(t.by_lens[1], ("lens0", counts(1, 0, 0)));
    }

    #[test]
    fn a_closed_panel_counts_missing_judges_as_abstained() {
        let mut p = PanelCount::new("sha256:aaaa");
        let sized = |mut b: CountedRecord<'static>, size| {
            b.panel_size = size;
            b
        };
        p.add(
            &sized(ballot("b", Some(Verdict::Holds), Status::Ok), 3),
            &at,
        )
        .unwrap();
        p.add(&sized(ballot("a", None, Status::Timeout), 0), &at)
            .unwrap();
        assert!(!p.is_full());
        let err = p
            .add(&sized(ballot("c", None, Status::Timeout), 4), &at)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 7: panelSize 4 here, but 3 in the records of run \"/tmp/run\" before it"
        );
        // A rerun of one judge is a run of its own, with its own size; its record takes the
        // place of the judge's earlier one.
        let mut rerun = sized(ballot("a", Some(Verdict::Holds), Status::Ok), 1);
        rerun.run = "/tmp/rerun";
        p.last_wins = true;
        p.add(&rerun, &at).unwrap();
        assert!(!p.is_full());
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(2, 0, 1));
        assert_eq!(t.missing, 1);
        assert_eq!(t.runs, ["/tmp/run", "/tmp/rerun"]);
        let mut p = PanelCount::new("sha256:aaaa");
        p.add(
            &sized(ballot("b", Some(Verdict::Holds), Status::Ok), 3),
            &at,
        )
        .unwrap();
        p.add(&sized(ballot("a", None, Status::Timeout), 3), &at)
            .unwrap();
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(1, 0, 2));
        assert_eq!(t.missing, 1);
        assert_eq!(t.outcome, Consensus::Inconclusive);
        assert_eq!(t.decision(), Decision::NoDecision);
        assert!(!t.decided && !t.passed);
        assert_eq!(t.judges[0].judge, "a");
        assert_eq!(t.abstentions.len(), 1);
        assert_eq!(t.runs, ["/tmp/run"]);
        assert_eq!(t.by_lens, [("edges", counts(1, 0, 1))]);
    }

    #[test]
    fn judges_sort_as_the_glob_lists_their_files() {
        let mut names = vec!["edges", "Zed", "edges-2", "correctness"];
        names.sort_by(|a, b| glob_order(a, b));
        assert_eq!(names, ["Zed", "correctness", "edges-2", "edges"]);
    }

    #[test]
    fn seals_are_shortened_for_messages() {
        assert_eq!(
            short_seal("sha256:0123456789abcdef0123"),
            "sha256:0123456789ab…"
        );
        assert_eq!(short_seal("sha256:01"), "sha256:01");
    }
}
