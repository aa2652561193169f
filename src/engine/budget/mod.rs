//! A budget for a whole run (`--budget-usd D`, `PANEL_BUDGET_USD`): each judge's cost is
//! estimated before it is launched, from its prompt's size, its row's measured overhead and the
//! history's typical answer length, priced from the price table ([`prices`]). A judge whose
//! estimate would take what is spent and in flight past the budget is never launched: the
//! launcher records it cancelled with the cause. Once a judge ends, its estimate leaves the
//! in-flight sum and what it cost joins the spent one: the harness's own figure where it
//! reports one, else its tokens priced, else the estimate.
//!
//! Many tools may share one budget (`panel-fleet`): `PANEL_BUDGET_FILE` names a file that holds
//! the sums, read and written under an exclusive `flock`.

pub mod prices;

use std::collections::HashMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::engine::harness::{HarnessKind, Overhead, Seat};
use crate::records::{Tier, Usage};
use prices::{Price, Priced, Prices};

/// Bytes a token is counted as: the usual rule of thumb for English and code.
pub const BYTES_PER_TOKEN: u64 = 4;

/// A row with no measured overhead is estimated at the largest floor the seed measured:
/// Claude Code's 25,949 input tokens (4,290 cache write, 21,649 cache read, 10 input) for a
/// one-sentence question, at 4 bytes a token; one request.
pub const DEFAULT_OVERHEAD: Overhead = Overhead {
    request_bytes: 103_796,
    requests: 1,
};

/// The prompt of the judge a row's overhead was measured with (benches/overhead.sh: the seed's
/// example through its first lens): a measured first request carries it already, so it is taken
/// off before this call's own prompt is added.
pub const MEASURED_PROMPT_BYTES: u64 = 1_012;

/// A seat the history has no answer of is estimated to answer this many output tokens: a
/// verdict and a few sentences of reason, with room for a reasoning model's hidden tokens.
pub const DEFAULT_ANSWER_TOKENS: u64 = 500;

/// One judge's estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// The model priced (`replay` for recorded answers, which cost nothing).
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub usd: f64,
}

/// The estimate of one call: every request carries the overhead (less the measured example's
/// prompt) and this prompt; every input
/// token is priced as uncached (a cache that does not hit costs that), the answer at the
/// output price.
pub fn estimate(
    prompt_bytes: usize,
    overhead: Overhead,
    answer_tokens: u64,
    p: &Priced,
) -> Estimate {
    let requests = u64::from(overhead.requests.max(1));
    let per_request = overhead
        .request_bytes
        .saturating_sub(MEASURED_PROMPT_BYTES)
        .saturating_add(prompt_bytes as u64)
        .div_ceil(BYTES_PER_TOKEN);
    let input_tokens = per_request.saturating_mul(requests);
    Estimate {
        model: p.model.clone(),
        input_tokens,
        output_tokens: answer_tokens,
        usd: (input_tokens as f64 * p.price.input + answer_tokens as f64 * p.price.output) / 1e6,
    }
}

/// A harness's own figure for what a call cost is believed up to this many times its tokens
/// priced (or, where it reported no tokens, its estimate): a real bill differs from the table by
/// a price change or a cache write, never by ten times.
pub const REPORTED_FACTOR: f64 = 10.0;

/// ... plus this many USD, so that a call whose tokens price to almost nothing may still report
/// what else it paid for (a search, a tool call's fee).
pub const REPORTED_ALLOWANCE_USD: f64 = 0.01;

/// What a call is counted to have cost, and why the harness's own figure was not taken when it
/// was not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cost {
    pub usd: Option<f64>,
    pub note: Option<String>,
}

