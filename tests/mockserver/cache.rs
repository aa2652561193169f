//! The stand-in server's prompt caches, by each provider's published rules, so that the usage
//! it reports (and so the records and the ledger's costs) is what a panel would pay.
//!
//! Tokens are the server's estimate, a byte of JSON in four: a request is cut into blocks in
//! the order the provider renders the prompt ([`anthropic_blocks`], [`openai_blocks`]), each
//! block serialised as canonical JSON (keys sorted, no spaces, `cache_control` left out), and
//! a prefix counts its blocks' bytes / 4. Its total is the request's input tokens.
//!
//! A cache entry is keyed by the credential that wrote it (caches are per organisation: two
//! keys never share) and a hash of the prefix; it is written when a request is answered and
//! becomes readable only once the writing request's answer has begun (its first byte went
//! out: [`Caches::begun`]), so a fan-out sent all at once writes N times and reads nothing.
//! Entries expire by their TTL on the caches' own clock, which tests move with
//! [`Caches::advance`] rather than by sleeping.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Neither provider caches a prefix shorter than this (Anthropic: 1,024 to 4,096 tokens by
/// model, the smallest taken; OpenAI: 1,024).
pub const MIN_CACHEABLE: u64 = 1024;
/// OpenAI matches cached prefixes in steps of this many tokens past the first 1,024.
pub const OPENAI_STEP: u64 = 128;
/// Anthropic looks for a hit at each breakpoint and at the block boundaries up to this many
/// blocks before it.
pub const LOOKBACK: usize = 20;
/// Anthropic's default TTL (`{"type": "ephemeral"}` or `"ttl": "5m"`); OpenAI's entries are
/// kept at least as long after their last use.
pub const TTL_5M: Duration = Duration::from_secs(5 * 60);
/// Anthropic's `"ttl": "1h"`.
pub const TTL_1H: Duration = Duration::from_secs(60 * 60);

/// What one answer's usage says about its input, in the server's tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every input token of the request, cached or not.
    pub input: u64,
    /// Read from the cache (Anthropic's `cache_read_input_tokens`, OpenAI's `cached_tokens`).
    pub cache_read: u64,
    /// Written to the cache with a 5-minute TTL (Anthropic only; OpenAI's writes are free).
    pub cache_write_5m: u64,
    /// Written to the cache with a 1-hour TTL (billed at twice the input price).
    pub cache_write_1h: u64,
    pub output: u64,
}

impl Usage {
    /// A request the caches were not asked about: all of it plain input.
    pub fn plain(input: u64, output: u64) -> Usage {
        Usage {
            input,
            output,
            ..Usage::default()
        }
    }

    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m + self.cache_write_1h
    }

    /// The input neither read from nor written to the cache (Anthropic's `input_tokens`).
    pub fn uncached(&self) -> u64 {
        self.input - self.cache_read - self.cache_write()
    }

    /// Input tokens weighted by what the provider bills for them, in plain input tokens:
    /// uncached + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads.
    pub fn weighted(&self) -> f64 {
        self.uncached() as f64
            + 1.25 * self.cache_write_5m as f64
            + 2.0 * self.cache_write_1h as f64
            + 0.1 * self.cache_read as f64
    }
}

/// One block of a request's prompt in the provider's order: its bytes and the hash of the
/// prefix that ends with it; a breakpoint (`cache_control`) carries its TTL.
#[derive(Clone, Debug)]
pub struct Block {
    pub bytes: u64,
    pub prefix: u64,
    pub breakpoint: Option<Duration>,
}

/// Canonical JSON: object keys sorted, no whitespace, `cache_control` dropped (a marker, not
/// part of the prompt: moving it does not change the prefix).
pub fn canonical(v: &Value) -> String {
    canonical_without(v, &|k| k == "cache_control")
}

/// Canonical JSON of what an OpenAI model is shown of a request's part: without the fields
/// the API keeps beside the prompt and never renders into it (an item's `id` and `status`,
/// metadata such as codex's per-process `internal_chat_message_metadata_passthrough`).
pub fn rendered(v: &Value) -> String {
    canonical_without(v, &|k| {
        matches!(k, "id" | "status" | "cache_control") || k.contains("metadata")
    })
}

