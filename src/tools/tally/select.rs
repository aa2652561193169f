//! Which panels of a history a view keeps, for `--history` and `--ledger` alike: since a time
//! (`--since`), with a seat (`--seat`), of a run (`--run`), about a candidate or a folder of
//! work (`--candidate`). A panel is the records of one run folder (its candidate's seal when a
//! record names none), kept or left out whole: its other judges stay beside the seat asked
//! for, as agreement needs them, and a canary's record goes with its run.
//!
//! A verdict record names its candidate by seal alone, so a file or folder is read and sealed
//! here, as it is now: a candidate edited since it was judged no longer matches.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};

use crate::engine::clock;
use crate::records::printable::inline;

/// The options of `--history`, kept apart so that Args gains one field.
#[derive(clap::Args, Debug, Default)]
pub struct Filters {
    /// Print the panels of a history (panel-judge's, where --history, $PANEL_HISTORY or
    /// $XDG_STATE_HOME/panel/history.jsonl puts it; or FILE), oldest first, each as its records
    /// alone would be reported, after a line with its time, candidate and run folder. A panel
    /// is the records of one run folder, however the lines of parallel runs interleaved; its
    /// time is when its run started, as panel names the run folder (else that folder's
    /// modification time). A line that is not a verdict record (torn) is skipped with a note.
    /// Exit 0 when read, whatever the panels decided.
    #[arg(long, value_name = "FILE", num_args = 0..=1,
          conflicts_with_all = ["inputs", "ledger", "pr", "each", "view"])]
    pub history: Option<Option<PathBuf>>,

    /// With --history or --ledger: only panels since WHEN, an RFC 3339 time
    /// (2026-12-01T09:00:00Z, or a date) or an age back from now (90s, 30m, 24h, 7d, 2w). A
    /// panel's time is when its run started, as panel names its run folder, else that folder's
    /// modification time; a panel with neither (its folder gone) is left out, and counted.
    #[arg(long, value_name = "WHEN", requires = "reading")]
    pub since: Option<String>,

    /// With --history or --ledger: only panels where this seat sat (HARNESS[:MODEL], as
    /// panel-judge was given it), kept whole, its other judges too; repeated, any of them.
    #[arg(long = "seat", value_name = "SEAT", requires = "reading")]
    pub seats: Vec<String>,

    /// With --history or --ledger: only the panel of this run: its run folder's path or name
    /// (20261202T173135Z-3f9a1c0d22e4, as `verdicts:` and --runs show it) or the id at its
    /// end (3f9a1c0d22e4); repeated, any of them.
    #[arg(long = "run", value_name = "RUN", requires = "reading")]
    pub run_ids: Vec<String>,

    /// With --history: only panels with a judge of this name, shown whole (every judge's line
    /// and the panel's outcome); repeated, a panel with any of them.
    #[arg(long = "judge", value_name = "NAME", requires = "history")]
    pub judges: Vec<String>,

    /// With --history or --ledger: only panels about this candidate: a file (its seal, as it
    /// is now), a folder of work (the seals of the files under it, .git aside), a seal
    /// (sha256:HEX) or the start of its hex; repeated, any of them.
    #[arg(long = "candidate", value_name = "X", requires = "reading")]
    pub candidates: Vec<String>,

    /// With --history: only the newest N panels (after the other filters), still oldest first.
    #[arg(long, value_name = "N", requires = "history")]
    pub last: Option<usize>,
}

/// `--since`: a moment, or an age counted back from now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Seconds since the epoch.
    At(i64),
    Ago(Duration),
}

/// Seconds since the epoch of `t`.
pub fn seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// Parses `--since`.
pub fn when(text: &str) -> Result<When, String> {
    let bad = || {
        format!(
            "{:?}: not an RFC 3339 time (2026-12-01T09:00:00Z) nor an age (30m, 12h, 7d)",
            inline(text)
        )
    };
    if let Some(unit) = text.chars().last().filter(|c| c.is_ascii_alphabetic())
        && let Some(n) = text[..text.len() - 1]
            .parse::<u64>()
            .ok()
            .filter(|_| text.as_bytes()[0].is_ascii_digit())
    {
        let scale = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return Err(bad()),
        };
        return n
            .checked_mul(scale)
            .map(|s| When::Ago(Duration::from_secs(s)))
            .ok_or_else(bad);
    }
    rfc3339(text).map(When::At).ok_or_else(bad)
}

/// Seconds since the epoch of `2026-12-01T09:00:00Z` (fraction, `±HH:MM`, `t`, ` ` allowed),
/// or of a date alone (its midnight, UTC).
pub(crate) fn rfc3339(text: &str) -> Option<i64> {
    if text.len() != 10 {
        return clock::parse_rfc3339(text).map(|(secs, _)| secs);
    }
    // A date alone: the same reading at its midnight.
    clock::parse_rfc3339(&format!("{text}T00:00:00Z")).map(|(secs, _)| secs)
}