/// Whether a cost a harness reported is taken: a judge's CLI writes it, and a judge is hostile
/// until proven otherwise, so its word is taken only when it is a finite number at least 0
/// and, where its model has a price, at most [`REPORTED_FACTOR`] times `priced` (its tokens,
/// else its estimate, priced) plus [`REPORTED_ALLOWANCE_USD`]. Else why not, in a few words.
pub fn reported_cost_taken(reported: f64, priced: Option<f64>) -> Result<(), String> {
    if !reported.is_finite() || reported < 0.0 {
        return Err("not a finite number at least 0".into());
    }
    match priced {
        Some(p) if reported > REPORTED_FACTOR * p + REPORTED_ALLOWANCE_USD => Err(format!(
            "more than {REPORTED_FACTOR} times its tokens priced (${p:.6}) and ${REPORTED_ALLOWANCE_USD}"
        )),
        _ => Ok(()),
    }
}

/// The share of its tier's price a call's tokens are priced at: OpenAI's flex processing is
/// priced as its Batch API, half the standard price ("flex-processing" guide).
pub fn tier_share(tier: Option<Tier>) -> f64 {
    match tier {
        Some(Tier::Flex) => 0.5,
        Some(Tier::Standard) | None => 1.0,
    }
}

/// A call's tokens priced (cached ones at the cache-read price), or `None` when it reported no
/// tokens. Finite whatever the counts: prices are at most [`prices::MAX_PRICE`].
pub fn tokens_priced(usage: &Usage, price: &Price) -> Option<f64> {
    if usage.input_tokens.is_none() && usage.output_tokens.is_none() {
        return None;
    }
    let input = usage.input_tokens.unwrap_or(0);
    let cached = usage.cached_tokens.unwrap_or(0).min(input);
    let tokens = |n: u64, per_million: f64| n as f64 * per_million / 1e6 * tier_share(usage.tier);
    Some(
        tokens(input - cached, price.input)
            + tokens(cached, price.cache_read)
            + tokens(usage.output_tokens.unwrap_or(0), price.output),
    )
    .filter(|c| c.is_finite())
}

/// What a call cost: the harness's own figure where [`reported_cost_taken`] takes it, else its
/// tokens priced (when its model has a price), else `None`; with a note when a figure was given
/// and not taken. `estimate` stands for the tokens of a call that reported none.
pub fn actual(usage: &Usage, price: Option<&Price>, estimate: Option<f64>) -> Cost {
    let priced = price.and_then(|p| tokens_priced(usage, p));
    let Some(reported) = usage.cost_usd else {
        return Cost {
            usd: priced,
            note: None,
        };
    };
    let against = price.and(priced.or(estimate));
    match reported_cost_taken(reported, against) {
        Ok(()) => Cost {
            usd: Some(reported),
            note: None,
        },
        Err(why) => Cost {
            usd: priced,
            note: Some(format!(
                "the reported cost {reported:e} USD was not taken: {why}; {}",
                if priced.is_some() {
                    "its tokens priced instead"
                } else {
                    "no cost instead"
                }
            )),
        },
    }
}

/// A judge's usage as its record keeps it when no budget counts it: a reported cost not
/// taken by [`actual`] is replaced by its tokens priced (`price`, where its model has one), or
/// left out, and the record's usage says why (`costNote`).
pub fn check_reported(usage: &mut Option<Usage>, price: Option<&Price>) {
    let Some(u) = usage.as_mut() else { return };
    if u.cost_usd.is_none() {
        return;
    }
    let cost = actual(u, price, None);
    if let Some(note) = cost.note {
        u.cost_usd = cost.usd;
        u.cost_note = Some(note);
    }
}

/// Each seat's typical answer length: the median output tokens of its answers (status ok, or
/// position-inconsistent) in a history of verdict or pairwise records. Any other line is passed over: an estimate is all it serves.
pub fn answer_lengths(path: &Path) -> HashMap<String, u64> {
    let mut seen: HashMap<String, Vec<u64>> = HashMap::new();
    let Ok(mut input) = crate::records::input::Input::open(&path.to_string_lossy()) else {
        return HashMap::new();
    };
    let mut buf = String::new();
    while let Ok(true) = input.next_line(&mut buf) {
        let Some(s) = crate::records::view::loosely(&buf) else {
            continue;
        };
        let out = s.usage.and_then(|u| u.output_tokens);
        // A position-inconsistent judge answered both orders: its answers count.
        use crate::records::Status;
        if let (Status::Ok | Status::PositionInconsistent, Some(n)) = (s.status, out) {
            seen.entry(s.seat.into_owned()).or_default().push(n);
        }
    }
    seen.into_iter()
        .map(|(seat, mut n)| {
            n.sort_unstable();
            (seat, n[n.len() / 2])
        })
        .collect()
}

