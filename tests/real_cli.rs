//! Runs the real coding-agent CLIs as sealed judges against the stand-in model server.
//!
//! The CLIs come from `scripts/install-harnesses` (`$PANEL_HARNESS_DIR/bin`, default
//! `~/.cache/panel/harnesses/bin`); a CLI that is not there is skipped with a note, and
//! `PANEL_REAL_CLI=0` skips them all (the eight take about five minutes on two cores); each
//! test records whether it ran in the tests' ledger (`scripts/test-summary` counts them). Each one
//! runs directly (not through our tools) with the argv and env measured in
//! `docs/harnesses.md`, a throwaway HOME, stdin from /dev/null and a deadline
//! that kills its process group. The tests check that the verdict can be read back, that no
//! tool but the schema tool reached the wire, that the real HOME was left alone, and record
//! what each CLI does when the model misbehaves. `--nocapture` prints the tables:
//! `BYTES` rows (what the first request carries beyond the prompt, sealed vs the seed's
//! argv) and `MODE` rows (exit, time, requests, verdict, where the message went).
//!
//! How each CLI is pointed at a local server is in its `prepare` function below. PyPI `llm`,
//! which harnesses.md does not cover: it reads extra OpenAI-compatible models from
//! `extra-openai-models.yaml` in its user dir (`$LLM_USER_PATH`, else
//! `$XDG_CONFIG_HOME/io.datasette.llm`); an entry with `api_base` needs no key:
//!
//! ```yaml
//! - model_id: mock
//!   model_name: mock-model
//!   api_base: "http://127.0.0.1:PORT/v1"
//!   supports_schema: true
//! ```
//!
//! then `llm prompt "$PROMPT" -m mock --schema schema.json --no-log` sends one Chat
//! Completions request with `response_format` json_schema and prints the answer text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use wait_timeout::ChildExt;

use crate::mockserver::{Logged, MockServer, Mode, default_answer};
use crate::util::TempDir;

/// No quotes or newlines, so its JSON-escaped length is its length in every client.
const PROMPT: &str = "You are a sealed judge. Claim: first(xs) returns xs[0] and never raises. \
Judge only the claim. Reply ONLY with a JSON object with the keys verdict (holds or breaks), \
reason (one sentence) and confidence (a number from 0 to 1).";

const SCHEMA: &str = r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["holds","breaks"]},"reason":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1}},"required":["verdict","reason","confidence"],"additionalProperties":false}"#;

/// Deadline for a run that should answer.
const DEADLINE: Duration = Duration::from_secs(60);
/// Deadline for the error modes, from the first request: long enough to see a CLI give up
/// after its retries (copilot waits ~16 s), short enough that the CLIs that retry for
/// minutes do not hold the suite.
const ERROR_DEADLINE: Duration = Duration::from_secs(30);
/// How long a CLI may wait on a server that never answers (counted from its request):
/// none of them gives up sooner.
const HANG_DEADLINE: Duration = Duration::from_secs(5);

fn harness_dir() -> PathBuf {
    match std::env::var_os("PANEL_HARNESS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/panel/harnesses"),
    }
}

/// The real CLI `bin`, or why its tests skip.
pub(crate) fn installed(bin: &str) -> Result<PathBuf, String> {
    // PANEL_REAL_CLI=0 skips these slow tests even where the CLIs are installed.
    if std::env::var("PANEL_REAL_CLI").as_deref() == Ok("0") {
        return Err("PANEL_REAL_CLI=0".into());
    }
    let dir = harness_dir().join("bin");
    let path = dir.join(bin);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{bin} is not installed in {} (scripts/install-harnesses installs it)",
            dir.display()
        ))
    }
}