/// The most files `--candidate DIR` seals: past it, name a smaller folder.
pub const MAX_FOLDER_FILES: usize = 100_000;

/// The panels to keep; keeps every one when no filter is given.
#[derive(Debug, Default)]
pub struct Select {
    /// Seconds since the epoch.
    since: Option<i64>,
    seats: Vec<String>,
    runs: Vec<String>,
    /// Whole seals (a file's, a folder's files').
    seals: HashSet<String>,
    /// The start of a seal (`sha256:` and some hex).
    prefixes: Vec<String>,
    /// Whether `--candidate` was given (a folder may seal to nothing a panel is about).
    candidates: bool,
}

/// What a kept-or-not decision looks at: one panel's facts.
pub struct Panel<'a> {
    pub run: &'a str,
    /// When its run started; `None` unknown.
    pub time: Option<i64>,
    /// The candidate of its records that are not canaries' (empty when all are).
    pub candidate: &'a str,
    /// Whether a judge of one of the seats asked for sat on it.
    pub seated: bool,
}

/// Whether a panel is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    Yes,
    No,
    /// Left out by `--since` because its time is unknown (its run folder is gone).
    Untimed,
}

impl Select {
    /// The filters, checked: a bad value is one line (exit 2).
    pub fn new(f: &Filters, now: SystemTime) -> Result<Select> {
        let mut s = Select {
            since: f.since.as_deref().map(|w| since(w, now)).transpose()?,
            candidates: !f.candidates.is_empty(),
            ..Select::default()
        };
        for seat in &f.seats {
            check_seat(seat)?;
            s.seats.push(seat.clone());
        }
        for run in &f.run_ids {
            if run.is_empty() || run.chars().any(char::is_control) {
                bail!(
                    "--run {:?}: not a run: give its id, its folder's name or its path",
                    inline(run)
                );
            }
            s.runs.push(run.trim_end_matches('/').to_string());
        }
        for x in &f.candidates {
            s.candidate(x)?;
        }
        Ok(s)
    }

    /// Whether any filter was given.
    pub fn any(&self) -> bool {
        self.since.is_some() || !self.seats.is_empty() || !self.runs.is_empty() || self.candidates
    }

    /// Whether `seat` is one asked for (every seat is, with no `--seat`).
    pub fn seat(&self, seat: &str) -> bool {
        self.seats.is_empty() || self.seats.iter().any(|s| s == seat)
    }

    /// Whether `--since` asks for the panels' times.
    pub fn timed(&self) -> bool {
        self.since.is_some()
    }

    /// Whether the panel is kept; one left out for want of a time is counted in `untimed`.
    pub fn keeps(&self, p: &Panel, untimed: &mut usize) -> bool {
        match self.panel(p) {
            Kept::Yes => true,
            Kept::No => false,
            Kept::Untimed => {
                *untimed += 1;
                false
            }
        }
    }

    /// Whether the panel is kept: every filter given must keep it.
    pub fn panel(&self, p: &Panel) -> Kept {
        let kept = p.seated
            && (self.runs.is_empty() || self.runs.iter().any(|r| same_run(p.run, r)))
            && (!self.candidates || self.sealed(p.candidate));
        match (kept, self.since, p.time) {
            (false, ..) => Kept::No,
            (true, None, _) => Kept::Yes,
            (true, Some(s), Some(t)) if t >= s => Kept::Yes,
            (true, Some(_), Some(_)) => Kept::No,
            (true, Some(_), None) => Kept::Untimed,
        }
    }

    fn sealed(&self, seal: &str) -> bool {
        !seal.is_empty()
            && (self.seals.contains(seal) || self.prefixes.iter().any(|p| seal.starts_with(p)))
    }

    /// Adds what `--candidate X` matches: a file's seal, the seals of a folder's files, or a
    /// seal or the start of its hex.
    fn candidate(&mut self, x: &str) -> Result<()> {
        let path = Path::new(x);
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => {
                let before = self.seals.len();
                seal_folder(path, &mut self.seals)?;
                if self.seals.len() == before {
                    bail!(
                        "--candidate {:?}: a folder with no file in it a panel could judge",
                        inline(x)
                    );
                }
                return Ok(());
            }
            Ok(_) => {
                let seal = crate::records::candidate::Candidate::read(x)?.seal;
                self.seals.insert(seal);
                return Ok(());
            }
            Err(_) => {}
        }
        let hex = x.strip_prefix("sha256:").unwrap_or(x);
        if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!(
                "--candidate {:?}: no such file or folder, and not a seal (sha256:HEX) or the \
                    start of its hex",
                inline(x)
            );
        }
        self.prefixes
            .push(format!("sha256:{}", hex.to_ascii_lowercase()));
        Ok(())
    }
}

