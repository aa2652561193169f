//! Reading an attempt's answer and saying how it ended: the answer that meets the contract, or
//! why there is none, in the harness's own words where it has some (a usage limit, a rate
//! limit, a failure), else from the exit status. A valid answer counts whatever the exit status;
//! exit 0 proves nothing without one.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::engine::call::ask::{Check, Done, Job, Role};
use crate::engine::call::extract::{self, Found};
use crate::engine::call::launch::ProcessOutcome;
use crate::engine::call::transcript::shown_size;
use crate::engine::harness::Harness;
use crate::records::{Status, Usage};

pub const INTERRUPTED: &str = "stopped by a signal before it answered";

/// Reads an attempt's answer and says how it ended. A valid answer counts whatever the exit
/// status; exit 0 proves nothing without one.
pub fn read_answer(
    job: &Job,
    o: &ProcessOutcome,
    answer_file: Option<&str>,
    check: &Check,
    timeout: Duration,
) -> Done {
    // All of it when it fit in memory; else its tail, its events read as they came.
    let whole = o.stdout.whole();
    let events = o.stdout.events();
    let stdout = o.stdout.text();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let mut done = Done {
        answer: None,
        status: Status::Unreadable,
        cause: None,
        excerpt: None,
        attempts: 1,
        duration: o.duration,
        exit_code: o.exit_code(),
        usage: match whole {
            true => job.seat.usage.as_ref().and_then(|f| usage_of(f, &stdout)),
            false => events.usage.clone(),
        },
        tool_calls: None,
        refused: None,
        session: None,
        kept: None,
        settled: false,
        live: o.live.clone(),
    };
    if let Some(tier) = o.tier {
        done.usage.get_or_insert_with(Default::default).tier = Some(tier);
    }
    if let Some((status, cause)) = cut_off(o, timeout) {
        done.status = status;
        done.cause = Some(cause);
        done.excerpt = nonempty_excerpt(&o.stdout.head());
        return done;
    }
    let reviewer = matches!(job.role, Role::Reviewer { .. });
    if reviewer {
        done.session = session_of(job, &stdout);
        done.tool_calls = tool_calls_of(job, o, &stdout);
    }
    let found = find_answer(job, o, answer_file, check, &stdout);
    // Cut short, only a sealed answer that meets its contract proves it was whole; a reviewer's
    // text (any text passes its check) may be a first message.
    let cut_short = o.interrupted || o.cancelled.is_some();
    let why = match &found {
        Found::Object(obj) if !(cut_short && reviewer) => match check(obj) {
            Ok(()) => {
                done.answer = Some(obj.clone());
                done.status = Status::Ok;
                return done;
            }
            Err(why) => {
                done.refused = Some(obj.clone());
                why
            }
        },
        Found::Object(_) => INTERRUPTED.to_string(),
        Found::Text(t) if t.trim().is_empty() => "no answer".to_string(),
        Found::Text(_) => "no JSON object in the answer".to_string(),
        Found::Conflict(n) => format!("{n} answers in the reply that disagree"),
    };
    if o.interrupted {
        done.status = Status::Interrupted;
        done.cause = Some(INTERRUPTED.into());
        return done;
    }
    if let Some(why) = &o.cancelled {
        done.status = Status::Cancelled;
        done.cause = Some(why.clone());
        return done;
    }
    let head = o.stdout.head();
    done.excerpt = nonempty_excerpt(match &found {
        Found::Text(t) => t,
        Found::Object(_) | Found::Conflict(_) => &head,
    });
    let (status, cause) = no_answer(job, o, &found, why, &stdout, &stderr);
    done.status = status;
    done.cause = Some(cause);
    done
}

/// An attempt stopped before it could end by itself: past `--max-output`, or at the deadline.
fn cut_off(o: &ProcessOutcome, timeout: Duration) -> Option<(Status, String)> {
    if o.stdout.over {
        return Some((
            Status::OutputLimit,
            format!(
                "its output passed --max-output {} ({} read); its process group was stopped",
                shown_size(o.stdout.budget()),
                shown_size(o.stdout.bytes)
            ),
        ));
    }
    o.timed_out.then(|| {
        (
            Status::Timeout,
            format!(
                "no answer within {}s; its process group was killed",
                timeout.as_secs_f64()
            ),
        )
    })
}

