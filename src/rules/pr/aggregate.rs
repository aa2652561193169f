//! The panel's verdict from its members' verdicts, in plain code.

use std::collections::BTreeMap;

use crate::records::class::Class;
use crate::records::plan::{Member, PanelPlan};
use crate::records::pr::{
    MemberResult, PanelFinding, PanelFollowUp, PanelOwnerBrief, PanelVerdict, PrOutcome, PrStatus,
    PrVerdict, PrVerdictRecord,
};
use crate::rules::plan::CORRECTNESS;

/// The findings of all members together are bounded by this many characters.
pub const MAX_PANEL_FINDINGS_CHARS: usize = 16_000;
/// The shape whose MERGE the g10 bar needs.
pub const ADVERSARY: &str = "adversary";
/// The shape that blocks when the fix proof is weak.
pub const TESTS: &str = "tests";

pub use crate::records::pr::FixProof;

/// "aggregate makes it block when input.fixProof is vacuous, no-tests or error" (seed 002): a
/// proof that is untrusted or unread blocks in the reviewers' briefs, not here.
pub fn weak_proof(proof: FixProof) -> bool {
    matches!(
        proof,
        FixProof::Vacuous | FixProof::NoTests | FixProof::Error
    )
}

/// Whether a member blocks: planned so, or the tests member under a weak fix proof ("aggregate
/// makes it block when input.fixProof is vacuous, no-tests or error", seed 002).
pub fn blocks(planned: bool, shape: &str, fix_proof: Option<FixProof>) -> bool {
    planned || (fix_proof.is_some_and(weak_proof) && shape == TESTS)
}

/// "Any blocking FIX_FIRST makes FIX_FIRST": a blocking member's counted FIX_FIRST fails the
/// panel whatever the other members say. The aggregate's dissent, and what `panel-judge
/// --contract pr --stop-when-decided` stops on.
pub fn fix_first_decides(blocking: bool, verdict: Option<PrVerdict>) -> bool {
    blocking && verdict == Some(PrVerdict::FixFirst)
}

/// Why a member left out was not needed: `member`'s blocking FIX_FIRST decided the panel (the
/// cancelled record's reason; the verdict panel's is `Standing::why_decided`).
pub fn why_decided(member: &str) -> String {
    format!("the panel was decided without it: {member} found a blocking FIX_FIRST")
}

/// Whether one member's record decides its panel by [`fix_first_decides`], read as the
/// aggregate reads it (a verdict that counts, of a member that blocks), the moment it comes in.
pub fn record_decides(
    plan: &PanelPlan,
    rec: &PrVerdictRecord,
    fix_proof: Option<FixProof>,
) -> bool {
    plan.members.iter().any(|m| {
        m.name == rec.member
            && fix_first_decides(
                blocks(m.blocking, &m.shape, fix_proof),
                counted(Some(rec), &plan.head),
            )
    })
}

/// A member's verdict when it counts: exactly MERGE or FIX_FIRST, about this head.
fn counted(rec: Option<&PrVerdictRecord>, head: &str) -> Option<PrVerdict> {
    let rec = rec?;
    (rec.status == PrStatus::Ok && rec.head.eq_ignore_ascii_case(head))
        .then_some(rec.verdict)
        .flatten()
}

/// satisfiesG10 (docs/rules.md): a g10 class, a MERGE, no degraded member, the correctness member
/// at an opus profile (a key of sonnetFor) and the adversary's MERGE. Met when
/// [`g10_unmet`] names nothing.
pub fn satisfies_g10(
    plan: &PanelPlan,
    outcome: PrOutcome,
    verdicts: &BTreeMap<String, Option<PrVerdict>>,
    degraded: bool,
) -> bool {
    g10_unmet(plan, outcome, verdicts, degraded).is_empty()
}

/// Each part of the g10 bar a panel missed, in a few words, in the order the seed lists them.
pub fn g10_unmet(
    plan: &PanelPlan,
    outcome: PrOutcome,
    verdicts: &BTreeMap<String, Option<PrVerdict>>,
    degraded: bool,
) -> Vec<String> {
    let by_shape = |shape: &str| plan.members.iter().find(|m| m.shape == shape);
    // The rest of the bar is asked of a g10 panel alone.
    if plan.class != Class::G10 {
        return vec![format!("the class is {}, not g10", plan.class.as_str())];
    }
    let mut unmet = Vec::new();
    if outcome != PrOutcome::Merge {
        unmet.push(format!("the verdict is {}, not MERGE", outcome.as_str()));
    }
    if degraded {
        unmet.push("a member was degraded".to_string());
    }
    match by_shape(CORRECTNESS) {
        None => unmet.push("no correctness member".to_string()),
        Some(m) if !plan.sonnet_for.contains_key(&m.profile) => unmet.push(format!(
            "the correctness member ran at {}, not an opus profile",
            m.profile
        )),
        Some(_) => {}
    }
    match by_shape(ADVERSARY) {
        None => unmet.push("no adversary member".to_string()),
        Some(m) if verdicts.get(&m.name) != Some(&Some(PrVerdict::Merge)) => {
            unmet.push("the adversary did not say MERGE".to_string());
        }
        Some(_) => {}
    }
    unmet
}

