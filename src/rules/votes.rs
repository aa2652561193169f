//! The vote rules of the synthesised panel, in plain code, one function each, and the panel's
//! pass rule. Only the voters who voted on a finding are counted.
//!
//! The two "never drop" rules, read as the seed writes them (docs/design.md §5): where the rules
//! would drop a `block`, it stays, marked `disputed`; a finding shown to a voter whose seat
//! failed or sent no readable vote on it stays, marked `disputed`, whatever the other votes say.
//! A voter left out (`panel-vote --stop-when-decided`) is no missing vote, but only where its
//! vote could change no fate ([`fixed_fate`]); a cascade of voters (`--cascade`) asks as
//! many as could fix each fate ([`could_fix`], [`to_ask`]).

use std::collections::HashMap;

use anyhow::Result;

use crate::records::Status;
use crate::records::review::{ReviewDecision, Severity, name_order};
use crate::records::synthesis::{
    FindingResult, FindingVote, MergedFinding, MergedPanel, PanelRecord, Reviewer, SynthesisEntry,
    SynthesisFinding, VoteKind, VoteRecord,
};
use crate::rules::decision::{self, Decision};

/// The votes counted on one finding: only those who voted on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub agree: usize,
    pub disagree: usize,
    pub better_fix: usize,
}

impl Count {
    pub fn of(votes: &[FindingVote]) -> Count {
        let mut c = Count::default();
        for v in votes {
            match v.vote {
                VoteKind::Agree => c.agree += 1,
                VoteKind::Disagree => c.disagree += 1,
                VoteKind::BetterFix => c.better_fix += 1,
            }
        }
        c
    }

    pub fn voters(&self) -> usize {
        self.agree + self.disagree + self.better_fix
    }
}

/// More than half of those who voted disagree.
pub fn most_disagree(c: Count) -> bool {
    c.disagree * 2 > c.voters()
}

/// Exactly half of those who voted disagree (never with no voters).
pub fn exactly_half_disagree(c: Count) -> bool {
    c.voters() > 0 && c.disagree * 2 == c.voters()
}

/// The disagreeing outnumber those who raised the finding, agreed, or offered a better fix.
pub fn disagree_outnumber_backers(c: Count, raisers: usize) -> bool {
    c.disagree > raisers + c.agree + c.better_fix
}

/// More than half of those who voted prefer a better fix.
pub fn most_prefer_better_fix(c: Count) -> bool {
    c.better_fix * 2 > c.voters()
}

/// The first better fix offered, in reviewer order.
pub fn first_better_fix(votes: &[FindingVote]) -> Option<&str> {
    votes
        .iter()
        .find(|v| v.vote == VoteKind::BetterFix)
        .and_then(|v| v.fix.as_deref())
}

/// Votes never drop a `block`.
pub fn block_guards(severity: Severity) -> bool {
    severity == Severity::Block
}

/// Votes never drop a finding shown to a voter whose vote is missing.
pub fn missing_vote_guards(no_votes_from: &[String]) -> bool {
    !no_votes_from.is_empty()
}

/// What the rules decide for one finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruling {
    pub result: FindingResult,
    /// The fix that replaces the finding's own, for `better fix`.
    pub fix: Option<String>,
    pub why: String,
}

/// Applies the vote rules to one finding. `votes` are those who voted on it, in reviewer order;
/// `no_votes_from` the voters shown it whose vote is missing.
pub fn rule(
    severity: Severity,
    raisers: usize,
    votes: &[FindingVote],
    no_votes_from: &[String],
) -> Ruling {
    let c = Count::of(votes);
    let n = c.voters();
    let ruling = |result, why: String| Ruling {
        result,
        fix: None,
        why,
    };
    if missing_vote_guards(no_votes_from) {
        let counted = if n == 0 {
            "no votes counted".to_string()
        } else {
            format!(
                "{} of {n} voters disagree, {} agree, {} offer a better fix",
                c.disagree, c.agree, c.better_fix
            )
        };
        return ruling(
            FindingResult::Disputed,
            format!(
                "{counted}; it was shown to {}, whose vote is missing, so it stays for the judge",
                no_votes_from.join(", ")
            ),
        );
    }
    if n == 0 {
        return ruling(FindingResult::Kept, "nobody else voted on it".to_string());
    }
    if most_disagree(c) {
        let backers = raisers + c.agree + c.better_fix;
        if !disagree_outnumber_backers(c, raisers) {
            return ruling(
                FindingResult::Disputed,
                format!(
                    "{} of {n} voters disagree, but they do not outnumber the {backers} who raised or backed it",
                    c.disagree
                ),
            );
        }
        if block_guards(severity) {
            return ruling(
                FindingResult::Disputed,
                format!(
                    "{} of {n} voters disagree, outnumbering the {backers} who raised or backed it, but votes never drop a block",
                    c.disagree
                ),
            );
        }
        return ruling(
            FindingResult::Dropped,
            format!(
                "{} of {n} voters disagree, outnumbering the {backers} who raised or backed it",
                c.disagree
            ),
        );
    }
    if exactly_half_disagree(c) {
        return ruling(
            FindingResult::Disputed,
            format!("{} of {n} voters disagree: exactly half", c.disagree),
        );
    }
    if most_prefer_better_fix(c)
        && let Some(fix) = first_better_fix(votes)
    {
        let by = votes
            .iter()
            .find(|v| v.vote == VoteKind::BetterFix)
            .map(|v| v.reviewer.as_str())
            .unwrap_or_default();
        return Ruling {
            result: FindingResult::BetterFix,
            fix: Some(fix.to_string()),
            why: format!(
                "{} of {n} voters prefer a better fix: {by}'s replaces the finding's own",
                c.better_fix
            ),
        };
    }
    ruling(
        FindingResult::Kept,
        format!(
            "{} of {n} voters disagree; {} agree, {} offer a better fix",
            c.disagree, c.agree, c.better_fix
        ),
    )
}