/// A reviewer's session, to correct it in: from what is held, the whole output or past 16 MiB
/// its tail (a harness that names its session only at the start then gets a fresh correction).
fn session_of(job: &Job, stdout: &str) -> Option<String> {
    let f = job.seat.session.as_ref()?;
    let last = f.last_output(stdout, |_| true)?;
    let id = last.as_str()?.to_string();
    crate::engine::call::ask::usable_session_id(&id).then_some(id)
}

/// The tools a reviewer called, where its harness reports them: from the events read as they
/// came when the output was too large to hold.
fn tool_calls_of(job: &Job, o: &ProcessOutcome, stdout: &str) -> Option<Vec<String>> {
    let f = job.seat.tool_calls.as_ref()?;
    if !o.stdout.whole() {
        return Some(o.stdout.events().tool_calls.clone());
    }
    Some(
        f.run_text(stdout)
            .unwrap_or_default()
            .into_iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect(),
    )
}

/// The answer in the answer file (when the harness wrote one) or the output: a sealed judge's
/// object that meets the contract, a reviewer's last message as its text.
fn find_answer(
    job: &Job,
    o: &ProcessOutcome,
    answer_file: Option<&str>,
    check: &Check,
    stdout: &str,
) -> Found {
    let whole = o.stdout.whole();
    let events = o.stdout.events();
    let file = answer_file.filter(|t| !t.trim().is_empty());
    match job.role {
        Role::Reviewer { .. } => {
            let text = match file {
                Some(text) => text.to_string(),
                None if whole => last_message(job.seat.reviewer_filter.as_deref(), stdout),
                None => match events.last_answer() {
                    Some(Value::String(s)) => s,
                    _ => stdout.trim_end().to_string(),
                },
            };
            let mut obj = Map::new();
            obj.insert("text".into(), Value::String(text.clone()));
            match check(&obj) {
                // A contract of an object (a voter that reads): the one in the text.
                Err(_) => extract::answer(None, &text, &|o| check(o).is_ok()),
                Ok(()) => Found::Object(obj),
            }
        }
        Role::Sealed => {
            let meets = |obj: &Map<String, Value>| check(obj).is_ok();
            match file {
                Some(text) => extract::answer(None, text, &meets),
                None if whole => extract::answer(job.seat.filter.as_deref(), stdout, &meets),
                None => extract::answer_after(events.last_answer(), stdout, &meets),
            }
        }
    }
}

/// Why an attempt that ended by itself has no answer: the harness's own words where it has
/// some, else its signal or exit status, else `why` the answer was not read.
fn no_answer(
    job: &Job,
    o: &ProcessOutcome,
    found: &Found,
    why: String,
    stdout: &str,
    stderr: &str,
) -> (Status, String) {
    let exe = &job.seat.harness.executable;
    // Past what is held whole, a harness's words are looked for in its head and its tail.
    let searched = match o.stdout.whole() {
        true => stdout.to_string(),
        false => o.stdout.searchable(),
    };
    // The words are looked for in what the filter read (claude's `.result`) before raw stdout.
    let said = match found {
        Found::Text(t) => failure_words(&job.seat.harness, t, stderr),
        Found::Object(_) | Found::Conflict(_) => None,
    };
    if let Some(words) = said.or_else(|| failure_words(&job.seat.harness, &searched, stderr)) {
        return words;
    }
    if let Some(sig) = o.signal() {
        return (Status::Failed, format!("{exe} was killed by signal {sig}"));
    }
    let Some(code) = o.exit_code().filter(|c| *c != 0) else {
        return (Status::Unreadable, why);
    };
    let status = match code {
        127 => Status::NotFound,
        _ => Status::Failed,
    };
    // The CLI's own words: what its filter read (claude's `.result`), its stderr, its stdout.
    let filtered = match found {
        Found::Text(t) if job.seat.filter.is_some() => own_words(t),
        _ => None,
    };
    let said = filtered
        .or_else(|| own_words(stderr))
        .or_else(|| own_words(stdout))
        .unwrap_or_default();
    let cause = format!("{exe} exited {code}: {why}; {said}");
    (status, cause.trim_end_matches("; ").to_string())
}

/// A reviewer's reply: the last message its filter yields, or all of stdout without one.
fn last_message(filter: Option<&extract::Filter>, stdout: &str) -> String {
    let last = filter
        .and_then(|f| f.last_output(stdout, Value::is_string))
        .and_then(|v| v.as_str().map(String::from));
    last.unwrap_or_else(|| stdout.trim_end().to_string())
}

fn nonempty_excerpt(text: &str) -> Option<String> {
    let e = extract::excerpt(text, 300);
    (!e.is_empty()).then_some(e)
}