/// `--seat`: a seat as panel-judge is given it, `HARNESS[:MODEL]`.
fn check_seat(seat: &str) -> Result<()> {
    let harness = seat.split(':').next().unwrap_or_default();
    if harness.is_empty() || seat.chars().any(|c| c.is_control() || c.is_whitespace()) {
        bail!(
            "--seat {:?}: not a seat: HARNESS[:MODEL], as panel-judge was given it (claude:haiku)",
            inline(seat)
        );
    }
    Ok(())
}

/// `--since`: an RFC 3339 time or an age, as seconds since the epoch.
fn since(text: &str, now: SystemTime) -> Result<i64> {
    match when(text) {
        Ok(When::At(t)) => Ok(t),
        Ok(When::Ago(d)) => Ok(seconds(now) - d.as_secs().min(i64::MAX as u64 / 2) as i64),
        Err(why) => bail!("--since {why}"),
    }
}

/// Whether the run folder `run` (as a record names it) is the one `wanted` names: its path,
/// its folder's name, or the id at the end of a name panel gives (`…Z-3f9a1c0d22e4`).
fn same_run(run: &str, wanted: &str) -> bool {
    let run = run.trim_end_matches('/');
    if run.is_empty() {
        return false;
    }
    let name = run.rsplit('/').next().unwrap_or(run);
    run == wanted
        || name == wanted
        || name
            .rsplit_once('-')
            .is_some_and(|(_, id)| id == wanted && wanted.len() == 12)
}

/// When the run in folder `run` started: the time in its name, as panel names a run folder
/// (a name that outlives a pruned folder), else the folder's modification time (looked at,
/// never followed), else unknown.
pub fn run_time(run: &str) -> Option<i64> {
    if run.is_empty() {
        return None;
    }
    let name = Path::new(run).file_name()?.to_str()?;
    if let Some(secs) = crate::engine::runs::started_at(name) {
        return i64::try_from(secs).ok();
    }
    let meta = std::fs::symlink_metadata(run).ok().filter(|m| m.is_dir())?;
    meta.modified().ok().map(seconds)
}

