//! A tally as one JSON line, fast: `--each --json` over millions of records spends most of its
//! time here. `benches/tally.sh` shows what it saves over serde_json.

use crate::records::Verdict;
use crate::records::tally::{Counts, Tally};

// ---------------------------------------------------------------------------------------------
// Fast paths for streams of millions of records.

/// Writes a tally as one compact JSON line, byte for byte what serde_json writes for it (a
/// test holds the two together), but with the keys written whole instead of escaped byte by
/// byte: that escaping was the largest cost of `--each --json`.
pub fn tally_json(buf: &mut Vec<u8>, t: &Tally) {
    buf.extend_from_slice(b"{\"type\":");
    json_str(buf, t.kind);
    buf.extend_from_slice(b",\"candidate\":");
    json_str(buf, t.candidate);
    buf.extend_from_slice(b",\"outcome\":");
    json_str(buf, t.outcome.as_str());
    buf.extend_from_slice(b",\"passed\":");
    buf.extend_from_slice(if t.passed { b"true" } else { b"false" });
    buf.extend_from_slice(b",\"decided\":");
    buf.extend_from_slice(if t.decided { b"true" } else { b"false" });
    buf.extend_from_slice(b",\"threshold\":");
    json_uint(buf, t.threshold);
    buf.extend_from_slice(b",\"counts\":");
    counts_json(buf, &t.counts);
    buf.extend_from_slice(b",\"missing\":");
    json_uint(buf, t.missing);
    buf.extend_from_slice(b",\"judges\":[");
    for (i, j) in t.judges.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"judge\":");
        json_str(buf, j.judge);
        buf.extend_from_slice(b",\"lens\":");
        json_str(buf, j.lens);
        buf.extend_from_slice(b",\"seat\":");
        json_str(buf, j.seat);
        buf.extend_from_slice(b",\"family\":");
        json_opt_str(buf, j.family);
        buf.extend_from_slice(b",\"verdict\":");
        json_opt_str(buf, j.verdict.map(Verdict::as_str));
        buf.extend_from_slice(b",\"status\":");
        json_str(buf, j.status.as_str());
        buf.extend_from_slice(b",\"reason\":");
        json_opt_str(buf, j.reason);
        buf.extend_from_slice(b",\"confidence\":");
        match j.confidence {
            Some(c) => serde_json::to_writer(&mut *buf, &c).expect("a Vec takes any write"),
            None => buf.extend_from_slice(b"null"),
        }
        if let Some(said) = j.said.filter(|_| j.verdict.is_none()) {
            buf.extend_from_slice(b",\"said\":");
            json_str(buf, said);
        }
        buf.push(b'}');
    }
    for (key, groups) in [
        (&b"],\"byLens\":{"[..], &t.by_lens),
        (b"},\"byFamily\":{", &t.by_family),
    ] {
        buf.extend_from_slice(key);
        for (i, (name, c)) in groups.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            json_str(buf, name);
            buf.push(b':');
            counts_json(buf, c);
        }
    }
    buf.extend_from_slice(b"},\"abstentions\":[");
    for (i, a) in t.abstentions.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"judge\":");
        json_str(buf, a.judge);
        buf.extend_from_slice(b",\"status\":");
        json_str(buf, a.status.as_str());
        buf.extend_from_slice(b",\"cause\":");
        json_opt_str(buf, a.cause);
        buf.push(b'}');
    }
    buf.extend_from_slice(b"],\"runs\":");
    json_strs(buf, &t.runs);
    if let Some(u) = &t.usage {
        buf.extend_from_slice(b",\"usage\":");
        serde_json::to_writer(&mut *buf, u).expect("a Vec takes any write");
    }
    if !t.canaries.is_empty() {
        buf.extend_from_slice(b",\"canaries\":");
        serde_json::to_writer(&mut *buf, &t.canaries).expect("a Vec takes any write");
    }
    if !t.canary_missed.is_empty() {
        buf.extend_from_slice(b",\"canaryMissed\":");
        json_strs(buf, &t.canary_missed);
    }
    if !t.cancelled.is_empty() {
        buf.extend_from_slice(b",\"cancelled\":");
        json_strs(buf, &t.cancelled);
    }
    if let Some(early) = t.decided_early {
        buf.extend_from_slice(b",\"decidedEarly\":");
        buf.extend_from_slice(if early { b"true" } else { b"false" });
    }
    buf.extend_from_slice(b"}\n");
}