/// aggregate (docs/rules.md). `records` are the members' records (the last one of a member counts);
/// `cites(path, line)` says whether a file has that line in the checkout.
pub fn aggregate(
    plan: &PanelPlan,
    records: &[PrVerdictRecord],
    fix_proof: Option<FixProof>,
    cites: &dyn Fn(&str, u64) -> bool,
) -> PanelVerdict {
    let mut last: BTreeMap<&str, &PrVerdictRecord> = BTreeMap::new();
    for r in records {
        last.insert(r.member.as_str(), r);
    }
    let weak_proof = fix_proof.is_some_and(weak_proof);
    let mut verdicts = BTreeMap::new();
    let mut members = Vec::new();
    let (mut dissent, mut missing, mut cancelled) = (Vec::new(), Vec::new(), Vec::new());
    let (mut any_blocking, mut all_missing_timed_out) = (false, true);
    let mut degraded = false;
    for m in &plan.members {
        let rec = last.get(m.name.as_str()).copied();
        let v = counted(rec, &plan.head);
        let blocking = blocks(m.blocking, &m.shape, fix_proof);
        degraded |= m.degraded || rec.is_some_and(|r| r.degraded);
        verdicts.insert(m.name.clone(), v);
        if rec.is_some_and(|r| r.status == PrStatus::Cancelled) {
            cancelled.push(m.name.clone());
        }
        if blocking {
            any_blocking = true;
            match v {
                _ if fix_first_decides(blocking, v) => dissent.push(m.name.clone()),
                Some(_) => {}
                None => {
                    missing.push(m.name.clone());
                    all_missing_timed_out &= rec.is_some_and(|r| r.status == PrStatus::Timeout);
                }
            }
        }
        members.push(member_result(m, rec, v, blocking, &plan.head));
    }
    // A weak fix proof needs a tests verdict: with no tests member that seat is missing.
    if weak_proof && !plan.members.iter().any(|m| m.shape == TESTS) {
        any_blocking = true;
        missing.push(TESTS.into());
        all_missing_timed_out = false;
    }
    // A member left out never decides: only a blocking FIX_FIRST is cause to leave one out.
    let cancelled_without_cause = if dissent.is_empty() {
        cancelled.clone()
    } else {
        Vec::new()
    };
    let outcome = if !dissent.is_empty() {
        PrOutcome::FixFirst
    } else if !any_blocking || !cancelled_without_cause.is_empty() {
        PrOutcome::NoVerdict
    } else if missing.is_empty() {
        PrOutcome::Merge
    } else if all_missing_timed_out {
        PrOutcome::Timeout
    } else {
        PrOutcome::NoVerdict
    };
    let (findings, findings_dropped, findings_truncated) =
        panel_findings(plan, &last, &members, cites);
    PanelVerdict {
        kind: crate::records::pr::PANEL_TYPE.into(),
        repo: plan.repo.clone(),
        pr: plan.pr,
        head: plan.head.clone(),
        verdict: outcome,
        satisfies_g10: satisfies_g10(plan, outcome, &verdicts, degraded),
        g10_unmet: g10_unmet(plan, outcome, &verdicts, degraded),
        dissent,
        missing,
        findings,
        findings_dropped,
        findings_truncated,
        follow_ups: follow_ups(plan, &last, &verdicts),
        owner_briefs: owner_briefs(plan, &last, &verdicts),
        fix_proof,
        cancelled,
        cancelled_without_cause,
        members,
    }
}