/// Seals every file a panel could judge under `dir` (not `.git`, never through a symbolic
/// link), at most [`MAX_FOLDER_FILES`] of them.
fn seal_folder(dir: &Path, seals: &mut HashSet<String>) -> Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let path = e.path();
            if kind.is_dir() && e.file_name() != ".git" {
                stack.push(path);
            } else if kind.is_file() {
                files += 1;
                if files > MAX_FOLDER_FILES {
                    bail!(
                        "--candidate {:?}: more than {MAX_FOLDER_FILES} files: name a smaller \
                            folder",
                        inline(&dir.display().to_string())
                    );
                }
                // What no panel could judge (empty, binary, too large) matches nothing.
                if let Some(c) = path
                    .to_str()
                    .and_then(|p| crate::records::candidate::Candidate::read(p).ok())
                {
                    seals.insert(c.seal);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_reads_rfc_3339_and_ages() {
        assert_eq!(when("2026-12-01T09:00:00Z"), Ok(When::At(1_796_115_600)));
        assert_eq!(
            when("2026-12-01t10:30:00.25+01:30"),
            Ok(When::At(1_796_115_600))
        );
        assert_eq!(when("2026-12-01"), Ok(When::At(1_796_083_200)));
        assert_eq!(when("1969-12-31T23:59:59Z"), Ok(When::At(-1)));
        assert_eq!(when("7d"), Ok(When::Ago(Duration::from_secs(7 * 86_400))));
        assert_eq!(when("30m"), Ok(When::Ago(Duration::from_secs(1800))));
        assert_eq!(when("12h"), Ok(When::Ago(Duration::from_secs(43_200))));
        for bad in [
            "",
            "d",
            "7",
            "7y",
            "-7d",
            "+7d",
            "7 d",
            "2026-02-30",
            "2026-13-01",
            "2026-12-01T25:00:00Z",
            "2026-12-01T09:00:00",
            "2026-12-01T09:00:00+0100",
            "99999999999999999999d",
            "é",
            "2026-12-01T09:00:00.Z",
            "yesterday\u{1b}",
        ] {
            assert!(when(bad).is_err(), "{bad:?}");
        }
        assert!(when("x\u{1b}[2J").unwrap_err().contains("\\x1b"));
    }

    fn filters(f: impl FnOnce(&mut Filters)) -> Result<Select> {
        let mut filters = Filters::default();
        f(&mut filters);
        Select::new(
            &filters,
            SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(10 * 86_400),
        )
    }

    fn panel<'a>(run: &'a str, time: Option<i64>, candidate: &'a str) -> Panel<'a> {
        Panel {
            run,
            time,
            candidate,
            seated: true,
        }
    }

    #[test]
    fn a_run_is_named_by_its_path_its_name_or_its_id() {
        let run = "/c/panel/runs/20261202T173135Z-3f9a1c0d22e4";
        for wanted in [run, "20261202T173135Z-3f9a1c0d22e4", "3f9a1c0d22e4"] {
            assert!(same_run(run, wanted), "{wanted}");
            assert!(same_run(&format!("{run}/"), wanted), "{wanted}");
        }
        for other in ["3f9a1c0d22e5", "3f9a", "runs", "", "/c/panel"] {
            assert!(!same_run(run, other), "{other}");
        }
        assert!(same_run("out", "out"));
        assert!(!same_run("", ""));
    }

    #[test]
    fn every_filter_given_must_keep_the_panel() {
        let s = filters(|f| {
            f.since = Some("2d".into());
            f.run_ids = vec!["3f9a1c0d22e4".into()];
            f.candidates = vec!["sha256:ab".into()];
        })
        .unwrap();
        assert!(s.any());
        let day = 86_400;
        let run = "/r/19700109T000000Z-3f9a1c0d22e4";
        let seal = "sha256:abcd";
        assert_eq!(s.panel(&panel(run, Some(9 * day), seal)), Kept::Yes);
        assert_eq!(s.panel(&panel(run, Some(7 * day), seal)), Kept::No);
        assert_eq!(s.panel(&panel(run, None, seal)), Kept::Untimed);
        assert_eq!(s.panel(&panel("/r/x", Some(9 * day), seal)), Kept::No);
        assert_eq!(s.panel(&panel(run, Some(9 * day), "sha256:ac")), Kept::No);
        assert_eq!(s.panel(&panel(run, Some(9 * day), "")), Kept::No);
        let mut unseated = panel(run, Some(9 * day), seal);
        unseated.seated = false;
        assert_eq!(s.panel(&unseated), Kept::No);
        let all = filters(|_| {}).unwrap();
        assert!(!all.any() && all.seat("any:seat"));
        assert_eq!(all.panel(&panel("", None, "")), Kept::Yes);
    }

    #[test]
    fn bad_values_say_what_is_wanted() {
        let err = |f: fn(&mut Filters)| format!("{:#}", filters(f).unwrap_err());
        assert!(err(|f| f.since = Some("yesterday".into())).contains("not an RFC 3339 time"));
        assert!(err(|f| f.seats = vec![":haiku".into()]).contains("not a seat"));
        assert!(err(|f| f.seats = vec!["".into()]).contains("not a seat"));
        assert!(err(|f| f.seats = vec!["claude haiku".into()]).contains("not a seat"));
        assert!(err(|f| f.run_ids = vec!["".into()]).contains("not a run"));
        assert!(err(|f| f.run_ids = vec!["a\u{1b}b".into()]).contains("\\x1b"));
        assert!(
            err(|f| f.candidates = vec!["/no/such/not-hex".into()])
                .contains("no such file or folder")
        );
    }

    #[test]
    fn a_folder_is_the_seals_of_its_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs/.git")).unwrap();
        std::fs::write(dir.path().join("docs/a.md"), "a\n").unwrap();
        std::fs::write(dir.path().join("b.md"), "b\n").unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        std::fs::write(dir.path().join("docs/.git/c"), "c\n").unwrap();
        let p = dir.path().to_str().unwrap().to_string();
        let s = filters(|f| f.candidates = vec![p]).unwrap();
        let seal = crate::records::candidate::seal;
        assert!(s.sealed(&seal(b"a\n")) && s.sealed(&seal(b"b\n")));
        assert!(!s.sealed(&seal(b"c\n")));
        assert_eq!(s.seals.len(), 2);
        let empty = tempfile::tempdir().unwrap();
        let p = empty.path().to_str().unwrap().to_string();
        assert!(
            format!("{:#}", filters(|f| f.candidates = vec![p]).unwrap_err())
                .contains("no file in it")
        );
    }

    #[test]
    fn a_runs_time_is_in_its_name_even_once_it_is_gone() {
        assert_eq!(
            run_time("/gone/20261202T173135Z-3f9a1c0d22e4"),
            Some(1_796_232_695)
        );
        assert_eq!(run_time("/gone/run-a"), None);
        assert_eq!(run_time(""), None);
    }
}