/// The real CLI `bin` for the running test, recorded as run; or `None`, the skip recorded and
/// its reason said once.
pub(crate) fn real_cli(bin: &str) -> Option<PathBuf> {
    const GROUP: &str = "real CLIs";
    match installed(bin) {
        Ok(path) => {
            crate::util::ran(GROUP);
            Some(path)
        }
        Err(why) => {
            crate::util::skipped(GROUP, &why, &format!("real CLI tests: skipped: {why}"));
            None
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Argv {
    /// The tightest lockdown harnesses.md found.
    Sealed,
    /// The seed's line for this CLI (or, for a CLI the seed does not cover, the plain
    /// line without the lockdown flags and settings).
    Seed,
}

/// One run's folders: a throwaway HOME, an empty working folder, room for files.
struct Ctx {
    tmp: TempDir,
    url: String,
}

impl Ctx {
    fn new(name: &str, server: &MockServer) -> Ctx {
        let tmp = TempDir::new(&format!("cli-{name}"));
        for d in ["home", "work", "tmp"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        std::fs::write(tmp.path().join("schema.json"), SCHEMA).unwrap();
        Ctx {
            tmp,
            url: server.url(),
        }
    }
    fn root(&self) -> &Path {
        self.tmp.path()
    }
    fn home(&self) -> PathBuf {
        self.root().join("home")
    }
    fn file(&self, name: &str) -> String {
        self.root().join(name).display().to_string()
    }
    fn write_home(&self, rel: &str, text: &str) {
        let p = self.home().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// What a run left behind.
struct Outcome {
    /// `None`: killed at the deadline.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    secs: f64,
    /// The model requests it made.
    requests: Vec<Logged>,
    /// The text of the `-o` file, for CLIs that write one.
    out_file: Option<String>,
}

/// How to drive one CLI.
struct Spec {
    bin: &'static str,
    /// Writes the CLI's config into the throwaway HOME; returns argv and env.
    prepare: fn(&Ctx, Argv, &str) -> Setup,
    /// The answer as harnesses.md says to take it: a schema channel's object, or text.
    answer: fn(&Outcome) -> Option<Answer>,
    /// Tool names on the wire under the sealed argv.
    sealed_tools: &'static [&'static str],
    /// Paths under HOME where the CLI keeps state: the real HOME's must not change, the
    /// throwaway HOME must get the first of them.
    state: &'static [&'static str],
    /// Whether something else may write the real HOME's state paths meanwhile (the host's
    /// own Claude Code): then only paths naming our runs' folders count as leaks.
    host_writes_state: bool,
    /// What the CLI does in each failure mode (measured; see `Behaviour`).
    expect: fn(Mode) -> Behaviour,
    /// The file the CLI writes its answer to (`-o`), read after the run.
    out_file: Option<&'static str>,
}

/// A CLI's argv and the env it needs on top of the common one.
type Setup = (Vec<String>, Vec<(&'static str, String)>);

enum Answer {
    Object(Value),
    Text(String),
}

fn s(x: &str) -> String {
    x.to_string()
}

fn argv(items: &[&str]) -> Vec<String> {
    items.iter().map(|x| x.to_string()).collect()
}

// ---------------------------------------------------------------- the CLIs

fn claude(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    let env = vec![
        ("ANTHROPIC_BASE_URL", ctx.url.clone()),
        ("ANTHROPIC_API_KEY", s("dummy")),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", s("1")),
        ("DISABLE_AUTOUPDATER", s("1")),
        ("DISABLE_TELEMETRY", s("1")),
        ("DISABLE_ERROR_REPORTING", s("1")),
        // Else a 429/500/refused connection is retried for minutes.
        ("CLAUDE_CODE_MAX_RETRIES", s("0")),
    ];
    let mut a = argv(&[
        "-p",
        prompt,
        "--model",
        "haiku",
        "--json-schema",
        SCHEMA,
        "--tools",
        "",
        "--no-session-persistence",
    ]);
    if v == Argv::Sealed {
        a.extend(argv(&["--bare", "--output-format", "json"]));
    }
    (a, env)
}

fn claude_answer(o: &Outcome) -> Option<Answer> {
    match serde_json::from_str::<Value>(o.stdout.trim()) {
        // --output-format json: the schema channel, else the prose in .result.
        Ok(v) if v.get("type") == Some(&json!("result")) => match v.get("structured_output") {
            Some(obj) => Some(Answer::Object(obj.clone())),
            None => v["result"].as_str().map(|t| Answer::Text(t.into())),
        },
        _ => Some(Answer::Text(o.stdout.clone())),
    }
}

fn codex(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    let env = vec![
        (
            "CODEX_HOME",
            ctx.home().join(".codex").display().to_string(),
        ),
        ("MOCK_API_KEY", s("dummy")),
    ];
    std::fs::create_dir_all(ctx.home().join(".codex")).unwrap();
    let provider = format!(
        "model_providers.mock={{name=\"Mock\",base_url=\"{}/v1\",env_key=\"MOCK_API_KEY\",\
         wire_api=\"responses\",request_max_retries=0,stream_max_retries=0}}",
        ctx.url
    );
    let mut a = argv(&[
        "exec",
        prompt,
        "--ignore-user-config",
        "-c",
        "model_provider=mock",
        "-c",
        "model=mock-model",
        "-c",
        &provider,
        "--output-schema",
        &ctx.file("schema.json"),
        "-o",
        &ctx.file("out.json"),
        "-s",
        "read-only",
        "--ephemeral",
        "--skip-git-repo-check",
    ]);
    if v == Argv::Sealed {
        a.push(s("--ignore-rules"));
        for f in [
            "shell_tool",
            "unified_exec",
            "goals",
            "multi_agent",
            "view_image",
            "image_generation",
            "tool_suggest",
            "apps",
            "sleep_tool",
            "plugins",
            "remote_plugin",
            "in_app_updates",
            "plugin_sharing",
            "skill_mcp_dependency_install",
        ] {
            a.extend([s("--disable"), s(f)]);
        }
        for c in [
            "web_search=\"disabled\"",
            "analytics.enabled=false",
            "check_for_update_on_startup=false",
            "tools.experimental_request_user_input.enabled=false",
        ] {
            a.extend([s("-c"), s(c)]);
        }
    }
    (a, env)
}

fn codex_answer(o: &Outcome) -> Option<Answer> {
    o.out_file.clone().map(Answer::Text)
}

fn copilot(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    let env = vec![
        ("COPILOT_OFFLINE", s("true")),
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", ctx.url)),
        ("COPILOT_PROVIDER_API_KEY", s("dummy")),
        ("COPILOT_MODEL", s("mock-model")),
        ("COPILOT_AUTO_UPDATE", s("false")),
    ];
    let mut a = argv(&["-p", prompt, "-s"]);
    if v == Argv::Sealed {
        // An empty --available-tools is ignored; an unknown name leaves no tool.
        a.extend(argv(&[
            "--no-auto-update",
            "--available-tools=none_at_all",
            "--no-custom-instructions",
            "--disable-builtin-mcps",
            "--no-ask-user",
        ]));
    }
    (a, env)
}

fn stdout_answer(o: &Outcome) -> Option<Answer> {
    Some(Answer::Text(o.stdout.clone()))
}

fn opencode(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    let mut config = json!({
        "$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": format!("{}/v1", ctx.url), "apiKey": "dummy"},
            "models": {"mock-model": {"name": "Mock model"}}}},
        "model": "mock/mock-model"
    });
    if v == Argv::Sealed {
        config["tools"] = json!({"*": false});
        config["permission"] = json!({"*": "deny"});
    }
    let mut env = vec![
        ("OPENCODE_CONFIG_CONTENT", config.to_string()),
        // Its first run looks up a plugin on the npm registry: send that to the mock.
        ("npm_config_registry", format!("{}/npm/", ctx.url)),
    ];
    for k in [
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
        "OPENCODE_DISABLE_SHARE",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
        "OPENCODE_DISABLE_CLAUDE_CODE",
        "OPENCODE_DISABLE_PROJECT_CONFIG",
    ] {
        env.push((k, s("1")));
    }
    let mut a = argv(&["run", prompt, "-m", "mock/mock-model"]);
    if v == Argv::Sealed {
        // --title spares the extra title-generation request.
        a.extend(argv(&["--pure", "--title", "judge"]));
    }
    (a, env)
}

fn gemini(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    let mut settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
    });
    if v == Argv::Sealed {
        // An allow-list naming no real tool leaves none; one attempt, not ten.
        settings["tools"] = json!({"core": ["none"]});
        settings["general"]["maxAttempts"] = json!(1);
    }
    ctx.write_home(".gemini/settings.json", &settings.to_string());
    let env = vec![
        ("GEMINI_API_KEY", s("dummy")),
        ("GOOGLE_GEMINI_BASE_URL", ctx.url.clone()),
    ];
    let mut a = argv(&["-p", prompt, "-m", "gemini-2.5-flash", "--skip-trust"]);
    if v == Argv::Sealed {
        a.extend(argv(&["-o", "json"]));
    }
    (a, env)
}

fn gemini_answer(o: &Outcome) -> Option<Answer> {
    match serde_json::from_str::<Value>(o.stdout.trim()) {
        Ok(v) if v.get("response").is_some() => {
            v["response"].as_str().map(|t| Answer::Text(t.into()))
        }
        _ => Some(Answer::Text(o.stdout.clone())),
    }
}

/// Every tool qwen 0.24.4 offered in plan mode, first or deferred, plus the write tools.
const QWEN_TOOLS: &[&str] = &[
    "agent",
    "get_goal",
    "glob",
    "grep_search",
    "list_agents",
    "read_file",
    "skill",
    "tool_call",
    "tool_search",
    "update_goal",
    "cron_create",
    "cron_delete",
    "cron_list",
    "enter_worktree",
    "exit_worktree",
    "loop_wakeup",
    "read_mcp_resource",
    "record_artifact",
    "report_findings",
    "send_message",
    "task_stop",
    "web_fetch",
    "run_shell_command",
    "edit",
    "write_file",
    "notebook_edit",
    "todo_write",
    "save_memory",
    "web_search",
    "exit_plan_mode",
    "list_directory",
    "monitor",
];

fn qwen(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    let mut settings = json!({
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false}
    });
    if v == Argv::Sealed {
        settings["model"] = json!({"generationConfig": {"maxRetries": 0}});
        // No "no tools" switch: a whole-tool deny rule drops a tool from the registry, and
        // without the tool_search bridge no deferred tool comes back.
        settings["tools"] = json!({"toolSearch": {"enabled": false}});
        settings["permissions"] = json!({"deny": QWEN_TOOLS});
    }
    ctx.write_home(".qwen/settings.json", &settings.to_string());
    let env = vec![
        ("OPENAI_API_KEY", s("dummy")),
        ("OPENAI_BASE_URL", format!("{}/v1", ctx.url)),
        ("OPENAI_MODEL", s("mock-model")),
    ];
    let schema = format!("@{}", ctx.file("schema.json"));
    let mut a = argv(&[
        prompt,
        "--auth-type",
        "openai",
        "-m",
        "mock-model",
        "--json-schema",
        &schema,
    ]);
    if v == Argv::Sealed {
        a.extend(argv(&[
            "--chat-recording",
            "false",
            "--approval-mode",
            "plan",
            "-o",
            "json",
        ]));
    }
    (a, env)
}