// ── Fates the votes in fix ─────────────────────────────────────────────────

/// One voter's place on a finding, in reviewer order: the vote it gave, or still out (asked
/// and not yet answered, not yet asked, or left out).
#[derive(Clone, Copy, Debug)]
pub enum Ballot<'a> {
    In(&'a FindingVote),
    Out(&'a str),
}

/// The most voters out on one finding whose every way to vote is tried ([`fixed_fate`] tries
/// about a sixth of the cube of them, [`could_fix`] more): past it, a fate is taken as open,
/// so a voter is asked rather than left out, and a stream's voter left out counts as missing.
pub const EXACT: usize = 12;

/// The fate the votes in fix for one finding whatever the voters still out do, or `None`
/// while one of them could still change it: its result, and with `better fix` the fix it
/// carries. Each voter out may agree, disagree, offer a better fix of its own, or be left out
/// too (another voter's cancel); the fate must be the same in every case, and the same as with
/// them all left out, which is how they are counted once they are. A voter out whose seat
/// fails instead only makes the finding `disputed`, as any missing vote does (seed 000: "Votes
/// also never drop a finding shown to a reviewer whose seat failed"), so it cannot make a
/// voter left out matter. What `panel-vote --stop-when-decided` ends a voter by, and what
/// `panel-tally` checks a cancelled voter against.
///
/// Only the counts and the first better fix in reviewer order matter to [`rule`], so each
/// split of the voters out into agree, disagree, better fix and left out is tried once, the
/// better fixes given to the earliest of them: if a fix of theirs can come first, it does.
pub fn fixed_fate(
    severity: Severity,
    raisers: usize,
    ballots: &[Ballot],
    no_votes_from: &[String],
) -> Option<Ruling> {
    // The rules read a vote's kind and fix, never its reason: tried without it.
    let bare = |v: &FindingVote| FindingVote {
        reason: String::new(),
        ..v.clone()
    };
    let votes_in: Vec<FindingVote> = ballots
        .iter()
        .filter_map(|b| match b {
            Ballot::In(v) => Some(bare(v)),
            Ballot::Out(_) => None,
        })
        .collect();
    let fate = rule(severity, raisers, &votes_in, no_votes_from);
    let out = ballots
        .iter()
        .filter(|b| matches!(b, Ballot::Out(_)))
        .count();
    if out > EXACT {
        return None;
    }
    for better in 0..=out {
        for agree in 0..=out - better {
            for disagree in 0..=out - better - agree {
                let mut k = 0;
                let votes: Vec<FindingVote> = ballots
                    .iter()
                    .filter_map(|b| match b {
                        Ballot::In(v) => Some(bare(v)),
                        Ballot::Out(name) => {
                            k += 1;
                            let vote = if k <= better {
                                VoteKind::BetterFix
                            } else if k <= better + agree {
                                VoteKind::Agree
                            } else if k <= better + agree + disagree {
                                VoteKind::Disagree
                            } else {
                                return None;
                            };
                            Some(supposed(name, vote))
                        }
                    })
                    .collect();
                let then = rule(severity, raisers, &votes, no_votes_from);
                if (then.result, &then.fix) != (fate.result, &fate.fix) {
                    return None;
                }
            }
        }
    }
    Some(fate)
}

/// A vote a voter still out might give, to try what it would do: with a better fix, one of its
/// own that no real fix can equal.
fn supposed(name: &str, vote: VoteKind) -> FindingVote {
    FindingVote {
        reviewer: name.to_string(),
        vote,
        reason: String::new(),
        fix: (vote == VoteKind::BetterFix).then(|| format!("\u{0}the fix {name} would offer")),
    }
}

/// The fewest of the voters still out on one finding whose votes could fix its fate
/// ([`fixed_fate`]), the rest still out: what a cascade of voters asks for at once
/// (`panel-vote --cascade`), as `rules::decision::Standing::could_decide` is for a panel's
/// judges. 0 when the fate is fixed; at most the voters out, whose votes all in fix it.
pub fn could_fix(
    severity: Severity,
    raisers: usize,
    ballots: &[Ballot],
    no_votes_from: &[String],
) -> usize {
    let out: Vec<usize> = (0..ballots.len())
        .filter(|&i| matches!(ballots[i], Ballot::Out(_)))
        .collect();
    let name = |i: usize| match ballots[i] {
        Ballot::Out(n) => n,
        Ballot::In(v) => v.reviewer.as_str(),
    };
    if out.len() > EXACT {
        return out.len();
    }
    for k in 0..out.len() {
        for better in 0..=k {
            for agree in 0..=k - better {
                let votes: Vec<FindingVote> = (0..k)
                    .map(|j| {
                        let vote = if j < better {
                            VoteKind::BetterFix
                        } else if j < better + agree {
                            VoteKind::Agree
                        } else {
                            VoteKind::Disagree
                        };
                        supposed(name(out[j]), vote)
                    })
                    .collect();
                let tried: Vec<Ballot> = (0..ballots.len())
                    .map(|i| match out[..k].iter().position(|&o| o == i) {
                        Some(j) => Ballot::In(&votes[j]),
                        None => ballots[i],
                    })
                    .collect();
                if fixed_fate(severity, raisers, &tried, no_votes_from).is_some() {
                    return k;
                }
            }
        }
    }
    out.len()
}

/// Where one voter stands on one finding, by its record: the vote it gave, left out by a
/// cancel (`cancelled`, no vote), or missing (a record with no readable vote).
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    Voted(FindingVote),
    LeftOut,
    Missing,
}

