//! The walls as a value: one judge's [`Policy`] made from its seat's facts ([`LaunchFacts`])
//! and what the host's files say ([`Host`]), by [`policy`], which reads and writes nothing.
//! The attempt gathers the facts ([`host`] is the one reading of the machine) and launches.
//! Golden files of the whole policy for each built-in row and `--sandbox` mode are under
//! `golden/` beside this file (`UPDATE_GOLDEN=1 cargo test --lib sandbox::policy` rewrites them).

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use super::egress::{self, Egress, Endpoint};
use super::grants::{self, Host};
use super::jail::{Jail, Opening, PROXY_PORT};
use super::{Policy, Walls, share};
use crate::engine::harness::{AnswerAt, Harness, find_on_path};
use crate::engine::run_folder::AttemptDirs;

/// The variables that name certificate authorities to trust, files or folders.
const CA_VARS: [&str; 5] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// A seat's facts, as the attempt has them when it is about to launch.
pub struct LaunchFacts<'a> {
    /// Its harness row.
    pub row: &'a Harness,
    /// Its model (an `exec:` seat's command).
    pub model: Option<&'a str>,
    /// The run's walls (what its `--sandbox` mode got on this kernel).
    pub walls: &'a Walls,
    /// The run's share of each judge (its report's path is the attempt's).
    pub limits: &'a share::Limits,
    /// The size of a jailed judge's disk.
    pub disk: Option<u64>,
    /// The attempt's folders.
    pub dirs: &'a AttemptDirs,
    /// Where it starts: its working folder, or a reviewer's checkout.
    pub cwd: &'a Path,
    /// A reviewer's checkout, read only.
    pub checkout: Option<&'a Path>,
    /// Whether its session is kept for a resume (its HOME is read back).
    pub keep_session: bool,
    /// Where its answer lands, and the most of an answer file the tool reads.
    pub answer: AnswerAt,
    pub answer_cap: u64,
    /// The user's HOME and environment (its `PATH`, the authorities it trusts).
    pub user_home: &'a Path,
    pub user_env: &'a BTreeMap<String, String>,
    /// `--sandbox-read`, `--sandbox-write`, `--sandbox-allow`.
    pub read: &'a [PathBuf],
    pub write: &'a [PathBuf],
    pub allow: &'a [Endpoint],
    /// The executable found on PATH, its argv and environment.
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    /// The user's configuration carried to it and the row's files, as written.
    pub texts: &'a [String],
    /// Its prompt: never read for hosts.
    pub prompt: &'a str,
    /// Its login's endpoints.
    pub login: &'a [Endpoint],
}

impl LaunchFacts<'_> {
    fn path_var(&self) -> &str {
        self.user_env.get("PATH").map_or("", String::as_str)
    }

    /// Where it runs, for the grants; an `exec:` seat's command is the host's to find.
    pub fn site(&self, command: Option<PathBuf>) -> grants::Site<'_> {
        let home = |p: &String| match p.strip_prefix("~/") {
            Some(rest) => self.user_home.join(rest),
            None => PathBuf::from(p),
        };
        let mut read: Vec<PathBuf> = self.row.sandbox_read.iter().map(home).collect();
        read.extend(self.read.iter().cloned());
        // The authorities the user's environment trusts (a company proxy's): its CLI does too.
        read.extend(
            CA_VARS
                .iter()
                .filter_map(|v| self.user_env.get(*v))
                .flat_map(|v| v.split(':'))
                .map(PathBuf::from)
                .filter(|p| p.is_absolute()),
        );
        grants::Site {
            program: self.program,
            path_env: self.path_var(),
            command,
            private: &self.dirs.private,
            checkout: self.checkout,
            read,
            write: self.write.to_vec(),
            home: self.user_home,
        }
    }
}

/// What the host's files say about `seat`'s grants (its installations, its `/etc`, which
/// granted paths are there): read here, so that [`policy`] reads nothing.
pub fn host(seat: &LaunchFacts) -> Host {
    if !seat.walls.confined() {
        return Host::default();
    }
    // An exec: seat's command runs what its first word names; anything else it names (a
    // script given to `sh`) is granted with --sandbox-read.
    let command = match (seat.row.name.as_str(), seat.model) {
        ("exec", Some(command)) => command
            .split_whitespace()
            .next()
            .and_then(|w| find_on_path(w.trim_matches(['\'', '"']), seat.path_var())),
        _ => None,
    };
    seat.site(command).host()
}