fn qwen_answer(o: &Outcome) -> Option<Answer> {
    // -o json: one array of events; the last `result` event carries `structured_result`.
    match serde_json::from_str::<Value>(o.stdout.trim()) {
        Ok(Value::Array(events)) => {
            let result = events.iter().rev().find(|e| e["type"] == "result")?;
            match result.get("structured_result") {
                Some(obj) => Some(Answer::Object(obj.clone())),
                None => result["result"].as_str().map(|t| Answer::Text(t.into())),
            }
        }
        _ => Some(Answer::Text(o.stdout.clone())),
    }
}

fn kimi(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    ctx.write_home(
        ".kimi/config.toml",
        &format!(
            "default_model = \"mock\"\n\n[models.mock]\nprovider = \"mock\"\nmodel = \"mock-model\"\n\
             max_context_size = 128000\n\n[providers.mock]\ntype = \"openai_legacy\"\n\
             base_url = \"{}/v1\"\napi_key = \"dummy\"\n",
            ctx.url
        ),
    );
    // --print approves every tool call: the judge's agent file gives it none.
    std::fs::write(
        ctx.root().join("judge.yaml"),
        "version: 1\nagent:\n  name: \"judge\"\n  system_prompt_path: ./system.md\n  tools: []\n",
    )
    .unwrap();
    std::fs::write(
        ctx.root().join("system.md"),
        "You judge one claim and answer in JSON.\n",
    )
    .unwrap();
    let env = vec![("KIMI_DISABLE_TELEMETRY", s("1"))];
    let a = match v {
        Argv::Sealed => argv(&[
            "--print",
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--agent-file",
            &ctx.file("judge.yaml"),
            "--max-retries-per-step",
            "1",
        ]),
        // The seed's line: no --print, so it is a usage error.
        Argv::Seed => argv(&["-p", prompt, "--output-format", "stream-json"]),
    };
    (a, env)
}

