//! What each real CLI sends before its judge says anything (issue 37): one judge on the seed's
//! example (its first lens on its function with the bug) through each built-in row, per kind of
//! login (an API key, and a subscription login where its users have one: tests/real_logins
//! makes them), against the stand-in model server. Each test prints one `OVERHEAD` row per
//! login: the bytes of the first model request that carries the judge's prompt, its tokens
//! estimated as bytes / 4, the number of model requests, and the ratio to the floor: the same
//! prompt and schema sent as a bare call of the API the CLI speaks ([`floor`]).
//!
//! Each run must come back a verdict with no tool offered but the schema tool (what the CLI
//! cannot drop, as real_judge holds it), and its first request may not grow past the row's
//! recorded `overhead` (the row data `panel-judge --list-harnesses` prints) by more than 10%,
//! nor make more requests. `benches/overhead.sh` runs these tests and prints the table.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::mockserver::{Api, Logged};
use crate::real_cli::real_cli;
use crate::real_logins::{Walls, World, case, panel_judge};
use crate::util::bin;

/// The seed's example: "a function with a real bug: it says that it returns None if the input
/// is empty, but actually throws an error" (seed 001), judged through its first lens.
const WORK: &str =
    "def first(xs):\n    \"\"\"Return xs[0], or None when xs is empty.\"\"\"\n    return xs[0]\n";
const LENS: &str =
    "correctness=Does it do what it claims to do? Wrong logic only — not style, not naming.";

/// Issue 47's measure: the example, and then more of the same module, to 3 KB at least; the
/// goals (1.5x the floor) are at this size.
fn work_3k() -> String {
    let mut w = WORK.to_string();
    for i in 1.. {
        if w.len() >= 3072 {
            break;
        }
        w.push_str(&format!(
            "\n\ndef last_{i}(xs):\n    \"\"\"Return the last {i} items of xs, oldest first.\"\"\"\n    return xs[-{i}:]\n"
        ));
    }
    w
}

/// Growth past the recorded overhead that fails the test.
const SLACK: f64 = 1.10;

/// One login's measure.
struct Measure {
    cli: &'static str,
    kind: &'static str,
    login: &'static str,
    bytes: usize,
    requests: usize,
    floor: usize,
    /// The tools offered beyond those the row allows, per request.
    extra: Vec<String>,
    /// The first request and the floor with a 3 KB candidate.
    at_3k: (usize, usize),
}

impl Measure {
    fn row(&self) -> String {
        format!(
            "OVERHEAD {:9} {:14} {:12} {:>7} B {:>6} tok {:>2} req  floor {:>5} B  x{:.2}  3KB {:>6} B floor {:>5} B x{:.2}",
            self.cli,
            self.kind,
            self.login,
            self.bytes,
            self.bytes / 4,
            self.requests,
            self.floor,
            self.bytes as f64 / self.floor as f64,
            self.at_3k.0,
            self.at_3k.1,
            self.at_3k.0 as f64 / self.at_3k.1 as f64
        ) + &match self.extra.first() {
            Some(t) => format!("  tools {t}"),
            None => String::new(),
        }
    }
}

/// The body a bare call of `api` makes with this prompt and schema: the request's own model,
/// the prompt as the one user message, the schema as the one forced tool (Messages) or as the
/// response format (Responses, Chat Completions, Gemini); no system prompt, no other field.
pub(crate) fn floor(api: Api, model: &str, prompt: &str, schema: &Value) -> usize {
    let body = match api {
        Api::Anthropic => json!({
            "model": model, "max_tokens": 1024,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [{"name": "verdict", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": "verdict"}
        }),
        Api::Responses => json!({
            "model": model, "input": prompt,
            "text": {"format": {"type": "json_schema", "name": "verdict", "schema": schema, "strict": true}}
        }),
        Api::Gemini => json!({
            "contents": [{"role": "user", "parts": [{"text": prompt}]}],
            "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema}
        }),
        _ => json!({
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema, "strict": true}}
        }),
    };
    serde_json::to_vec(&body).unwrap().len()
}

/// The logins measured per row: (row, the login's name in tests/real_logins, what it is).
const LOGINS: &[(&str, &str, &str)] = &[
    ("claude", "api-key", "api-key"),
    ("claude", "pro-max", "subscription"),
    ("codex", "codex-api-key", "api-key"),
    ("codex", "chatgpt", "subscription"),
    ("copilot", "env-token", "subscription"),
    ("gemini", "api-key", "api-key"),
    ("gemini", "google", "subscription"),
    ("kimi", "config-key", "api-key"),
    ("kimi", "kimi-code", "subscription"),
    ("opencode", "gemini-key", "api-key"),
    ("opencode", "chatgpt", "subscription"),
    ("qwen", "api-key", "api-key"),
    ("qwen", "coding-plan", "subscription"),
];

