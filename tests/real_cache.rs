//! What a panel pays for its input once the provider's prompt cache counts (issue 47): 3 and 5
//! lenses on a 24 KB and a 100 KB candidate, through the real claude and the real codex with
//! an API key, against the stand-in model server, which caches as the providers do
//! (tests/mockserver/cache.rs). Each case runs twice, each in a world (and a server, so a
//! cache) of its own: the seed's way, one independent call per lens, all at once (claude: the
//! seed's script itself, benches/baseline-judge-panel.sh; codex: `codex exec` with the seed's
//! prompt and schema, one per lens, in the background as the script starts them), and one
//! `panel-judge` with the same lenses.
//!
//! Each prints one `CACHE` line: the cache-weighted input tokens of both over every model
//! request the server answered (uncached input + 1.25 × 5-minute writes + 2 × 1-hour writes
//! + 0.1 × reads; OpenAI writes nothing, so uncached + 0.1 × cached) and their ratio. Issue
//! 47's goal: 3 lenses cost panel-judge at most 0.55 of the 3 independent calls.
//! `benches/cache.sh` runs these tests (they are benchmarks, left out of the real matrix's
//! run: `--include-ignored`) and prints the table and the goal.

use std::path::Path;
use std::process::{Child, Stdio};

use crate::real_cli::real_cli;
use crate::real_logins::{Walls, World, case, panel_judge};
use crate::real_overhead::{SEED_SCHEMA, seed_prompt};
use crate::util::root;

/// The seed's three lenses (tests/fixtures/seed-judge-panel.sh), then two more for five.
const LENSES: [(&str, &str); 5] = [
    (
        "correctness",
        "Does it do what it claims to do? Wrong logic only — not style, not naming.",
    ),
    (
        "edges",
        "What input breaks it? Empty, null, zero, duplicate, huge, concurrent. Name the input.",
    ),
    (
        "evidence",
        "Is every claim in the answer supported by what is in the answer? Flag anything asserted without support.",
    ),
    (
        "security",
        "Can an input make it read, write or run what it should not? Name the input.",
    ),
    (
        "clarity",
        "Would a reader misread what it does? Name the sentence or line that misleads.",
    ),
];

/// A candidate of `bytes` bytes: a Python module of small documented functions, each a little
/// different, cut at a line.
fn candidate(bytes: usize) -> String {
    let mut s = String::from("\"\"\"Helpers for lists of numbers.\"\"\"\n\n");
    let mut n = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "def first_{n}(xs):\n    \"\"\"Return xs[{k}] plus {n}, or None when xs has {k} items or fewer.\"\"\"\n    return xs[{k}] + {n}\n\n",
            k = n % 7
        ));
        n += 1;
    }
    let cut = s[..bytes].rfind('\n').unwrap_or(bytes);
    s.truncate(cut + 1);
    s
}

/// What the server billed a world's model requests, in its tokens.
#[derive(Default)]
struct Cost {
    requests: usize,
    uncached: u64,
    writes: u64,
    reads: u64,
    weighted: f64,
}

/// The world's costs; `CACHE_DUMP=DIR` keeps each model request's body as `DIR/TAG-I.json`, to
/// read where the prompts of two judges part.
fn cost(w: &World, tag: &str) -> Cost {
    if let Some(d) = std::env::var_os("CACHE_DUMP") {
        for (i, q) in w.server.generations().iter().enumerate() {
            let body = serde_json::to_string_pretty(&q.body).unwrap();
            std::fs::write(Path::new(&d).join(format!("{tag}-{i}.json")), body).unwrap();
        }
    }
    let mut c = Cost::default();
    for u in w.server.generations().iter().filter_map(|q| q.usage) {
        c.requests += 1;
        c.uncached += u.uncached();
        c.writes += u.cache_write();
        c.reads += u.cache_read;
        c.weighted += u.weighted();
    }
    c
}

impl Cost {
    fn show(&self) -> String {
        format!(
            "{:>9.0} (uncached {:>7}, written {:>7}, read {:>7}, {:>2} req)",
            self.weighted, self.uncached, self.writes, self.reads, self.requests
        )
    }
}

/// The login measured per CLI: an API key (one organisation for every judge).
fn login(cli: &str) -> &'static str {
    match cli {
        "claude" => "api-key",
        _ => "codex-api-key",
    }
}

fn world(cli: &str, tag: &str, bindir: &Path, work: &str) -> World {
    let mut w = World::new(tag, bindir);
    std::fs::write(&w.candidate, work).unwrap();
    (case(cli, login(cli)).user)(&mut w, false);
    w
}

/// The seed's way: one independent call per lens, all started at once, then waited for.
fn seed(cli: &str, exe: &Path, w: &World, lenses: &[(&str, &str)], work: &str) {
    if cli == "claude" {
        let file: String = lenses.iter().map(|(n, q)| format!("{n}|{q}\n")).collect();
        let list = w.root().join("lenses.txt");
        std::fs::write(&list, file).unwrap();
        let out = w
            .command(Path::new("bash"))
            .arg(root().join("benches/baseline-judge-panel.sh"))
            .arg(&w.candidate)
            .arg(&list)
            .current_dir(&w.scratch)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("PANEL: "), "the seed's script: {said}");
        return;
    }
    let schema = w.root().join("schema.json");
    std::fs::write(&schema, SEED_SCHEMA).unwrap();
    let calls: Vec<Child> = lenses
        .iter()
        .map(|(_, q)| {
            w.command(exe)
                .args(["exec", "--skip-git-repo-check", "--ephemeral"])
                .arg("--output-schema")
                .arg(&schema)
                .arg(seed_prompt(q, work))
                .current_dir(&w.scratch)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in calls {
        let out = c.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("verdict"),
            "the seed's way through codex: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One `panel-judge` with the lenses.
fn ours(cli: &str, w: &World, lenses: &[(&str, &str)]) {
    let flags: Vec<String> = lenses.iter().map(|(n, q)| format!("{n}={q}")).collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let out = panel_judge(w, case(cli, login(cli)), Walls::Off, &flags, &w.run)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ok = stdout
        .lines()
        .filter(|l| l.contains(r#""status":"ok""#))
        .count();
    assert_eq!(
        ok,
        lenses.len(),
        "panel-judge: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every case of `cli`: 3 and 5 lenses, 24 KB and 100 KB.
fn measure(cli: &str) {
    let Some(exe) = real_cli(cli) else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    for kb in [24, 100] {
        let work = candidate(kb * 1000);
        for n in [3, 5] {
            let lenses = &LENSES[..n];
            let (before, after) = {
                let _slot = crate::real_judge::Slot::take();
                let tag = |who: &str| format!("{cli}-{who}-{n}-{kb}");
                let w = world(cli, &format!("cache-seed-{cli}"), &bindir, &work);
                seed(cli, &exe, &w, lenses, &work);
                let before = cost(&w, &tag("seed"));
                let w = world(cli, &format!("cache-ours-{cli}"), &bindir, &work);
                ours(cli, &w, lenses);
                (before, cost(&w, &tag("ours")))
            };
            eprintln!(
                "CACHE {cli:6} lenses={n} candidate={kb}KB  seed {}  panel-judge {}  ratio={:.2}",
                before.show(),
                after.show(),
                after.weighted / before.weighted
            );
        }
    }
}

#[test]
#[ignore = "a benchmark of minutes: benches/cache.sh runs it"]
fn claude() {
    measure("claude");
}

#[test]
#[ignore = "a benchmark of minutes: benches/cache.sh runs it"]
fn codex() {
    measure("codex");
}