fn kimi_answer(o: &Outcome) -> Option<Answer> {
    o.stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["role"] == "assistant")
        .find_map(|v| v["content"].as_str().map(str::to_string))
        .map(Answer::Text)
}

fn llm(ctx: &Ctx, v: Argv, prompt: &str) -> Setup {
    // llm reads extra OpenAI-compatible models from its user dir; api_base points one at
    // the mock and drops the need for a key.
    let user = ".config/io.datasette.llm";
    ctx.write_home(
        &format!("{user}/extra-openai-models.yaml"),
        &format!(
            "- model_id: mock\n  model_name: mock-model\n  api_base: \"{}/v1\"\n  supports_schema: true\n",
            ctx.url
        ),
    );
    let env = vec![("LLM_USER_PATH", ctx.home().join(user).display().to_string())];
    let mut a = argv(&[
        "prompt",
        prompt,
        "-m",
        "mock",
        "--schema",
        &ctx.file("schema.json"),
    ]);
    if v == Argv::Sealed {
        a.push(s("--no-log"));
    }
    (a, env)
}

/// What the seed's argv sends: `(bytes beyond the prompt, tools)` of the first model request
/// and of the largest, and how many requests it made.
#[derive(Clone)]
pub(crate) struct SeedBytes {
    pub first: (usize, usize),
    pub largest: (usize, usize),
    pub requests: usize,
}