/// What estimates a judge: the prices and the history's answer lengths.
#[derive(Clone, Debug)]
pub struct Pricer {
    pub prices: Prices,
    pub lengths: HashMap<String, u64>,
}

impl Pricer {
    /// The prices (`--prices`, `PANEL_PRICES`, over the shipped table) and the answer lengths
    /// of the history at `history`, else of the default one (none when none is kept).
    pub fn load(prices: Option<&Path>, history: Option<&Path>) -> Result<Pricer> {
        let prices = Prices::load(prices)?;
        let var = |k: &str| std::env::var(k).ok();
        let path = match history {
            Some(p) => Some(p.to_path_buf()),
            None => crate::engine::history::location(None, false, &var).and_then(Result::ok),
        };
        let lengths = path
            .filter(|p| p.as_os_str() != "-" && p.is_file())
            .map(|p| answer_lengths(&p))
            .unwrap_or_default();
        Ok(Pricer { prices, lengths })
    }

    /// An estimate of one call with a prompt of `prompt_bytes`, and the seat's price (none for
    /// recorded answers, which cost nothing and are priced by nobody).
    pub fn estimate(&self, seat: &Seat, prompt_bytes: usize) -> Result<(Estimate, Option<Price>)> {
        if seat.harness.kind == HarnessKind::Replay {
            let free = Priced {
                model: "replay".into(),
                price: Price {
                    aliases: Vec::new(),
                    input: 0.0,
                    cache_read: 0.0,
                    output: 0.0,
                    date: String::new(),
                    source: String::new(),
                },
            };
            return Ok((
                estimate(
                    0,
                    Overhead {
                        request_bytes: 0,
                        requests: 1,
                    },
                    0,
                    &free,
                ),
                None,
            ));
        }
        let priced = self.prices.of(seat)?;
        let overhead = seat.harness.overhead.unwrap_or(DEFAULT_OVERHEAD);
        let answer = self
            .lengths
            .get(&seat.spec)
            .copied()
            .unwrap_or(DEFAULT_ANSWER_TOKENS);
        Ok((
            estimate(prompt_bytes, overhead, answer, &priced),
            Some(priced.price),
        ))
    }
}

/// A budget's limit in USD: a finite number above 0, from the option or `PANEL_BUDGET_USD`.
pub fn parse_limit(given: Option<&str>) -> Result<Option<f64>> {
    let env = std::env::var("PANEL_BUDGET_USD")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let (from, text) = match (given, env.as_deref()) {
        (Some(t), _) => ("--budget-usd", t),
        (None, Some(t)) => ("PANEL_BUDGET_USD", t),
        (None, None) => return Ok(None),
    };
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
        _ => bail!("{from} {text:?}: a budget is a number of USD above 0"),
    }
}

/// The sums a budget is checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    pub spent: f64,
    pub in_flight: f64,
}

/// Where the sums are kept: in this process, or in a file many share.
#[derive(Debug)]
enum SpendStore {
    Here(Mutex<Spent>),
    Shared(PathBuf),
}

/// A run's budget.
#[derive(Debug)]
pub struct Budget {
    pub limit: f64,
    pub pricer: Pricer,
    ledger: SpendStore,
}

/// A judge let in: its estimate, held in flight until it ends.
#[derive(Clone, Debug)]
pub struct Admitted {
    pub estimate: Estimate,
    price: Option<Price>,
}

