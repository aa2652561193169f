//! The ledger's counts: per judge, per pair of judges, per lens, per panel shape. Memory is
//! bounded by the number of judges and of open panels, never by the number of records.
//!
//! - A judge is a seat × lens. At most [`MAX_JUDGES`] of them: past that the history is
//!   refused (the pairs grow with the square of the judges).
//! - A panel is the records that share a `run` folder (the candidate's seal when `run` is
//!   empty). It closes when it holds `panelSize` records, or when more than [`MAX_OPEN`]
//!   panels are open at once (the oldest closes first), or at the end of the input. Records of
//!   one panel are usually together; one that comes after its panel closed starts a new panel.
//!   A judge with two records in one open panel counts by its later one.
//! - Durations are kept in a histogram of fixed buckets ([`Durations`]): a median or p90 is
//!   read to within 4.5 %.
//! - A panel's shape is the set of judges on it. For up to [`MAX_SHAPES`] shapes of at most
//!   [`MAX_SHAPE`] judges, every sub-panel is scored against the full panel's outcome.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Result, bail};

use crate::records::pairwise::Preference;
use crate::records::view::VerdictView;
use crate::records::{Decision, Status, Usage, Verdict};
use crate::rules::decision::{self, Inconsistent};
use crate::rules::gold::Confusion;
use crate::stats::agreement::{Alpha, Fleiss};
use crate::stats::bootstrap::Units;
use crate::tools::tally::ledger::gold::GoldCounts;
pub use crate::tools::tally::ledger::position::Position;

pub const MAX_JUDGES: usize = 256;
pub const MAX_OPEN: usize = 4096;
pub const MAX_SHAPES: usize = 64;
pub const MAX_SHAPE: usize = 12;

/// Every status a record may carry but `cancelled` (counted apart), in the order reports list
/// them.
pub const STATUSES: [Status; 12] = [
    Status::Ok,
    Status::Unreadable,
    Status::Timeout,
    Status::Failed,
    Status::NotFound,
    Status::UsageLimit,
    Status::RateLimited,
    Status::ModelRefused,
    Status::Interrupted,
    Status::OutputLimit,
    Status::CanaryMissed,
    Status::PositionInconsistent,
];

fn status_index(s: Status) -> usize {
    STATUSES.iter().position(|&x| x == s).unwrap_or(0)
}

/// Buckets per doubling: each bucket spans a factor of 2^(1/8) ≈ 1.09, so the middle of a
/// bucket is within 4.5 % of any value in it.
const PER_DOUBLING: f64 = 8.0;
const BUCKETS: usize = 1 + 64 * 8 + 1;

/// Durations in milliseconds, in fixed logarithmic buckets (0 ms has a bucket of its own).
#[derive(Clone, Debug)]
pub struct Durations {
    counts: Box<[u64; BUCKETS]>,
    n: u64,
}

impl Default for Durations {
    fn default() -> Self {
        Durations {
            counts: Box::new([0; BUCKETS]),
            n: 0,
        }
    }
}

impl Durations {
    pub fn add(&mut self, ms: u64) {
        let i = if ms == 0 {
            0
        } else {
            1 + ((ms as f64).log2() * PER_DOUBLING).floor() as usize
        };
        self.counts[i.min(BUCKETS - 1)] += 1;
        self.n += 1;
    }

    pub fn merge(&mut self, other: &Durations) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.n += other.n;
    }

    /// The `q` quantile (0 < q ≤ 1), as the geometric middle of its bucket; None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                if i == 0 {
                    return Some(0);
                }
                let mid = ((i - 1) as f64 + 0.5) / PER_DOUBLING;
                return Some(mid.exp2().round() as u64);
            }
        }
        None
    }
}

/// Tokens and cost, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// What a budget estimated the judges that ran would cost; `None`: no record said.
    pub estimate_usd: Option<f64>,
    /// Judge time, milliseconds.
    pub ms: u64,
}

