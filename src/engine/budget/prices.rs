//! The price table a budget is counted in: per model, USD per million input, cache-read and
//! output tokens, each dated with its source. The shipped table (`prices.json` beside this
//! file) is overlaid by the user's (`--prices FILE`, `PANEL_PRICES`): a model named there
//! replaces the shipped row, and a family there its default.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::engine::harness::Seat;

/// The table shipped with panel.
pub const SHIPPED: &str = include_str!("prices.json");

/// The most of a price file read: a few hundred models fit in a few KiB.
pub const MAX_FILE: usize = crate::records::input::MAX_SETTINGS;

/// The dearest price a table may give, USD per million tokens: a thousand times the dearest
/// model sold, and low enough that every token count a CLI can report (`u64::MAX`), priced at
/// it, is a finite sum.
pub const MAX_PRICE: f64 = 1e5;

/// One model's prices, USD per million tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    /// Other names a seat may give it (`claude:haiku`), or a seat as written (`exec:llm -m x`).
    #[serde(default)]
    pub aliases: Vec<String>,
    pub input: f64,
    pub cache_read: f64,
    pub output: f64,
    /// The day the price was read, YYYY-MM-DD.
    pub date: String,
    /// Where it was read.
    pub source: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    models: BTreeMap<String, Price>,
    /// A seat that names no model is priced as its family's model here.
    #[serde(default)]
    families: BTreeMap<String, String>,
}

/// The prices, checked.
#[derive(Clone, Debug)]
pub struct Prices {
    models: BTreeMap<String, Price>,
    families: BTreeMap<String, String>,
}

/// A seat's model and its price.
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    pub model: String,
    pub price: Price,
}

impl Prices {
    /// The shipped table, overlaid by `file` when one is named (else by `PANEL_PRICES`).
    pub fn load(file: Option<&Path>) -> Result<Prices> {
        let mut table = parse(SHIPPED, "the shipped price table")?;
        let named = file.map(Path::to_path_buf).or_else(|| {
            std::env::var_os("PANEL_PRICES")
                .filter(|v| !v.is_empty())
                .map(Into::into)
        });
        if let Some(path) = named {
            let what = format!("--prices {}", path.display());
            let text = crate::records::input::read_bounded(&path, MAX_FILE, &what)?;
            let own = parse(&text, &what)?;
            table.models.extend(own.models);
            table.families.extend(own.families);
        }
        let prices = Prices {
            models: table.models,
            families: table.families,
        };
        prices.check()?;
        Ok(prices)
    }

    /// The shipped table alone.
    pub fn shipped() -> Prices {
        let table = parse(SHIPPED, "the shipped price table").unwrap_or_default();
        Prices {
            models: table.models,
            families: table.families,
        }
    }

    /// Every family names a model the table prices.
    fn check(&self) -> Result<()> {
        for (family, model) in &self.families {
            if !self.models.contains_key(model) {
                bail!("prices: the family {family:?} names the unknown model {model:?}");
            }
        }
        Ok(())
    }

    /// The price of what `seat` runs: its model by name or alias (a `provider/` prefix left
    /// out), else the seat as written, else, for a seat that names no model, its family's.
    pub fn of(&self, seat: &Seat) -> Result<Priced> {
        let named = |name: &str| {
            let name = name.to_lowercase();
            self.models
                .iter()
                .find(|(m, p)| **m == name || p.aliases.iter().any(|a| a.to_lowercase() == name))
                .map(|(m, p)| Priced {
                    model: m.clone(),
                    price: p.clone(),
                })
        };
        let model = seat.model.as_deref();
        let found = model
            .and_then(|m| named(m).or_else(|| named(m.rsplit('/').next().unwrap_or(m))))
            .or_else(|| named(&seat.spec));
        if let Some(p) = found {
            return Ok(p);
        }
        let by_family = || {
            let family = seat.family.as_deref()?;
            named(self.families.get(family)?)
        };
        match (model, by_family()) {
            (None, Some(p)) => Ok(p),
            (Some(m), _) => bail!(
                "--seat {}: no price for the model {m:?} (give it in a price file: --prices FILE)",
                seat.spec
            ),
            (None, None) => bail!(
                "--seat {}: no price for it (name its model, or price it in a price file: --prices FILE)",
                seat.spec
            ),
        }
    }
}

/// A price file read and checked: every price a finite number at least 0, dated and sourced.
fn parse(text: &str, what: &str) -> Result<File> {
    let file: File = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("{what}: not a price table: {e}"))?;
    for (model, p) in &file.models {
        for (field, v) in [
            ("input", p.input),
            ("cacheRead", p.cache_read),
            ("output", p.output),
        ] {
            if !is_price(v) {
                bail!(
                    "{what}: {model}: {field} {v} is not a price (USD per million tokens, at least 0 and at most {MAX_PRICE})"
                );
            }
        }
        if !is_date(&p.date) {
            bail!("{what}: {model}: date {:?} is not YYYY-MM-DD", p.date);
        }
        if p.source.trim().is_empty() {
            bail!("{what}: {model}: a price needs its source");
        }
    }
    Ok(file)
}

/// A price is a finite number of USD per million tokens, from 0 to [`MAX_PRICE`]: a dearer one
/// is a typo or an attack, and would price a large token count past any finite sum.
fn is_price(v: f64) -> bool {
    v.is_finite() && (0.0..=MAX_PRICE).contains(&v)
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::Table;

    fn seat(spec: &str) -> Seat {
        Seat::parse(spec, &Table::builtin(), &BTreeMap::new()).unwrap()
    }

    #[test]
    fn the_shipped_table_prices_the_default_seats() {
        let p = Prices::load(Some(Path::new("/dev/null/none"))).unwrap_err();
        assert!(p.to_string().contains("cannot read"), "{p}");
        let t = Prices {
            models: parse(SHIPPED, "shipped").unwrap().models,
            families: parse(SHIPPED, "shipped").unwrap().families,
        };
        t.check().unwrap();
        assert_eq!(
            t.of(&seat("claude:haiku")).unwrap().model,
            "claude-haiku-5-5"
        );
        assert_eq!(
            t.of(&seat("codex:gpt-5.6-luna")).unwrap().model,
            "gpt-5.6-luna"
        );
        // No model: the family's dearest, never a guess low.
        assert_eq!(t.of(&seat("claude")).unwrap().model, "claude-opus-5");
        let e = t.of(&seat("claude:mystery-9")).unwrap_err().to_string();
        assert!(e.contains("no price for the model \"mystery-9\""), "{e}");
    }

    #[test]
    fn a_bad_price_file_is_refused() {
        for (text, says) in [
            ("{", "not a price table"),
            (
                r#"{"models":{"m":{"input":-1,"cacheRead":0,"output":0,"date":"2026-01-01","source":"x"}}}"#,
                "input -1",
            ),
            (
                r#"{"models":{"m":{"input":1,"cacheRead":0,"output":0,"date":"soon","source":"x"}}}"#,
                "not YYYY-MM-DD",
            ),
            (
                r#"{"models":{"m":{"input":1,"cacheRead":0,"output":0,"date":"2026-01-01","source":""}}}"#,
                "needs its source",
            ),
            (r#"{"models":{},"colour":1}"#, "unknown field"),
            (
                r#"{"models":{"m":{"input":1,"cacheRead":0,"output":1e308,"date":"2026-01-01","source":"x"}}}"#,
                "output 100000000",
            ),
        ] {
            let e = parse(text, "f").unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