impl Budget {
    /// A budget of `limit` USD, its sums in `PANEL_BUDGET_FILE` when that names a file: one
    /// that is there is checked before any judge starts ([`check_file`]), and one that is not
    /// a regular file holding a budget's sums is an error.
    pub fn new(limit: f64, pricer: Pricer) -> Result<Budget> {
        let ledger = match std::env::var_os("PANEL_BUDGET_FILE").filter(|v| !v.is_empty()) {
            Some(p) => {
                let path = PathBuf::from(p);
                check_file(&path)
                    .map_err(|e| anyhow::anyhow!("PANEL_BUDGET_FILE {}: {e}", path.display()))?;
                SpendStore::Shared(path)
            }
            None => SpendStore::Here(Mutex::default()),
        };
        Ok(Budget {
            limit,
            pricer,
            ledger,
        })
    }

    /// Lets a judge in when its estimate fits beside what is spent and in flight, and holds it
    /// in flight; else why not, in one line (its record's cause).
    pub fn admit(&self, seat: &Seat, prompt_bytes: usize) -> Result<Admitted, String> {
        let (estimate, price) = self
            .pricer
            .estimate(seat, prompt_bytes)
            .map_err(|e| format!("not launched: {e:#}"))?;
        let limit = self.limit;
        self.with_totals(|t| {
            let after = t.spent + t.in_flight + estimate.usd;
            if after > limit * (1.0 + 1e-9) {
                return Err(format!(
                    "{}: its estimate ${:.6} with ${:.6} spent and ${:.6} in flight passes the budget of ${limit}",
                    crate::records::OVER_BUDGET,
                    estimate.usd,
                    t.spent,
                    t.in_flight
                ));
            }
            t.in_flight = crate::records::add_usd(t.in_flight, estimate.usd);
            Ok(())
        })?;
        Ok(Admitted { estimate, price })
    }

    /// A judge let in has ended: its estimate leaves the in-flight sum, what it cost joins the
    /// spent one, and its usage carries both (`estimateUsd`; `costUsd` from its tokens when
    /// the harness gave no figure, or one [`reported_cost_taken`] does not take, and then
    /// `costNote` says why).
    pub fn settle(&self, admitted: &Admitted, usage: &mut Option<Usage>) {
        let est = admitted.estimate.usd;
        let cost = usage
            .as_ref()
            .map(|u| actual(u, admitted.price.as_ref(), Some(est)))
            .unwrap_or_default();
        let u = usage.get_or_insert_with(Usage::default);
        u.estimate_usd = Some(est);
        if cost.note.is_some() {
            u.cost_usd = cost.usd;
            u.cost_note = cost.note;
        } else if u.cost_usd.is_none() && (u.input_tokens.is_some() || u.output_tokens.is_some()) {
            u.cost_usd = cost.usd;
        }
        let spent = cost.usd.unwrap_or(est);
        let _ = self.with_totals(|t| {
            t.in_flight = (t.in_flight - est).max(0.0);
            t.spent = crate::records::add_usd(t.spent, spent);
            Ok(())
        });
    }

    /// The sums now.
    pub fn totals(&self) -> Spent {
        let mut now = Spent::default();
        let _ = self.with_totals(|t| {
            now = *t;
            Ok(())
        });
        now
    }

    /// Runs `f` on the sums, under the file's lock when they are shared. A shared file that
    /// cannot be read or written lets no judge in.
    fn with_totals(&self, f: impl FnOnce(&mut Spent) -> Result<(), String>) -> Result<(), String> {
        match &self.ledger {
            SpendStore::Here(m) => f(&mut m.lock().unwrap_or_else(|e| e.into_inner())),
            SpendStore::Shared(path) => shared(path, f)
                .map_err(|e| format!("not launched: the budget file {}: {e}", path.display()))?,
        }
    }
}

/// The most of a budget file read: it holds two numbers.
pub const MAX_FILE: usize = 64 << 10;