/// One member's line in the panel verdict; with no reason of its own, a record that does not
/// count says why.
fn member_result(
    m: &Member,
    rec: Option<&PrVerdictRecord>,
    v: Option<PrVerdict>,
    blocking: bool,
    head: &str,
) -> MemberResult {
    MemberResult {
        member: m.name.clone(),
        shape: m.shape.clone(),
        blocking,
        verdict: v,
        status: rec.map_or("missing".into(), |r| r.status.as_str().into()),
        reason: rec.and_then(|r| r.reason.clone()).or_else(|| {
            let r = rec.filter(|r| r.status == PrStatus::Ok && v.is_none())?;
            Some(if r.head.eq_ignore_ascii_case(head) {
                "the record holds no MERGE or FIX_FIRST verdict".into()
            } else {
                "the verdict is about another head".into()
            })
        }),
        earlier_findings: rec
            .filter(|_| v.is_some())
            .and_then(|r| r.earlier_findings.clone()),
    }
}

/// The follow-ups of every member whose verdict counts, in plan order.
fn follow_ups(
    plan: &PanelPlan,
    last: &BTreeMap<&str, &PrVerdictRecord>,
    verdicts: &BTreeMap<String, Option<PrVerdict>>,
) -> Vec<PanelFollowUp> {
    plan.members
        .iter()
        .filter(|m| verdicts.get(&m.name).is_some_and(Option::is_some))
        .flat_map(|m| {
            last[m.name.as_str()]
                .follow_ups
                .iter()
                .map(|f| PanelFollowUp {
                    member: m.name.clone(),
                    title: f.title.clone(),
                    done_when: f.done_when.clone(),
                    severity: f.severity.clone(),
                })
        })
        .collect()
}

/// The owner brief of every member whose verdict counts and who wrote one, in plan order.
fn owner_briefs(
    plan: &PanelPlan,
    last: &BTreeMap<&str, &PrVerdictRecord>,
    verdicts: &BTreeMap<String, Option<PrVerdict>>,
) -> Vec<PanelOwnerBrief> {
    plan.members
        .iter()
        .filter(|m| verdicts.get(&m.name).is_some_and(Option::is_some))
        .filter_map(|m| {
            Some(PanelOwnerBrief {
                member: m.name.clone(),
                shape: m.shape.clone(),
                text: last[m.name.as_str()].owner_brief.clone()?,
            })
        })
        .collect()
}

