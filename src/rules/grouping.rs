//! Which findings name the same problem: the merge in code (docs/rules.md, "Merge"), conservative
//! by design, from two signals:
//! - place: the same quoted claim (a quote of three words or more, one containing the other),
//!   or the same file with lines at most [`NEAR_LINES`] apart;
//! - wording: the Dice overlap of the content words of the finding's own words (evidence
//!   outside its quoted claims) and its fix, leaving out the words of the claims themselves,
//!   at least [`SIMILAR`].
//!
//! Two findings merge when both signals agree (or, with no place known for either, when their
//! wording is nearly the same, [`NEAR_IDENTICAL`]). When only one signal says "same", they stay
//! apart and each is marked `possibleDuplicateOf` the other: a lost finding costs more than a
//! finding sent twice. Two findings of one reviewer never merge in code: the reviewer listed
//! them as two problems. A finding joins a group only when it matches every member. A group
//! becomes one finding with the strongest severity, every raiser credited in `raisedBy`.

use std::collections::{BTreeSet, HashMap};

use crate::records::review::{Finding, Severity, name_order};
use crate::records::synthesis::{Group, MergedFinding, SourceFinding};

/// Lines at most this far apart in one file are one place.
pub const NEAR_LINES: u64 = 3;
/// Word overlap (Dice) from which two findings are worded alike.
pub const SIMILAR: f64 = 0.4;
/// Word overlap from which two findings with no known place are taken as one.
pub const NEAR_IDENTICAL: f64 = 0.75;

/// Groups and the pairs of groups that may be one problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Grouping {
    pub groups: Vec<Group>,
    pub possible: Vec<(usize, usize)>,
}

/// Where two findings aim: at one place of the work, at two, or unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aim {
    Same,
    Different,
    Unknown,
}

/// Whether two findings name one problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Same,
    /// One signal says same, the other does not: kept apart, marked `possibleDuplicateOf`.
    Possible,
    Distinct,
}

const QUOTES: [(char, char); 4] = [('"', '"'), ('“', '”'), ('`', '`'), ('«', '»')];

/// Quoted spans of a text, with their byte ranges.
fn quoted(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut rest = 0;
    while rest < text.len() {
        let Some((start, open)) = text[rest..]
            .char_indices()
            .find(|(_, c)| QUOTES.iter().any(|(o, _)| o == c))
            .map(|(i, c)| (rest + i, c))
        else {
            break;
        };
        let close = QUOTES.iter().find(|(o, _)| *o == open).unwrap().1;
        let inner = start + open.len_utf8();
        match text[inner..].find(close) {
            Some(len) => {
                out.push((
                    start,
                    inner + len + close.len_utf8(),
                    &text[inner..inner + len],
                ));
                rest = inner + len + close.len_utf8();
            }
            None => break,
        }
    }
    out
}

fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_end_matches(['.', ',', ';', ':', '!', '?'])
        .to_string()
}

/// The claims a finding quotes: quoted spans of three words or more, normalised. Shorter
/// quotes are terms, part of the finding's own wording.
pub fn claims(evidence: &str) -> Vec<String> {
    quoted(evidence)
        .into_iter()
        .filter(|(_, _, q)| q.split_whitespace().count() >= 3)
        .map(|(_, _, q)| normalise(q))
        .collect()
}

/// The finding's own words: its evidence without the claims it quotes, and its fix.
fn own_words(f: &Finding) -> String {
    let mut text = String::new();
    let mut at = 0;
    for (start, end, q) in quoted(&f.evidence) {
        if q.split_whitespace().count() >= 3 {
            text.push_str(&f.evidence[at..start]);
            text.push(' ');
            at = end;
        }
    }
    text.push_str(&f.evidence[at..]);
    text.push(' ');
    text.push_str(&f.fix);
    text
}

const STOP: &[&str] = &[
    "the", "and", "for", "that", "this", "with", "are", "was", "were", "has", "have", "had", "not",
    "but", "its", "it's", "into", "from", "than", "then", "what", "when", "where", "which", "who",
    "why", "how", "each", "one", "any", "all", "can", "could", "would", "should", "will", "does",
    "did", "doe", "you", "your", "they", "their", "them", "there", "here", "about", "also", "only",
    "very", "more", "most", "some", "such", "just", "out", "own", "our", "too", "before", "after",
    "again", "being", "been", "is", "it", "of", "to", "a", "an", "in", "on", "or", "be", "as",
    "at", "by", "if", "so", "no", "do", "we", "he", "she", "his", "her", "line", "page", "says",
    "say", "said", "make", "use", "uses", "used",
];

fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.chars().count() >= 4
            && !word.ends_with("ss")
        {
            return stem.to_string();
        }
    }
    word.to_string()
}

/// The content words of a text: lower case, stemmed crudely, common words left out.
pub fn words(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3 && !STOP.contains(w))
        .map(stem)
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// How alike two findings are worded: the Dice overlap of their own words, 0 to 1. Words of
/// the claims either quotes are left out: they say where, not what is wrong there.
pub fn wording(a: &Finding, b: &Finding) -> f64 {
    let quoted: BTreeSet<String> = claims(&a.evidence)
        .iter()
        .chain(claims(&b.evidence).iter())
        .flat_map(|c| words(c))
        .collect();
    let own = |f: &Finding| -> BTreeSet<String> {
        words(&own_words(f))
            .into_iter()
            .filter(|w| !quoted.contains(w))
            .collect()
    };
    let (wa, wb) = (own(a), own(b));
    if wa.is_empty() || wb.is_empty() {
        return 0.0;
    }
    let shared = wa.intersection(&wb).count();
    2.0 * shared as f64 / (wa.len() + wb.len()) as f64
}

/// Whether two findings point at the same place of the work.
pub fn place(a: &Finding, b: &Finding) -> Aim {
    let (ca, cb) = (claims(&a.evidence), claims(&b.evidence));
    let shared = ca.iter().any(|x| {
        cb.iter()
            .any(|y| x.contains(y.as_str()) || y.contains(x.as_str()))
    });
    if shared {
        return Aim::Same;
    }
    if let (Some(fa), Some(fb)) = (&a.file, &b.file) {
        if fa != fb {
            return Aim::Different;
        }
        if let (Some(la), Some(lb)) = (a.line, b.line) {
            return if la.abs_diff(lb) <= NEAR_LINES {
                Aim::Same
            } else {
                Aim::Different
            };
        }
    }
    if !ca.is_empty() && !cb.is_empty() {
        return Aim::Different;
    }
    Aim::Unknown
}

/// Whether two findings of different reviewers name one problem.
pub fn relate(a: &Finding, b: &Finding) -> Relation {
    let w = wording(a, b);
    match place(a, b) {
        Aim::Same if w >= SIMILAR => Relation::Same,
        Aim::Same => Relation::Possible,
        Aim::Unknown if w >= NEAR_IDENTICAL => Relation::Same,
        _ if w >= SIMILAR => Relation::Possible,
        _ => Relation::Distinct,
    }
}

/// Groups findings in code (see the module's notes).
pub fn group_in_code(sources: &[SourceFinding]) -> Grouping {
    let n = sources.len();
    let mut rel = vec![vec![Relation::Distinct; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            if sources[i].reviewer != sources[j].reviewer {
                let r = relate(&sources[i].finding, &sources[j].finding);
                rel[i][j] = r;
                rel[j][i] = r;
            }
        }
    }
    let mut members: Vec<Vec<usize>> = Vec::new();
    for i in 0..n {
        let home = members.iter().position(|g| {
            g.iter().all(|&m| rel[i][m] == Relation::Same)
                && g.iter()
                    .all(|&m| sources[m].reviewer != sources[i].reviewer)
        });
        match home {
            Some(g) => members[g].push(i),
            None => members.push(vec![i]),
        }
    }
    let mut possible = Vec::new();
    for a in 0..members.len() {
        for b in a + 1..members.len() {
            let near = members[a]
                .iter()
                .any(|&x| members[b].iter().any(|&y| rel[x][y] != Relation::Distinct));
            if near {
                possible.push((a, b));
            }
        }
    }
    let groups = members
        .into_iter()
        .map(|m| Group {
            evidence: clearest_evidence(sources, &m),
            fix: clearest_fix(sources, &m),
            members: m,
        })
        .collect();
    Grouping { groups, possible }
}

/// Code cannot judge clarity; it prefers evidence that points at the work (a quoted claim, or a
/// file and line), then the first raiser's.
fn clearest_evidence(sources: &[SourceFinding], members: &[usize]) -> usize {
    let located = |i: &usize| {
        let f = &sources[*i].finding;
        !claims(&f.evidence).is_empty() || (f.file.is_some() && f.line.is_some())
    };
    members.iter().copied().find(located).unwrap_or(members[0])
}

/// The fix that says most (the most content words), the first on a tie.
fn clearest_fix(sources: &[SourceFinding], members: &[usize]) -> usize {
    let mut best = members[0];
    let mut most = words(&sources[best].finding.fix).len();
    for &m in &members[1..] {
        let n = words(&sources[m].finding.fix).len();
        if n > most {
            best = m;
            most = n;
        }
    }
    best
}