/// Opens the budget file at `path` as [`shared`] and [`check_file`] do: never through a link
/// (`O_NOFOLLOW`), never waiting on a FIFO (`O_NONBLOCK`), and only a regular file, as the
/// descriptor opened says (a check of the path alone could be raced).
fn open_file(path: &Path, options: &mut std::fs::OpenOptions) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = options
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(nix::libc::ELOOP) => std::io::Error::other("a symbolic link, never followed"),
            _ => e,
        })?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a folder"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_block_device() || kind.is_char_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(std::io::Error::other(format!(
            "{what}: a budget file is a regular file"
        )));
    }
    Ok(file)
}

/// The sums a budget file holds: empty is none yet; else `{"spent":USD,"inFlight":USD}`, each a
/// finite number at least 0. Anything else is refused, never read as 0: what is spent is the
/// user's, and a file a tool cannot read is left as it is.
fn read_totals(file: &mut std::fs::File) -> std::io::Result<Spent> {
    let mut text = String::new();
    file.take(MAX_FILE as u64 + 1).read_to_string(&mut text)?;
    if text.len() > MAX_FILE {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB, the most read",
            MAX_FILE >> 10
        )));
    }
    if text.trim().is_empty() {
        return Ok(Spent::default());
    }
    let bad = |why: String| {
        std::io::Error::other(format!(
            "not a budget's sums ({{\"spent\":USD,\"inFlight\":USD}}, each a finite number at least 0): {why}"
        ))
    };
    let totals: Spent = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    for (name, v) in [("spent", totals.spent), ("inFlight", totals.in_flight)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad(format!("{name} {v}")));
        }
    }
    Ok(totals)
}

