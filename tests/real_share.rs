//! What the real CLIs take of a judge's share (docs/design.md §8, "A judge's share"): each
//! installed CLI answers a long candidate (100 KiB: some CLIs take the prompt only as one argument) through `panel-judge` under the default
//! limits, against the stand-in model server, while its processes are looked at every 50 ms
//! from outside: their memory (resident, summed), tasks (processes and threads), open files
//! (the most one process held), inotify instances and watches; the judge's cgroup (where there
//! is one) and its disk say their own peaks in `exit.json`. Each CLI must run well inside the
//! defaults, at most half of each; the measured table is printed with `--nocapture`:
//!
//!     cargo test --test real real_share -- --nocapture
//!
//! `PANEL_SHARE_ARGS='--judge-memory 512M'` runs them with other limits instead, and says which
//! answered (how the lowest limit each CLI tolerates was found).
//!
//! The defaults in docs/design.md were chosen from this table.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::real_cli::real_cli;
use crate::real_judge::{Slot, Stage, case};
use crate::util::Checked;

/// The most of each share a CLI took, as looked at.
#[derive(Clone, Debug, Default)]
struct Peak {
    /// Resident bytes of its processes, summed.
    rss: u64,
    tasks: u64,
    files: u64,
    inotify: u64,
    watches: u64,
    /// The most data (what `RLIMIT_DATA` bounds) and address space (`RLIMIT_AS`) of one
    /// process: why the first, not the second, bounds memory where there is no cgroup.
    data: u64,
    space: u64,
}

/// One look at the processes whose HOME is under `tmp` (the judges' private folders).
fn look(tmp: &str) -> Peak {
    let prefix = format!("HOME={tmp}/");
    let mut p = Peak::default();
    for pid in crate::util::processes_with_env(&prefix) {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        p.rss += field("VmRSS:") << 10;
        p.tasks += field("Threads:");
        p.data = p.data.max(field("VmData:") << 10);
        p.space = p.space.max(field("VmSize:") << 10);
        let fds: Vec<_> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        p.files = p.files.max(fds.len() as u64);
        for fd in fds {
            let inotify = std::fs::read_link(fd.path())
                .is_ok_and(|l| l.to_string_lossy().contains("inotify"));
            if inotify {
                p.inotify += 1;
                let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
                let text = std::fs::read_to_string(info).unwrap_or_default();
                p.watches += text
                    .lines()
                    .filter(|l| l.starts_with("inotify wd:"))
                    .count() as u64;
            }
        }
    }
    p
}

/// `look`s every 50 ms until stopped; the most of each.
fn watch(tmp: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Peak> {
    std::thread::spawn(move || {
        let mut most = Peak::default();
        while !stop.load(Ordering::SeqCst) {
            let p = look(&tmp);
            most.rss = most.rss.max(p.rss);
            most.tasks = most.tasks.max(p.tasks);
            most.files = most.files.max(p.files);
            most.inotify = most.inotify.max(p.inotify);
            most.watches = most.watches.max(p.watches);
            most.data = most.data.max(p.data);
            most.space = most.space.max(p.space);
            std::thread::sleep(Duration::from_millis(50));
        }
        most
    })
}

const MIB: u64 = 1 << 20;

/// Each installed CLI, answering a long candidate, runs well inside the default share.
#[test]
fn the_real_clis_run_well_inside_the_default_share() {
    let clis = [
        "claude", "codex", "copilot", "opencode", "gemini", "qwen", "kimi", "llm",
    ];
    let line = "The function `first(xs)` returns `xs[0]` and never raises; it is called on every list the parser builds.\n";
    // The longest every CLI takes: some take the prompt only as one argument (128 KiB).
    let work = format!("# first\n\n{}", line.repeat((100 << 10) / line.len()));
    let asked = std::env::var("PANEL_SHARE_ARGS").unwrap_or_default();
    let extra: Vec<&str> = asked.split_whitespace().collect();
    let mut table = BTreeMap::new();
    let mut wrong = Vec::new();
    for name in clis {
        let Some(exe) = real_cli(name) else {
            continue;
        };
        let _slot = Slot::take();
        let bindir = exe.parent().unwrap().to_path_buf();
        let stage = Stage::with_work(case(name), &bindir, "share", &work, "work.md");
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = watch(stage.scratch.display().to_string(), Arc::clone(&stop));
        let out = stage.panel_judge(120.0, &extra).checked_output().unwrap();
        stop.store(true, Ordering::SeqCst);
        let seen = watcher.join().unwrap();
        let rec: Value = serde_json::from_str(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .unwrap_or("null"),
        )
        .unwrap_or(Value::Null);
        if rec["status"] != "ok" {
            wrong.push(format!(
                "{name}: {rec} {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        if !extra.is_empty() {
            println!("{name} answered under {asked}: {}", rec["sandbox"]);
        }
        let judge = rec["judge"].as_str().unwrap_or("");
        let exit: Value =
            std::fs::read_to_string(stage.run.join(judge).join("attempt-1/exit.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
        table.insert(
            name,
            (
                seen,
                exit,
                rec["sandbox"].as_str().unwrap_or("").to_string(),
            ),
        );
    }
    let mut shown = String::new();
    let mut say = |s: String| shown.push_str(&s);
    say("| CLI | memory (cgroup peak) | resident, summed | data, one process | address space, one process | processes and threads | files, one process | inotify | watches | disk |\n".into());
    say("|---|---|---|---|---|---|---|---|---|---|\n".into());
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / MIB as f64);
    let share = panel::internals::defaults();
    for (name, (seen, exit, said)) in &table {
        let memory = exit["memoryPeak"].as_u64();
        let tasks = exit["processesPeak"]
            .as_u64()
            .unwrap_or(seen.tasks)
            .max(seen.tasks);
        let disk = exit["diskPeak"].as_u64().unwrap_or(0);
        say(format!(
            "| {name} | {} | {} | {} | {} | {tasks} | {} | {} | {} | {} |\n",
            memory.map_or("-".to_string(), mib),
            mib(seen.rss),
            mib(seen.data),
            mib(seen.space),
            seen.files,
            seen.inotify,
            seen.watches,
            mib(disk)
        ));
        // At most half of each default: a CLI's next version may take more.
        // Where no cgroup counts it, what it holds: its data is mostly reserved (bun sizes its
        // reservations to the limit).
        let most = memory.unwrap_or(seen.rss);
        let checks = [
            ("memory", most, share.memory / 2),
            ("processes", tasks, share.processes / 2),
            ("disk", disk, share.disk / 2),
            ("files", seen.files, share.files / 2),
            ("inotify", seen.inotify, share.inotify / 2),
            ("watches", seen.watches, share.watches / 2),
        ];
        for (what, used, half) in checks {
            if used > half {
                wrong.push(format!(
                    "{name}: {what} {used} is past half its default ({half}): {said}"
                ));
            }
        }
    }
    println!("{shown}");
    if !extra.is_empty() {
        println!("not answered under {asked}: {wrong:#?}");
        return;
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