impl Place {
    pub fn of(rec: &VoteRecord) -> Place {
        match rec {
            VoteRecord {
                vote: Some(vote),
                reason,
                fix,
                ..
            } => Place::Voted(FindingVote {
                reviewer: rec.reviewer.clone(),
                vote: *vote,
                reason: reason.clone().unwrap_or_default(),
                fix: fix.clone(),
            }),
            _ if rec.status == Status::Cancelled => Place::LeftOut,
            _ => Place::Missing,
        }
    }
}

/// The voters a `panel-vote` stream records as left out (status `cancelled`, no vote), and
/// those of them left out without cause: on some finding, the votes its synthesis entry counts
/// do not fix the fate it gives whatever they would have voted ([`fixed_fate`]), so a vote of
/// theirs could have changed it (a forged or edited stream). Each list in reviewer order.
pub fn left_out(entries: &[&SynthesisEntry], votes: &[&VoteRecord]) -> (Vec<String>, Vec<String>) {
    let mut cancelled: Vec<String> = Vec::new();
    let mut without_cause: Vec<String> = Vec::new();
    for e in entries {
        let f = &e.finding.finding;
        let out: Vec<&str> = votes
            .iter()
            .filter(|v| v.finding == f.id && Place::of(v) == Place::LeftOut)
            .map(|v| v.reviewer.as_str())
            .collect();
        if out.is_empty() {
            continue;
        }
        let missing: Vec<String> = e
            .no_votes_from
            .iter()
            .filter(|m| !out.contains(&m.as_str()))
            .cloned()
            .collect();
        let mut ballots: Vec<Ballot> = e
            .finding
            .votes
            .iter()
            .filter(|v| !out.contains(&v.reviewer.as_str()))
            .map(Ballot::In)
            .chain(out.iter().map(|n| Ballot::Out(n)))
            .collect();
        let name = |b: &Ballot| match b {
            Ballot::In(v) => v.reviewer.clone(),
            Ballot::Out(n) => n.to_string(),
        };
        ballots.sort_by(|a, b| name_order(&name(a), &name(b)));
        let caused =
            fixed_fate(f.severity, f.raised_by.len(), &ballots, &missing).is_some_and(|fate| {
                fate.result == e.result
                    && (fate.result != FindingResult::BetterFix
                        || fate.fix.as_deref() == Some(f.fix.as_str()))
            });
        for n in out {
            if !cancelled.iter().any(|c| c == n) {
                cancelled.push(n.to_string());
            }
            if !caused && !without_cause.iter().any(|c| c == n) {
                without_cause.push(n.to_string());
            }
        }
    }
    cancelled.sort_by(|a, b| name_order(a, b));
    without_cause.sort_by(|a, b| name_order(a, b));
    (cancelled, without_cause)
}

/// Each voter asked about `f`, in order, and where it stands: `None` while its reply is out.
fn standing_on<'a>(
    f: &MergedFinding,
    asked: &'a [(&Reviewer, Vec<&MergedFinding>)],
    done: &[Option<Vec<VoteRecord>>],
) -> Vec<(usize, &'a str, Option<Place>)> {
    asked
        .iter()
        .enumerate()
        .filter(|(_, (_, seen))| seen.iter().any(|s| s.id == f.id))
        .map(|(i, (voter, _))| {
            let place = done[i].as_ref().map(|recs| {
                recs.iter()
                    .find(|r| r.finding == f.id)
                    .map_or(Place::Missing, Place::of)
            });
            (i, voter.name.as_str(), place)
        })
        .collect()
}