impl Spend {
    pub fn of(usage: Option<&Usage>, ms: u64) -> Spend {
        let u = usage.cloned().unwrap_or_default();
        Spend {
            input_tokens: u.input_tokens.unwrap_or(0),
            output_tokens: u.output_tokens.unwrap_or(0),
            cached_tokens: u.cached_tokens.unwrap_or(0),
            cost_usd: crate::records::add_usd(0.0, u.cost_usd.unwrap_or(0.0)),
            estimate_usd: u.estimate_usd.filter(|e| e.is_finite() && *e >= 0.0),
            ms,
        }
    }

    /// Sums what records say, which a hostile history may put near u64's end: saturating.
    pub fn add(&mut self, o: &Spend) {
        self.input_tokens = self.input_tokens.saturating_add(o.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(o.output_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(o.cached_tokens);
        self.cost_usd = crate::records::add_usd(self.cost_usd, o.cost_usd);
        self.estimate_usd = match (self.estimate_usd, o.estimate_usd) {
            (Some(a), Some(b)) => Some(crate::records::add_usd(a, b)),
            (a, b) => a.or(b),
        };
        self.ms = self.ms.saturating_add(o.ms);
    }

    /// A judge left out (cancelled) keeps no estimate: it is set against no spending.
    pub fn launched(self, status: Status) -> Spend {
        match status {
            Status::Cancelled => Spend {
                estimate_usd: None,
                ..self
            },
            _ => self,
        }
    }

    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// A canary's score: the verdicts of records whose answer is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CanaryCounts {
    pub seen: u64,
    pub hits: u64,
    pub wrong: u64,
    pub abstained: u64,
}

impl CanaryCounts {
    pub fn add(&mut self, said: Option<Verdict>, expected: Verdict) {
        self.seen += 1;
        match said {
            Some(v) if v == expected => self.hits += 1,
            Some(_) => self.wrong += 1,
            None => self.abstained += 1,
        }
    }

    fn merge(&mut self, o: &CanaryCounts) {
        self.seen += o.seen;
        self.hits += o.hits;
        self.wrong += o.wrong;
        self.abstained += o.abstained;
    }
}

/// What one judge (or a seat's or family's judges together) did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub panels: u64,
    pub holds: u64,
    pub breaks: u64,
    /// Abstentions by status, indexed as [`STATUSES`] (`ok` stays 0).
    pub abstained: [u64; STATUSES.len()],
    /// Panels that were decided without this judge (`--stop-when-decided`): counted apart from
    /// abstentions, since it was never asked to the end.
    pub cancelled: u64,
    pub durations: Durations,
    pub spend: Spend,
    /// Panels where the other judges who answered had a majority, and where this judge
    /// answered against it.
    pub majority_panels: u64,
    pub against: u64,
    pub canary: CanaryCounts,
    /// A pairwise judge's answers by the order they were shown in.
    pub position: Position,
}

impl Stats {
    pub fn abstentions(&self) -> u64 {
        self.abstained.iter().sum()
    }

    pub fn answered(&self) -> u64 {
        self.holds + self.breaks
    }

    /// What its cancelled judges would have spent, each at this judge's mean over the panels
    /// it was asked to the end: what stopping early saved.
    pub fn saved(&self) -> Spend {
        let asked = self.panels - self.cancelled;
        if self.cancelled == 0 || asked == 0 {
            return Spend::default();
        }
        let share = |x: u64| {
            let s = u128::from(x) * u128::from(self.cancelled) / u128::from(asked);
            u64::try_from(s).unwrap_or(u64::MAX)
        };
        Spend {
            input_tokens: share(self.spend.input_tokens),
            output_tokens: share(self.spend.output_tokens),
            cached_tokens: share(self.spend.cached_tokens),
            cost_usd: self.spend.cost_usd * self.cancelled as f64 / asked as f64,
            estimate_usd: None,
            ms: share(self.spend.ms),
        }
    }