/// One judge on the seed's example, and one on a 3 KB candidate, through `cli` with the login
/// `kind`.
fn measure(cli: &'static str, kind: &'static str, login: &'static str, bindir: &Path) -> Measure {
    let m = measure_on(WORK, cli, kind, login, bindir);
    let big = measure_on(&work_3k(), cli, kind, login, bindir);
    Measure {
        at_3k: (big.bytes, big.floor),
        ..m
    }
}

/// One judge on `work` through `cli` with the login `kind`.
fn measure_on(
    work: &str,
    cli: &'static str,
    kind: &'static str,
    login: &'static str,
    bindir: &Path,
) -> Measure {
    let c = case(cli, kind);
    let _slot = crate::real_judge::Slot::take();
    let mut w = World::new(&format!("overhead-{cli}-{kind}-{}", work.len()), bindir);
    std::fs::write(&w.candidate, work).unwrap();
    (c.user)(&mut w, false);
    let out = panel_judge(&w, c, Walls::Off, &[LENS], &w.run)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let record: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{cli} {kind}: {e}: {stdout}{stderr}"));
    assert_eq!(record["status"], "ok", "{cli} {kind}: {record}\n{stderr}");
    assert_eq!(record["verdict"], "breaks", "{cli} {kind}: {record}");
    let dir = w.run.join(record["judge"].as_str().unwrap());
    let prompt = std::fs::read_to_string(dir.join("prompt.txt")).unwrap();
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("schema.json")).unwrap()).unwrap();
    let requests = w.server.generations();
    let allowed = crate::real_judge::case(cli).tools;
    let extra = requests
        .iter()
        .filter(|q| q.tools.iter().any(|t| !allowed.contains(&t.as_str())))
        .map(|q| q.tools.join(","))
        .collect();
    let head = prompt.lines().next().unwrap_or_default();
    let first: &Logged = requests
        .iter()
        .find(|q| q.prompt_containing(head).is_some())
        .unwrap_or_else(|| panic!("{cli} {kind}: no request carries the prompt"));
    // `OVERHEAD_DUMP=DIR` keeps the first request's body, to read what the CLI adds.
    if let Some(d) = std::env::var_os("OVERHEAD_DUMP") {
        let body = serde_json::to_string_pretty(&first.body).unwrap();
        std::fs::write(Path::new(&d).join(format!("{cli}-{kind}.json")), body).unwrap();
    }
    let model = first.body["model"].as_str().unwrap_or("model");
    Measure {
        cli,
        kind,
        login,
        bytes: first.body_bytes,
        requests: requests.len(),
        floor: floor(first.api, model, prompt.trim_end(), &schema),
        extra,
        at_3k: (0, 1),
    }
}

/// The rows' recorded overheads, as `panel-judge --list-harnesses` prints them.
fn recorded(cli: &str) -> Option<(usize, usize)> {
    let out = std::process::Command::new(bin("panel-judge"))
        .args(["--list-harnesses", "--json"])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = rows.as_array()?.iter().find(|r| r["name"] == cli)?;
    let o = &row["overhead"];
    Some((
        o["requestBytes"].as_u64()? as usize,
        o["requests"].as_u64()? as usize,
    ))
}

/// Measures every login of `cli`, prints the rows, and holds each to the row's overhead.
fn check(cli: &'static str) {
    let Some(exe) = real_cli(cli) else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let measures: Vec<Measure> = std::thread::scope(|sc| {
        let runs: Vec<_> = LOGINS
            .iter()
            .filter(|(c, ..)| *c == cli)
            .map(|&(c, kind, login)| {
                let bindir = &bindir;
                sc.spawn(move || measure(c, kind, login, bindir))
            })
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut table = String::new();
    for m in &measures {
        table.push_str(&m.row());
        table.push('\n');
    }
    eprint!("{table}");
    let (bytes, requests) =
        recorded(cli).unwrap_or_else(|| panic!("{cli}: the row records no overhead"));
    for m in &measures {
        let allowed = crate::real_judge::case(cli).tools;
        assert!(
            m.extra.is_empty(),
            "{cli} {}: tools offered to the model beyond {allowed:?}: {:?}",
            m.kind,
            m.extra
        );
        assert!(
            m.bytes as f64 <= bytes as f64 * SLACK && m.requests <= requests,
            "{cli} {}: the first request grew past the row's overhead ({bytes} B, {requests} \
             requests) by more than 10%",
            m.kind
        );
    }
}

/// The seed's three lenses (tests/fixtures/seed-judge-panel.sh), as `--lens NAME=QUESTION`.
const SEED_LENSES: [&str; 3] = [
    LENS,
    "edges=What input breaks it? Empty, null, zero, duplicate, huge, concurrent. Name the input.",
    "evidence=Is every claim in the answer supported by what is in the answer? Flag anything asserted without support.",
];

/// The seed script's schema, as it passes it.
pub(crate) const SEED_SCHEMA: &str = r#"{"type":"object","properties":{
"verdict":{"type":"string","enum":["holds","breaks"]},
"reason":{"type":"string"},
"confidence":{"type":"number"}},
"required":["verdict","reason","confidence"],"additionalProperties":false}"#;