/// Turns groups into merged findings, numbered in the order of their first source.
pub fn build(sources: &[SourceFinding], grouping: &Grouping) -> Vec<MergedFinding> {
    let mut order: Vec<usize> = (0..grouping.groups.len()).collect();
    order.sort_by_key(|&g| grouping.groups[g].members.iter().min().copied());
    let id_of: HashMap<usize, String> = order
        .iter()
        .enumerate()
        .map(|(k, &g)| (g, format!("F{}", k + 1)))
        .collect();
    order
        .iter()
        .map(|&g| {
            let group = &grouping.groups[g];
            let mut members = group.members.clone();
            members.sort_unstable();
            let mut raised_by: Vec<String> = Vec::new();
            for &m in &members {
                if !raised_by.contains(&sources[m].reviewer) {
                    raised_by.push(sources[m].reviewer.clone());
                }
            }
            raised_by.sort_by(|a, b| name_order(a, b));
            let ev = &sources[group.evidence].finding;
            let mut possible: Vec<String> = grouping
                .possible
                .iter()
                .filter_map(|&(a, b)| match (a == g, b == g) {
                    (true, _) => Some(id_of[&b].clone()),
                    (_, true) => Some(id_of[&a].clone()),
                    _ => None,
                })
                .collect();
            possible.sort_by(|a, b| name_order(a, b));
            MergedFinding {
                id: id_of[&g].clone(),
                severity: members
                    .iter()
                    .map(|&m| sources[m].finding.severity)
                    .max()
                    .unwrap_or(Severity::NiceToHave),
                evidence: ev.evidence.clone(),
                fix: sources[group.fix].finding.fix.clone(),
                file: ev.file.clone(),
                line: ev.line,
                raised_by,
                sources: members
                    .iter()
                    .map(|&m| sources[m].finding.id.clone())
                    .collect(),
                possible_duplicate_of: possible,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(evidence: &str, fix: &str) -> Finding {
        Finding {
            id: String::new(),
            severity: Severity::ShouldFix,
            evidence: evidence.into(),
            fix: fix.into(),
            file: None,
            line: None,
        }
    }

    #[test]
    fn claims_are_quotes_of_three_words_or_more() {
        assert_eq!(
            claims("\"The client retries Three times.\" uses \"backoff\" and “a b c”"),
            ["the client retries three times", "a b c"]
        );
    }

    #[test]
    fn same_claim_and_alike_wording_is_one_problem() {
        let a = finding(
            "\"The client uses exponential backoff between attempts.\" The reader has not met \"exponential backoff\".",
            "Say what exponential backoff means where the term first appears.",
        );
        let b = finding(
            "\"The client uses exponential backoff.\" The term \"backoff\" is never explained to the reader.",
            "Explain exponential backoff where the term first appears: each wait is longer.",
        );
        assert_eq!(place(&a, &b), Aim::Same);
        assert_eq!(relate(&a, &b), Relation::Same);
    }

    #[test]
    fn same_claim_different_problem_stays_apart_as_a_possible_duplicate() {
        let a = finding(
            "\"Set max_retries to the number of extra attempts you want.\" could be shorter.",
            "Write \"max_retries: extra attempts after the first.\"",
        );
        let b = finding(
            "\"Set max_retries to the number of extra attempts you want.\" is wrong: the client counts the first call as an attempt too.",
            "Say that max_retries counts every call, including the first.",
        );
        assert_eq!(place(&a, &b), Aim::Same);
        assert_eq!(relate(&a, &b), Relation::Possible);
    }

    #[test]
    fn nearby_lines_are_one_place_far_ones_are_not() {
        let mut a = finding("the loop never ends when n is 0", "stop at 0");
        let mut b = finding("when n is 0 the loop never ends", "return early at 0");
        (a.file, a.line) = (Some("src/a.rs".into()), Some(10));
        (b.file, b.line) = (Some("src/a.rs".into()), Some(13));
        assert_eq!(place(&a, &b), Aim::Same);
        assert_eq!(relate(&a, &b), Relation::Same);
        b.line = Some(40);
        assert_eq!(place(&a, &b), Aim::Different);
        assert_eq!(relate(&a, &b), Relation::Possible);
        b.file = Some("src/b.rs".into());
        assert_eq!(place(&a, &b), Aim::Different);
    }

    #[test]
    fn unrelated_findings_are_distinct() {
        let a = finding(
            "The page never says what happens when every retry fails.",
            "Add a sentence on the last failure.",
        );
        let b = finding(
            "Add a table of every client setting.",
            "List timeout, max_retries and proxy in a table.",
        );
        assert_eq!(relate(&a, &b), Relation::Distinct);
    }
}
