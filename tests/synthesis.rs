//! The synthesised panel: the seed's worked example with recorded seats, through the library
//! and through the built binaries, and the faults (seats that fail, hang or answer garbage).

use crate::util::Checked;
use std::collections::HashMap;
use std::process::Command;
use std::sync::Mutex;

use panel::internals::ReviewRecord;
use panel::internals::apply;
use panel::internals::{Asker, Check, Done, Question};
use panel::internals::{Decision, Status, Usage};
use panel::internals::{FindingResult, MergeHow, MergedPanel, Record, RouteKind, synthesis};
use panel::tools::merge::{self, How};
use panel::tools::tally::synthesis::report as synthesis_report;
use panel::tools::vote::{self, JudgeSeat, Outcomes};
use serde_json::{Map, Value, json};

use crate::util::{TempDir, bin, root, run_with_stdin, stderr, stdout};

fn fixture(name: &str) -> std::path::PathBuf {
    root().join("tests/fixtures/synthesis").join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

fn reviews(name: &str) -> Vec<ReviewRecord> {
    text(name)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn answers() -> Map<String, Value> {
    serde_json::from_str(&text("answers.json")).unwrap()
}

/// What a stand-in seat does when asked, attempt by attempt (the last repeats).
#[derive(Clone, Debug)]
enum Act {
    Answer(Value),
    Garbage(&'static str),
    Fail,
    Hang,
    /// The launch panics (an overflow, a bug): the asker never returns.
    Panic,
}

/// A fake launcher: answers by asker name, runs the check, and asks an unreadable answer once
/// more, as the real one does.
#[derive(Default)]
struct FakeAsker {
    script: HashMap<String, Vec<Act>>,
    asked: Mutex<Vec<Question>>,
}

impl FakeAsker {
    fn recorded() -> FakeAsker {
        let mut fake = FakeAsker::default();
        for (name, answer) in answers() {
            let answer = match answer {
                Value::Array(mut rounds) => rounds.remove(0),
                other => other,
            };
            fake.script.insert(name, vec![Act::Answer(answer)]);
        }
        fake
    }

    fn with(mut self, name: &str, acts: Vec<Act>) -> FakeAsker {
        self.script.insert(name.into(), acts);
        self
    }

    fn asked(&self, name: &str) -> Vec<Question> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .filter(|q| q.name == name)
            .cloned()
            .collect()
    }
}

impl Asker for FakeAsker {
    fn ask_all(&self, questions: &[Question], check: &Check) -> Vec<Done> {
        questions
            .iter()
            .map(|q| {
                let acts = self.script.get(&q.name).cloned().unwrap_or_default();
                let mut last = Done::unasked(Status::NotFound, "no stand-in for this seat");
                for attempt in 0..2 {
                    self.asked.lock().unwrap().push(q.clone());
                    let Some(act) = acts.get(attempt.min(acts.len().saturating_sub(1))) else {
                        return last;
                    };
                    last = match act {
                        Act::Fail => return Done::unasked(Status::Failed, "exit status 1"),
                        Act::Panic => panic!("a launch that panics"),
                        Act::Hang => {
                            return Done::unasked(Status::Timeout, "no answer within 600s");
                        }
                        Act::Garbage(text) => {
                            Done::unasked(Status::Unreadable, format!("no JSON object in {text:?}"))
                        }
                        Act::Answer(v) => {
                            let obj = v.as_object().cloned().unwrap_or_default();
                            match check(&obj) {
                                Ok(()) => {
                                    return Done {
                                        answer: Some(obj),
                                        status: Status::Ok,
                                        cause: None,
                                        attempts: attempt as u32 + 1,
                                        usage: Some(fake_usage(&q.name)),
                                        ..Done::unasked(Status::Ok, "")
                                    };
                                }
                                Err(why) => Done::unasked(Status::Unreadable, why),
                            }
                        }
                    };
                }
                last
            })
            .collect()
    }
}

/// What a stand-in's call reports using: as many input tokens as its name has bytes.
fn fake_usage(name: &str) -> Usage {
    Usage {
        input_tokens: Some(name.len() as u64),
        output_tokens: Some(20),
        ..Usage::default()
    }
}

/// Each seat's call is counted once: the merging seat's usage is on the merge record, each
/// voter's on the first of its vote records only, the judge's on the route record.
#[test]
fn each_calls_usage_is_recorded_once() {
    let asker = FakeAsker::recorded();
    let reviews = reviews("reviews-1.jsonl");
    let merged = merge::merge(&reviews, &How::Seat(FIRST_SEAT.into()), Some(&asker)).unwrap();
    assert_eq!(merged.merge.usage, Some(fake_usage("merge")));
    let out = round(
        &reviews,
        &How::Seat(FIRST_SEAT.into()),
        &asker,
        &JudgeSeat::Seat(FIRST_SEAT.into()),
    );
    for voter in ["write-1", "write-2", "write-3"] {
        let usages: Vec<_> = out
            .applied
            .votes
            .iter()
            .filter(|v| v.reviewer == voter)
            .map(|v| v.usage.clone())
            .collect();
        assert!(usages.len() >= 2, "{voter}: {usages:?}");
        assert_eq!(usages[0], Some(fake_usage(&format!("vote-{voter}"))));
        assert!(
            usages[1..].iter().all(Option::is_none),
            "{voter}: {usages:?}"
        );
    }
    assert_eq!(out.route.usage, Some(fake_usage("judge")));
    // And in the records written: a sum over them counts each call once.
    let total: u64 = out
        .records()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .filter_map(|v| v["usage"]["inputTokens"].as_u64())
        .sum();
    let calls = ["vote-write-1", "vote-write-2", "vote-write-3", "judge"];
    assert_eq!(total, calls.iter().map(|c| c.len() as u64).sum::<u64>());
}

/// The seat the fixtures' first reviewer (write-1) sat on.
const FIRST_SEAT: &str = "claude:claude-sonnet-4-5";

/// Runs one round through the library: merge with `how`, votes and judge through `asker`, the
/// reviewers' seats given as the command line gives them.
fn round(reviews: &[ReviewRecord], how: &How, asker: &FakeAsker, judge: &JudgeSeat) -> Outcomes {
    let merged = merge::merge(reviews, how, Some(asker)).unwrap();
    let (panel, _) = MergedPanel::of(merged.records()).unwrap();
    let candidate = text("page.md");
    let brief = text("brief.md");
    let seats: Vec<String> = reviews.iter().map(|r| r.seat.clone()).collect();
    let votes = vote::collect_votes(&panel, &seats, asker, Some(&brief), &candidate).unwrap();
    let applied = apply(&panel, &votes, None).unwrap();
    let (decisions, route) = vote::ask_judge(
        &applied,
        judge,
        1,
        Some(asker),
        Some(&brief),
        Some(&candidate),
    );
    Outcomes {
        applied,
        decisions,
        route,
    }
}

/// Our stream in the seed's printed shape: the round's entries and the judge's decisions.
fn seed_shape(records: &[Record]) -> (Value, Value) {
    let mut entries = Vec::new();
    let mut kept = Vec::new();
    let mut judged = Vec::new();
    let mut route = None;
    for r in records {
        match r {
            Record::Synthesis(e) => {
                let f = &e.finding.finding;
                entries.push(json!({
                    "result": e.result,
                    "raisedBy": f.raised_by,
                    "severity": f.severity,
                    "evidence": f.evidence,
                    "votes": e.finding.votes.iter()
                        .map(|v| format!("{} {}: {}", v.reviewer, v.vote.as_str(), v.reason))
                        .collect::<Vec<_>>(),
                }));
                if e.result != FindingResult::Dropped {
                    kept.push(f.evidence.clone());
                }
            }
            Record::Decision(d) => judged.push(d.clone()),
            Record::Route(r) => route = Some(r.clone()),
            _ => {}
        }
    }
    let route = route.expect("a route record");
    let judge = json!({
        "route": route.route,
        "reason": route.reason,
        "findings": judged.iter().enumerate()
            .map(|(k, d)| format!("{}: {} ({})", d.decision.as_str(), kept[k], d.reason))
            .collect::<Vec<_>>(),
    });
    (Value::Array(entries), judge)
}

fn seed_output() -> Value {
    serde_json::from_str(&text("seed-output.json")).unwrap()
}

fn parse_stream(out: &str) -> Vec<Record> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn worked_example_through_the_library_with_recorded_seats() {
    let asker = FakeAsker::recorded();
    let judge = JudgeSeat::Replay(fixture("judge.json").display().to_string());
    let out = round(
        &reviews("reviews-1.jsonl"),
        &How::Seat(FIRST_SEAT.into()),
        &asker,
        &judge,
    );
    // The first reviewer's seat merged; each voter was asked once, in a fresh call.
    assert_eq!(asker.asked("merge")[0].seat, "claude:claude-sonnet-4-5");
    for voter in ["write-1", "write-2", "write-3"] {
        assert_eq!(asker.asked(&format!("vote-{voter}")).len(), 1);
    }
    let seed = seed_output();
    let (entries, judged) = seed_shape(&out.records());
    assert_eq!(entries, seed["rounds"][0]);
    assert_eq!(judged, seed["judge"][0]);
    assert_eq!(
        out.decision(),
        Decision::Fail,
        "the judge acts: another round"
    );
    // The merge kept write-1's evidence and write-2's fix.
    let f1 = &out.applied.entries[0].finding.finding;
    assert_eq!(f1.sources, ["write-1/1", "write-2/1"]);
    assert!(f1.fix.starts_with("Explain the term"), "{}", f1.fix);
    // Each voter saw only the findings it did not raise, with the brief and the work.
    let q = &asker.asked("vote-write-3")[0];
    assert!(q.prompt.contains("[F1]") && q.prompt.contains("[F2]"));
    assert!(!q.prompt.contains("[F3]") && !q.prompt.contains("[F4]"));
    assert!(q.prompt.contains("max_retries=5") && q.prompt.contains("just installed"));

    // Round two: every reviewer passes, nothing to merge, vote on or judge.
    let two = round(
        &reviews("reviews-2.jsonl"),
        &How::Seat(FIRST_SEAT.into()),
        &asker,
        &judge,
    );
    assert!(two.applied.entries.is_empty() && two.decisions.is_empty());
    assert_eq!(two.applied.panel.status, Decision::Pass);
    assert_eq!(two.decision(), Decision::Pass);
    assert_eq!(seed["status"], "pass");
}

#[test]
fn code_grouping_of_the_worked_example_matches_the_recorded_seat() {
    let rs = reviews("reviews-1.jsonl");
    let by_seat = merge::merge(
        &rs,
        &How::Seat(FIRST_SEAT.into()),
        Some(&FakeAsker::recorded()),
    )
    .unwrap();
    let in_code = merge::merge(&rs, &How::Code, None).unwrap();
    assert_eq!(by_seat.findings, in_code.findings);
    assert_eq!(in_code.merge.how, MergeHow::Code);
    assert_eq!((in_code.merge.findings, in_code.merge.merged), (5, 4));
}

#[test]
fn worked_example_through_the_binaries() {
    let merged = Command::new(bin("panel-merge"))
        .arg(fixture("reviews-1.jsonl"))
        .checked_output()
        .unwrap();
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let mut input = merged.stdout.clone();
    input.extend_from_slice(text("votes-1.jsonl").as_bytes());
    let judge = format!("replay:{}", fixture("judge.json").display());
    let voted = run_with_stdin(
        Command::new(bin("panel-vote")).args(["apply", "--judge", &judge]),
        &input,
    );
    assert_eq!(voted.status.code(), Some(1), "{}", stderr(&voted));
    let records = parse_stream(&stdout(&voted));
    let (entries, judged) = seed_shape(&records);
    let seed = seed_output();
    assert_eq!(entries, seed["rounds"][0]);
    assert_eq!(judged, seed["judge"][0]);

    // The report the tally prints: the writer's two findings with the judge's reasons, the
    // skipped wording point, the split vote.
    let report = synthesis_report(&records).unwrap();
    assert_eq!(report.decision, Decision::Fail);
    let t = &report.text;
    assert!(
        t.contains("route: again: the judge acts on 2 of 3 findings"),
        "{t}"
    );
    assert!(
        t.contains("for the writer:\nF1 [should-fix] kept (raised by write-1, write-2)"),
        "{t}"
    );
    assert!(
        t.contains("  judge: A reader needs to know what the call does after the last retry."),
        "{t}"
    );
    assert!(
        t.contains("skipped by the judge:\nF4 [nice-to-have]"),
        "{t}"
    );
    assert!(t.contains("split votes:\nF4 disputed: 1 of 2 voters disagree: exactly half\n  write-1 agree: Shorter reads better.\n  write-2 disagree: It is already one short line."), "{t}");
    assert_eq!(report.json["findings"].as_array().unwrap().len(), 2);
    assert_eq!(report.json["status"], "again");

    // Round two through both binaries, no judge needed, nothing launched.
    let merged = Command::new(bin("panel-merge"))
        .arg(fixture("reviews-2.jsonl"))
        .checked_output()
        .unwrap();
    let voted = run_with_stdin(
        Command::new(bin("panel-vote")).args(fixture_seats()).args([
            "--candidate",
            fixture("page.md").to_str().unwrap(),
            "--judge",
            &judge,
        ]),
        &merged.stdout,
    );
    assert_eq!(voted.status.code(), Some(0), "{}", stderr(&voted));
    let records = parse_stream(&stdout(&voted));
    let Some(Record::Route(route)) = records.last() else {
        panic!("no route last");
    };
    assert_eq!(route.route, Some(RouteKind::Pass));
    assert_eq!(synthesis_report(&records).unwrap().decision, Decision::Pass);
}

#[test]
fn the_binaries_name_the_line_and_the_tool_of_a_wrong_record() {
    let out = run_with_stdin(
        &mut Command::new(bin("panel-merge")),
        b"{\"type\":\"verdict\",\"judge\":\"x\"}\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "panel-merge: <stdin>: line 1: a verdict record; verdicts go through panel-tally"
    );
    let out = run_with_stdin(
        &mut Command::new(bin("panel-vote")),
        text("reviews-1.jsonl").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("line 1: a review record; reviews go through panel-merge"),
        "{}",
        stderr(&out)
    );
    // The work given to the voters must be the work the reviewers read.
    let merged = Command::new(bin("panel-merge"))
        .arg(fixture("reviews-1.jsonl"))
        .checked_output()
        .unwrap();
    let out = run_with_stdin(
        Command::new(bin("panel-vote"))
            .args(fixture_seats())
            .args(["--candidate", fixture("brief.md").to_str().unwrap()]),
        &merged.stdout,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not the work the reviewers read"),
        "{}",
        stderr(&out)
    );
}

// ── Faults ─────────────────────────────────────────────────────────────────

fn no_judge() -> JudgeSeat {
    JudgeSeat::None
}

#[test]
fn a_merging_seat_that_fails_or_answers_garbage_leaves_the_findings_unmerged() {
    let rs = reviews("reviews-1.jsonl");
    for acts in [
        vec![Act::Fail],
        vec![Act::Hang],
        vec![Act::Garbage("I think they are all different.")],
        // Valid JSON, but write-2/2 is in no group and write-3/1 is in two.
        vec![Act::Answer(json!({"groups": [
            {"findings": ["write-1/1", "write-2/1", "write-3/1"]},
            {"findings": ["write-3/1", "write-3/2"]}
        ]}))],
    ] {
        let asker = FakeAsker::recorded().with("merge", acts.clone());
        let out = round(&rs, &How::Seat(FIRST_SEAT.into()), &asker, &no_judge());
        let p = &out.applied.panel;
        assert!(p.merge_failed, "{acts:?}");
        assert!(
            p.merge_cause.as_deref().unwrap().contains("merging seat"),
            "{p:?}"
        );
        assert_eq!(p.findings, 5, "unmerged: one finding per source");
        // The pipeline went on: the voters were asked about the unmerged findings.
        assert!(!out.applied.votes.is_empty());
    }
}

#[test]
fn a_grouping_that_is_bad_once_is_asked_for_once_more() {
    let good = answers()["merge"].clone();
    let asker = FakeAsker::recorded().with(
        "merge",
        vec![Act::Answer(json!({"groups": []})), Act::Answer(good)],
    );
    let merged = merge::merge(
        &reviews("reviews-1.jsonl"),
        &How::Seat("codex:gpt-5".into()),
        Some(&asker),
    )
    .unwrap();
    assert!(!merged.merge.merge_failed);
    assert_eq!(merged.findings.len(), 4);
    assert_eq!(asker.asked("merge").len(), 2);
    assert_eq!(asker.asked("merge")[0].seat, "codex:gpt-5");
}

#[test]
fn a_voter_that_fails_is_named_and_its_findings_are_never_dropped() {
    // write-1 hangs: F3 has one disagree left (write-2), F4 one disagree (write-2).
    let asker = FakeAsker::recorded().with("vote-write-1", vec![Act::Hang]);
    let out = round(&reviews("reviews-1.jsonl"), &How::Code, &asker, &no_judge());
    let p = &out.applied.panel;
    assert_eq!(p.no_votes_from, ["write-1"]);
    let f3 = &out.applied.entries[2];
    assert_eq!(f3.no_votes_from, ["write-1"]);
    assert_ne!(f3.result, FindingResult::Dropped);
    assert!(
        out.applied
            .entries
            .iter()
            .all(|e| e.result != FindingResult::Dropped)
    );
    let missing: Vec<_> = out
        .applied
        .votes
        .iter()
        .filter(|v| v.vote.is_none())
        .collect();
    assert_eq!(
        missing.len(),
        3,
        "one null vote per finding write-1 was shown"
    );
    assert!(missing.iter().all(|v| v.status == Status::Timeout));
}

#[test]
fn a_garbage_vote_is_asked_once_more_then_counts_as_missing() {
    let good = answers()["vote-write-2"].clone();
    let asker = FakeAsker::recorded().with(
        "vote-write-2",
        vec![Act::Garbage("F3: no"), Act::Answer(good)],
    );
    let out = round(&reviews("reviews-1.jsonl"), &How::Code, &asker, &no_judge());
    assert!(out.applied.panel.no_votes_from.is_empty());
    assert_eq!(out.applied.entries[2].result, FindingResult::Dropped);
    assert_eq!(asker.asked("vote-write-2").len(), 2);
}

/// Seed 000: "Votes. Plain code applies the votes. It counts only the reviewers who voted on
/// that finding." write-2's reply votes on F3 and leaves F4 out: its F3 vote counts (F3 is
/// dropped, as in the worked example), and F4, with no vote from it, is disputed. Before, the
/// whole reply was thrown away and F3 came out disputed.
#[test]
fn a_reply_that_leaves_a_finding_out_counts_the_votes_it_gave() {
    let partial =
        json!({"votes": [{"finding": "F3", "vote": "disagree", "reason": "x", "fix": null}]});
    let asker = FakeAsker::recorded().with("vote-write-2", vec![Act::Answer(partial)]);
    let out = round(&reviews("reviews-1.jsonl"), &How::Code, &asker, &no_judge());
    assert_eq!(
        asker.asked("vote-write-2").len(),
        1,
        "asked once: it was readable"
    );
    assert_eq!(out.applied.panel.no_votes_from, ["write-2"]);
    let of = |f: &str| {
        out.applied
            .votes
            .iter()
            .find(|v| v.reviewer == "write-2" && v.finding == f)
            .unwrap()
    };
    assert_eq!(of("F3").vote, Some(synthesis::VoteKind::Disagree));
    assert_eq!(of("F3").status, Status::Ok);
    assert_eq!(of("F4").vote, None);
    assert_eq!(of("F4").status, Status::Unreadable);
    assert!(
        of("F4").cause.as_deref().unwrap().contains("no vote on F4"),
        "{:?}",
        of("F4")
    );
    assert_eq!(out.applied.entries[2].result, FindingResult::Dropped);
    assert!(out.applied.entries[2].no_votes_from.is_empty());
    assert_eq!(out.applied.entries[3].result, FindingResult::Disputed);
    assert_eq!(out.applied.entries[3].no_votes_from, ["write-2"]);
}

#[test]
fn when_every_voter_fails_nothing_is_dropped_and_every_finding_goes_back() {
    let asker = FakeAsker::recorded()
        .with("vote-write-1", vec![Act::Fail])
        .with("vote-write-2", vec![Act::Hang])
        .with("vote-write-3", vec![Act::Garbage("sorry")]);
    let out = round(&reviews("reviews-1.jsonl"), &How::Code, &asker, &no_judge());
    let p = &out.applied.panel;
    assert_eq!(p.no_votes_from, ["write-1", "write-2", "write-3"]);
    assert!(
        out.applied
            .entries
            .iter()
            .all(|e| e.result == FindingResult::Disputed)
    );
    assert_eq!(p.status, Decision::Fail);
    assert_eq!(out.route.findings, ["F1", "F2", "F3", "F4"]);
    assert_eq!(out.decision(), Decision::Fail);
}

#[test]
fn a_judge_that_fails_leaves_the_route_undecided() {
    for acts in [
        vec![Act::Fail],
        vec![Act::Hang],
        vec![Act::Answer(
            json!({"finding-1": {"decision": "act", "reason": "r"}}),
        )],
    ] {
        let asker = FakeAsker::recorded().with("judge", acts.clone());
        let out = round(
            &reviews("reviews-1.jsonl"),
            &How::Code,
            &asker,
            &JudgeSeat::Seat("claude:opus".into()),
        );
        assert_eq!(out.route.route, None, "{acts:?}");
        assert!(out.route.cause.is_some());
        assert!(out.decisions.is_empty());
        assert_eq!(out.decision(), Decision::NoDecision);
        let report = synthesis_report(&out.records()).unwrap();
        assert_eq!(report.decision, Decision::NoDecision);
        assert!(
            report.text.contains("route: no decision"),
            "{}",
            report.text
        );
    }
    // A live judge sees who raised each finding and how the others voted.
    let asker = FakeAsker::recorded();
    let out = round(
        &reviews("reviews-1.jsonl"),
        &How::Code,
        &asker,
        &JudgeSeat::Seat("claude:opus".into()),
    );
    assert_eq!(out.route.reason, "the judge acts on 2 of 3 findings");
    let prompt = &asker.asked("judge")[0].prompt;
    assert!(prompt.contains("[finding-3] nice-to-have"), "{prompt}");
    assert!(prompt.contains("raised by: write-1, write-2"));
    assert!(prompt.contains("- write-2 disagree: It is already one short line."));
    assert!(
        !prompt.contains("Add a table of every client setting."),
        "dropped findings are not judged"
    );
}

#[test]
fn with_no_judge_a_block_goes_straight_back_even_from_a_passing_panel() {
    let mut rs = reviews("reviews-2.jsonl");
    rs[0].findings = vec![panel::internals::Finding {
        id: "write-1/1".into(),
        severity: panel::internals::Severity::Block,
        evidence: "\"The default is 3.\" The client's default is 5.".into(),
        fix: "Say the default is 5.".into(),
        file: None,
        line: None,
    }];
    // The other two disagree: a block is never dropped.
    let asker = FakeAsker::recorded()
        .with("vote-write-2", vec![Act::Answer(json!({"votes": [{"finding": "F1", "vote": "disagree", "reason": "3 is right", "fix": null}]}))])
        .with("vote-write-3", vec![Act::Answer(json!({"votes": [{"finding": "F1", "vote": "disagree", "reason": "it is 3", "fix": null}]}))]);
    let out = round(&rs, &How::Code, &asker, &no_judge());
    assert_eq!(out.applied.panel.status, Decision::Pass);
    assert_eq!(out.applied.entries[0].result, FindingResult::Disputed);
    assert!(out.applied.entries[0].why.contains("never drop a block"));
    assert_eq!(out.route.route, Some(RouteKind::Again));
    assert_eq!(out.route.findings, ["F1"]);
}

// ── Applying votes already collected ───────────────────────────────────────

fn four_reviewer_panel() -> Vec<Record> {
    let reviewer = |n: usize| {
        json!({"type": "reviewer", "name": format!("r-{n}"), "seat": format!("h{n}:m"),
               "decision": "revise", "status": "ok", "candidate": "sha256:x"})
    };
    let lines = [
        reviewer(1),
        reviewer(2),
        reviewer(3),
        reviewer(4),
        json!({"type": "finding", "id": "F1", "severity": "should-fix", "evidence": "e", "fix": "f",
               "raisedBy": ["r-1"], "sources": ["r-1/1"]}),
        json!({"type": "merge", "how": "code", "mergeFailed": false, "candidate": "sha256:x",
               "reviews": 4, "findings": 1, "merged": 1}),
    ];
    lines
        .iter()
        .map(|v| serde_json::from_value(v.clone()).unwrap())
        .collect()
}

/// The four-reviewer panel about the fixtures' page, reviewer r-N on `seat(N)`: its stream
/// for panel-vote and the `--seat` options that go with it.
fn seated_panel(seat: impl Fn(usize) -> String) -> (String, Vec<String>) {
    let seal = reviews("reviews-1.jsonl")[0].candidate.clone();
    let mut input = String::new();
    let mut seats = Vec::new();
    for r in four_reviewer_panel() {
        let mut v = serde_json::to_value(&r).unwrap();
        v["candidate"] = json!(seal);
        if v["type"] == "reviewer" {
            let n: usize = v["name"].as_str().unwrap()[2..].parse().unwrap();
            v["seat"] = json!(seat(n));
            seats.extend(["--seat".to_string(), seat(n)]);
        }
        input.push_str(&(v.to_string() + "\n"));
    }
    (input, seats)
}

fn vote_rec(who: &str, vote: Option<&str>) -> synthesis::VoteRecord {
    serde_json::from_value(json!({
        "reviewer": who, "finding": "F1", "vote": vote, "reason": vote.map(|_| "because"),
        "status": if vote.is_some() { "ok" } else { "failed" },
    }))
    .unwrap()
}

#[test]
fn apply_a_missing_voter_guards_what_the_others_would_drop() {
    let (panel, _) = MergedPanel::of(four_reviewer_panel()).unwrap();
    // Two disagree against one raiser: dropped.
    let votes = [
        vote_rec("r-2", Some("disagree")),
        vote_rec("r-3", Some("disagree")),
        vote_rec("r-4", Some("disagree")),
    ];
    let a = apply(&panel, &votes, None).unwrap();
    assert_eq!(a.entries[0].result, FindingResult::Dropped);
    // The exception: the votes dropped every finding of a failing panel.
    assert_eq!(a.panel.status, Decision::Pass);
    assert!(a.panel.every_finding_dropped);
    // r-4's seat failed: the same two disagree cannot drop it.
    let votes = [
        vote_rec("r-2", Some("disagree")),
        vote_rec("r-3", Some("disagree")),
        vote_rec("r-4", None),
    ];
    let a = apply(&panel, &votes, None).unwrap();
    assert_eq!(a.entries[0].result, FindingResult::Disputed);
    assert_eq!(a.panel.no_votes_from, ["r-4"]);
    assert_eq!(a.panel.status, Decision::Fail);
    // No vote record at all from r-4 counts as missing too.
    let a = apply(&panel, &votes[..2], None).unwrap();
    assert_eq!(a.entries[0].result, FindingResult::Disputed);
    assert_eq!(a.entries[0].no_votes_from, ["r-4"]);
    // Input that does not fit is refused.
    let err = apply(&panel, &[vote_rec("r-1", Some("agree"))], None).unwrap_err();
    assert_eq!(err.to_string(), "r-1 voted on F1, which it raised");
    let err = apply(
        &panel,
        &[
            vote_rec("r-2", Some("agree")),
            vote_rec("r-2", Some("agree")),
        ],
        None,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "a second vote from r-2 on F1");
    assert!(apply(&panel, &[], Some(5)).is_err());
}

/// Seed 000: "Votes also never drop a finding shown to a reviewer whose seat failed or sent no
/// readable reply in this step. It stays, marked disputed." r-2 and r-3 agree with F1 and
/// r-4's seat failed: F1 is disputed, for the judge, where it came out kept before.
#[test]
fn apply_a_missing_voter_makes_a_finding_disputed_whatever_the_others_say() {
    let (panel, _) = MergedPanel::of(four_reviewer_panel()).unwrap();
    for (two, three) in [
        ("agree", "agree"),
        ("better fix", "better fix"),
        ("agree", "disagree"),
    ] {
        let mut votes = [
            vote_rec("r-2", Some(two)),
            vote_rec("r-3", Some(three)),
            vote_rec("r-4", None),
        ];
        for v in &mut votes {
            if v.vote == Some(synthesis::VoteKind::BetterFix) {
                v.fix = Some("another fix".into());
            }
        }
        let a = apply(&panel, &votes, None).unwrap();
        let e = &a.entries[0];
        assert_eq!(e.result, FindingResult::Disputed, "{two}, {three}");
        assert_eq!(e.no_votes_from, ["r-4"]);
        assert!(e.why.contains("r-4, whose vote is missing"), "{}", e.why);
        assert_eq!(
            e.finding.original_fix, None,
            "the finding keeps its own fix"
        );
        // Only r-4's reply is missing; those who did vote are counted.
        assert_eq!(e.finding.votes.len(), 2);
    }
    // With no vote counted at all, still disputed.
    let a = apply(&panel, &[], None).unwrap();
    assert_eq!(a.entries[0].result, FindingResult::Disputed);
}

/// Seed 000: "When the votes drop every finding a failing panel had, nothing is left to send
/// back, so the panel passes." r-4's review failed; r-2 and r-3 vote F1, the only finding,
/// down. The panel passes by the exception, naming r-4 (it had no decision before), with the
/// default threshold and with `--agree 1`.
#[test]
fn a_panel_with_a_failed_review_whose_findings_were_all_dropped_passes() {
    let mut records = four_reviewer_panel();
    if let Record::Reviewer(r) = &mut records[3] {
        r.decision = None;
        r.status = Status::Failed;
    }
    let (panel, _) = MergedPanel::of(records).unwrap();
    let votes = [
        vote_rec("r-2", Some("disagree")),
        vote_rec("r-3", Some("disagree")),
    ];
    for agree in [None, Some(1)] {
        let a = apply(&panel, &votes, agree).unwrap();
        assert_eq!(a.entries[0].result, FindingResult::Dropped);
        assert_eq!(a.panel.no_review_from, ["r-4"]);
        assert_eq!(
            a.panel.status,
            Decision::Pass,
            "{agree:?}: {}",
            a.panel.reason
        );
        assert!(a.panel.every_finding_dropped);
        assert!(
            a.panel.reason.contains("no review from r-4"),
            "{}",
            a.panel.reason
        );
        let (_, route) = panel::tools::vote::ask_judge(&a, &no_judge(), 1, None, None, None);
        assert_eq!(route.route, Some(RouteKind::Pass));
    }
}

#[test]
fn apply_refuses_a_live_judge() {
    let merged = Command::new(bin("panel-merge"))
        .arg(fixture("reviews-1.jsonl"))
        .checked_output()
        .unwrap();
    let out = run_with_stdin(
        Command::new(bin("panel-vote")).args(["apply", "--judge", "claude:opus"]),
        &merged.stdout,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("must be given as replay:FILE"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn code_grouping_marks_what_it_keeps_apart() {
    let mut rs = reviews("reviews-1.jsonl");
    // write-1 also says the wording line is wrong, not long: same claim, another problem.
    rs[0].findings.push(panel::internals::Finding {
        id: "write-1/2".into(),
        severity: panel::internals::Severity::Block,
        evidence: "\"Set max_retries to the number of extra attempts you want.\" is wrong: the client counts the first call as an attempt too.".into(),
        fix: "Say that max_retries counts every call, including the first.".into(),
        file: None,
        line: None,
    });
    let merged = merge::merge(&rs, &How::Code, None).unwrap();
    let ids: Vec<(&str, &[String], &[String])> = merged
        .findings
        .iter()
        .map(|f| (f.id.as_str(), &f.sources[..], &f.possible_duplicate_of[..]))
        .collect();
    assert_eq!(merged.findings.len(), 5, "{ids:?}");
    let wrong = &merged.findings[1];
    assert_eq!(wrong.sources, ["write-1/2"]);
    assert_eq!(wrong.possible_duplicate_of, ["F5"]);
    assert_eq!(merged.findings[4].possible_duplicate_of, ["F2"]);
    assert_eq!(merged.findings[4].sources, ["write-3/2"]);
}

#[test]
fn replayed_judges_repeat_their_last_answer() {
    let file = fixture("judge.json");
    let first = vote::replay_answer(&file, 1).unwrap();
    assert_eq!(vote::replay_answer(&file, 7).unwrap(), first);
    assert!(first.contains_key("finding-3"));
    // A name given twice is refused, not read as the last of the two.
    let tmp = TempDir::new("replay-twice");
    let twice = tmp.path().join("judge.json");
    std::fs::write(&twice, r#"{"finding-1":"act","finding-1":"skip"}"#).unwrap();
    let err = vote::replay_answer(&twice, 1).unwrap_err();
    assert!(
        err.contains("not JSON: duplicate field `finding-1`"),
        "{err}"
    );
}

// ── bin/review-battery ─────────────────────────────────────────────────────

/// Runs the battery with the stand-in panel-judge (tests/fixtures/synthesis/bin) and our
/// built tools on PATH. One reviewer, so no voter has to be launched.
fn battery(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    battery_cmd(dir, extra).checked_output().unwrap()
}

fn battery_cmd(dir: &std::path::Path, extra: &[&str]) -> Command {
    let tools = bin("panel-merge").parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}:{}",
        fixture("bin").display(),
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(root().join("bin/review-battery"));
    cmd.env("PATH", path)
        .args(["--stage", "write", "--run"])
        .arg(dir.join("records"))
        .args(extra)
        .arg(dir.join("page.md"));
    cmd
}

fn battery_setup(tag: &str) -> crate::util::TempDir {
    let dir = crate::util::TempDir::new(tag);
    std::fs::copy(fixture("page.md"), dir.path().join("page.md")).unwrap();
    // write-1 raises two findings in round one and passes in round two; the judge acts on the
    // first and skips the second.
    let answers = json!({"write-1": [
        {"decision": "revise", "findings": [
            {"severity": "should-fix", "evidence": "The page never says what happens when every retry fails.", "fix": "Say what the call raises."},
            {"severity": "nice-to-have", "evidence": "\"Set max_retries to the number of extra attempts you want.\" could be shorter.", "fix": "Shorten it."}
        ]},
        {"decision": "pass", "findings": []}
    ]});
    std::fs::write(dir.path().join("answers.json"), answers.to_string()).unwrap();
    let judge = json!([{"finding-1": {"decision": "act", "reason": "The reader must know."},
                        "finding-2": {"decision": "skip", "reason": "Taste."}}]);
    std::fs::write(dir.path().join("judge.json"), judge.to_string()).unwrap();
    dir
}

#[test]
fn the_battery_runs_rounds_until_the_reviewers_pass() {
    // review-battery's stand-in panel-judge writes its records with jq.
    crate::util::need("jq");
    let dir = battery_setup("battery");
    let d = dir.path();
    let seat = format!("replay:{}", d.join("answers.json").display());
    let judge = format!("replay:{}", d.join("judge.json").display());
    let writer = format!(
        "cat > {0}/got.md; echo rewritten >> \"$PANEL_CANDIDATE\"",
        d.display()
    );
    let out = battery(
        d,
        &["--seat", &seat, "--judge", &judge, "--writer", &writer],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The writer got only the finding acted on, with the judge's reason.
    let got = std::fs::read_to_string(d.join("got.md")).unwrap();
    assert_eq!(
        got,
        "- [should-fix] The page never says what happens when every retry fails.\n  fix: Say what the call raises.\n  why: The reader must know.\n"
    );
    assert!(
        std::fs::read_to_string(d.join("page.md"))
            .unwrap()
            .ends_with("rewritten\n")
    );
    // Round two's reviewers were told what the judge skipped and why.
    let brief = std::fs::read_to_string(d.join("records/round-2/brief.md")).unwrap();
    assert!(
        brief.contains("could be shorter. (skipped: Taste.)"),
        "{brief}"
    );
    assert!(stderr(&out).contains("round 2: pass"), "{}", stderr(&out));
}

#[test]
fn the_battery_stops_with_findings_left_without_a_writer_or_rounds() {
    // review-battery's stand-in panel-judge writes its records with jq.
    crate::util::need("jq");
    let dir = battery_setup("battery-stop");
    let d = dir.path();
    let seat = format!("replay:{}", d.join("answers.json").display());
    let judge = format!("replay:{}", d.join("judge.json").display());
    let out = battery(d, &["--seat", &seat, "--judge", &judge]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("there is no --writer"),
        "{}",
        stderr(&out)
    );
    let out = battery(
        d,
        &[
            "--seat",
            &seat,
            "--judge",
            &judge,
            "--writer",
            "true",
            "--max-rounds",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopped after 1 rounds"),
        "{}",
        stderr(&out)
    );
    let out = battery(d, &["--judge", &judge]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no reviewers"), "{}", stderr(&out));
    // An option without its value is a usage error, not "findings left" (exit 1).
    let out = Command::new(root().join("bin/review-battery"))
        .arg(d.join("page.md"))
        .arg("--seat")
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out), "review-battery: --seat needs a value\n");
    // A step that fails (no records folder under a file) is a tool error, not findings left.
    let out = battery(
        d,
        &[
            "--seat",
            &seat,
            "--run",
            &format!("{}/x", d.join("page.md").display()),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let last = stderr(&out).lines().last().unwrap_or_default().to_string();
    assert!(last.ends_with(": mkdir -p \"$run\" failed"), "{last}");
    // panel-judge stopped by SIGINT (exit 130): the battery stops with it, merging nothing.
    let out = battery_cmd(d, &["--seat", &seat, "--judge", &judge])
        .env("STANDIN_JUDGE_EXIT", "130")
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!stderr(&out).contains("merge"), "{}", stderr(&out));
}

/// The first seed's threshold panel through the binaries: two reviewers, `agree: 1`; one
/// accepts, the other returns no decision (asked once more, then an engine error).
#[test]
fn the_seeds_threshold_panel_passes_on_one_acceptance() {
    let tmp = crate::util::TempDir::new("threshold");
    let answers = tmp.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"{"review-1": {"decision": "pass", "findings": []}, "review-2": "I looked at it and it seems fine overall."}"#,
    )
    .unwrap();
    let seat = format!("replay:{}", answers.display());
    let reviews = std::process::Command::new(crate::util::bin("panel-judge"))
        .args(["--contract", "review", "--seat", &seat, "--seat", &seat])
        .arg(crate::util::root().join("examples/review-battery/page.md"))
        .checked_output()
        .unwrap();
    assert_eq!(
        reviews.status.code(),
        Some(0),
        "{}",
        crate::util::stderr(&reviews)
    );
    let tally = |agree: &str| {
        crate::util::run_with_stdin(
            std::process::Command::new(crate::util::bin("panel-tally")).args(["--agree", agree]),
            &reviews.stdout,
        )
    };
    let one = tally("1");
    assert_eq!(one.status.code(), Some(0), "{}", crate::util::stdout(&one));
    assert!(
        crate::util::stdout(&one).contains("1 of 2"),
        "{}",
        crate::util::stdout(&one)
    );
    let two = tally("2");
    assert_eq!(
        two.status.code(),
        Some(3),
        "an engine error is not an acceptance: {}",
        crate::util::stdout(&two)
    );
}

/// The seed's worked example through every binary: replayed reviewers, voters and judge, the
/// merge by the first reviewer's seat, `bin/review-battery` running the rounds.
#[test]
fn the_seeds_worked_example_runs_through_the_whole_pipeline() {
    let bins = crate::util::bin("panel-judge")
        .parent()
        .unwrap()
        .to_path_buf();
    let out = std::process::Command::new("bash")
        .arg(crate::util::root().join("examples/review-battery/run.sh"))
        .env(
            "PATH",
            format!(
                "{}:{}",
                bins.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .checked_output()
        .unwrap();
    let err = crate::util::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let records = err
        .lines()
        .find_map(|l| l.strip_prefix("review-battery: records: "))
        .map(std::path::PathBuf::from)
        .unwrap();
    let voted = std::fs::read_to_string(records.join("round-1/voted.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = voted
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let synthesis: Vec<(String, Vec<String>, Vec<String>)> = lines
        .iter()
        .filter(|r| r["type"] == "synthesis")
        .map(|r| {
            let strings = |v: &serde_json::Value| -> Vec<String> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect()
            };
            let votes = r["finding"]["votes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    format!(
                        "{} {}",
                        v["reviewer"].as_str().unwrap(),
                        v["vote"].as_str().unwrap()
                    )
                })
                .collect();
            (
                r["result"].as_str().unwrap().to_string(),
                strings(&r["finding"]["raisedBy"]),
                votes,
            )
        })
        .collect();
    let s = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        synthesis,
        vec![
            (
                "kept".into(),
                s(&["write-1", "write-2"]),
                s(&["write-3 agree"])
            ),
            (
                "kept".into(),
                s(&["write-2"]),
                s(&["write-1 agree", "write-3 agree"])
            ),
            (
                "dropped".into(),
                s(&["write-3"]),
                s(&["write-1 disagree", "write-2 disagree"])
            ),
            (
                "disputed".into(),
                s(&["write-3"]),
                s(&["write-1 agree", "write-2 disagree"])
            ),
        ]
    );
    let decisions: Vec<&str> = lines
        .iter()
        .filter(|r| r["type"] == "decision")
        .map(|r| r["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["act", "act", "skip"]);
    let route = lines.iter().find(|r| r["type"] == "route").unwrap();
    assert_eq!(route["route"], "again");
    assert!(err.contains("review-battery: round 2: pass"), "{err}");
    let _ = std::fs::remove_dir_all(records.parent().unwrap());
}

/// Review records whose every seat is `exec:` a program that writes its pid to `pids` and then
/// waits, so that whatever a tool asks those seats hangs until the tool stops it.
fn hanging_reviews(pids: &std::path::Path, mark: &str) -> Vec<u8> {
    reviews_on("reviews-1.jsonl", |_| hanging_seat(pids, mark))
}

/// A seat that writes down that it started, then sleeps for `mark` seconds.
fn hanging_seat(pids: &std::path::Path, mark: &str) -> String {
    format!("exec:echo $$ >> {}; sleep {mark}", pids.display())
}

/// A fixture's review records, each reviewer's seat set by `seat` (given the reviewer's name).
fn reviews_on(name: &str, seat: impl Fn(&str) -> String) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text(name).lines() {
        let mut rec: Value = serde_json::from_str(line).unwrap();
        rec["seat"] = json!(seat(rec["reviewer"].as_str().unwrap()));
        out.extend(rec.to_string().into_bytes());
        out.push(b'\n');
    }
    out
}

/// The fixtures' reviewers' seats, as the command line gives them to panel-vote.
fn fixture_seats() -> Vec<String> {
    reviews("reviews-1.jsonl")
        .into_iter()
        .flat_map(|r| ["--seat".to_string(), r.seat])
        .collect()
}

/// panel-vote and panel-merge --seat end the way panel-judge does: a terminating signal ends
/// every seat's process group, what was asked is recorded as interrupted, the judges' private
/// folders are removed, and the tool exits with 128 + the signal.
#[test]
fn a_signal_ends_every_voter_and_merging_seat() {
    use crate::util::{kill, pids_in, wait_until};
    use std::process::Stdio;
    use std::time::Duration;
    for (tool, sig, code) in [
        ("panel-vote", "TERM", 143),
        ("panel-vote", "INT", 130),
        ("panel-vote", "HUP", 129),
        ("panel-merge", "TERM", 143),
        ("panel-merge", "QUIT", 131),
    ] {
        let tmp = TempDir::new("signal");
        let pids = tmp.path().join("pids");
        let mark = crate::util::mark();
        let reviews = hanging_reviews(&pids, &mark);
        let input = if tool == "panel-vote" {
            let merged = run_with_stdin(&mut Command::new(bin("panel-merge")), &reviews);
            assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
            merged.stdout
        } else {
            reviews
        };
        let private = tmp.path().join("tmp");
        std::fs::create_dir(&private).unwrap();
        let mut cmd = Command::new(bin(tool));
        cmd.args(["--seat", &hanging_seat(&pids, &mark)]);
        if tool == "panel-vote" {
            cmd.args(["--candidate", fixture("page.md").to_str().unwrap()]);
        }
        let mut child = cmd
            .env("TMPDIR", &private)
            // What the seat writes down for the test lies outside its folders.
            .env(
                "PANEL_SANDBOX_WRITE",
                crate::util::judges_may_write(tmp.path()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(&input).unwrap();
        }
        let started = if tool == "panel-vote" { 3 } else { 1 };
        assert!(
            wait_until(Duration::from_secs(20), || pids_in(&pids).len() >= started),
            "{tool}: the seats never started"
        );
        kill(child.id(), sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{tool} {sig}: {}",
            stderr(&out)
        );
        let left = crate::util::marked(&mark);
        assert!(left.is_empty(), "{tool} {sig}: {left:?} outlived it");
        let records = parse_stream(&stdout(&out));
        if tool == "panel-vote" {
            let votes: Vec<&synthesis::VoteRecord> = records
                .iter()
                .filter_map(|r| match r {
                    Record::Vote(v) => Some(v),
                    _ => None,
                })
                .collect();
            assert!(!votes.is_empty(), "{tool} {sig}");
            assert!(
                votes.iter().all(|v| v.status == Status::Interrupted),
                "{tool} {sig}: {votes:?}"
            );
            assert!(stderr(&out).contains("votes: "), "{}", stderr(&out));
        } else {
            let Some(Record::Merge(m)) = records.last() else {
                panic!("{tool} {sig}: no merge record");
            };
            assert!(m.merge_failed, "{m:?}");
            assert!(stderr(&out).contains("merge: "), "{}", stderr(&out));
        }
        let left: Vec<_> = std::fs::read_dir(&private)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().starts_with("panel-sandbox"))
            .collect();
        assert!(left.is_empty(), "{tool} {sig}: left {left:?}");
    }
}

/// Seed 000: "With no cap on the judge, the rounds end when it skips every finding or every
/// reviewer passes." Every reviewer passed and listed a note; the judge acts on it; the route
/// is pass (the decision stays on the record), where it was again before.
#[test]
fn the_rounds_end_when_every_reviewer_passes_whatever_the_judge_acts_on() {
    let mut rs = reviews("reviews-2.jsonl");
    rs[0].findings = vec![panel::internals::Finding {
        id: "write-1/1".into(),
        severity: panel::internals::Severity::NiceToHave,
        evidence: "\"Set max_retries\" could be shorter.".into(),
        fix: "Shorten it.".into(),
        file: None,
        line: None,
    }];
    let judge = crate::util::TempDir::new("judge-acts");
    let file = judge.path().join("judge.json");
    std::fs::write(
        &file,
        json!({"finding-1": {"decision": "act", "reason": "Shorter reads better."}}).to_string(),
    )
    .unwrap();
    let asker = FakeAsker::recorded()
        .with("vote-write-2", vec![Act::Answer(json!({"votes": [{"finding": "F1", "vote": "agree", "reason": "yes", "fix": null}]}))])
        .with("vote-write-3", vec![Act::Answer(json!({"votes": [{"finding": "F1", "vote": "agree", "reason": "yes", "fix": null}]}))]);
    let out = round(
        &rs,
        &How::Code,
        &asker,
        &JudgeSeat::parse(Some(&format!("replay:{}", file.display()))),
    );
    assert_eq!(out.applied.panel.passed, out.applied.panel.reviewers);
    assert_eq!(out.decisions.len(), 1);
    assert_eq!(out.route.route, Some(RouteKind::Pass), "{:?}", out.route);
    assert!(out.route.findings.is_empty());
    assert!(
        out.route
            .reason
            .starts_with("every reviewer passed the work")
    );
    assert_eq!(out.decision(), Decision::Pass);
}

/// `panel-tally --view` hands one part of panel-vote's stream to a script, and exits 0: the
/// battery needs no jq and restates no rule.
#[test]
fn panel_tally_views_the_parts_a_script_hands_on() {
    let dir = crate::util::TempDir::new("views");
    let voted = dir.path().join("voted.jsonl");
    let merged = Command::new(bin("panel-merge"))
        .arg(fixture("reviews-1.jsonl"))
        .checked_output()
        .unwrap();
    let vote = run_with_stdin(
        Command::new(bin("panel-vote")).args([
            "apply",
            "--judge",
            &format!("replay:{}", fixture("judge.json").display()),
            "-",
            fixture("votes-1.jsonl").to_str().unwrap(),
        ]),
        &merged.stdout,
    );
    assert_eq!(vote.status.code(), Some(1), "{}", stderr(&vote));
    std::fs::write(&voted, &vote.stdout).unwrap();
    let view = |part: &str| {
        let out = Command::new(bin("panel-tally"))
            .args(["--view", part])
            .arg(&voted)
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{part}: {}", stderr(&out));
        stdout(&out)
    };
    let writer = view("writer");
    assert!(
        writer.starts_with(
            "- [should-fix] \"The client uses exponential backoff between attempts.\""
        ),
        "{writer}"
    );
    assert!(writer.contains("\n  fix: "), "{writer}");
    assert!(
        writer.contains("\n  why: A reader who has not met the term"),
        "{writer}"
    );
    assert_eq!(writer.matches("\n- [").count() + 1, 2, "{writer}");
    let skips = view("skips");
    assert!(skips.starts_with("- \"Set max_retries"), "{skips}");
    assert!(
        skips
            .trim_end()
            .ends_with("(skipped: The sentence is clear as it is; a shorter one is taste.)"),
        "{skips}"
    );
    let decisions = view("decisions");
    assert_eq!(decisions.lines().count(), 3);
    assert!(
        decisions
            .lines()
            .all(|l| l.starts_with("{\"type\":\"decision\""))
    );
    let out = Command::new(bin("panel-tally"))
        .args(["--view", "writer"])
        .arg(root().join("examples/answers.json"))
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

// ── Records are data ───────────────────────────────────────────────────────

/// The worked example's reviews with every seat replayed from the fixtures' answers, but for
/// `planted`, whose seat is `exec:touch MARKER`; and that marker, not yet made.
struct Planted {
    dir: TempDir,
    honest: String,
    attack: String,
    marker: std::path::PathBuf,
}

impl Planted {
    fn new(tag: &str) -> Planted {
        let dir = TempDir::new(tag);
        let marker = dir.path().join("marker");
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Planted {
            honest: format!("replay:{}", fixture("answers.json").display()),
            attack: format!("exec:touch {}", marker.display()),
            marker,
            dir,
        }
    }

    /// The reviews, `planted` on the attacker's seat (none when `planted` is empty).
    fn reviews(&self, planted: &str) -> Vec<u8> {
        reviews_on("reviews-1.jsonl", |who| {
            if who == planted {
                self.attack.clone()
            } else {
                self.honest.clone()
            }
        })
    }

    /// A tool run with its temporary folder (where a run folder would be made) our own.
    fn run(&self, tool: &str, args: &[&str], stdin: &[u8]) -> std::process::Output {
        run_with_stdin(
            Command::new(bin(tool))
                .args(args)
                .env("TMPDIR", self.dir.path().join("tmp")),
            stdin,
        )
    }

    /// Nothing ran: no marker, and no run folder was made.
    fn nothing_ran(&self, what: &str) {
        assert!(!self.marker.exists(), "{what}: a record's program ran");
        let made = std::fs::read_dir(self.dir.path().join("tmp"))
            .unwrap()
            .count();
        assert_eq!(made, 0, "{what}: a run folder was made");
    }
}

/// DESIGN §8: the records a tool reads are data; "they never choose a program to run". A
/// merged stream (a CI artifact, a file from another machine) whose reviewer sits on
/// `exec:touch MARKER` made panel-vote run that command as the user to ask for its vote. Now
/// the voters' seats come from the command line: the stream is refused, exit 2, in one line
/// naming the record's line, and nothing runs. The honest stream, with the seats given, votes.
#[test]
fn a_reviewer_record_never_chooses_the_voters_program() {
    let p = Planted::new("planted-vote");
    let merged = p.run("panel-merge", &[], &p.reviews("write-2"));
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let candidate = fixture("page.md");
    let judge = format!("replay:{}", fixture("judge.json").display());
    let vote = |args: &[&str], stdin: &[u8]| {
        let mut all = vec![
            "--candidate",
            candidate.to_str().unwrap(),
            "--judge",
            &judge,
        ];
        all.extend(args);
        p.run("panel-vote", &all, stdin)
    };
    // Nothing ran (checked first: the old code ran it), then one line, exit 2, no output.
    let refused = |what: &str, out: &std::process::Output, want: String| {
        p.nothing_ran(what);
        assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(out));
        assert_eq!(stderr(out), want + "\n", "{what}");
        assert!(out.stdout.is_empty(), "{what}: {}", stdout(out));
    };
    let not_given = |at: &str, line: usize, who: &str, seat: &str| {
        format!(
            "panel-vote: {at}: line {line}: reviewer \"{who}\" sits on seat {seat:?}, which the command line did not give (--seat)"
        )
    };
    // As the pipeline was written before: no --seat, the first reviewer is refused.
    let out = vote(&[], &merged.stdout);
    refused(
        "no --seat",
        &out,
        not_given("<stdin>", 1, "write-1", &p.honest),
    );
    // The honest seat given: write-2's reviewer record is line 2 (the reviewers come first).
    let out = vote(&["--seat", &p.honest], &merged.stdout);
    refused(
        "--seat given",
        &out,
        not_given("<stdin>", 2, "write-2", &p.attack),
    );
    // From a file, as a downloaded artifact is read.
    let file = p.dir.path().join("merged.jsonl");
    std::fs::write(&file, &merged.stdout).unwrap();
    let named = file.to_str().unwrap();
    let out = vote(&["--seat", &p.honest, named], b"");
    refused("a file", &out, not_given(named, 2, "write-2", &p.attack));

    // The honest stream, its seats given on the command line: the seed's first round.
    let honest = p.run("panel-merge", &[], &p.reviews(""));
    let out = vote(&["--seat", &p.honest], &honest.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let records = parse_stream(&stdout(&out));
    let (entries, judged) = seed_shape(&records);
    assert_eq!(entries, seed_output()["rounds"][0]);
    assert_eq!(judged, seed_output()["judge"][0]);
    assert!(!p.marker.exists());
}

/// DESIGN §8: the records a tool reads are data; "they never choose a program to run".
/// `panel-merge --seat first` ran the first review record's seat: a review whose seat is
/// `exec:touch MARKER` ran that command as the user. Now the merging seat comes from the
/// command line only: `first` is refused in one line, exit 2, and nothing runs. The honest
/// pipeline names the seat, and a planted seat still reaches no program: panel-vote refuses it
/// naming its line; `bin/review-battery --merge-seat first` means the first `--seat` it was
/// given.
#[test]
fn a_review_record_never_chooses_the_merging_program() {
    let p = Planted::new("planted-merge");
    let planted = p.reviews("write-1");
    let out = p.run("panel-merge", &["--seat", "first"], &planted);
    p.nothing_ran("--seat first");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "panel-merge: --seat first: the merging seat is never taken from the records; name it (the first reviewer's is the first --seat panel-judge was given)\n"
    );
    assert!(out.stdout.is_empty(), "{}", stdout(&out));

    // The merging seat named: it groups the findings; the planted seat is passed on as data.
    let merged = p.run("panel-merge", &["--seat", &p.honest], &planted);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert!(!p.marker.exists(), "a record's program ran");
    let records = parse_stream(&stdout(&merged));
    let Some(Record::Merge(m)) = records.last() else {
        panic!("no merge record last: {}", stdout(&merged));
    };
    assert_eq!(
        (m.how, m.seat.as_deref(), m.merge_failed, m.merged),
        (MergeHow::Seat, Some(p.honest.as_str()), false, 4),
        "{m:?}"
    );
    // The record says what the merging seat ran under.
    assert_eq!(
        m.sandbox.as_deref(),
        Some(crate::util::auto_walls()),
        "{m:?}"
    );
    // Down the pipeline, panel-vote refuses the planted seat, naming its line.
    let candidate = fixture("page.md");
    let args = [
        "--seat",
        &p.honest,
        "--candidate",
        candidate.to_str().unwrap(),
    ];
    let out = p.run("panel-vote", &args, &merged.stdout);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "panel-vote: <stdin>: line 1: reviewer \"write-1\" sits on seat {:?}, which the command line did not give (--seat)\n",
            p.attack
        )
    );
    assert!(!p.marker.exists(), "a record's program ran");

    // The battery passes the seats it launched the reviewers on: its first for `first`.
    let example = root().join("examples/review-battery");
    let work = p.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let seat = format!("replay:{}", example.join("answers.json").display());
    let out = battery_one_round(&work, &seat, &["--merge-seat", "first"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let merged = std::fs::read_to_string(work.join("records/round-1/merged.jsonl")).unwrap();
    let last: Value = serde_json::from_str(merged.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["how"], &last["seat"], &last["mergeFailed"]),
        (&json!("seat"), &json!(seat), &json!(false)),
        "{last}"
    );
}

/// Runs `bin/review-battery` for one round on a copy of the worked example's page in `work`, its
/// three reviewers on `seat` and the example's recorded judge, with `extra` options.
fn battery_one_round(work: &std::path::Path, seat: &str, extra: &[&str]) -> std::process::Output {
    let example = root().join("examples/review-battery");
    std::fs::copy(example.join("page.md"), work.join("page.md")).unwrap();
    let tools = bin("panel-judge").parent().unwrap().to_path_buf();
    Command::new(root().join("bin/review-battery"))
        .env(
            "PATH",
            format!(
                "{}:{}",
                tools.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .args(["--stage", "write", "--max-rounds", "1"])
        .args(extra)
        .args(["--seat", seat, "--seat", seat, "--seat", seat])
        .arg("--judge")
        .arg(format!("replay:{}", example.join("judge.json").display()))
        .arg("--run")
        .arg(work.join("records"))
        .arg(work.join("page.md"))
        .checked_output()
        .unwrap()
}

/// Runs `bin/review-battery` on the worked example for one round, the three seats replaying
/// `answers`, with `extra` options; returns the round's merge record, what the battery said, and
/// the merging seat's own records when it fell back to code.
fn battery_merge(tag: &str, answers: &Value, extra: &[&str]) -> (Value, String, Option<String>) {
    let tmp = crate::util::TempDir::new(tag);
    let dir = tmp.path();
    let file = dir.join("answers.json");
    std::fs::write(&file, answers.to_string()).unwrap();
    let out = battery_one_round(dir, &format!("replay:{}", file.display()), extra);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let merged = std::fs::read_to_string(dir.join("records/round-1/merged.jsonl")).unwrap();
    let last: Value = serde_json::from_str(merged.lines().last().unwrap()).unwrap();
    let by_seat = std::fs::read_to_string(dir.join("records/round-1/merged-by-seat.jsonl")).ok();
    (last, stderr(&out), by_seat)
}

/// Seed 000: "`synthesise: true` uses the first reviewer's seat for this step." The battery
/// merges with its first `--seat` unless told otherwise (it grouped in code before);
/// `--merge-seat code` groups in code, and a merging seat that answers badly falls back to code,
/// its own records kept beside.
#[test]
fn the_battery_merges_with_the_first_reviewers_seat_by_default() {
    let example = root().join("examples/review-battery");
    let answers: Value =
        serde_json::from_str(&std::fs::read_to_string(example.join("answers.json")).unwrap())
            .unwrap();
    let (merge, _, _) = battery_merge("merge-default", &answers, &[]);
    assert_eq!(merge["how"], json!("seat"), "{merge}");
    assert_eq!(merge["mergeFailed"], json!(false), "{merge}");
    assert!(
        merge["seat"].as_str().unwrap().starts_with("replay:"),
        "{merge}"
    );

    let (merge, _, _) = battery_merge("merge-code", &answers, &["--merge-seat", "code"]);
    assert_eq!(merge["how"], json!("code"), "{merge}");

    let mut bad = answers.clone();
    bad["merge"] = json!("no grouping today");
    let (merge, err, by_seat) = battery_merge("merge-fallback", &bad, &[]);
    assert_eq!(merge["how"], json!("code"), "{merge}");
    assert!(
        err.contains("the merging seat failed; grouped in code"),
        "{err}"
    );
    let by_seat = by_seat.expect("the seat's records are kept");
    let seat_merge: Value = serde_json::from_str(by_seat.lines().last().unwrap()).unwrap();
    assert_eq!(seat_merge["mergeFailed"], json!(true), "{seat_merge}");
}

/// `--reads` names a voter's seat: one the command line does not give as a --seat is a usage
/// error, before any input is read or anything launched.
#[test]
fn a_reading_seat_must_be_a_voters_seat() {
    let out = Command::new(bin("panel-vote"))
        .args([
            "--seat",
            "claude:haiku",
            "--reads",
            "codex:gpt-5",
            "/nonexistent/merged.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "panel-vote: --reads codex:gpt-5: not one of the --seat options: only a voter's seat reads"
    );
    // A harness with no read tools to give (no reviewer mode) cannot read either.
    let out = Command::new(bin("panel-vote"))
        .args([
            "--seat",
            "copilot",
            "--reads",
            "copilot",
            "/nonexistent/merged.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "panel-vote: --reads copilot: harness copilot has no read tools to give a voter (no reviewer mode)"
    );
}

// ── Voters left out once the votes in fix every fate (--stop-when-decided) ─

fn cancelled_rec(who: &str) -> synthesis::VoteRecord {
    serde_json::from_value(json!({
        "reviewer": who, "finding": "F1", "vote": null, "status": "cancelled",
        "cause": "the votes in fixed the fate of every finding it was shown without it: F1 kept",
    }))
    .unwrap()
}

/// A voter left out is no missing vote: r-2 and r-3 agree, r-4 was left out, and F1 is kept,
/// where a failed r-4 makes it disputed ("Votes also never drop a finding shown to a reviewer
/// whose seat failed", seed 000). One left out though a vote of its could have changed F1's
/// fate (one agree and one disagree: its vote breaks the tie) counts as missing, and the
/// panel has no decision.
#[test]
fn apply_counts_a_voter_left_out_as_no_missing_vote_only_when_it_could_change_nothing() {
    let (panel, _) = MergedPanel::of(four_reviewer_panel()).unwrap();
    let votes = [
        vote_rec("r-2", Some("agree")),
        vote_rec("r-3", Some("agree")),
        cancelled_rec("r-4"),
    ];
    let a = apply(&panel, &votes, None).unwrap();
    assert_eq!(
        a.entries[0].result,
        FindingResult::Kept,
        "{}",
        a.entries[0].why
    );
    assert!(a.entries[0].no_votes_from.is_empty());
    assert!(a.panel.no_votes_from.is_empty());
    assert_eq!(a.panel.cancelled, ["r-4"]);
    assert!(a.panel.cancelled_without_cause.is_empty());
    assert_eq!(a.panel.status, Decision::Fail, "every reviewer said revise");

    let forged = [
        vote_rec("r-2", Some("agree")),
        vote_rec("r-3", Some("disagree")),
        cancelled_rec("r-4"),
    ];
    let a = apply(&panel, &forged, None).unwrap();
    assert_eq!(a.entries[0].result, FindingResult::Disputed);
    assert_eq!(a.entries[0].no_votes_from, ["r-4"]);
    assert_eq!(a.panel.cancelled_without_cause, ["r-4"]);
    assert_eq!(a.panel.status, Decision::NoDecision);
    assert!(
        a.panel.reason.contains("r-4 left out"),
        "{}",
        a.panel.reason
    );
}

/// The stream of `panel-vote apply` over the four-reviewer panel and `votes`.
fn applied_stream(votes: &[synthesis::VoteRecord]) -> (std::process::Output, String) {
    let mut input = String::new();
    for r in four_reviewer_panel() {
        input.push_str(&serde_json::to_string(&r).unwrap());
        input.push('\n');
    }
    for v in votes {
        let mut line = serde_json::to_value(v).unwrap();
        line["type"] = json!("vote");
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let out = run_with_stdin(
        Command::new(bin("panel-vote")).arg("apply"),
        input.as_bytes(),
    );
    let text = stdout(&out);
    (out, text)
}

/// panel-tally over a vote stream with a voter left out: named as not needed, not as a
/// missing vote. A forged stream, where the votes its synthesis entry counts (one agree, one
/// disagree) leave F1 open to the vote of the voter recorded as left out, is no decision,
/// exit 3, naming the voter; and so is `panel-vote apply` over such votes.
#[test]
fn panel_tally_refuses_a_forged_vote_stream_with_a_voter_left_out_without_cause() {
    let (out, stream) = applied_stream(&[
        vote_rec("r-2", Some("agree")),
        vote_rec("r-3", Some("agree")),
        cancelled_rec("r-4"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not needed (cancelled): r-4"),
        "{}",
        stderr(&out)
    );
    let tally = |input: &str, json: bool| {
        let mut cmd = Command::new(bin("panel-tally"));
        if json {
            cmd.arg("--json");
        }
        run_with_stdin(&mut cmd, input.as_bytes())
    };
    let t = tally(&stream, false);
    assert_eq!(t.status.code(), Some(1), "{}", stderr(&t));
    let text = stdout(&t);
    assert!(text.contains("not needed (cancelled): r-4"), "{text}");
    assert!(!text.contains("no votes from"), "{text}");
    let j: Value = serde_json::from_str(stdout(&tally(&stream, true)).trim()).unwrap();
    assert_eq!(j["cancelled"], json!(["r-4"]));
    assert_eq!(j["decidedEarly"], json!(true));

    // The attacker's edit: r-3's vote in the synthesis entry becomes a disagree, F1 still kept.
    let forged: String = stream
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "synthesis" {
                v["finding"]["votes"][1]["vote"] = json!("disagree");
            }
            v.to_string() + "\n"
        })
        .collect();
    assert_ne!(forged, stream);
    let t = tally(&forged, false);
    assert_eq!(t.status.code(), Some(3), "{}", stdout(&t));
    assert!(
        stdout(&t).contains("CANCELLED WITHOUT CAUSE: r-4"),
        "{}",
        stdout(&t)
    );
    let j: Value = serde_json::from_str(stdout(&tally(&forged, true)).trim()).unwrap();
    assert_eq!(j["status"], "no-decision");
    assert_eq!(j["cancelledWithoutCause"], json!(["r-4"]));

    // The same votes handed to panel-vote apply: r-4 counts as missing, and no decision.
    let (out, stream) = applied_stream(&[
        vote_rec("r-2", Some("agree")),
        vote_rec("r-3", Some("disagree")),
        cancelled_rec("r-4"),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("left out without cause: r-4"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tally(&stream, false).status.code(), Some(3));
}

/// `panel-vote --stop-when-decided`: r-2 and r-3 agree with F1 at once; r-4 sleeps. Whatever
/// r-4 would vote F1 stays kept, so r-4 is ended, not waited for: its process is gone, its
/// record says cancelled with what fixed F1, and F1 is kept, not disputed. Without the option
/// every voter is waited for (here: ended by the deadline, a missing vote, F1 disputed).
/// r-2 and r-3 answer only once r-4 runs: on a loaded machine their votes came in before r-4
/// started, and r-4, rightly, was never launched.
#[test]
fn panel_vote_stop_when_decided_ends_a_voter_whose_vote_could_change_nothing() {
    use crate::util::{marked, pids_in};
    let tmp = TempDir::new("vote-early");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    let agree =
        r#"cat >/dev/null; echo '{"votes":[{"finding":"F1","vote":"agree","reason":"right"}]}'"#;
    let seat = |n: usize| match n {
        4 => format!(
            "exec:cat >/dev/null; echo $$ >> {}; sleep {mark}",
            pids.display()
        ),
        _ => format!(
            "exec:i=0; while [ ! -s {} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; {agree} # {n}",
            pids.display()
        ),
    };
    let (input, seats) = seated_panel(seat);
    for (stop, timeout) in [(true, "120"), (false, "3")] {
        let started = std::time::Instant::now();
        let mut cmd = Command::new(bin("panel-vote"));
        cmd.args(&seats)
            .args(["--candidate", fixture("page.md").to_str().unwrap()])
            .args(["--timeout", timeout, "--retries", "0"])
            .env(
                "PANEL_SANDBOX_WRITE",
                crate::util::judges_may_write(tmp.path()),
            );
        if stop {
            cmd.arg("--stop-when-decided");
        }
        let out = run_with_stdin(&mut cmd, input.as_bytes());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        let records = parse_stream(&stdout(&out));
        let r4: Vec<&synthesis::VoteRecord> = records
            .iter()
            .filter_map(|r| match r {
                Record::Vote(v) if v.reviewer == "r-4" => Some(v),
                _ => None,
            })
            .collect();
        let entry = records
            .iter()
            .find_map(|r| match r {
                Record::Synthesis(e) => Some(e),
                _ => None,
            })
            .unwrap();
        assert_eq!(r4.len(), 1, "{records:?}");
        if stop {
            assert!(started.elapsed().as_secs() < 60, "r-4 was waited for");
            assert_eq!(r4[0].status, Status::Cancelled, "{:?}", r4[0]);
            assert_eq!(
                r4[0].cause.as_deref(),
                Some(
                    "the votes in fixed the fate of every finding it was shown without it: F1 kept"
                )
            );
            assert_eq!(entry.result, FindingResult::Kept, "{}", entry.why);
            assert!(err.contains("not needed (cancelled): r-4"), "{err}");
            assert!(!pids_in(&pids).is_empty(), "r-4 never started");
            assert!(
                crate::util::wait_until(std::time::Duration::from_secs(10), || marked(&mark)
                    .is_empty()),
                "r-4 outlived its cancel"
            );
        } else {
            assert_ne!(r4[0].status, Status::Cancelled, "{:?}", r4[0]);
            assert_eq!(entry.result, FindingResult::Disputed, "{}", entry.why);
        }
    }
}

/// Issue 26: "The same for the other panels: … the votes of panel-vote". A cascade of voters
/// asks, for each finding, as many of its voters as could fix its fate, then more only while
/// it is open. F1 (raised by r-1) has three voters: two agreeing keep it whatever the third
/// says, so r-4 is never launched; when r-2 agrees and r-3 disagrees, r-4 decides, and is
/// asked.
#[test]
fn panel_vote_cascade_asks_a_voter_only_while_a_fate_needs_it() {
    for (votes, want_asked, want) in [
        (
            ["agree", "agree", "agree"],
            "r-2\nr-3\n",
            FindingResult::Kept,
        ),
        (
            ["agree", "disagree", "agree"],
            "r-2\nr-3\nr-4\n",
            FindingResult::Kept,
        ),
    ] {
        let tmp = TempDir::new("vote-cascade");
        let asked = tmp.path().join("asked");
        // r-3 answers after r-2 has (the order the log is read in), r-4 at once.
        let seat = |n: usize| {
            if n == 1 {
                // r-1 raised F1 and votes on nothing: never asked.
                return "exec:cat >/dev/null # 1".to_string();
            }
            let wait = match n {
                3 => format!(
                    "i=0; while ! grep -q r-2 {} && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; ",
                    asked.display()
                ),
                _ => String::new(),
            };
            format!(
                r#"exec:cat >/dev/null; {wait}echo r-{n} >> {}; echo '{{"votes":[{{"finding":"F1","vote":"{}","reason":"r"}}]}}'"#,
                asked.display(),
                votes[n - 2]
            )
        };
        let (input, seats) = seated_panel(seat);
        let mut cmd = Command::new(bin("panel-vote"));
        cmd.args(&seats)
            .args(["--candidate", fixture("page.md").to_str().unwrap()])
            .args(["--timeout", "120", "--retries", "0", "--cascade"])
            .env(
                "PANEL_SANDBOX_WRITE",
                crate::util::judges_may_write(tmp.path()),
            );
        let out = run_with_stdin(&mut cmd, input.as_bytes());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{votes:?}: {err}");
        assert_eq!(
            std::fs::read_to_string(&asked).unwrap(),
            want_asked,
            "{votes:?}"
        );
        let records = parse_stream(&stdout(&out));
        let r4: Vec<&synthesis::VoteRecord> = records
            .iter()
            .filter_map(|r| match r {
                Record::Vote(v) if v.reviewer == "r-4" => Some(v),
                _ => None,
            })
            .collect();
        assert_eq!(r4.len(), 1, "{records:?}");
        if want_asked.contains("r-4") {
            assert_eq!(r4[0].status, Status::Ok, "{:?}", r4[0]);
        } else {
            assert_eq!(r4[0].status, Status::Cancelled, "{:?}", r4[0]);
            assert_eq!(
                r4[0].cause.as_deref(),
                Some(
                    "the votes in fixed the fate of every finding it was shown without it: F1 kept"
                )
            );
            assert!(err.contains("not needed (cancelled): r-4"), "{err}");
        }
        let entry = records
            .iter()
            .find_map(|r| match r {
                Record::Synthesis(e) => Some(e),
                _ => None,
            })
            .unwrap();
        assert_eq!(entry.result, want, "{votes:?}: {}", entry.why);
    }
}

/// A voter whose launch panics is a vote missing, never a voter waited for: the cascade held
/// r-4 while r-2's thread, gone without a reply, counted as running, and panel-vote hung past
/// every signal.
#[test]
fn a_voter_whose_launch_panics_is_a_missing_vote_and_the_cascade_ends() {
    use panel::internals::Pace;
    let agree = json!({"votes": [{"finding": "F1", "vote": "agree", "reason": "right"}]});
    let asker = FakeAsker::default()
        .with("vote-r-2", vec![Act::Panic])
        .with("vote-r-3", vec![Act::Answer(agree.clone())])
        .with("vote-r-4", vec![Act::Answer(agree)]);
    let (tx, rx) = std::sync::mpsc::channel();
    // Its own thread, not a scope: one that hangs must not hang the test with it.
    std::thread::spawn(move || {
        let (panel, _) = MergedPanel::of(four_reviewer_panel()).unwrap();
        let seats: Vec<String> = (1..=4).map(|n| format!("h{n}:m")).collect();
        let votes = vote::collect_votes_until(
            &panel,
            &seats,
            &asker,
            (None, "the work"),
            None,
            Pace::Cascade,
        );
        let _ = tx.send((panel, votes.unwrap()));
    });
    let (panel, votes) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the cascade hung on a voter that panicked");
    let r2: Vec<_> = votes.iter().filter(|v| v.reviewer == "r-2").collect();
    assert_eq!(r2.len(), 1, "{votes:?}");
    assert!(
        r2[0].vote.is_none() && r2[0].status != Status::Cancelled,
        "{r2:?}"
    );
    let applied = apply(&panel, &votes, None).unwrap();
    assert_eq!(applied.entries[0].result, FindingResult::Disputed);
}

/// A signal while a cascade holds a voter back: every voter still out is interrupted, the one
/// held too (never launched), and none is "not needed": the interrupted votes, missing, would
/// fix F1 disputed, and the held voter was recorded cancelled as if it had not been needed.
#[test]
fn a_signal_interrupts_the_voters_a_cascade_holds_never_leaves_them_out() {
    use crate::util::{kill, marked, pids_in, wait_until};
    use std::process::Stdio;
    use std::time::Duration;
    let tmp = TempDir::new("vote-cascade-signal");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    let seat = |n: usize| {
        format!(
            "exec:cat >/dev/null; echo $$ >> {}; sleep {mark} # {n}",
            pids.display()
        )
    };
    let (input, seats) = seated_panel(seat);
    let mut child = Command::new(bin("panel-vote"))
        .args(&seats)
        .args(["--candidate", fixture("page.md").to_str().unwrap()])
        .args(["--timeout", "120", "--cascade"])
        .env(
            "PANEL_SANDBOX_WRITE",
            crate::util::judges_may_write(tmp.path()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    // r-2 and r-3 run (two agreeing could keep F1); r-4 is held.
    assert!(
        wait_until(Duration::from_secs(30), || pids_in(&pids).len() >= 2),
        "the first wave never started"
    );
    kill(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(pids_in(&pids).len(), 2, "r-4 was launched after the signal");
    let records = parse_stream(&stdout(&out));
    let statuses: Vec<(String, Status)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Vote(v) => Some((v.reviewer.clone(), v.status)),
            _ => None,
        })
        .collect();
    for who in ["r-2", "r-3", "r-4"] {
        assert!(
            statuses.contains(&(who.to_string(), Status::Interrupted)),
            "{who}: {statuses:?}"
        );
    }
    assert!(!err.contains("not needed"), "{err}");
    assert!(
        wait_until(Duration::from_secs(10), || marked(&mark).is_empty()),
        "a voter outlived the signal"
    );
}