/// Every counted FIX_FIRST's findings in shape (plan) order; advisory ones that cite no
/// existing `path:line` dropped; each member held to an equal share of the bound.
fn panel_findings(
    plan: &PanelPlan,
    last: &BTreeMap<&str, &PrVerdictRecord>,
    members: &[MemberResult],
    cites: &dyn Fn(&str, u64) -> bool,
) -> (Vec<PanelFinding>, usize, bool) {
    let mut dropped = 0;
    let mut per_member: Vec<Vec<PanelFinding>> = Vec::new();
    for (m, result) in plan.members.iter().zip(members) {
        if result.verdict != Some(PrVerdict::FixFirst) {
            continue;
        }
        let mut kept = Vec::new();
        for f in &last[m.name.as_str()].findings {
            let exists = match (&f.path, f.line) {
                (Some(p), Some(l)) => cites(p, l),
                _ => false,
            };
            if !result.blocking && !exists {
                dropped += 1;
                continue;
            }
            kept.push(PanelFinding {
                member: m.name.clone(),
                shape: m.shape.clone(),
                blocking: result.blocking,
                path: f.path.clone(),
                line: f.line,
                text: f.text.clone(),
            });
        }
        if !kept.is_empty() {
            per_member.push(kept);
        }
    }
    let share = MAX_PANEL_FINDINGS_CHARS / per_member.len().max(1);
    let mut truncated = false;
    let mut out = Vec::new();
    for kept in per_member {
        let as_findings: Vec<crate::records::pr::PrFinding> = kept
            .iter()
            .map(|f| crate::records::pr::PrFinding {
                path: f.path.clone(),
                line: f.line,
                text: f.text.clone(),
            })
            .collect();
        let (bounded, cut) =
            crate::rules::pr::accept::bounded_findings(&as_findings, share, usize::MAX);
        truncated |= cut;
        for (f, b) in kept.into_iter().zip(bounded) {
            out.push(PanelFinding { text: b.text, ..f });
        }
    }
    (out, dropped, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::plan::{Headroom, Member};
    use crate::records::pr::PrFinding;

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

    fn member(shape: &str, profile: &str, blocking: bool) -> Member {
        Member {
            name: format!("rp-acme-app-7-01234567-{shape}"),
            shape: shape.into(),
            brief_id: shape.into(),
            profile: profile.into(),
            seat: "claude:opus".into(),
            blocking,
            degraded: false,
            downgraded_from: None,
            reason: "always".into(),
        }
    }

    fn plan(members: Vec<Member>, class: Class) -> PanelPlan {
        PanelPlan {
            record_type: "plan".into(),
            repo: "acme/app".into(),
            pr: Some(7),
            head: HEAD.into(),
            base: None,
            kind: None,
            class,
            headroom: Headroom { opus: true },
            members,
            spend_estimate: 0,
            sonnet_for: BTreeMap::from([("reviewer".into(), "bd-reviewer".into())]),
            sonnet_seats: BTreeMap::new(),
            links: Vec::new(),
        }
    }

    fn g10() -> PanelPlan {
        plan(
            vec![
                member("correctness", "reviewer", true),
                member("adversary", "bd-reviewer", true),
                member("tests", "bd-reviewer", false),
            ],
            Class::G10,
        )
    }

    fn rec(shape: &str, verdict: Option<PrVerdict>, status: PrStatus) -> PrVerdictRecord {
        PrVerdictRecord {
            kind: "pr-verdict".into(),
            member: format!("rp-acme-app-7-01234567-{shape}"),
            reviewer: format!("rp-acme-app-7-01234567-{shape}"),
            shape: shape.into(),
            brief_id: shape.into(),
            brief_hash: "sha256:x".into(),
            profile: "bd-reviewer".into(),
            seat: "claude:sonnet".into(),
            harness: "claude".into(),
            model: None,
            blocking: true,
            degraded: false,
            repo: "acme/app".into(),
            pr: Some(7),
            head: HEAD.into(),
            verdict,
            status,
            reason: None,
            ci_policy: None,
            defect_class: None,
            findings: Vec::new(),
            findings_truncated: false,
            follow_ups: Vec::new(),
            follow_ups_warning: None,
            owner_brief: None,
            earlier_findings: None,
            resets_at: None,
            excerpt: None,
            tool_calls: Vec::new(),
            corrected: false,
            correction: None,
            launches: 1,
            duration_ms: 0,
            usage: None,
            run: String::new(),
            sandbox: None,
        }
    }

    fn merge(shape: &str) -> PrVerdictRecord {
        rec(shape, Some(PrVerdict::Merge), PrStatus::Ok)
    }

    fn fix(shape: &str, cites: &[(&str, u64)]) -> PrVerdictRecord {
        let mut r = rec(shape, Some(PrVerdict::FixFirst), PrStatus::Ok);
        r.findings = cites
            .iter()
            .map(|(p, l)| PrFinding {
                path: Some(p.to_string()),
                line: Some(*l),
                text: format!("{p} is wrong"),
            })
            .collect();
        r
    }

    fn none(shape: &str, status: PrStatus) -> PrVerdictRecord {
        rec(shape, None, status)
    }

    fn exists(path: &str, line: u64) -> bool {
        path == "src/real.rs" && line <= 10
    }

    fn agg(p: &PanelPlan, recs: &[PrVerdictRecord]) -> PanelVerdict {
        aggregate(p, recs, None, &exists)
    }

    #[test]
    fn merge_needs_every_blocking_merge_and_advisory_never_blocks() {
        let p = g10();
        let v = agg(
            &p,
            &[
                merge("correctness"),
                merge("adversary"),
                fix("tests", &[("src/real.rs", 3)]),
            ],
        );
        assert_eq!(v.verdict, PrOutcome::Merge);
        assert!(v.dissent.is_empty());
        assert_eq!(v.findings.len(), 1);
        assert!(!v.findings[0].blocking);
        assert!(v.satisfies_g10);
        assert_eq!(PrOutcome::Merge.decision(), crate::records::Decision::Pass);
    }

    #[test]
    fn any_blocking_fix_first_decides_and_dissents() {
        let p = g10();
        let v = agg(
            &p,
            &[merge("correctness"), fix("adversary", &[("nowhere.rs", 1)])],
        );
        assert_eq!(v.verdict, PrOutcome::FixFirst);
        assert_eq!(v.dissent, ["rp-acme-app-7-01234567-adversary"]);
        // A blocking finding is kept whatever it cites.
        assert_eq!(v.findings.len(), 1);
        assert!(v.findings[0].blocking);
        assert!(!v.satisfies_g10);
        assert_eq!(
            PrOutcome::FixFirst.decision(),
            crate::records::Decision::Fail
        );
        // FIX_FIRST even when another blocking member is missing.
        let v = agg(&p, &[fix("adversary", &[("a", 1)])]);
        assert_eq!(v.verdict, PrOutcome::FixFirst);
    }

    #[test]
    fn only_a_counted_blocking_fix_first_decides_a_panel_early() {
        let p = g10();
        assert!(record_decides(&p, &fix("adversary", &[]), None));
        assert!(!record_decides(&p, &merge("adversary"), None));
        // An advisory member's FIX_FIRST decides nothing, unless a weak proof makes tests block.
        assert!(!record_decides(&p, &fix("tests", &[]), None));
        assert!(record_decides(
            &p,
            &fix("tests", &[]),
            Some(FixProof::Vacuous)
        ));
        // Not about this head, or not accepted: no verdict that counts.
        let mut other = fix("adversary", &[]);
        other.head = "f".repeat(40);
        assert!(!record_decides(&p, &other, None));
        let malformed = rec("adversary", Some(PrVerdict::FixFirst), PrStatus::Malformed);
        assert!(!record_decides(&p, &malformed, None));
    }

    #[test]
    fn a_cancelled_member_never_decides_and_needs_a_blocking_fix_first_for_cause() {
        let p = g10();
        let cancelled = none("tests", PrStatus::Cancelled);
        // Decided without it: FIX_FIRST, the member named as left out.
        let v = agg(
            &p,
            &[
                merge("correctness"),
                fix("adversary", &[]),
                cancelled.clone(),
            ],
        );
        assert_eq!(v.verdict, PrOutcome::FixFirst);
        assert_eq!(v.cancelled, ["rp-acme-app-7-01234567-tests"]);
        assert!(v.cancelled_without_cause.is_empty());
        // Every blocking MERGE, an advisory member cancelled: no cause, no verdict.
        let v = agg(&p, &[merge("correctness"), merge("adversary"), cancelled]);
        assert_eq!(v.verdict, PrOutcome::NoVerdict);
        assert_eq!(v.cancelled_without_cause, ["rp-acme-app-7-01234567-tests"]);
        // A cancelled record that claims a verdict counts for nothing.
        let lying = rec("adversary", Some(PrVerdict::FixFirst), PrStatus::Cancelled);
        let v = agg(&p, &[merge("correctness"), lying]);
        assert_eq!(v.verdict, PrOutcome::NoVerdict);
        assert_eq!(
            v.cancelled_without_cause,
            ["rp-acme-app-7-01234567-adversary"]
        );
    }

    #[test]
    fn a_missing_blocking_member_is_no_verdict_or_timeout() {
        let p = g10();
        let v = agg(&p, &[merge("correctness")]);
        assert_eq!((v.verdict, v.missing.len()), (PrOutcome::NoVerdict, 1));
        let v = agg(
            &p,
            &[merge("correctness"), none("adversary", PrStatus::Timeout)],
        );
        assert_eq!(v.verdict, PrOutcome::Timeout);
        let v = agg(
            &p,
            &[
                none("correctness", PrStatus::Timeout),
                none("adversary", PrStatus::Malformed),
            ],
        );
        assert_eq!(v.verdict, PrOutcome::NoVerdict);
        let v = agg(
            &p,
            &[
                none("correctness", PrStatus::Timeout),
                none("adversary", PrStatus::Timeout),
            ],
        );
        assert_eq!(v.verdict, PrOutcome::Timeout);
        assert_eq!(
            PrOutcome::Timeout.decision(),
            crate::records::Decision::NoDecision
        );
    }

    #[test]
    fn only_a_verdict_about_this_head_counts() {
        let p = g10();
        let mut other = merge("adversary");
        other.head = "f".repeat(40);
        let v = agg(&p, &[merge("correctness"), other]);
        assert_eq!(v.verdict, PrOutcome::NoVerdict);
        let mut depth = merge("adversary");
        depth.status = PrStatus::DepthFloor;
        assert_eq!(
            agg(&p, &[merge("correctness"), depth]).verdict,
            PrOutcome::NoVerdict
        );
    }

    #[test]
    fn a_plan_with_no_blocking_member_is_no_verdict() {
        let p = plan(vec![member("tests", "bd-reviewer", false)], Class::Standard);
        assert_eq!(agg(&p, &[merge("tests")]).verdict, PrOutcome::NoVerdict);
    }

    #[test]
    fn a_weak_fix_proof_makes_tests_block() {
        let p = g10();
        let recs = [
            merge("correctness"),
            merge("adversary"),
            fix("tests", &[("x", 1)]),
        ];
        for weak in [FixProof::Vacuous, FixProof::NoTests, FixProof::Error] {
            let v = aggregate(&p, &recs, Some(weak), &exists);
            assert_eq!(v.verdict, PrOutcome::FixFirst);
            assert_eq!(v.dissent, ["rp-acme-app-7-01234567-tests"]);
            assert!(
                v.findings[0].blocking,
                "kept although it cites nothing that exists"
            );
        }
        // "aggregate makes it block when input.fixProof is vacuous, no-tests or error" (seed 002):
        // an untrusted or unread proof blocks in the briefs, not here.
        for not_weak in [FixProof::Ok, FixProof::Untrusted, FixProof::Unread] {
            assert_eq!(
                aggregate(&p, &recs, Some(not_weak), &exists).verdict,
                PrOutcome::Merge,
                "{not_weak:?}"
            );
        }
        let v = aggregate(&p, &recs[..2], Some(FixProof::Vacuous), &exists);
        assert_eq!(v.verdict, PrOutcome::NoVerdict);
        // No tests member at all: that seat is missing.
        let p = plan(
            vec![member("correctness", "reviewer", true)],
            Class::Standard,
        );
        let v = aggregate(
            &p,
            &[merge("correctness")],
            Some(FixProof::NoTests),
            &exists,
        );
        assert_eq!(
            (v.verdict, v.missing.clone()),
            (PrOutcome::NoVerdict, vec!["tests".to_string()])
        );
    }

    #[test]
    fn advisory_findings_citing_nothing_real_are_dropped() {
        let p = g10();
        let v = agg(
            &p,
            &[
                merge("correctness"),
                merge("adversary"),
                fix(
                    "tests",
                    &[("src/real.rs", 99), ("gone.rs", 1), ("src/real.rs", 1)],
                ),
            ],
        );
        assert_eq!(v.findings_dropped, 2);
        assert_eq!(v.findings.len(), 1);
    }

    #[test]
    fn findings_in_shape_order_each_member_held_to_its_share() {
        let p = g10();
        let mut a = fix("adversary", &[("a", 1)]);
        a.findings[0].text = "x".repeat(12_000);
        let c = fix("correctness", &[("c", 1)]);
        let v = agg(&p, &[a, c]);
        assert_eq!(v.findings[0].shape, "correctness");
        assert_eq!(v.findings[1].text.chars().count(), 8_000);
        assert!(v.findings_truncated);
    }

    #[test]
    fn the_g10_bar() {
        let p = g10();
        let ok = [merge("correctness"), merge("adversary")];
        assert!(agg(&p, &ok).satisfies_g10);
        let mut std = g10();
        std.class = Class::Standard;
        assert!(!agg(&std, &ok).satisfies_g10);
        let mut deg = g10();
        deg.members[1].degraded = true;
        assert!(!agg(&deg, &ok).satisfies_g10);
        let mut sonnet = g10();
        sonnet.members[0].profile = "bd-reviewer".into();
        assert!(!agg(&sonnet, &ok).satisfies_g10);
        let no_adv = plan(vec![member("correctness", "reviewer", true)], Class::G10);
        assert!(!agg(&no_adv, &[merge("correctness")]).satisfies_g10);
        // Each miss is said, so a report can tell why the bar failed.
        assert!(agg(&p, &ok).g10_unmet.is_empty());
        assert_eq!(agg(&std, &ok).g10_unmet, ["the class is standard, not g10"]);
        assert_eq!(agg(&deg, &ok).g10_unmet, ["a member was degraded"]);
        assert_eq!(
            agg(&sonnet, &ok).g10_unmet,
            ["the correctness member ran at bd-reviewer, not an opus profile"]
        );
        assert_eq!(
            agg(&no_adv, &[merge("correctness")]).g10_unmet,
            ["no adversary member"]
        );
        let fixed = agg(&p, &[merge("correctness"), fix("adversary", &[("a", 1)])]);
        assert_eq!(
            fixed.g10_unmet,
            [
                "the verdict is FIX_FIRST, not MERGE",
                "the adversary did not say MERGE"
            ]
        );
    }

    #[test]
    fn follow_ups_ride_along_with_counted_verdicts() {
        let p = g10();
        let mut c = merge("correctness");
        c.follow_ups = vec![crate::records::pr::FollowUp {
            title: "t".into(),
            done_when: "d".into(),
            severity: "low".into(),
        }];
        let v = agg(&p, &[c, merge("adversary")]);
        assert_eq!(v.follow_ups.len(), 1);
        assert_eq!(v.follow_ups[0].member, "rp-acme-app-7-01234567-correctness");
    }
}