/// The seed script's prompt for one lens's question and a candidate.
pub(crate) fn seed_prompt(question: &str, work: &str) -> String {
    format!(
        "You are one judge on a panel. You judge alone and you never see the other judges' verdicts.\n\
         Judge through this lens only: {question}\n\
         Judge the text below and nothing else. Do not open files, do not run anything. If the lens\n\
         you were given finds nothing wrong, say it holds — a judge that never says 'holds' is worthless.\n\
         --- ANSWER UNDER REVIEW ---\n{}",
        work.trim_end()
    )
}

/// Request tokens (bytes / 4) over every model request the stand-in saw.
fn tokens(w: &World) -> usize {
    w.server
        .generations()
        .iter()
        .map(|q| q.body_bytes)
        .sum::<usize>()
        / 4
}

/// Issue 37: "the seed's three-judge panel through claude on Haiku costs at most a fifth of
/// what the seed script's argv costs, measured in request tokens against the stand-in server,
/// with a subscription login". The seed's argv is run as its script runs it, one `claude -p`
/// per lens in the user's own HOME and folder; ours is one `panel-judge` with the same lenses.
#[test]
#[ignore = "issue 37's goal not reached: x3.1, not x5 (claude adds its environment block with a subscription login)"]
fn seed_ceiling() {
    let Some(exe) = real_cli("claude") else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let c = case("claude", "pro-max");
    let world = |tag: &str| {
        let mut w = World::new(tag, &bindir);
        std::fs::write(&w.candidate, WORK).unwrap();
        (c.user)(&mut w, false);
        w
    };
    let (seed, ours) = std::thread::scope(|sc| {
        let seed = sc.spawn(|| {
            let _slot = crate::real_judge::Slot::take();
            let w = world("ceiling-seed");
            for lens in SEED_LENSES {
                let question = lens.split_once('=').unwrap().1;
                let out = w
                    .command(&exe)
                    .args(["-p", &seed_prompt(question, WORK), "--model", "haiku"])
                    .args(["--json-schema", SEED_SCHEMA, "--tools", ""])
                    .arg("--no-session-persistence")
                    .current_dir(&w.scratch)
                    .output()
                    .unwrap();
                let said = String::from_utf8_lossy(&out.stdout);
                assert!(said.contains("\"verdict\""), "the seed's claude: {said}");
            }
            tokens(&w)
        });
        let ours = sc.spawn(|| {
            let _slot = crate::real_judge::Slot::take();
            let w = world("ceiling-ours");
            let out = panel_judge(&w, c, Walls::Off, &SEED_LENSES, &w.run)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let ok = stdout
                .lines()
                .filter(|l| l.contains(r#""status":"ok""#))
                .count();
            assert_eq!(ok, 3, "panel-judge: {stdout}");
            tokens(&w)
        });
        (seed.join().unwrap(), ours.join().unwrap())
    });
    eprintln!(
        "CEILING claude pro-max, the seed's 3 judges on haiku: seed's argv {seed} tok, \
         panel-judge {ours} tok (x{:.2} less)",
        seed as f64 / ours as f64
    );
    assert!(
        ours * 5 <= seed,
        "panel-judge's panel costs {ours} request tokens, more than a fifth of the seed's {seed}"
    );
}

#[test]
fn claude() {
    check("claude");
}

#[test]
fn codex() {
    check("codex");
}

#[test]
fn copilot() {
    check("copilot");
}

#[test]
fn gemini() {
    check("gemini");
}

#[test]
fn kimi() {
    check("kimi");
}

#[test]
fn opencode() {
    check("opencode");
}

#[test]
fn qwen() {
    check("qwen");
}