/// A budget file is fit to share before any judge starts: none yet, or a regular file (not a
/// link, a FIFO, a folder or a device) that holds a budget's sums.
pub fn check_file(path: &Path) -> std::io::Result<()> {
    match open_file(path, std::fs::OpenOptions::new().read(true)) {
        Ok(mut file) => read_totals(&mut file).map(drop),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Reads, changes and writes the sums in `path` under an exclusive lock; never through a link.
/// What is written is always finite: every addition goes through [`crate::records::add_usd`].
fn shared(
    path: &Path,
    f: impl FnOnce(&mut Spent) -> Result<(), String>,
) -> std::io::Result<Result<(), String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = open_file(
        path,
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600),
    )?;
    let mut file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| std::io::Error::from(e))?;
    let mut totals = read_totals(&mut file)?;
    let said = f(&mut totals);
    if said.is_ok() {
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(serde_json::to_string(&totals)?.as_bytes())?;
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(input: f64, cache_read: f64, output: f64) -> Price {
        Price {
            aliases: Vec::new(),
            input,
            cache_read,
            output,
            date: "2026-10-07".into(),
            source: "test".into(),
        }
    }

    #[test]
    fn an_estimate_counts_every_request_and_the_answer() {
        let p = Priced {
            model: "m".into(),
            price: price(1.0, 0.1, 5.0),
        };
        // The measured example's prompt is in the overhead: it is taken off, this one added.
        let o = Overhead {
            request_bytes: 3996 + MEASURED_PROMPT_BYTES,
            requests: 2,
        };
        let e = estimate(4, o, 100, &p);
        assert_eq!((e.input_tokens, e.output_tokens), (2000, 100));
        assert!((e.usd - (2000.0 + 500.0) / 1e6).abs() < 1e-12, "{}", e.usd);
    }

    #[test]
    fn the_actual_cost_is_the_harness_figure_else_its_tokens_priced() {
        let p = price(1.0, 0.1, 5.0);
        let mut u = Usage {
            input_tokens: Some(1000),
            cached_tokens: Some(800),
            output_tokens: Some(10),
            ..Usage::default()
        };
        let priced = actual(&u, Some(&p), None).usd.unwrap();
        assert!((priced - (200.0 + 80.0 + 50.0) / 1e6).abs() < 1e-12);
        u.cost_usd = Some(0.005);
        assert_eq!(actual(&u, Some(&p), None).usd, Some(0.005));
        assert_eq!(actual(&Usage::default(), Some(&p), None), Cost::default());
    }

    /// Issue 47: "Two judges that report `total_cost_usd` 1e308 for 1+1 tokens leave a shared
    /// `PANEL_BUDGET_FILE` at `{"spent": null}`". A reported cost is taken only when it is a
    /// finite number at least 0 within reason of its tokens priced; else the tokens priced
    /// count, and the note says why.
    #[test]
    fn a_reported_cost_past_reason_is_not_taken() {
        let p = price(1.0, 0.1, 5.0);
        let u = |cost: f64| Usage {
            input_tokens: Some(1),
            output_tokens: Some(1),
            cost_usd: Some(cost),
            ..Usage::default()
        };
        let priced = 6.0 / 1e6;
        for bad in [1e308, f64::INFINITY, f64::NAN, -1.0, -0.001, 0.011] {
            let c = actual(&u(bad), Some(&p), None);
            assert_eq!(c.usd, Some(priced), "{bad}");
            let note = c.note.unwrap();
            assert!(
                note.starts_with("the reported cost")
                    && note.ends_with("its tokens priced instead"),
                "{note}"
            );
        }
        // Within ten times the tokens priced and a cent: taken as reported.
        for good in [0.0, 0.01, 0.01 + 10.0 * priced] {
            assert_eq!(
                actual(&u(good), Some(&p), None),
                Cost {
                    usd: Some(good),
                    note: None
                }
            );
        }
        // No tokens: the estimate stands for them.
        let bare = Usage {
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        assert_eq!(actual(&bare, Some(&p), Some(0.05)).usd, Some(0.5));
        let c = actual(&bare, Some(&p), Some(0.001));
        assert_eq!(c.usd, None);
        assert!(c.note.unwrap().ends_with("no cost instead"));
        // No price (recorded answers, an unpriced model): only a number at least 0 is asked.
        assert_eq!(actual(&u(1e308), None, None).usd, Some(1e308));
        assert_eq!(actual(&u(f64::NAN), None, None).usd, None);
        // Counts at u64's end, at the dearest price: a finite sum.
        let dear = price(prices::MAX_PRICE, prices::MAX_PRICE, prices::MAX_PRICE);
        let most = Usage {
            input_tokens: Some(u64::MAX),
            output_tokens: Some(u64::MAX),
            ..Usage::default()
        };
        assert!(actual(&most, Some(&dear), None).usd.unwrap().is_finite());
    }

    #[test]
    fn a_sum_of_costs_is_always_a_number() {
        use crate::records::add_usd;
        assert_eq!(add_usd(1e308, 1e308), f64::MAX);
        assert_eq!(add_usd(1.0, f64::NAN), 1.0);
        assert_eq!(add_usd(1.0, -5.0), 1.0);
        assert_eq!(add_usd(1.0, f64::INFINITY), 1.0);
        assert_eq!(add_usd(0.5, 0.25), 0.75);
    }

    /// Issue 47: a budget file that holds no budget's sums is refused, and left as it was.
    #[test]
    fn a_budget_file_holds_finite_sums_or_is_refused() {
        let dir = std::env::temp_dir().join(format!("budget-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("b.json");
        for (text, says) in [
            (r#"{"spent":null,"inFlight":0}"#, "invalid type: null"),
            (r#"{"spent":-1,"inFlight":0}"#, "spent -1"),
            (r#"{"spent":1e999,"inFlight":0}"#, "not a budget's sums"),
            ("garbage", "not a budget's sums"),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = check_file(&f).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
            let e = shared(&f, |_| Ok(())).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
            assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
        }
        std::fs::write(&f, "").unwrap();
        check_file(&f).unwrap();
        check_file(&dir.join("none")).unwrap();
        // The sum written stays finite whatever is added.
        shared(&f, |t| {
            t.spent = crate::records::add_usd(1e308, 1e308);
            Ok(())
        })
        .unwrap()
        .unwrap();
        check_file(&f).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_budget_is_a_positive_number() {
        for bad in ["-1", "0", "NaN", "inf", "ten"] {
            let e = parse_limit(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("--budget-usd"), "{e}");
        }
        assert_eq!(parse_limit(Some("0.25")).unwrap(), Some(0.25));
    }
}