/// The ballots of a standing: a voter not yet in, or in as left out, is out (a voter left out
/// may still be counted out); one with no readable vote is missing.
fn ballots_of<'a>(stand: &'a [(usize, &'a str, Option<Place>)]) -> (Vec<Ballot<'a>>, Vec<String>) {
    let mut ballots = Vec::new();
    let mut missing = Vec::new();
    for (_, name, place) in stand {
        match place {
            None | Some(Place::LeftOut) => ballots.push(Ballot::Out(name)),
            Some(Place::Voted(v)) => ballots.push(Ballot::In(v)),
            Some(Place::Missing) => missing.push(name.to_string()),
        }
    }
    (ballots, missing)
}

/// Why a voter still out is not needed (`panel-vote --stop-when-decided`): the votes in fix
/// the fate of every finding in `shown` whatever it and the others still out would vote
/// ([`fixed_fate`]); `None` while one is open. `asked` is each voter and what it was shown,
/// `done` its records once its reply is in.
pub fn not_needed(
    asked: &[(&Reviewer, Vec<&MergedFinding>)],
    done: &[Option<Vec<VoteRecord>>],
    shown: &[&MergedFinding],
) -> Option<String> {
    let mut fates = Vec::new();
    for f in shown {
        let stand = standing_on(f, asked, done);
        let (ballots, missing) = ballots_of(&stand);
        let fate = fixed_fate(f.severity, f.raised_by.len(), &ballots, &missing)?;
        fates.push(format!("{} {}", f.id, fate.result.as_str()));
    }
    Some(format!(
        "the votes in fixed the fate of every finding it was shown without it: {}",
        fates.join(", ")
    ))
}

/// The voters a cascade asks next (`panel-vote --cascade`), in order, of those not yet
/// `released`: for each finding the votes in do not fix, as many of the voters still out on it
/// as could fix it ([`could_fix`]), less those already asked and not yet in.
pub fn to_ask(
    asked: &[(&Reviewer, Vec<&MergedFinding>)],
    done: &[Option<Vec<VoteRecord>>],
    released: &[bool],
) -> Vec<usize> {
    let mut next: Vec<usize> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for f in asked.iter().flat_map(|(_, shown)| shown) {
        if seen.contains(&f.id.as_str()) {
            continue;
        }
        seen.push(&f.id);
        let stand = standing_on(f, asked, done);
        let (ballots, missing) = ballots_of(&stand);
        let need = could_fix(f.severity, f.raised_by.len(), &ballots, &missing);
        let running = stand
            .iter()
            .filter(|(i, _, place)| place.is_none() && released[*i])
            .count();
        let held = stand
            .iter()
            .filter(|(i, _, place)| place.is_none() && !released[*i]);
        next.extend(held.take(need.saturating_sub(running)).map(|(i, ..)| *i));
    }
    next.sort_unstable();
    next.dedup();
    next
}

// ── Applying the votes ─────────────────────────────────────────────────────

/// The votes applied: the synthesis and the panel's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub votes: Vec<VoteRecord>,
    pub entries: Vec<SynthesisEntry>,
    pub panel: PanelRecord,
}

impl Applied {
    /// The findings left after the votes, in synthesis order.
    pub fn left(&self) -> Vec<&SynthesisEntry> {
        self.entries
            .iter()
            .filter(|e| e.result != FindingResult::Dropped)
            .collect()
    }
}

/// Applies collected votes to the panel's findings, and decides the panel. Pure.
///
/// A voter shown a finding with no vote record for it counts as missing, like one whose seat
/// failed. The panel passes when `agree` reviewers passed the work (default: all), or when the
/// votes dropped every finding it had (the seed's exception, missing reviews or not); otherwise,
/// below the threshold, it has no decision when the missing reviews could have reached it.
pub fn apply(panel: &MergedPanel, votes: &[VoteRecord], agree: Option<usize>) -> Result<Applied> {
    let required = decision::required(agree, panel.reviewers.len())?;
    panel.check_votes(votes.iter().map(|v| (v, "")))?;
    let by_key: HashMap<(&str, &str), &VoteRecord> = votes
        .iter()
        .map(|v| ((v.reviewer.as_str(), v.finding.as_str()), v))
        .collect();
    let mut names = Absent::default();
    let entries: Vec<SynthesisEntry> = panel
        .findings
        .iter()
        .map(|f| entry_for(panel, f, &by_key, &mut names))
        .collect();
    names.no_votes_from.sort_by(|a, b| name_order(a, b));
    names.cancelled.sort_by(|a, b| name_order(a, b));
    names.without_cause.sort_by(|a, b| name_order(a, b));
    Ok(Applied {
        votes: votes.to_vec(),
        panel: panel_record(panel, &entries, required, names),
        entries,
    })
}

/// The voters whose votes the panel lacks, each named once, gathered finding by finding.
#[derive(Default)]
struct Absent {
    no_votes_from: Vec<String>,
    cancelled: Vec<String>,
    without_cause: Vec<String>,
}