/// What its supervisor puts around it: the jail, Landlock's rules, the proxy's allow-list,
/// the ids, as the run's walls have them. Reads and writes nothing.
pub fn policy(seat: &LaunchFacts, host: &Host) -> Policy {
    let walls = seat.walls;
    let mut policy = Policy {
        grace_ms: crate::engine::lifecycle::JUDGE_GRACE.as_millis() as u64,
        private: Some(seat.dirs.private.clone()),
        share: share::Limits {
            report: Some(seat.dirs.share_report()),
            ..seat.limits.clone()
        },
        ..Policy::default()
    };
    if !walls.confined() {
        return policy;
    }
    let grants = seat.site(None).grants(host);
    let allow = endpoints(seat);
    let direct: Vec<&Endpoint> = allow.iter().filter(|e| e.is_loopback()).collect();
    let jail = walls.jail.then(|| {
        let (read, write) = grants.shown(host);
        Jail {
            read,
            write,
            cwd: seat.cwd.to_path_buf(),
            home: seat.dirs.home.clone(),
            doors: doors(&direct),
            private: seat.dirs.private.clone(),
            disk: seat.disk.map(|d| (d, share::inodes(d))),
            keep: kept_back(seat),
            // One byte past what is read: the tool can tell a longer file.
            keep_cap: Some(seat.answer_cap + 1),
        }
    });
    // The ports it may connect to: its doors in a jail; else its loopback endpoints' (the
    // supervisor adds its proxy's).
    let mut tcp: Vec<u16> = match &jail {
        Some(j) => j.doors.iter().map(|d| d.at.port()).collect(),
        None => direct.iter().map(|e| e.port).collect(),
    };
    tcp.sort_unstable();
    tcp.dedup();
    policy.confine = walls.rules_abi().map(|abi| {
        let mut rules = grants.rules(host.system(), abi, tcp, walls.jail);
        if jail.is_none() {
            rules.to = reached_at(&direct).map(|(at, _)| at).collect();
        }
        rules
    });
    policy.jail = jail;
    policy.egress = Some(Egress {
        allow,
        log: seat.dirs.egress_log(),
    });
    policy.ids = walls.ids;
    policy
}

/// A jail's doors: the proxy's own port (the first free of its loopback endpoints'), then one
/// for each loopback address of each endpoint it reaches directly.
fn doors(direct: &[&Endpoint]) -> Vec<Opening> {
    let proxy = (PROXY_PORT..)
        .find(|p| !direct.iter().any(|e| e.port == *p))
        .unwrap_or(PROXY_PORT);
    let mut doors = vec![Opening {
        at: (Ipv4Addr::LOCALHOST, proxy).into(),
        to: None,
    }];
    for (at, e) in reached_at(direct) {
        if !doors.iter().any(|d| d.at == at) {
            doors.push(Opening {
                at,
                to: Some(e.clone()),
            });
        }
    }
    doors
}

/// Each loopback address a judge reaches each endpoint of `direct` at, with its endpoint.
fn reached_at<'a>(direct: &'a [&'a Endpoint]) -> impl Iterator<Item = (SocketAddr, &'a Endpoint)> {
    direct.iter().flat_map(|e| {
        e.loopback_addresses()
            .into_iter()
            .map(move |a| (SocketAddr::new(a, e.port), *e))
    })
}

/// What the tool reads back from its private folder once it ended, relative to it: its
/// answer file, and the HOME of a session kept for a resume.
fn kept_back(seat: &LaunchFacts) -> Vec<PathBuf> {
    let mut keep = Vec::new();
    if seat.answer == AnswerAt::File {
        keep.push(PathBuf::from(
            seat.dirs.answer_file().file_name().unwrap_or_default(),
        ));
    }
    if seat.keep_session {
        keep.push(PathBuf::from(
            seat.dirs.home.file_name().unwrap_or_default(),
        ));
    }
    keep
}