/// Seed measurements already made by this module's tests, so real_judge need not run the
/// seed's argv again in the same test process.
static SEEDS: std::sync::Mutex<BTreeMap<&'static str, SeedBytes>> =
    std::sync::Mutex::new(BTreeMap::new());

fn seed_of(o: &Outcome) -> Option<SeedBytes> {
    let each: Vec<(usize, usize)> = o
        .requests
        .iter()
        .filter_map(|r| Some((r.bytes_beyond_prompt(PROMPT)?, r.tools.len())))
        .collect();
    Some(SeedBytes {
        first: *each.first()?,
        largest: *each.iter().max()?,
        requests: o.requests.len(),
    })
}

/// The seed's argv for one CLI, for real_judge's BYTES table: as this module measured it, or
/// run once now against a fresh server.
pub(crate) fn seed_bytes(name: &str) -> Option<SeedBytes> {
    if let Some(s) = SEEDS.lock().unwrap().get(name) {
        return Some(s.clone());
    }
    let (prepare, out_file): (fn(&Ctx, Argv, &str) -> Setup, _) = match name {
        "claude" => (claude, None),
        "codex" => (codex, Some("out.json")),
        "copilot" => (copilot, None),
        "opencode" => (opencode, None),
        "gemini" => (gemini, None),
        "qwen" => (qwen, None),
        "kimi" => (kimi, None),
        "llm" => (llm, None),
        _ => return None,
    };
    let bin = installed(name).ok()?;
    let spec = Spec {
        bin: match name {
            "claude" => "claude",
            "codex" => "codex",
            "copilot" => "copilot",
            "opencode" => "opencode",
            "gemini" => "gemini",
            "qwen" => "qwen",
            "kimi" => "kimi",
            _ => "llm",
        },
        prepare,
        answer: stdout_answer,
        sealed_tools: &[],
        state: &[],
        host_writes_state: false,
        expect: |_| b(End::Killed, false, Said::Nothing),
        out_file,
    };
    let (o, _) = run(&spec, &bin, Argv::Seed, Mode::Ok, Deadline::Total(DEADLINE));
    seed_of(&o)
}

// ---------------------------------------------------------------- running

/// When to give up on a run.
#[derive(Clone, Copy)]
enum Deadline {
    /// From the start.
    Total(Duration),
    /// From the first model request, so a slow start on a busy machine does not count.
    AfterRequest(Duration),
}

/// Longest any run may take, whatever its deadline.
const CAP: Duration = Duration::from_secs(120);

/// Runs the CLI once against a server of its own (the mode comes from a prompt marker).
fn run(spec: &Spec, bin: &Path, v: Argv, mode: Mode, deadline: Deadline) -> (Outcome, Ctx) {
    let server = MockServer::start();
    let ctx = Ctx::new(spec.bin, &server);
    let prompt = match mode {
        Mode::Ok => PROMPT.to_string(),
        m => format!("{PROMPT} {}", m.marker()),
    };
    let (args, env) = (spec.prepare)(&ctx, v, &prompt);
    let home = ctx.home();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(bin);
    cmd.args(&args)
        .current_dir(ctx.root().join("work"))
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("TMPDIR", ctx.root().join("tmp"))
        .env("LANG", "C.UTF-8")
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so the deadline kills the helpers it spawns too.
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn the CLI");
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(Box::new(child.stdout.take().unwrap()));
    let err = reader(Box::new(child.stderr.take().unwrap()));
    let mut first_request = None;
    let status = loop {
        if let Some(st) = child.wait_timeout(Duration::from_millis(100)).unwrap() {
            break Some(st);
        }
        if first_request.is_none() && !server.generations().is_empty() {
            first_request = Some(Instant::now());
        }
        let over = match (deadline, first_request) {
            (Deadline::Total(d), _) => start.elapsed() >= d,
            (Deadline::AfterRequest(d), Some(t)) => t.elapsed() >= d,
            (Deadline::AfterRequest(_), None) => false,
        };
        if over || start.elapsed() >= CAP {
            break None;
        }
    };
    let secs = start.elapsed().as_secs_f64();
    // Also reaps helpers left holding the pipes after a normal exit.
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    let code = match status {
        Some(st) => Some(st.code().unwrap_or(-1)),
        None => {
            let _ = child.wait();
            None
        }
    };
    let outcome = Outcome {
        code,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        secs,
        requests: server.generations(),
        out_file: spec
            .out_file
            .and_then(|f| std::fs::read_to_string(ctx.root().join(f)).ok()),
    };
    (outcome, ctx)
}