/// One finding's synthesis entry: where each voter shown it stands, the voters left out
/// counted as missing where they could have changed its fate, and the vote rules applied.
fn entry_for(
    panel: &MergedPanel,
    f: &MergedFinding,
    by_key: &HashMap<(&str, &str), &VoteRecord>,
    names: &mut Absent,
) -> SynthesisEntry {
    let mut counted = Vec::new();
    let mut missing = Vec::new();
    let mut left_out = Vec::new();
    for voter in panel.voters() {
        if f.raised_by.contains(&voter.name) {
            continue;
        }
        match by_key
            .get(&(voter.name.as_str(), f.id.as_str()))
            .map(|v| Place::of(v))
        {
            Some(Place::Voted(vote)) => counted.push(vote),
            Some(Place::LeftOut) => left_out.push(voter.name.clone()),
            _ => missing.push(voter.name.clone()),
        }
    }
    if !left_out.is_empty() {
        weigh_left_out(panel, f, &counted, &mut missing, left_out, names);
    }
    for m in &missing {
        if !names.no_votes_from.contains(m) {
            names.no_votes_from.push(m.clone());
        }
    }
    let ruling = rule(f.severity, f.raised_by.len(), &counted, &missing);
    let mut finding = f.clone();
    let original_fix = ruling
        .fix
        .as_ref()
        .map(|fix| std::mem::replace(&mut finding.fix, fix.clone()));
    SynthesisEntry {
        result: ruling.result,
        finding: SynthesisFinding {
            finding,
            votes: counted,
            original_fix,
        },
        why: ruling.why,
        no_votes_from: missing,
    }
}

/// A voter left out is no missing vote, but only where its vote could change nothing; else (a
/// forged or edited stream) it counts as missing, and the panel has no decision.
fn weigh_left_out(
    panel: &MergedPanel,
    f: &MergedFinding,
    counted: &[FindingVote],
    missing: &mut Vec<String>,
    mut left_out: Vec<String>,
    names: &mut Absent,
) {
    let ballots: Vec<Ballot> = panel
        .voters()
        .filter_map(|r| {
            let name = r.name.as_str();
            if left_out.iter().any(|n| n == name) {
                Some(Ballot::Out(name))
            } else {
                counted.iter().find(|v| v.reviewer == name).map(Ballot::In)
            }
        })
        .collect();
    let fixed = fixed_fate(f.severity, f.raised_by.len(), &ballots, missing).is_some();
    for name in &left_out {
        if !names.cancelled.contains(name) {
            names.cancelled.push(name.clone());
        }
        if !fixed && !names.without_cause.contains(name) {
            names.without_cause.push(name.clone());
        }
    }
    if !fixed {
        missing.append(&mut left_out);
        missing.sort_by(|a, b| name_order(a, b));
    }
}

/// The panel's record once the votes are applied: its decision by [`panel_decision`], unless
/// a voter was left out without cause, and the findings counted by result.
fn panel_record(
    panel: &MergedPanel,
    entries: &[SynthesisEntry],
    required: usize,
    names: Absent,
) -> PanelRecord {
    let n = panel.reviewers.len();
    let count = |o: FindingResult| entries.iter().filter(|e| e.result == o).count();
    let passed = panel
        .reviewers
        .iter()
        .filter(|r| r.decision == Some(ReviewDecision::Pass))
        .count();
    let no_review_from: Vec<String> = panel
        .reviewers
        .iter()
        .filter(|r| r.decision.is_none())
        .map(|r| r.name.clone())
        .collect();
    let errors = no_review_from.len();
    let dropped = count(FindingResult::Dropped);
    let all_dropped = !entries.is_empty() && dropped == entries.len();
    let counted = format!("{passed} of {n} reviewers passed the work ({required} needed)");
    let without_cause = names.without_cause;
    let (status, exception) = match panel_decision(passed, errors, required, all_dropped) {
        _ if !without_cause.is_empty() => (Decision::NoDecision, false),
        d => d,
    };
    let reason = match (status, exception) {
        _ if !without_cause.is_empty() => format!(
            "{counted}; {} left out (cancelled) though a vote of theirs could have changed a finding's fate: counted as missing, no decision",
            without_cause.join(", ")
        ),
        (Decision::Pass, true) if errors > 0 => format!(
            "{counted}, and no review from {}, but the votes dropped every finding: nothing is left to send back",
            no_review_from.join(", ")
        ),
        (Decision::Pass, true) => {
            format!("{counted}, but the votes dropped every finding: nothing is left to send back")
        }
        (Decision::NoDecision, _) => format!(
            "{counted}; no review from {}, which could have changed it",
            no_review_from.join(", ")
        ),
        _ => counted,
    };
    let merge = panel.merge.as_ref();
    PanelRecord {
        status,
        reason,
        passed,
        required,
        reviewers: n,
        every_finding_dropped: exception,
        merge_failed: merge.is_some_and(|m| m.merge_failed),
        merge_cause: merge
            .filter(|m| m.merge_failed)
            .and_then(|m| m.cause.clone()),
        no_votes_from: names.no_votes_from,
        cancelled: names.cancelled,
        cancelled_without_cause: without_cause,
        no_review_from,
        findings: entries.len(),
        kept: count(FindingResult::Kept),
        better_fix: count(FindingResult::BetterFix),
        disputed: count(FindingResult::Disputed),
        dropped,
        candidate: panel.candidate().to_string(),
    }
}