    pub fn merge(&mut self, o: &Stats) {
        self.panels += o.panels;
        self.holds += o.holds;
        self.breaks += o.breaks;
        for (a, b) in self.abstained.iter_mut().zip(&o.abstained) {
            *a += b;
        }
        self.cancelled += o.cancelled;
        self.durations.merge(&o.durations);
        self.spend.add(&o.spend);
        self.majority_panels += o.majority_panels;
        self.against += o.against;
        self.canary.merge(&o.canary);
        self.position.merge(&o.position);
    }
}

/// A judge: a seat × lens, its family and the name its first record gave it.
#[derive(Clone, Debug)]
pub struct LedgerJudge {
    pub seat: String,
    pub lens: String,
    pub family: String,
    pub name: String,
    pub stats: Stats,
}

impl LedgerJudge {
    /// How reports name the judge: `lens@seat`.
    pub fn label(&self) -> String {
        format!("{}@{}", self.lens, self.seat)
    }
}

/// The agreement of judges on the same panels (all of them, or one lens's): Fleiss' kappa and
/// Krippendorff's alpha as they stream, and the kinds of panel their intervals are drawn from.
#[derive(Clone, Debug, Default)]
pub struct Agreement {
    pub fleiss: Fleiss<2>,
    pub alpha: Alpha<2>,
    pub units: Units<2>,
}

impl Agreement {
    /// One panel: how many of the judges said holds and breaks (abstainers are missing).
    pub fn add(&mut self, counts: &[u64; 2]) {
        self.fleiss.add(counts);
        self.alpha.add(counts);
        self.units.add(counts);
    }
}

/// Two judges on the same panels: `table[a][b]`, 0 holds and 1 breaks, for the first judge's
/// answer `a` and the second's `b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pair {
    pub shared: u64,
    pub table: [[u64; 2]; 2],
}

impl Pair {
    pub fn both_answered(&self) -> u64 {
        self.table.iter().flatten().sum()
    }

    pub fn agreed(&self) -> u64 {
        self.table[0][0] + self.table[1][1]
    }
}

/// The panels of one set of judges, and how each sub-panel's outcome compared with the full
/// panel's: `matched[mask]`, bit `i` for the shape's `i`-th judge.
#[derive(Clone, Debug)]
pub struct Shape {
    pub judges: Vec<usize>,
    pub panels: u64,
    pub matched: Vec<u64>,
    /// What each of the shape's judges spent over these panels.
    pub spend: Vec<Spend>,
    /// With gold labels: its labelled panels, and each sub-panel's decisions against the
    /// labels (`vs_gold[mask]`) and its panels undecided.
    pub labelled: u64,
    pub vs_gold: Vec<Confusion>,
    pub undecided: Vec<u64>,
}

/// One judge's record in a panel still open.
struct OpenMember {
    judge: usize,
    verdict: Option<Verdict>,
    status: Status,
    spend: Spend,
    /// A pairwise judge's answers that preferred the first shown, and its answers.
    first_shown: (u8, u8),
}

struct Open {
    seq: u64,
    size: usize,
    members: Vec<OpenMember>,
    /// The candidate of its first record, and the name given for it.
    candidate: String,
    name: Option<String>,
}