/// The verdict in an answer: the schema channel's object, or the first JSON object with a
/// valid verdict in the text once fences are gone (harnesses.md §6).
fn verdict(answer: Option<Answer>) -> Option<Value> {
    let v = match answer? {
        Answer::Object(v) => v,
        Answer::Text(t) => first_object(&t)?,
    };
    let ok = matches!(v["verdict"].as_str(), Some("holds" | "breaks"))
        && v["confidence"]
            .as_f64()
            .is_some_and(|c| (0.0..=1.0).contains(&c));
    ok.then_some(v)
}

fn first_object(text: &str) -> Option<Value> {
    let text: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n");
    text.match_indices('{').find_map(|(i, _)| {
        let mut de = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match de.next() {
            Some(Ok(v)) if v.is_object() => Some(v),
            _ => None,
        }
    })
}

/// Files under `root/rel` with their size and mtime, to see whether anything wrote there.
fn snapshot(root: &Path, rels: &[&str]) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    fn walk(p: &Path, out: &mut BTreeMap<PathBuf, (u64, Option<SystemTime>)>, depth: u32) {
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            return;
        };
        out.insert(p.to_path_buf(), (meta.len(), meta.modified().ok()));
        if meta.is_dir() && depth < 8 {
            for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                walk(&e.path(), out, depth + 1);
            }
        }
    }
    let mut out = BTreeMap::new();
    for rel in rels {
        walk(&root.join(rel), &mut out, 0);
    }
    out
}

// ---------------------------------------------------------------- expected behaviour

/// How a CLI ended a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Exited with this code.
    Exit(i32),
    /// Still running at the deadline (retrying or waiting).
    Killed,
}

/// Where the CLI said what went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    Stdout,
    Stderr,
    /// Both empty (or killed before saying anything useful).
    Nothing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Behaviour {
    end: End,
    /// A verdict could be read from the answer channel.
    verdict: bool,
    said: Said,
}

const fn b(end: End, verdict: bool, said: Said) -> Behaviour {
    Behaviour { end, verdict, said }
}

fn observed(spec: &Spec, o: &Outcome) -> Behaviour {
    let end = o.code.map_or(End::Killed, End::Exit);
    let verdict = verdict((spec.answer)(o)).is_some();
    let said = if !o.stdout.trim().is_empty() {
        Said::Stdout
    } else if !o.stderr.trim().is_empty() {
        Said::Stderr
    } else {
        Said::Nothing
    };
    Behaviour { end, verdict, said }
}

/// A short line of what the CLI said: the message inside a JSON envelope, or the error
/// line of plain output.
fn gist(o: &Outcome) -> String {
    fn in_json(v: &Value) -> Option<String> {
        for k in ["result", "error", "message", "content", "response"] {
            match v.get(k) {
                Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
                Some(inner @ Value::Object(_)) => {
                    if let Some(s) = in_json(inner) {
                        return Some(s);
                    }
                }
                _ => {}
            }
        }
        match v {
            Value::Array(a) => a.iter().rev().find_map(in_json),
            _ => None,
        }
    }
    let pick = |t: &str| -> Option<String> {
        if let Some(s) = serde_json::from_str::<Value>(t.trim())
            .ok()
            .and_then(|v| in_json(&v))
        {
            return Some(s);
        }
        // Skips echoes of the prompt, whose marker would look like an error line.
        let lines: Vec<&str> = t
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains("MOCK-MODE:"))
            .collect();
        let l = lines
            .iter()
            .find(|l| {
                let l = l.to_ascii_lowercase();
                l.contains("error") || l.contains("limit") || l.contains("429") || l.contains("500")
            })
            .or(lines.last())?;
        Some(l.to_string())
    };
    let short = |l: String| l.replace('\n', " ").chars().take(100).collect::<String>();
    pick(&o.stdout)
        .map(|l| format!("out: {}", short(l)))
        .or_else(|| pick(&o.stderr).map(|l| format!("err: {}", short(l))))
        .unwrap_or_default()
}

// ---------------------------------------------------------------- the test body

const MODES: [Mode; 6] = [
    Mode::Prose,
    Mode::Fence,
    Mode::RateLimit,
    Mode::UsageLimit,
    Mode::Error500,
    Mode::Hang,
];