/// The hosts and ports it may reach: its row's, its login's, `--sandbox-allow`'s, and those
/// of the URLs in its environment, the user's configuration carried to it and the row's
/// files (`texts`, as written before it starts) and its argv. Never what the prompt names
/// (an argument or a file that carries the prompt is not read for them), nor anything the
/// judge could write: its HOME is not read.
fn endpoints(seat: &LaunchFacts) -> Vec<Endpoint> {
    let row = &seat.row.egress;
    let mut allow: Vec<Endpoint> = row.iter().filter_map(|e| Endpoint::parse(e).ok()).collect();
    allow.extend(seat.login.iter().cloned());
    allow.extend(seat.allow.iter().cloned());
    let prompt = seat.prompt;
    let carries = |t: &str| !prompt.is_empty() && t.contains(prompt);
    let proxy_var = |k: &str| k.to_ascii_uppercase().ends_with("_PROXY");
    let values = seat
        .env
        .iter()
        .filter(|(k, _)| !proxy_var(k))
        .map(|(_, v)| v)
        .chain(seat.texts)
        .chain(seat.args)
        .filter(|t| !carries(t));
    for t in values {
        allow.extend(egress::urls(t));
    }
    allow.sort();
    allow.dedup();
    allow
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::Table;
    use crate::engine::sandbox::grants::System;
    use crate::engine::sandbox::{Setting, against_golden, golden_dir, walls_on};

    /// Each `--sandbox` mode, with the walls it gets on a kernel with user namespaces and
    /// Landlock ABI 6 (`required` gets `auto`'s there).
    const MODES: [(&str, Setting); 4] = [
        ("auto", Setting::Auto),
        ("required", Setting::Required),
        ("landlock", Setting::Landlock),
        ("off", Setting::Off),
    ];

    /// The policy of `row`'s seat under `walls`, from fixed facts: a user `u`, a run under
    /// `/home/u/runs`, the private folders under `/run/panel/x`, the CLI under `/opt/cli`;
    /// a reviewer in `/home/u/repo` when `reviewer`, keeping its session.
    fn policy_of(row: &Harness, walls: &Walls, reviewer: bool) -> Policy {
        policy_on(&grants::LINUX, row, walls, reviewer)
    }

    /// [`policy_of`] on the platform whose system is `system`.
    fn policy_on(system: &'static System, row: &Harness, walls: &Walls, reviewer: bool) -> Policy {
        let program = PathBuf::from("/opt/cli/bin").join(&row.executable);
        let read = [PathBuf::from("/srv/data")];
        let host = Host {
            system: Some(system),
            etc: grants::etc_listed(system),
            installs: vec!["/opt/cli".into()],
            git: reviewer.then(|| PathBuf::from("/home/u/repo/.git")),
            missing: ["/lib32", "/libx32"].map(PathBuf::from).into(),
            links: ["/bin", "/sbin", "/lib", "/lib64"]
                .map(PathBuf::from)
                .into(),
        };
        with_seat(row, walls, reviewer, (&program, &read), |seat| {
            policy(seat, &host)
        })
    }

    /// `then` given the seat of `row` under `walls` from the fixed facts, with `program` and
    /// `--sandbox-read`'s `read`.
    fn with_seat<R>(
        row: &Harness,
        walls: &Walls,
        reviewer: bool,
        (program, read): (&Path, &[PathBuf]),
        then: impl FnOnce(&LaunchFacts) -> R,
    ) -> R {
        let dirs = AttemptDirs::new(
            Path::new("/home/u/runs/r"),
            Path::new("/run/panel/x/j.1"),
            "j",
            1,
        );
        let user_env: BTreeMap<String, String> = [
            ("HOME", "/home/u"),
            ("PATH", "/usr/bin:/bin"),
            ("SSL_CERT_FILE", "/home/u/ca.pem"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let env: Vec<(String, String)> = row
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let texts: Vec<String> = row.files.values().cloned().collect();
        let checkout = Path::new("/home/u/repo");
        let answer = match (&row.reviewer, reviewer) {
            (Some(r), true) => r.answer,
            _ => row.answer,
        };
        let limits = share::Limits {
            files: Some(4096),
            ..share::Limits::default()
        };
        let seat = LaunchFacts {
            row,
            model: Some("sh /home/u/check.sh").filter(|_| row.name == "exec"),
            walls,
            limits: &limits,
            disk: Some(1 << 30),
            dirs: &dirs,
            cwd: if reviewer { checkout } else { &dirs.work },
            checkout: reviewer.then_some(checkout),
            keep_session: reviewer,
            answer,
            answer_cap: 16 << 20,
            user_home: Path::new("/home/u"),
            user_env: &user_env,
            read,
            write: &[],
            allow: &[Endpoint::parse("localhost:11434").unwrap()],
            program,
            args: &["--model".into(), "m".into()],
            env: &env,
            texts: &texts,
            prompt: "Is https://prompt.example/ safe?",
            login: &[Endpoint::parse("login.example:443").unwrap()],
        };
        then(&seat)
    }

    /// Issue 39: "golden tests of the whole policy for each built-in row and mode": one file a
    /// row, its policy under each mode (and as a reviewer), so a new row adds one file.
    #[test]
    fn each_builtin_row_and_mode_makes_the_policy_in_its_golden_file() {
        let mut made = Vec::new();
        for row in Table::builtin().rows() {
            let mut modes = serde_json::Map::new();
            for (name, mode) in MODES {
                let walls = walls_on(mode, &Ok(6), &Ok(()), false).unwrap();
                let policy = serde_json::to_value(policy_of(row, &walls, false)).unwrap();
                modes.insert(name.into(), policy);
            }
            if row.reviewer.is_some() {
                let walls = walls_on(Setting::Auto, &Ok(6), &Ok(()), false).unwrap();
                let policy = serde_json::to_value(policy_of(row, &walls, true)).unwrap();
                modes.insert("reviewer".into(), policy);
            }
            let file = format!("policy/{}.json", row.name);
            against_golden(
                &file,
                &(serde_json::to_string_pretty(&modes).unwrap() + "\n"),
            );
            made.push(file);
        }
        none_stale("policy", &made);
    }

    /// Issue 48: "golden files of the profile for every built-in row and `--sandbox` mode,
    /// beside the Linux ones", one file a row, each profile under a line naming its mode. On a
    /// Mac `auto` and `required` get Seatbelt, `landlock` is refused and `off` has no profile;
    /// the proxy listens at 40000 here.
    #[test]
    fn each_builtin_row_and_mode_makes_the_seatbelt_profile_in_its_golden_file() {
        use crate::engine::sandbox::seatbelt;
        let mut made = Vec::new();
        let profile = |row: &Harness, mode: Setting, reviewer: bool| -> Option<String> {
            let walls = seatbelt::walls_on(mode, &Ok(()), false);
            match (mode, walls) {
                (Setting::Landlock, Err(e)) => {
                    assert!(e.to_string().contains("no Landlock"));
                    None
                }
                (Setting::Off, Ok(w)) => {
                    let policy = policy_on(&grants::MACOS, row, &w, reviewer);
                    assert_eq!(seatbelt::profile(&policy, None, &|_| None), Ok(None));
                    None
                }
                (_, Ok(w)) => {
                    let policy = policy_on(&grants::MACOS, row, &w, reviewer);
                    let text = seatbelt::profile(&policy, Some(40000), &|_| None);
                    Some(text.unwrap().unwrap())
                }
                (_, Err(e)) => panic!("{}: {e}", row.name),
            }
        };
        for row in Table::builtin().rows() {
            let mut text = String::new();
            let mut section = |name: &str, mode: Setting, reviewer: bool| {
                if let Some(p) = profile(row, mode, reviewer) {
                    let rule = if text.is_empty() { "" } else { "\n" };
                    text += &format!("{rule};;;; {} --sandbox {name}\n{p}", row.name);
                }
            };
            for (name, mode) in MODES {
                section(name, mode, false);
            }
            if row.reviewer.is_some() {
                section("auto, a reviewer", Setting::Auto, true);
            }
            let file = format!("seatbelt/{}.sb", row.name);
            against_golden(&file, &text);
            made.push(file);
        }
        none_stale("seatbelt", &made);
    }

    /// A golden file under `dir` no row makes any more is stale: removed with `UPDATE_GOLDEN`,
    /// else a failure.
    fn none_stale(dir: &str, made: &[String]) {
        for entry in std::fs::read_dir(golden_dir().join(dir)).unwrap().flatten() {
            let file = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if !made.contains(&file) && std::env::var_os("UPDATE_GOLDEN").is_some() {
                std::fs::remove_file(entry.path()).unwrap();
            } else {
                assert!(made.contains(&file), "{file} is made by no row: remove it");
            }
        }
    }

    /// A root caller's judges run as the ids its walls name; unconfined, no rule is made.
    #[test]
    fn the_walls_ids_and_an_unconfined_seat_are_kept_as_they_are() {
        let table = Table::builtin();
        let row = table.get("claude").unwrap();
        let root = walls_on(Setting::Auto, &Ok(6), &Ok(()), true).unwrap();
        assert_eq!(policy_of(row, &root, false).ids, root.ids);
        let off = policy_of(row, &Walls::off(), false);
        assert!(off.jail.is_none() && off.confine.is_none() && off.egress.is_none());
        assert_eq!(off.share.files, Some(4096));
    }

    /// What the host's files say is read once, before the policy: which granted paths are
    /// missing (not shown) and which are links (not a folder that covers another).
    #[test]
    fn the_host_says_which_grants_are_there_and_the_policy_shows_those() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let bin = dir.join("cli/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("tool"), "").unwrap();
        std::os::unix::fs::symlink(&bin, dir.join("link")).unwrap();
        let read = [dir.join("link"), dir.join("absent")];
        let table = Table::builtin();
        let row = table.get("claude").unwrap();
        let walls = walls_on(Setting::Auto, &Ok(6), &Ok(()), false).unwrap();
        let program = bin.join("tool");
        with_seat(row, &walls, false, (&program, &read), |seat| {
            let host = host(seat);
            assert_eq!(host.installs, std::slice::from_ref(&bin));
            assert!(host.missing.contains(&dir.join("absent")));
            assert!(host.links.contains(&dir.join("link")));
            let jail = policy(seat, &host).jail.unwrap();
            assert!(jail.read.contains(&dir.join("link")) && jail.read.contains(&bin));
            assert!(!jail.read.contains(&dir.join("absent")) && !jail.read.contains(&program));
        });
    }
}
