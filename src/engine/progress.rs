//! Live progress on a terminal: one status line on standard error (judges running and done,
//! the time since the first started, tokens and cost so far), redrawn as judges start and end
//! and every half second between, with a tool's own lines printed above it. Nothing at all
//! when standard error is not a terminal; no colour when `NO_COLOR` is set and not empty.
//! Every launching tool has it through the launcher: each call of [`Launcher::ask`] counts.
//!
//! [`Launcher::ask`]: crate::engine::call::launcher::Launcher::ask

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, bounded};

use crate::records::Usage;

/// How often the line is redrawn while a judge runs (its elapsed time moves).
const TICK: Duration = Duration::from_millis(500);

/// The progress of one tool's run; does nothing when off.
pub struct Progress {
    shared: Option<Arc<Shared>>,
    /// Dropped to stop the ticker.
    stop: Mutex<Option<Sender<()>>>,
}

struct Shared {
    tool: String,
    color: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    started: Option<Instant>,
    expected: usize,
    running: usize,
    done: usize,
    abstained: usize,
    usage: Usage,
    /// Whether the status line is on the screen now.
    shown: bool,
}

impl Progress {
    /// On when standard error is a terminal.
    pub fn for_stderr(tool: &str) -> Progress {
        let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Progress::new(tool, std::io::stderr().is_terminal(), color)
    }

    pub fn new(tool: &str, on: bool, color: bool) -> Progress {
        Progress {
            shared: on.then(|| {
                Arc::new(Shared {
                    tool: tool.to_string(),
                    color,
                    state: Mutex::new(State::default()),
                })
            }),
            stop: Mutex::new(None),
        }
    }

    pub fn is_on(&self) -> bool {
        self.shared.is_some()
    }

    /// `n` more judges are to be asked (the total shown, `done/total`).
    pub fn expect(&self, n: usize) {
        self.update(|s| s.expected += n);
    }

    /// A judge started.
    pub fn started(&self) {
        self.ticker();
        self.update(|s| {
            s.started.get_or_insert_with(Instant::now);
            s.running += 1;
        });
    }

    /// A judge ended: with an answer or without (an abstention), and what it used.
    pub fn ended(&self, answered: bool, usage: Option<&Usage>) {
        self.update(|s| {
            s.running = s.running.saturating_sub(1);
            s.done += 1;
            if !answered {
                s.abstained += 1;
            }
            if let Some(u) = usage {
                s.usage.add(u);
            }
        });
    }

    /// Prints a line of the tool's own above the status line (when progress is on).
    pub fn say(&self, line: &str) {
        if let Some(shared) = &self.shared {
            let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{}{line}", clear(s.shown));
            s.shown = false;
            shared.draw(&mut s, &mut err);
        }
    }

    /// Clears the status line, e.g. before a tool's closing words.
    pub fn clear(&self) {
        if let Some(shared) = &self.shared {
            let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.shown {
                let _ = write!(std::io::stderr().lock(), "{}", clear(true));
                s.shown = false;
            }
        }
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        if let Some(shared) = &self.shared {
            let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut s);
            shared.draw(&mut s, &mut std::io::stderr().lock());
        }
    }

    /// Starts the thread that redraws the line while judges run, once.
    fn ticker(&self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let mut stop = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        if stop.is_some() {
            return;
        }
        let (tx, rx) = bounded::<()>(0);
        let shared = Arc::clone(shared);
        let ticker = thread::Builder::new().spawn(move || {
            // Ends when the sender is dropped (a disconnect), never on a timeout.
            while let Err(crossbeam_channel::RecvTimeoutError::Timeout) = rx.recv_timeout(TICK) {
                let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                if s.running > 0 {
                    shared.draw(&mut s, &mut std::io::stderr().lock());
                }
            }
        });
        // Without a thread to spare the line is still drawn as judges start and end.
        if ticker.is_ok() {
            *stop = Some(tx);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.clear();
    }
}

impl Shared {
    /// Draws the status line while a judge runs; clears it when none does.
    fn draw(&self, s: &mut State, err: &mut impl Write) {
        if s.running == 0 {
            if s.shown {
                let _ = write!(err, "{}", clear(true));
                s.shown = false;
            }
            return;
        }
        let line = status_line(&self.tool, s, self.color);
        let _ = write!(err, "{}{line}", clear(s.shown));
        let _ = err.flush();
        s.shown = true;
    }
}

/// Goes back to the start of the status line and erases it, when it is shown.
fn clear(shown: bool) -> &'static str {
    if shown { "\r\x1b[2K" } else { "" }
}

fn status_line(tool: &str, s: &State, color: bool) -> String {
    let paint = |code: &str, text: String| {
        if color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text
        }
    };
    let total = s.expected.max(s.done + s.running);
    let mut line = format!(
        "{tool}: {} running, {} done",
        paint("33", s.running.to_string()),
        paint("32", format!("{}/{total}", s.done)),
    );
    if s.abstained > 0 {
        line.push_str(&format!(
            " ({})",
            paint("31", format!("{} abstained", s.abstained))
        ));
    }
    let secs = s.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
    line.push_str(&format!(", {secs:.0}s"));
    let u = &s.usage;
    if u.input_tokens.is_some() || u.output_tokens.is_some() {
        line.push_str(&format!(
            ", {} tokens in, {} out",
            u.input_tokens.unwrap_or(0),
            u.output_tokens.unwrap_or(0)
        ));
    }
    if let Some(cost) = u.cost_usd {
        line.push_str(&format!(", ${cost:.4}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_judges_time_tokens_and_cost() {
        let mut s = State {
            expected: 5,
            running: 2,
            done: 3,
            abstained: 1,
            ..State::default()
        };
        s.usage.add(&Usage {
            input_tokens: Some(1200),
            output_tokens: Some(40),
            cached_tokens: None,
            cost_usd: Some(0.0123),
            estimate_usd: None,
            cost_note: None,
            tier: None,
        });
        assert_eq!(
            status_line("panel-judge", &s, false),
            "panel-judge: 2 running, 3/5 done (1 abstained), 0s, 1200 tokens in, 40 out, $0.0123"
        );
        let painted = status_line("panel-judge", &s, true);
        assert!(painted.contains("\x1b[33m2\x1b[0m running"), "{painted:?}");
    }

    #[test]
    fn off_it_writes_nothing_and_keeps_no_state() {
        let p = Progress::new("t", false, true);
        p.started();
        p.ended(true, None);
        p.say("x");
        assert!(!p.is_on());
        assert!(p.stop.lock().unwrap().is_none());
    }
}