fn check(spec: &Spec) {
    let Some(bin) = real_cli(spec.bin) else {
        return;
    };
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let before = snapshot(&real_home, spec.state);
    let mut report = String::new();
    let name = spec.bin;

    // (a) the verdict comes back, (b) only the schema tool was offered, (c) state went to
    // the throwaway HOME.
    let (o, ctx) = run(
        spec,
        &bin,
        Argv::Sealed,
        Mode::Ok,
        Deadline::Total(DEADLINE),
    );
    let got = verdict((spec.answer)(&o));
    assert_eq!(
        got,
        Some(default_answer()),
        "{name}: no verdict; exit {:?}\nstdout: {}\nstderr: {}",
        o.code,
        o.stdout,
        o.stderr
    );
    assert_eq!(o.code, Some(0), "{name}: {}", o.stderr);
    assert!(!o.requests.is_empty(), "{name} sent no model request");
    for r in &o.requests {
        assert_eq!(r.tools, spec.sealed_tools, "{name}: tools on the wire");
    }
    if let Some(first) = spec.state.first() {
        assert!(
            ctx.home().join(first).exists(),
            "{name}: the throwaway HOME got no {first}"
        );
    }
    let sealed = &o.requests;
    let _ = writeln!(
        report,
        "{name}: ok in {:.1} s, {} request(s), tools {:?}, schema format {}",
        o.secs,
        sealed.len(),
        sealed[0].tools,
        sealed[0].schema_format
    );

    // The seed's line, for what it costs on the wire. Measured on the largest request (the
    // main one when a CLI also asks for a session title).
    let (seed, _) = run(spec, &bin, Argv::Seed, Mode::Ok, Deadline::Total(DEADLINE));
    if let Some(m) = seed_of(&seed) {
        SEEDS.lock().unwrap().insert(spec.bin, m);
    }
    let largest = |rs: &[Logged]| -> Option<(usize, usize)> {
        rs.iter()
            .filter_map(|r| Some((r.bytes_beyond_prompt(PROMPT)?, r.tools.len())))
            .max()
    };
    let show =
        |x: Option<(usize, usize)>| x.map_or("-".to_string(), |(b, t)| format!("{b} B, {t} tools"));
    let _ = writeln!(
        report,
        "BYTES {name:9} sealed {:>18}  seed {:>18} ({} request(s), exit {:?})",
        show(largest(sealed)),
        show(largest(&seed.requests)),
        seed.requests.len(),
        seed.code
    );

    // (d) the failure modes, in two lanes: most of their time is waiting.
    let lane = |modes: &[Mode]| -> Vec<(Mode, Outcome)> {
        modes
            .iter()
            .map(|&mode| {
                let deadline = match mode {
                    Mode::Hang => Deadline::AfterRequest(HANG_DEADLINE),
                    Mode::Prose | Mode::Fence => Deadline::Total(DEADLINE),
                    _ => Deadline::AfterRequest(ERROR_DEADLINE),
                };
                (mode, run(spec, &bin, Argv::Sealed, mode, deadline).0)
            })
            .collect()
    };
    let mut results = std::thread::scope(|sc| {
        let a = sc.spawn(|| lane(&MODES[..3]));
        let b = lane(&MODES[3..]);
        let mut all = a.join().unwrap();
        all.extend(b);
        all
    });
    results.sort_by_key(|(m, _)| MODES.iter().position(|x| x == m));
    let mut wrong = Vec::new();
    for (mode, o) in &results {
        let got = observed(spec, o);
        let _ = writeln!(
            report,
            "MODE {name:9} {:10} {:>9} {:>5.1}s req {:>2} verdict {:5} said {:?} | {}",
            mode.name(),
            match got.end {
                End::Exit(c) => format!("exit {c}"),
                End::Killed => "killed".into(),
            },
            o.secs,
            o.requests.len(),
            got.verdict,
            got.said,
            gist(o)
        );
        let want = (spec.expect)(*mode);
        // What a killed CLI had printed by then (start-up notes) and a run that never reached
        // the server before its deadline depend on the machine's load, not on the CLI.
        let same = got.end == want.end
            && got.verdict == want.verdict
            && (got.said == want.said || got.end == End::Killed);
        // Killed before its first request (a start slower than the deadline), the mode was
        // not exercised: the ledger says so, the test does not count it as seen.
        let never_asked = o.requests.is_empty() && got.end == End::Killed && !got.verdict;
        if never_asked {
            let why = format!(
                "{} not exercised: killed before its first request",
                mode.name()
            );
            let note = format!("real CLI tests: {name}: {why}");
            crate::util::skipped("real CLIs", &why, &note);
        } else if !same {
            wrong.push(format!(
                "{name} {}: expected {want:?}, got {got:?}\nstdout: {}\nstderr: {}",
                mode.name(),
                o.stdout.chars().take(600).collect::<String>(),
                o.stderr.chars().take(600).collect::<String>()
            ));
        }
    }

    let after = snapshot(&real_home, spec.state);
    println!("{report}");
    // CLIs name per-project folders after the cwd, which holds "panel-test-".
    let leaks: Vec<&PathBuf> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .filter(|k| !spec.host_writes_state || k.to_string_lossy().contains("panel-test-"))
        .collect();
    assert!(
        leaks.is_empty(),
        "{name} wrote under the real HOME: {leaks:?}"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

// ---------------------------------------------------------------- one test per CLI

use End::{Exit, Killed};
use Said::{Nothing, Stderr, Stdout};

#[test]
fn claude_code() {
    check(&Spec {
        bin: "claude",
        prepare: claude,
        answer: claude_answer,
        sealed_tools: &["StructuredOutput"],
        state: &[".claude.json", ".claude"],
        host_writes_state: true,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            Mode::Hang => b(Killed, false, Nothing),
            // "API Error: ..." on stdout, also in json mode (as .result, is_error true).
            _ => b(Exit(1), false, Stdout),
        },
        out_file: None,
    });
}

#[test]
fn codex_cli() {
    check(&Spec {
        bin: "codex",
        prepare: codex,
        answer: codex_answer,
        sealed_tools: &[],
        state: &[".codex"],
        host_writes_state: false,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            Mode::Hang => b(Killed, false, Stderr),
            _ => b(Exit(1), false, Stderr),
        },
        out_file: Some("out.json"),
    });
}