/// A list of strings.
fn json_strs(buf: &mut Vec<u8>, items: &[&str]) {
    buf.push(b'[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        json_str(buf, s);
    }
    buf.push(b']');
}

fn counts_json(buf: &mut Vec<u8>, c: &Counts) {
    buf.extend_from_slice(b"{\"judges\":");
    json_uint(buf, c.judges);
    buf.extend_from_slice(b",\"holds\":");
    json_uint(buf, c.holds);
    buf.extend_from_slice(b",\"breaks\":");
    json_uint(buf, c.breaks);
    buf.extend_from_slice(b",\"abstained\":");
    json_uint(buf, c.abstained);
    buf.push(b'}');
}

fn json_uint(buf: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// A JSON string: copied whole when nothing in it needs escaping (the usual case), else
/// escaped by serde_json.
fn json_str(buf: &mut Vec<u8>, s: &str) {
    let plain = s
        .bytes()
        .fold(true, |ok, b| ok & (b >= 0x20 && b != b'"' && b != b'\\'));
    if plain {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        serde_json::to_writer(&mut *buf, s).expect("a Vec takes any write");
    }
}

fn json_opt_str(buf: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => json_str(buf, s),
        None => buf.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Status, Usage, Verdict};
    use crate::tools::tally::count::tests::{at, ballot};
    use crate::tools::tally::count::{CanaryAnswer, PanelCount};

    #[test]
    fn hand_written_json_is_serde_jsons() {
        let seal = "sha256:aa\"bb";
        let mut p = PanelCount::new(seal);
        let mut b = ballot("j\n1", Some(Verdict::Breaks), Status::Ok);
        b.candidate = seal;
        b.judge.reason = Some("tab\there, “quoted” \\ and \u{1}");
        b.judge.confidence = Some(0.1 + 0.2);
        let usage = Usage {
            input_tokens: Some(12),
            cost_usd: Some(0.0021),
            ..Usage::default()
        };
        b.usage = Some(&usage);
        p.add(&b, &at).unwrap();
        let mut c = ballot("j2", None, Status::RateLimited);
        c.judge.family = None;
        c.judge.confidence = None;
        c.run = "/tmp/other";
        c.candidate = seal;
        p.add(&c, &at).unwrap();
        let mut d = ballot("j3", None, Status::Unreadable);
        d.judge.cause = None;
        d.run = "";
        d.candidate = seal;
        p.add(&d, &at).unwrap();
        let canaries = [
            CanaryAnswer::new(
                &ballot("canary-1", Some(Verdict::Holds), Status::Ok),
                Verdict::Holds,
            ),
            CanaryAnswer::new(
                &ballot("canary-2\"", None, Status::Timeout),
                Verdict::Breaks,
            ),
        ];
        for (agree, canaries, require) in [
            (None, &[][..], false),
            (Some(1), &[][..], false),
            (None, &canaries[..], false),
            (None, &canaries[..], true),
        ] {
            let t = p.close_with(agree, canaries, require).unwrap();
            let mut ours = Vec::new();
            tally_json(&mut ours, &t);
            let mut theirs = serde_json::to_vec(&t).unwrap();
            theirs.push(b'\n');
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs).unwrap()
            );
        }
        let mut q = PanelCount::new("sha256:aaaa");
        q.add(&ballot("x", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap();
        let t = q.close(None).unwrap();
        let mut ours = Vec::new();
        tally_json(&mut ours, &t);
        assert_eq!(
            ours,
            [serde_json::to_vec(&t).unwrap(), b"\n".to_vec()].concat()
        );
    }
}