fn canonical_without(v: &Value, skip: &dyn Fn(&str) -> bool) -> String {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().filter(|k| !skip(k)).collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| {
                    let value = canonical_without(&o[*k], skip);
                    format!("{}:{value}", Value::String((*k).clone()))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(|x| canonical_without(x, skip)).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// Chains `piece` onto the hash of the prefix before it.
fn chain(before: u64, piece: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    before.hash(&mut h);
    piece.hash(&mut h);
    h.finish()
}

fn tokens(bytes: u64) -> u64 {
    bytes / 4
}

/// The TTL a block's `cache_control` asks for, if it has one.
fn breakpoint(block: &Value) -> Option<Duration> {
    let cc = block.get("cache_control")?;
    Some(match cc.get("ttl").and_then(Value::as_str) {
        Some("1h") => TTL_1H,
        _ => TTL_5M,
    })
}

/// Anthropic's prompt order, "tools, system, then messages" (platform.claude.com, prompt
/// caching: "Cache prefixes are created in the following order: tools, system, then
/// messages"): each tool definition, each system block (a string is one block), each content
/// block of each message (a string content is one block), tagged with its message's role.
/// Claude Code's billing block (`system` text starting `x-anthropic-billing-header:`) is left
/// out: Anthropic's own API does not let its per-prompt suffix bust the cache.
pub fn anthropic_blocks(body: &Value) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut push = |v: &Value, bp: Option<Duration>| {
        let text = canonical(v);
        let before = out.last().map_or(0, |b| b.prefix);
        out.push(Block {
            bytes: text.len() as u64,
            prefix: chain(before, text.as_bytes()),
            breakpoint: bp,
        });
    };
    for t in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        push(t, breakpoint(t));
    }
    match body.get("system") {
        Some(Value::Array(blocks)) => {
            for b in blocks {
                let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
                if !text.starts_with("x-anthropic-billing-header:") {
                    push(b, breakpoint(b));
                }
            }
        }
        Some(s @ Value::String(_)) => push(&serde_json::json!({"type": "text", "text": s}), None),
        _ => {}
    }
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = m.get("role").cloned().unwrap_or(Value::Null);
        match m.get("content") {
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    push(
                        &serde_json::json!({"role": role, "block": b}),
                        breakpoint(b),
                    );
                }
            }
            Some(c) => push(&serde_json::json!({"role": role, "block": c}), None),
            None => {}
        }
    }
    out
}

/// OpenAI's prompt order as its models render it: the instructions, the tools, the output
/// format, then the conversation (Responses: `instructions`, `tools`, `text.format`, each
/// `input` item; Chat Completions: `tools`, `response_format`, each message). One string of
/// canonical JSON as the model is shown it ([`rendered`]), since OpenAI matches prefixes by
/// tokens, not by blocks.
pub fn openai_text(body: &Value) -> String {
    let mut out = String::new();
    for key in ["instructions", "tools", "response_format"] {
        if let Some(v) = body.get(key) {
            out.push_str(&rendered(v));
        }
    }
    if let Some(v) = body.pointer("/text/format") {
        out.push_str(&rendered(v));
    }
    match body.get("input").or_else(|| body.get("messages")) {
        Some(Value::Array(items)) => items.iter().for_each(|i| out.push_str(&rendered(i))),
        Some(v) => out.push_str(&rendered(v)),
        None => {}
    }
    out
}

/// An entry: the prefix's tokens, its TTL and expiry, and whether a writer's answer began.
struct Entry {
    ttl: Duration,
    expires: Instant,
    ready: bool,
    /// The requests that wrote it and whose answers have not begun yet.
    writers: Vec<u64>,
}

/// Every credential's cache entries, on a clock tests can move.
#[derive(Default)]
pub struct Caches {
    entries: HashMap<(String, u64), Entry>,
    /// How far [`Caches::advance`] has moved the clock.
    skew: Duration,
}

impl Caches {
    fn now(&self) -> Instant {
        Instant::now() + self.skew
    }

    /// Moves the caches' clock on (entries expire as if that much time had passed).
    pub fn advance(&mut self, by: Duration) {
        self.skew += by;
    }

    /// Request `id`'s answer began: what it wrote becomes readable.
    pub fn begun(&mut self, id: u64) {
        for e in self.entries.values_mut() {
            if let Some(i) = e.writers.iter().position(|w| *w == id) {
                e.writers.remove(i);
                e.ready = true;
            }
        }
    }

    /// A readable entry for this prefix; reading it refreshes its expiry.
    fn read(&mut self, key: &str, prefix: u64) -> bool {
        let now = self.now();
        match self.entries.get_mut(&(key.to_string(), prefix)) {
            Some(e) if e.ready && e.expires > now => {
                e.expires = now + e.ttl;
                true
            }
            _ => false,
        }
    }