/// The ledger's counts so far.
#[derive(Default)]
pub struct Ledger {
    /// Whether the history is of pairwise records: its first record says.
    pub pairwise: Option<bool>,
    /// How a position-inconsistent pairwise judge counts in its panel's preference.
    pub inconsistent: Inconsistent,
    /// With gold labels: the judges' and panels' answers against them.
    pub gold: Option<GoldCounts>,
    pub judges: Vec<LedgerJudge>,
    ids: HashMap<String, usize>,
    pub pairs: HashMap<(usize, usize), Pair>,
    pub lenses: BTreeMap<String, Agreement>,
    pub overall: Agreement,
    pub shapes: HashMap<Vec<usize>, Shape>,
    /// Panels whose shape was not scored (too many judges, or too many shapes).
    pub unshaped: u64,
    pub decisions: [u64; 3],
    /// The yes answers a panel needs (`--agree N`; by default every judge).
    pub agree: Option<usize>,
    /// Panels with a judge left out (`cancelled`) that the answers in decided at this
    /// threshold, and those they did not (no decision: cancelled without cause here).
    pub decided_early: u64,
    pub cancelled_without_cause: u64,
    pub records: u64,
    pub canaries: u64,
    pub panels: u64,
    /// Panels closed early because too many were open at once.
    pub evicted: u64,
    open: HashMap<String, Open>,
    order: BTreeMap<u64, String>,
    seq: u64,
    key: String,
}

impl Ledger {
    /// A ledger deciding each panel at `agree` holds (by default every judge).
    pub fn new(agree: Option<usize>) -> Ledger {
        Ledger {
            agree,
            ..Ledger::default()
        }
    }

    fn judge_id(&mut self, rec: &VerdictView) -> Result<usize> {
        self.key.clear();
        self.key.push_str(&rec.seat);
        self.key.push('\0');
        self.key.push_str(&rec.lens);
        if let Some(&id) = self.ids.get(self.key.as_str()) {
            return Ok(id);
        }
        if self.judges.len() >= MAX_JUDGES {
            bail!(
                "more than {MAX_JUDGES} judges (seat × lens) in the history: the ledger compares \
                    them pairwise"
            );
        }
        let id = self.judges.len();
        self.ids.insert(self.key.clone(), id);
        self.judges.push(LedgerJudge {
            seat: rec.seat.to_string(),
            lens: rec.lens.to_string(),
            family: rec.family.as_deref().unwrap_or("unknown").to_string(),
            name: rec.judge.to_string(),
            stats: Stats::default(),
        });
        Ok(id)
    }

    /// Counts one verdict (or pairwise) record.
    pub fn add(&mut self, rec: &VerdictView, at: &dyn Fn() -> String) -> Result<()> {
        self.records += 1;
        match self.pairwise {
            None => self.pairwise = Some(rec.pairwise()),
            Some(p) if p != rec.pairwise() => bail!(
                "{}: a {} record in a history of {} records: a ledger reads one kind (jq -c \
                    'select(.type == \"{}\")')",
                at(),
                rec.kind,
                if p { "pairwise" } else { "verdict" },
                if p { "pairwise" } else { "verdict" },
            ),
            Some(_) => {}
        }
        let judge = self.judge_id(rec)?;
        if let Some(expected) = rec.expected(at)? {
            // A canary is scored on its own and never sits on a panel.
            self.canaries += 1;
            self.judges[judge].stats.canary.add(rec.answer(), expected);
            return Ok(());
        }
        let member = OpenMember {
            judge,
            verdict: rec.answer(),
            status: rec.status,
            spend: Spend::of(rec.usage.as_ref(), rec.duration_ms).launched(rec.status),
            first_shown: rec.first_shown(),
        };
        let key: &str = if rec.run.is_empty() {
            &rec.candidate
        } else {
            &rec.run
        };
        let full = match self.open.get_mut(key) {
            Some(open) => {
                match open.members.iter_mut().find(|m| m.judge == judge) {
                    // A judge's later record in the same panel replaces its earlier one.
                    Some(m) => *m = member,
                    None => open.members.push(member),
                }
                open.size = open.size.max(rec.panel_size);
                open.size > 0 && open.members.len() >= open.size
            }
            None => {
                self.seq += 1;
                self.order.insert(self.seq, key.to_string());
                self.open.insert(
                    key.to_string(),
                    Open {
                        seq: self.seq,
                        size: rec.panel_size,
                        members: vec![member],
                        candidate: rec.candidate.to_string(),
                        name: rec.name.as_deref().map(str::to_string),
                    },
                );
                rec.panel_size == 1
            }
        };
        if full {
            let key = key.to_string();
            self.close(&key);
        }
        while self.open.len() > MAX_OPEN {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.evicted += 1;
            self.close_open(&oldest);
        }
        Ok(())
    }