/// What a CLI said in `text`, in its own words: the message of the JSON it printed (an
/// error's, a result's), else its last line with a letter or a digit in it (not a `}`).
fn own_words(text: &str) -> Option<String> {
    let text = text.trim();
    let message_of = |v: Value| {
        ["/error/message", "/message", "/result", "/error", "/detail"]
            .iter()
            .find_map(|p| v.pointer(p).and_then(Value::as_str).map(str::to_string))
            .filter(|m| !m.trim().is_empty())
    };
    // The whole text as one JSON value (pretty-printed), else its last line that is a JSON
    // object with a message (an event stream).
    let message = match serde_json::from_str::<Value>(text) {
        Ok(v) => message_of(v),
        Err(_) => text.lines().rev().find_map(|l| {
            let v = serde_json::from_str::<Value>(l.trim()).ok()?;
            v.is_object().then(|| message_of(v)).flatten()
        }),
    };
    let line = || {
        let mut lines = text.lines().rev().map(str::trim);
        lines
            .find(|l| l.chars().any(char::is_alphanumeric))
            .map(str::to_string)
    };
    message
        .or_else(line)
        .map(|m| extract::excerpt(&crate::records::printable::one_line(&m), 200))
}

fn usage_of(filter: &extract::Filter, stdout: &str) -> Option<Usage> {
    let outputs = filter.run_text(stdout)?;
    let mut total: Option<Usage> = None;
    for v in outputs {
        if let Ok(u) = crate::records::strict::from_value::<Usage>(v)
            && !u.is_empty()
        {
            total.get_or_insert_with(Usage::default).add(&u);
        }
    }
    total
}

/// How a harness's failure becomes a status: the first of its row's `errors` rules (its own
/// words for a usage limit, a rate limit, a failure) found in stdout or stderr, with the line
/// that holds it. `None` when no rule matches.
pub fn failure_words(harness: &Harness, stdout: &str, stderr: &str) -> Option<(Status, String)> {
    let out = stdout.to_lowercase();
    let err = stderr.to_lowercase();
    for rule in &harness.errors {
        for m in &rule.matches {
            let needle = m.to_lowercase();
            for (text, original) in [(&out, stdout), (&err, stderr)] {
                if let Some(at) = text.find(&needle) {
                    return Some((rule.status, line_around(original, at)));
                }
            }
        }
    }
    None
}