    /// Writes (or refreshes) an entry for request `id`, readable once its answer begins.
    fn write(&mut self, key: &str, prefix: u64, ttl: Duration, id: u64) {
        let now = self.now();
        let e = self
            .entries
            .entry((key.to_string(), prefix))
            .or_insert(Entry {
                ttl,
                expires: now,
                ready: false,
                writers: Vec::new(),
            });
        if e.expires <= now {
            e.ready = false;
        }
        e.ttl = e.ttl.max(ttl);
        e.expires = e.expires.max(now + ttl);
        e.writers.push(id);
    }

    /// Anthropic's rule (platform.claude.com, prompt caching): a block with `cache_control`
    /// is a breakpoint. The longest prefix that ends at a breakpoint, or at a block boundary
    /// up to 20 blocks before one, and has a readable entry is read; from there to the last
    /// breakpoint is written, an entry at each breakpoint of at least 1,024 tokens, each
    /// stretch billed at the TTL of the breakpoint that ends it; the rest is plain input. A
    /// prompt whose last breakpoint is under 1,024 tokens caches nothing.
    pub fn anthropic(&mut self, key: &str, body: &Value, id: u64) -> Usage {
        let blocks = anthropic_blocks(body);
        let mut ends = Vec::with_capacity(blocks.len());
        let mut sum = 0;
        for b in &blocks {
            sum += b.bytes;
            ends.push(tokens(sum));
        }
        let input = tokens(sum);
        let mut usage = Usage::plain(input, 0);
        let points: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].breakpoint.is_some())
            .collect();
        let Some(&last) = points.last() else {
            return usage;
        };
        if ends[last] < MIN_CACHEABLE {
            return usage;
        }
        let key = format!("anthropic\0{key}");
        // The read: the furthest boundary within the lookback of any breakpoint that hits.
        let mut candidates: Vec<usize> = points
            .iter()
            .flat_map(|&p| p.saturating_sub(LOOKBACK)..=p)
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let hit = candidates
            .into_iter()
            .rev()
            .find(|&i| self.read(&key, blocks[i].prefix));
        let mut from = hit.map_or(0, |i| ends[i]);
        usage.cache_read = from;
        for &p in &points {
            if hit.is_some_and(|h| p <= h) || ends[p] < MIN_CACHEABLE {
                continue;
            }
            let ttl = blocks[p].breakpoint.unwrap();
            let stretch = ends[p] - from;
            if ttl == TTL_1H {
                usage.cache_write_1h += stretch;
            } else {
                usage.cache_write_5m += stretch;
            }
            from = ends[p];
            self.write(&key, blocks[p].prefix, ttl, id);
        }
        usage
    }

    /// OpenAI's rule (developers.openai.com, prompt caching): automatic for prompts of at
    /// least 1,024 tokens; the longest cached prefix is read, matched in 128-token steps past
    /// the first 1,024; `cached_tokens` is counted inside the input total; writes cost
    /// nothing. Every step of the prompt is written. `prompt_cache_key` only steers OpenAI's
    /// routing (with the first ~256 tokens) and is ignored here: a hit is what a request
    /// routed to the same machine would see.
    pub fn openai(&mut self, key: &str, body: &Value, id: u64) -> Usage {
        let text = openai_text(body);
        let input = tokens(text.len() as u64);
        let mut usage = Usage::plain(input, 0);
        if input < MIN_CACHEABLE {
            return usage;
        }
        let key = format!("openai\0{key}");
        let step = (OPENAI_STEP * 4) as usize;
        let mut prefixes = Vec::new();
        let mut h = 0;
        for (i, chunk) in text.as_bytes().chunks(step).enumerate() {
            if chunk.len() < step {
                break;
            }
            h = chain(h, chunk);
            let upto = (i as u64 + 1) * OPENAI_STEP;
            if upto >= MIN_CACHEABLE {
                prefixes.push((upto, h));
            }
        }
        let hit = prefixes
            .iter()
            .rev()
            .find(|(_, p)| self.read(&key, *p))
            .map(|(upto, _)| *upto);
        usage.cache_read = hit.unwrap_or(0);
        for &(upto, p) in &prefixes {
            if hit.is_none_or(|h| upto > h) {
                self.write(&key, p, TTL_5M, id);
            }
        }
        usage
    }
}