    fn close(&mut self, key: &str) {
        if let Some(open) = self.open.get(key) {
            self.order.remove(&open.seq);
        }
        self.close_open(key);
    }

    fn close_open(&mut self, key: &str) {
        let Some(mut open) = self.open.remove(key) else {
            return;
        };
        open.members.sort_by_key(|m| m.judge);
        let label = match &mut self.gold {
            Some(g) => g.label(&open.candidate, open.name.as_deref()),
            None => None,
        };
        self.count_panel(&open.members, open.size, label);
        if let (Some(g), None) = (&mut self.gold, label) {
            g.unlabelled(&open.candidate, open.name.as_deref());
        }
    }

    /// Closes every panel still open: the end of the input.
    pub fn finish(&mut self) {
        let keys: Vec<String> = std::mem::take(&mut self.order).into_values().collect();
        for key in keys {
            self.close_open(&key);
        }
    }

    /// Counts one panel of `members`, which said it had `said` judges: those it lacks are
    /// missing, as panel-tally counts them. `label`: its gold label's row, 0 positive.
    fn count_panel(&mut self, members: &[OpenMember], said: usize, label: Option<usize>) {
        self.panels += 1;
        let holds = members
            .iter()
            .filter(|m| m.verdict == Some(Verdict::Holds))
            .count();
        let breaks = members
            .iter()
            .filter(|m| m.verdict == Some(Verdict::Breaks))
            .count();
        let size = said.max(members.len());
        let missing = size - holds - breaks;
        self.count_members(members, (holds, breaks), label);
        self.count_pairs_and_lenses(members, (holds, breaks));
        let required = self.required(size);
        let inconsistent = members
            .iter()
            .filter(|m| m.status == Status::PositionInconsistent)
            .count();
        let outcome = self.rule().outcome(
            (holds, breaks, inconsistent),
            missing,
            (size, required),
            size,
        );
        if let Some(g) = &mut self.gold {
            g.panel(label, outcome);
        }
        self.decisions[match outcome {
            Decision::Pass => 0,
            Decision::Fail => 1,
            Decision::NoDecision => 2,
        }] += 1;
        if members.iter().any(|m| m.status == Status::Cancelled) {
            match outcome {
                Decision::NoDecision => self.cancelled_without_cause += 1,
                _ => self.decided_early += 1,
            }
        }
        self.score_sub_panels(members, outcome, (required, size), label);
    }

    /// Each judge of a panel where `holds` and `breaks` judges answered so: what it said, how
    /// long it took, what it spent, against the others' majority, and against the label.
    fn count_members(
        &mut self,
        members: &[OpenMember],
        (holds, breaks): (usize, usize),
        label: Option<usize>,
    ) {
        for m in members {
            if let (Some(g), Some(gold)) = (&mut self.gold, label) {
                g.judge(m.judge, gold, m.verdict.map(|v| v as usize), m.status);
            }
            let s = &mut self.judges[m.judge].stats;
            s.panels += 1;
            s.spend.add(&m.spend);
            if self.pairwise == Some(true) && m.status != Status::Cancelled {
                s.position.add(m.first_shown);
            }
            if m.status == Status::Cancelled {
                // Cut short or never started: its time is no answer's.
                s.cancelled += 1;
                continue;
            }
            s.durations.add(m.spend.ms);
            if m.verdict.is_none() {
                s.abstained[status_index(m.status)] += 1;
            }
            let Some(v) = m.verdict else { continue };
            let (h, b) = match v {
                Verdict::Holds => {
                    s.holds += 1;
                    (holds - 1, breaks)
                }
                Verdict::Breaks => {
                    s.breaks += 1;
                    (holds, breaks - 1)
                }
            };
            // The others' majority, when they have one.
            if h != b {
                s.majority_panels += 1;
                let majority = if h > b {
                    Verdict::Holds
                } else {
                    Verdict::Breaks
                };
                s.against += u64::from(v != majority);
            }
        }
    }