#[test]
fn copilot_cli() {
    check(&Spec {
        bin: "copilot",
        prepare: copilot,
        answer: stdout_answer,
        sealed_tools: &[],
        state: &[".copilot", ".cache/Microsoft"],
        host_writes_state: false,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            Mode::Hang => b(Killed, false, Nothing),
            _ => b(Exit(1), false, Stderr),
        },
        out_file: None,
    });
}

#[test]
fn opencode_cli() {
    check(&Spec {
        bin: "opencode",
        prepare: opencode,
        answer: stdout_answer,
        sealed_tools: &[],
        state: &[
            ".local/share/opencode",
            ".config/opencode",
            ".cache/opencode",
        ],
        host_writes_state: false,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            Mode::RateLimit => b(Exit(1), false, Stderr),
            // Quota and 500 errors are retried on and on.
            _ => b(Killed, false, Stderr),
        },
        out_file: None,
    });
}

#[test]
fn gemini_cli() {
    check(&Spec {
        bin: "gemini",
        prepare: gemini,
        answer: gemini_answer,
        sealed_tools: &[],
        state: &[".gemini"],
        host_writes_state: false,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            // It exits with the HTTP status, mod 256: 429 -> 173, 500 -> 244.
            Mode::RateLimit | Mode::UsageLimit => b(Exit(173), false, Stderr),
            Mode::Error500 => b(Exit(244), false, Stderr),
            _ => b(Killed, false, Stderr),
        },
        out_file: None,
    });
}

#[test]
fn qwen_code() {
    check(&Spec {
        bin: "qwen",
        prepare: qwen,
        answer: qwen_answer,
        sealed_tools: &["structured_output"],
        state: &[".qwen"],
        host_writes_state: false,
        expect: |m| match m {
            // No tool call is a hard error (a result event with is_error, on stdout in json mode),
            // fenced or not.
            Mode::Prose | Mode::Fence => b(Exit(1), false, Stdout),
            // Seven tries, then "[API Error: 429 ...]".
            Mode::RateLimit => b(Exit(1), false, Stdout),
            // Quota errors and 500s are retried past the deadline (maxRetries 0 or not).
            _ => b(Killed, false, Stderr),
        },
        out_file: None,
    });
}

#[test]
fn kimi_cli() {
    check(&Spec {
        bin: "kimi",
        prepare: kimi,
        answer: kimi_answer,
        sealed_tools: &[],
        state: &[".kimi"],
        host_writes_state: false,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            Mode::Hang => b(Killed, false, Nothing),
            // Errors go to stdout, exit 75 (EX_TEMPFAIL).
            _ => b(Exit(75), false, Stdout),
        },
        out_file: None,
    });
}

#[test]
fn llm_cli() {
    check(&Spec {
        bin: "llm",
        prepare: llm,
        answer: stdout_answer,
        sealed_tools: &[],
        state: &[".config/io.datasette.llm"],
        host_writes_state: false,
        expect: |m| match m {
            Mode::Prose => b(Exit(0), false, Stdout),
            Mode::Fence => b(Exit(0), true, Stdout),
            Mode::Hang => b(Killed, false, Nothing),
            _ => b(Exit(1), false, Stderr),
        },
        out_file: None,
    });
}