/// The line of `text` that holds byte `at` (of its lowercase form, which has the same length
/// for the ASCII words we match), trimmed to one short line.
fn line_around(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let start = text[..text.floor_char_boundary(at)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    crate::engine::call::extract::excerpt(&text[start..end], 200)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::{Seat, Table};
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn cut_short(stdout: &str) -> ProcessOutcome {
        ProcessOutcome {
            status: None,
            timed_out: false,
            interrupted: true,
            cancelled: None,
            stdout: crate::engine::call::transcript::Transcript::of(stdout.as_bytes()),
            stderr: Vec::new(),
            stderr_bytes: 0,
            duration: Duration::ZERO,
            refused: Vec::new(),
            share: Default::default(),
            answer_bytes: None,
            live: None,
            tier: None,
        }
    }

    /// A job in reviewer mode on an `exec:` seat, its checkout nowhere.
    fn reviewer_job(name: &str) -> Job {
        let table = Table::builtin();
        let seat = Seat::parse("exec:true", &table, &BTreeMap::new()).unwrap();
        let mut job = Job::sealed(
            name,
            seat,
            crate::engine::call::ask::Prompt::text("p".into()),
            Value::Null,
        );
        job.role = Role::Reviewer {
            checkout: PathBuf::from("/nonexistent"),
            session: Default::default(),
        };
        job
    }

    /// A seat that reads (a voter with read tools) answers in its last message's text: for a
    /// contract of an object, the object in that text that meets it is the answer.
    #[test]
    fn a_reading_seats_answer_is_the_object_in_its_text() {
        let job = reviewer_job("v");
        let votes: &Check = &|obj| match obj.get("votes") {
            Some(Value::Array(_)) => Ok(()),
            _ => Err("no list of votes".into()),
        };
        let said = "I read page.md.\n{\"votes\": [{\"finding\": \"F1\", \"vote\": \"agree\"}]}";
        let mut whole = cut_short(said);
        whole.interrupted = false;
        whole.status = Some(std::os::unix::process::ExitStatusExt::from_raw(0));
        let done = read_answer(&job, &whole, None, votes, Duration::ZERO);
        assert_eq!(done.status, Status::Ok, "{done:?}");
        assert_eq!(done.answer.unwrap()["votes"][0]["vote"], "agree");
        let done = read_answer(&job, &whole, Some("no object here"), votes, Duration::ZERO);
        assert_eq!(done.status, Status::Unreadable, "{done:?}");
    }

    #[test]
    fn a_cut_short_reviewer_is_interrupted_whatever_it_said_first() {
        let any_text: &Check = &|_| Ok(());
        let mut job = reviewer_job("r");
        let first_message = "Let me read src/lib.rs first.";
        let done = read_answer(
            &job,
            &cut_short(first_message),
            None,
            any_text,
            Duration::ZERO,
        );
        assert_eq!(done.status, Status::Interrupted);
        // A sealed judge's answer that meets its contract was whole, cut short or not.
        job.role = Role::Sealed;
        let verdict = r#"{"verdict":"holds","reason":"r","confidence":0.5}"#;
        let check: &Check =
            &crate::engine::call::ask::gate_of(&crate::contracts::verdict::VerdictContract);
        let done = read_answer(&job, &cut_short(verdict), None, check, Duration::ZERO);
        assert_eq!(done.status, Status::Ok);
        let done = read_answer(&job, &cut_short("half an ans"), None, check, Duration::ZERO);
        assert_eq!(done.status, Status::Interrupted);
    }

    /// Issue 45: claude's `"result":"Not logged in · Please run /login"` was "cut off inside
    /// `no JSON object in the answer; {"duration_api_ms":0,…`"; gemini's words were "only in its
    /// stderr file (`gemini exited 41: no answer; }`)". A cause quotes the CLI's own words.
    #[test]
    fn a_cause_quotes_the_clis_own_words() {
        let claude = r#"{"duration_api_ms":0,"is_error":true,"result":"Not logged in · Please run /login","type":"result"}"#;
        assert_eq!(
            own_words(claude).as_deref(),
            Some("Not logged in · Please run /login")
        );
        let gemini = "{\n  \"session_id\": \"2e\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"Please set an Auth method or GEMINI_API_KEY\",\n    \"code\": 41\n  }\n}\n";
        assert_eq!(
            own_words(gemini).as_deref(),
            Some("Please set an Auth method or GEMINI_API_KEY")
        );
        assert_eq!(own_words("warning: x\nboom\n}\n").as_deref(), Some("boom"));
        let events = "{\"type\":\"error\",\"message\":\"quota\"}\n{\"type\":\"turn.failed\"}\n";
        assert_eq!(own_words(events).as_deref(), Some("quota"));
        assert_eq!(own_words(" \n}\n"), None);
    }

    #[test]
    fn error_words_map_to_statuses() {
        let claude = Table::builtin().get("claude").unwrap().clone();
        let (status, line) =
            failure_words(&claude, "Claude AI usage limit reached|1767225600\n", "").unwrap();
        assert_eq!(status, Status::UsageLimit);
        assert_eq!(line, "Claude AI usage limit reached|1767225600");
        let (status, _) = failure_words(
            &claude,
            "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}",
            "",
        )
        .unwrap();
        assert_eq!(status, Status::RateLimited);
        assert_eq!(failure_words(&claude, "{\"verdict\":\"holds\"}", ""), None);
    }

    /// Issue 47: a usage filter (a user's harness row) may give a cost that is no number a
    /// budget can add: NaN and infinity never reach a record as numbers, a negative one is
    /// kept as said for the budget's rule to refuse (`budget::actual`).
    #[test]
    fn a_usage_filters_cost_is_never_a_non_finite_number() {
        for (code, want) in [
            ("{inputTokens: 1, costUsd: nan}", None),
            ("{inputTokens: 1, costUsd: (1e308 * 10)}", None),
            ("{inputTokens: 1, costUsd: -(1e308 * 10)}", None),
            ("{inputTokens: 1, costUsd: -1}", Some(-1.0)),
            ("{inputTokens: 1, costUsd: 1e308}", Some(1e308)),
        ] {
            let f = extract::Filter::compile(code).unwrap();
            let u = usage_of(&f, "{}");
            let cost = u.as_ref().and_then(|u| u.cost_usd);
            assert!(cost.is_none_or(f64::is_finite), "{code}: {u:?}");
            if let Some(w) = want {
                assert_eq!(cost, Some(w), "{code}: {u:?}");
            }
        }
    }
}