    /// The pairs of a panel's judges, and the agreement of all of them and of each lens's.
    fn count_pairs_and_lenses(&mut self, members: &[OpenMember], (holds, breaks): (usize, usize)) {
        for (i, a) in members.iter().enumerate() {
            for b in &members[i + 1..] {
                let pair = self.pairs.entry((a.judge, b.judge)).or_default();
                pair.shared += 1;
                if let (Some(x), Some(y)) = (a.verdict, b.verdict) {
                    pair.table[x as usize][y as usize] += 1;
                }
            }
        }
        self.overall.add(&[holds as u64, breaks as u64]);
        let mut by_lens: BTreeMap<&str, [u64; 2]> = BTreeMap::new();
        for m in members {
            if let Some(v) = m.verdict {
                by_lens.entry(&self.judges[m.judge].lens).or_default()[v as usize] += 1;
            }
        }
        for (lens, counts) in by_lens {
            match self.lenses.get_mut(lens) {
                Some(f) => f.add(&counts),
                None => {
                    let mut f = Agreement::default();
                    f.add(&counts);
                    self.lenses.insert(lens.to_string(), f);
                }
            }
        }
    }

    /// The yes answers (holds; for a pairwise panel, one of the two answers) a panel of `size`
    /// needs: `--agree N` (for a preference, at least more than half), else every judge (for
    /// a preference, more than half).
    fn required(&self, size: usize) -> usize {
        match self.pairwise {
            Some(true) => self.agree.map_or(decision::majority(size), |n| {
                n.min(size).max(decision::majority(size))
            }),
            _ => self.agree.map_or(size, |n| n.min(size)),
        }
    }

    /// How this ledger decides a panel: [`Rule::outcome`].
    fn rule(&self) -> Rule {
        match self.pairwise {
            Some(true) => Rule::Preference(self.inconsistent),
            _ => Rule::Threshold,
        }
    }

    fn score_sub_panels(
        &mut self,
        members: &[OpenMember],
        full: Decision,
        (required, size): (usize, usize),
        label: Option<usize>,
    ) {
        let n = members.len();
        if n > MAX_SHAPE {
            self.unshaped += 1;
            return;
        }
        let ids: Vec<usize> = members.iter().map(|m| m.judge).collect();
        if !self.shapes.contains_key(&ids) {
            if self.shapes.len() >= MAX_SHAPES {
                self.unshaped += 1;
                return;
            }
            let gold = if self.gold.is_some() { 1 << n } else { 0 };
            self.shapes.insert(
                ids.clone(),
                Shape {
                    judges: ids.clone(),
                    panels: 0,
                    matched: vec![0; 1 << n],
                    spend: vec![Spend::default(); n],
                    labelled: 0,
                    vs_gold: vec![Confusion::default(); gold],
                    undecided: vec![0; gold],
                },
            );
        }
        let rule = self.rule();
        let shape = self.shapes.get_mut(&ids).expect("inserted above");
        shape.panels += 1;
        let (mut holds_mask, mut breaks_mask) = (0u32, 0u32);
        let (mut missing_mask, mut inconsistent_mask) = (0u32, 0u32);
        for (i, m) in members.iter().enumerate() {
            shape.spend[i].add(&m.spend);
            match m.verdict {
                Some(Verdict::Holds) => holds_mask |= 1 << i,
                Some(Verdict::Breaks) => breaks_mask |= 1 << i,
                None => missing_mask |= 1 << i,
            }
            if m.status == Status::PositionInconsistent {
                inconsistent_mask |= 1 << i;
            }
        }
        let label = label.filter(|_| !shape.vs_gold.is_empty());
        shape.labelled += u64::from(label.is_some());
        let ones = |m: u32| m.count_ones() as usize;
        for mask in 1..(1u32 << n) {
            let said = (
                ones(mask & holds_mask),
                ones(mask & breaks_mask),
                ones(mask & inconsistent_mask),
            );
            let sub = rule.outcome(
                said,
                ones(mask & missing_mask),
                (size, required),
                ones(mask),
            );
            shape.matched[mask as usize] += u64::from(sub == full);
            if let Some(gold) = label {
                match sub {
                    Decision::Pass => shape.vs_gold[mask as usize].add(gold, 0),
                    Decision::Fail => shape.vs_gold[mask as usize].add(gold, 1),
                    Decision::NoDecision => shape.undecided[mask as usize] += 1,
                }
            }
        }
    }
}