/// The panel's pass rule (docs/rules.md): it passes or fails on how many reviewers passed the work,
/// by the threshold, with one exception: "When the votes drop every finding a failing panel had,
/// nothing is left to send back, so the panel passes" (seed 000). A panel short of its threshold
/// because reviews are missing is one such panel: a review that failed is not a rejection and
/// sends nothing back, so when the votes dropped every finding the panel had, it passes too (the
/// panel record still names the missing reviews in `noReviewFrom`). Returns the decision and
/// whether the exception made it.
pub fn panel_decision(
    passed: usize,
    no_review: usize,
    required: usize,
    all_dropped: bool,
) -> (Decision, bool) {
    match decision::decide(passed, no_review, required) {
        Decision::Pass => (Decision::Pass, false),
        _ if all_dropped => (Decision::Pass, true),
        other => (other, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(reviewer: &str, vote: VoteKind) -> FindingVote {
        FindingVote {
            reviewer: reviewer.into(),
            vote,
            reason: "r".into(),
            fix: (vote == VoteKind::BetterFix).then(|| format!("fix by {reviewer}")),
        }
    }
    use VoteKind::{Agree as A, BetterFix as B, Disagree as D};

    fn c(agree: usize, disagree: usize, better_fix: usize) -> Count {
        Count {
            agree,
            disagree,
            better_fix,
        }
    }

    #[test]
    fn most_disagree_needs_more_than_half() {
        assert!(!most_disagree(c(0, 0, 0)), "no voters");
        assert!(most_disagree(c(0, 1, 0)));
        assert!(!most_disagree(c(1, 1, 0)), "a tie is not most");
        assert!(most_disagree(c(1, 2, 0)));
        assert!(!most_disagree(c(1, 2, 1)));
    }

    #[test]
    fn exactly_half_is_a_tie_and_never_with_no_voters() {
        assert!(!exactly_half_disagree(c(0, 0, 0)));
        assert!(exactly_half_disagree(c(1, 1, 0)));
        assert!(exactly_half_disagree(c(0, 1, 1)));
        assert!(!exactly_half_disagree(c(0, 1, 0)));
        assert!(exactly_half_disagree(c(1, 2, 1)));
    }

    #[test]
    fn disagree_must_outnumber_raisers_and_backers() {
        assert!(disagree_outnumber_backers(c(0, 2, 0), 1));
        assert!(
            !disagree_outnumber_backers(c(0, 2, 0), 2),
            "equal is not more"
        );
        assert!(!disagree_outnumber_backers(c(0, 1, 0), 2));
        assert!(!disagree_outnumber_backers(c(1, 2, 0), 1));
        assert!(!disagree_outnumber_backers(c(0, 2, 1), 1));
    }

    #[test]
    fn most_prefer_better_fix_needs_more_than_half() {
        assert!(!most_prefer_better_fix(c(0, 0, 0)));
        assert!(most_prefer_better_fix(c(0, 0, 1)));
        assert!(!most_prefer_better_fix(c(1, 0, 1)));
        assert!(most_prefer_better_fix(c(1, 0, 2)));
        let votes = [v("r-1", A), v("r-2", B), v("r-3", B)];
        assert_eq!(first_better_fix(&votes), Some("fix by r-2"));
        assert_eq!(first_better_fix(&[v("r-1", A)]), None);
    }

    #[test]
    fn guards() {
        assert!(block_guards(Severity::Block));
        assert!(!block_guards(Severity::ShouldFix));
        assert!(missing_vote_guards(&["r-2".into()]));
        assert!(!missing_vote_guards(&[]));
    }

    #[test]
    fn rule_drops_only_when_the_disagreeing_outnumber() {
        let sf = Severity::ShouldFix;
        let r = rule(sf, 1, &[v("r-1", D), v("r-2", D)], &[]);
        assert_eq!(r.result, FindingResult::Dropped);
        // Two raised it; one disagree of one voter cannot drop it.
        let r = rule(sf, 2, &[v("r-3", D)], &[]);
        assert_eq!(r.result, FindingResult::Disputed);
        assert!(r.why.contains("do not outnumber the 2"), "{}", r.why);
        // Exactly half.
        let r = rule(Severity::NiceToHave, 1, &[v("r-1", A), v("r-2", D)], &[]);
        assert_eq!(r.result, FindingResult::Disputed);
        assert!(r.why.contains("exactly half"));
    }

    #[test]
    fn rule_never_drops_a_block_or_a_finding_with_a_missing_vote() {
        let votes = [v("r-1", D), v("r-2", D)];
        assert_eq!(
            rule(Severity::Block, 1, &votes, &[]).result,
            FindingResult::Disputed
        );
        let r = rule(Severity::ShouldFix, 1, &votes, &["r-3".into()]);
        assert_eq!(r.result, FindingResult::Disputed);
        assert!(r.why.contains("r-3, whose vote is missing"), "{}", r.why);
    }

    /// Seed 000: "When the votes drop every finding a failing panel had, nothing is left to
    /// send back, so the panel passes." Missing reviews send nothing back either: the panel
    /// passes by the exception, where it had no decision before.
    #[test]
    fn a_panel_whose_findings_were_all_dropped_passes_with_reviews_missing() {
        assert_eq!(panel_decision(0, 0, 3, true), (Decision::Pass, true));
        assert_eq!(panel_decision(1, 1, 3, true), (Decision::Pass, true));
        assert_eq!(panel_decision(0, 1, 1, true), (Decision::Pass, true));
        assert_eq!(panel_decision(3, 0, 3, true), (Decision::Pass, false));
        // With a finding left, the threshold rule decides.
        assert_eq!(
            panel_decision(2, 1, 3, false),
            (Decision::NoDecision, false)
        );
        assert_eq!(panel_decision(0, 1, 3, false), (Decision::Fail, false));
    }

    #[test]
    fn rule_with_no_votes_keeps_the_finding() {
        let r = rule(Severity::ShouldFix, 1, &[], &[]);
        assert_eq!(r.result, FindingResult::Kept);
    }

    /// Seed 000: "Votes also never drop a finding shown to a reviewer whose seat failed or sent
    /// no readable reply in this step. It stays, marked disputed." Whatever the other votes say
    /// (DESIGN §5): agreed, better-fixed or unvoted, it is disputed, not kept.
    #[test]
    fn a_finding_shown_to_a_missing_voter_is_disputed_whatever_the_others_say() {
        let missing = ["r-3".to_string()];
        for votes in [
            vec![],
            vec![v("r-1", A), v("r-2", A)],
            vec![v("r-1", B), v("r-2", B)],
            vec![v("r-1", A), v("r-2", D)],
            vec![v("r-1", D), v("r-2", D)],
        ] {
            let r = rule(Severity::ShouldFix, 1, &votes, &missing);
            assert_eq!(r.result, FindingResult::Disputed, "{votes:?}");
            assert_eq!(r.fix, None);
            assert!(r.why.contains("r-3, whose vote is missing"), "{}", r.why);
        }
        let r = rule(Severity::ShouldFix, 1, &[], &["r-2".into(), "r-3".into()]);
        assert_eq!(r.result, FindingResult::Disputed);
        assert!(
            r.why.contains("r-2, r-3, whose vote is missing"),
            "{}",
            r.why
        );
    }

    #[test]
    fn rule_better_fix_takes_the_first_fix_offered() {
        let r = rule(
            Severity::ShouldFix,
            1,
            &[v("r-1", B), v("r-2", A), v("r-3", B)],
            &[],
        );
        assert_eq!(r.result, FindingResult::BetterFix);
        assert_eq!(r.fix.as_deref(), Some("fix by r-1"));
        // Half is not most.
        let r = rule(Severity::ShouldFix, 1, &[v("r-1", B), v("r-2", A)], &[]);
        assert_eq!(r.result, FindingResult::Kept);
    }

    fn fate(ballots: &[Ballot], missing: &[&str]) -> Option<FindingResult> {
        let missing: Vec<String> = missing.iter().map(|m| m.to_string()).collect();
        fixed_fate(Severity::ShouldFix, 1, ballots, &missing).map(|r| r.result)
    }

    /// Seed 000: "Otherwise the finding stays as it is." Two agree: whatever a third votes
    /// (one disagree or one better fix of three is no most), or if it is left out, kept.
    #[test]
    fn two_agreeing_fix_a_finding_kept_whatever_a_third_votes() {
        let (a2, a3) = (v("r-2", A), v("r-3", A));
        let ballots = [Ballot::In(&a2), Ballot::In(&a3), Ballot::Out("r-4")];
        assert_eq!(fate(&ballots, &[]), Some(FindingResult::Kept));
    }

    /// Seed 000: "Exactly half disagree: the finding stays, marked disputed" — one agree and one
    /// disagree are a tie that the vote still out breaks either way: nothing is fixed.
    #[test]
    fn a_tie_with_a_vote_out_is_not_fixed() {
        let (a2, d3) = (v("r-2", A), v("r-3", D));
        let ballots = [Ballot::In(&a2), Ballot::In(&d3), Ballot::Out("r-4")];
        assert_eq!(fate(&ballots, &[]), None);
        assert_eq!(fate(&[Ballot::Out("r-2")], &[]), None, "no votes in");
    }

    /// Seed 000: "the finding is dropped, but only when the reviewers who disagree also
    /// outnumber the ones who raised it, agreed or offered a better fix". Two disagree against
    /// one raiser: one agree more would tie them (disputed), so nothing is fixed; with three
    /// disagree in it is dropped whatever the fourth votes. "Votes never drop a block": a block
    /// stays disputed whatever it votes.
    #[test]
    fn a_drop_is_fixed_only_when_no_vote_out_could_save_it() {
        let (d2, d3, d4) = (v("r-2", D), v("r-3", D), v("r-4", D));
        let two = [Ballot::In(&d2), Ballot::In(&d3), Ballot::Out("r-5")];
        assert_eq!(fate(&two, &[]), None);
        let three = [
            Ballot::In(&d2),
            Ballot::In(&d3),
            Ballot::In(&d4),
            Ballot::Out("r-5"),
        ];
        assert_eq!(fate(&three, &[]), Some(FindingResult::Dropped));
        let block = fixed_fate(Severity::Block, 1, &three, &[]).map(|r| r.result);
        assert_eq!(block, Some(FindingResult::Disputed));
    }

    /// Seed 000: "Votes also never drop a finding shown to a reviewer whose seat failed ... It
    /// stays, marked disputed." A missing vote fixes the fate whatever the votes out are.
    #[test]
    fn a_missing_vote_fixes_a_finding_disputed() {
        let d2 = v("r-2", D);
        let ballots = [Ballot::In(&d2), Ballot::Out("r-4"), Ballot::Out("r-5")];
        assert_eq!(fate(&ballots, &["r-3"]), Some(FindingResult::Disputed));
    }

    /// Seed 000: "Most prefer a better fix: the finding carries the first fix offered". Two
    /// better fixes in fix the fate and the fix, unless a voter out comes first in reviewer
    /// order: its own fix would be the first offered.
    #[test]
    fn a_better_fix_is_fixed_only_when_no_voter_out_offers_one_first() {
        let (b2, b3) = (v("r-2", B), v("r-3", B));
        let after = [Ballot::In(&b2), Ballot::In(&b3), Ballot::Out("r-4")];
        let r = fixed_fate(Severity::ShouldFix, 1, &after, &[]).unwrap();
        assert_eq!(r.result, FindingResult::BetterFix);
        assert_eq!(r.fix.as_deref(), Some("fix by r-2"));
        let before = [Ballot::Out("r-1"), Ballot::In(&b2), Ballot::In(&b3)];
        assert_eq!(fixed_fate(Severity::ShouldFix, 4, &before, &[]), None);
    }

    /// With nobody out the fate is the rule's: fixed.
    #[test]
    fn with_every_vote_in_the_fate_is_the_rules() {
        let (a2, d3) = (v("r-2", A), v("r-3", D));
        assert_eq!(
            fate(&[Ballot::In(&a2), Ballot::In(&d3)], &[]),
            Some(FindingResult::Disputed)
        );
    }

    /// A cascade of voters asks as many as could fix a fate. Three voters on a finding one
    /// reviewer raised: two agreeing could keep it (seed 000: "Otherwise the finding stays as
    /// it is"), one vote alone fixes nothing; after an agree and a disagree, the third decides.
    #[test]
    fn could_fix_counts_the_fewest_votes_out_that_could_fix_a_fate() {
        let could = |ballots: &[Ballot]| could_fix(Severity::ShouldFix, 1, ballots, &[]);
        let out = [Ballot::Out("r-2"), Ballot::Out("r-3"), Ballot::Out("r-4")];
        assert_eq!(could(&out), 2);
        let (a2, d3) = (v("r-2", A), v("r-3", D));
        let split = [Ballot::In(&a2), Ballot::In(&d3), Ballot::Out("r-4")];
        assert_eq!(could(&split), 1);
        let a3 = v("r-3", A);
        let kept = [Ballot::In(&a2), Ballot::In(&a3), Ballot::Out("r-4")];
        assert_eq!(could(&kept), 0, "fixed: nobody more");
        // A block is never dropped: with votes out it can still be kept or disputed.
        let block = could_fix(Severity::Block, 1, &out, &[]);
        assert!((1..=3).contains(&block), "{block}");
        // A missing vote fixes it disputed: nobody needed.
        let missing = ["r-5".to_string()];
        assert_eq!(could_fix(Severity::ShouldFix, 1, &out, &missing), 0);
    }

    /// Past [`EXACT`] voters out a fate is not searched: it is open, and every voter out is
    /// asked. A stream of a thousand reviewers must not make a search of a billion ways.
    #[test]
    fn past_exact_voters_out_a_fate_is_open_and_every_voter_is_asked() {
        let names: Vec<String> = (0..1000).map(|i| format!("r-{i}")).collect();
        let agrees: Vec<FindingVote> = names[..5].iter().map(|n| v(n, A)).collect();
        let mut ballots: Vec<Ballot> = agrees.iter().map(Ballot::In).collect();
        ballots.extend(names[5..].iter().map(|n| Ballot::Out(n)));
        assert_eq!(fate(&ballots, &[]), None);
        assert_eq!(could_fix(Severity::ShouldFix, 1, &ballots, &[]), 995);
        let few = &ballots[..5 + EXACT];
        assert!(could_fix(Severity::ShouldFix, 1, few, &[]) <= EXACT);
    }
}