/// How a ledger decides its panels: verdicts by the threshold, pairwise records by the
/// preference.
#[derive(Clone, Copy, Debug)]
enum Rule {
    Threshold,
    Preference(Inconsistent),
}

impl Rule {
    /// A panel's (or sub-panel's, `k` of its judges) outcome by the tally's rule: a verdict
    /// panel's [`outcome`]; a pairwise one's preference as a decision, pass for A and fail for B.
    fn outcome(
        self,
        (yes, no, inconsistent): (usize, usize, usize),
        missing: usize,
        (size, required): (usize, usize),
        k: usize,
    ) -> Decision {
        let Rule::Preference(how) = self else {
            return outcome(yes, missing, size, required, k);
        };
        let at = decision::share(required, size, k);
        match decision::preference((yes, no, inconsistent), k, at, how) {
            Some(Preference::A) => Decision::Pass,
            Some(Preference::B) => Decision::Fail,
            None => Decision::NoDecision,
        }
    }
}

/// The outcome of `k` judges of a panel of `size` that needs `required` holds, by the tally's
/// own rule: the whole panel at `required`, a sub-panel at the same share of its judges
/// ([`decision::share`]).
pub fn outcome(holds: usize, missing: usize, size: usize, required: usize, k: usize) -> Decision {
    decision::decide(holds, missing, decision::share(required, size, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_within_their_bucket() {
        let mut d = Durations::default();
        for ms in 1..=1000u64 {
            d.add(ms * 10);
        }
        let median = d.quantile(0.5).unwrap() as f64;
        let p90 = d.quantile(0.9).unwrap() as f64;
        assert!((median / 5000.0 - 1.0).abs() < 0.045, "{median}");
        assert!((p90 / 9000.0 - 1.0).abs() < 0.045, "{p90}");
        assert_eq!(Durations::default().quantile(0.5), None);
        let mut z = Durations::default();
        z.add(0);
        z.add(u64::MAX);
        assert_eq!(z.quantile(0.5), Some(0));
        assert!(z.quantile(1.0).unwrap() > 1 << 60);
    }

    #[test]
    fn every_abstention_is_counted_by_its_own_status() {
        // Each status but ok and cancelled has a place of its own: none is shown as "ok".
        for s in STATUSES.iter().skip(1) {
            assert_ne!(status_index(*s), 0, "{s:?}");
        }
        assert!(!STATUSES.contains(&Status::Cancelled));
    }

    #[test]
    fn the_outcome_is_the_tallys_rule() {
        assert_eq!(outcome(3, 0, 3, 3, 3), Decision::Pass);
        assert_eq!(outcome(2, 1, 3, 3, 3), Decision::NoDecision);
        assert_eq!(outcome(1, 0, 2, 2, 2), Decision::Fail);
        // --agree 2 of 3: two holds and one left out pass; a sub-panel of two needs both.
        assert_eq!(outcome(2, 1, 3, 2, 3), Decision::Pass);
        assert_eq!(outcome(1, 1, 3, 2, 2), Decision::NoDecision);
        assert_eq!(outcome(1, 0, 3, 2, 1), Decision::Pass);
    }
}
