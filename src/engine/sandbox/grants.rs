//! What a confined judge may touch (docs/design.md §8): it reads and runs the system (its
//! programs and libraries, an allow-list of `/etc`) and its CLI's installation, reads and
//! writes its own private folder, reads a reviewer's checkout. Nothing else: not the user's
//! HOME, not another judge's folder, not the run folder, not another process. The same grants
//! make a jail's root ([`Grants::shown`]) and what Landlock or Seatbelt holds it to
//! ([`Grants::rules`], its [`Reach`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What one judge may touch, as Landlock enforces it (the confine stage, a jail) on Linux and
/// as its Seatbelt profile says it on macOS ([`super::seatbelt`]). Paths only: they travel on
/// a command line every user of the machine can read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    /// The Landlock ABI every right below is required at (0 under Seatbelt).
    pub abi: u8,
    /// Read and run.
    pub rx: Vec<PathBuf>,
    /// Read.
    pub ro: Vec<PathBuf>,
    /// Read and write, run nothing.
    pub rw: Vec<PathBuf>,
    /// Devices read and written without ioctl.
    pub devices: Vec<PathBuf>,
    /// TCP ports it may connect to.
    pub tcp: Vec<u16>,
    /// Where no network namespace holds it, the addresses it may connect to (Landlock's ports
    /// hold any address): its supervisor makes each connection ([`super::keeper`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<std::net::SocketAddr>,
}

/// What every confined judge is granted of its platform's system.
#[derive(Debug, PartialEq)]
pub struct System {
    /// The system's programs and libraries, read and run.
    pub run: &'static [&'static str],
    /// Where its `/etc` is, and what of it a judge reads and runs (the dynamic linker's cache,
    /// name resolution, certificates, the time zone, locales, the alternatives the system's
    /// programs are links to, Python's own configuration). Never `shadow`, `ssl/private`,
    /// ssh's host keys, or anyone's login.
    pub etc_dir: &'static str,
    pub etc: &'static [&'static str],
    /// Files of its `/etc` a jail writes itself (its one user, its names); without a jail,
    /// the host's, read.
    pub etc_own: &'static [&'static str],
    /// Read besides: randomness; on Linux the stage's own `/proc` entry, which `exec` keeps
    /// (bun aborts without `/proc/self`; another process's entry is never granted).
    pub read: &'static [&'static str],
    /// Devices read and written (without ioctl under Landlock).
    pub devices: &'static [&'static str],
}

pub const LINUX: System = System {
    run: &[
        "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
    ],
    etc_dir: "/etc",
    etc: &[
        "ld.so.cache",
        "ld.so.conf",
        "ld.so.conf.d",
        "alternatives",
        "ssl/certs",
        "ssl/openssl.cnf",
        "ca-certificates",
        "ca-certificates.conf",
        "pki/tls/certs",
        "pki/tls/cert.pem",
        "pki/ca-trust/extracted",
        "localtime",
        "timezone",
        "mime.types",
        "protocols",
        "services",
        "host.conf",
        "gai.conf",
        "locale.alias",
        "locale.conf",
        "default/locale",
        "os-release",
        "lsb-release",
        "debian_version",
        "inputrc",
        "shells",
        "bash.bashrc",
        "terminfo",
    ],
    etc_own: &["passwd", "group", "hosts", "nsswitch.conf", "hostname"],
    read: &[
        "/dev/urandom",
        "/dev/random",
        "/proc/sys/kernel/random/uuid",
        "/proc/self",
    ],
    devices: &["/dev/null", "/dev/zero", "/dev/full"],
};

/// macOS's: its frameworks and the loader's cache under `/System`, Homebrew's prefix on
/// Apple silicon (Intel's is under `/usr`), the time zone's database, and `/etc` where it is
/// (`/private/etc`: Seatbelt matches a file's real path).
pub const MACOS: System = System {
    run: &[
        "/usr",
        "/bin",
        "/sbin",
        "/System",
        "/Library/Apple",
        "/opt/homebrew",
    ],
    etc_dir: "/private/etc",
    etc: &[
        "ssl",
        "localtime",
        "protocols",
        "services",
        "shells",
        "bashrc",
        "zshrc",
        "profile",
    ],
    etc_own: &["passwd", "group", "hosts"],
    read: &["/dev/urandom", "/dev/random", "/private/var/db/timezone"],
    devices: &["/dev/null", "/dev/zero"],
};

/// This platform's.
pub const HERE: &System = if cfg!(target_os = "macos") {
    &MACOS
} else {
    &LINUX
};

/// A jail's own writable folders beside the judge's private one.
const JAIL_WRITE: &[&str] = &["/tmp", "/dev/shm"];

/// Where one judge runs.
pub struct Site<'a> {
    /// The executable, found on the judge's PATH.
    pub program: &'a Path,
    /// The judge's PATH, to find an interpreter a script names.
    pub path_env: &'a str,
    /// The program an `exec:` seat's command names: its installation when it has one, else
    /// the file alone (a script's folder is not an installation).
    pub command: Option<PathBuf>,
    /// Its private folder: HOME, TMPDIR, working folder, prompt and answer files.
    pub private: &'a Path,
    /// A reviewer's checkout, read only.
    pub checkout: Option<&'a Path>,
    /// More to read and run (`--sandbox-read`, a harness row's `sandboxRead`).
    pub read: Vec<PathBuf>,
    /// More to write (`--sandbox-write`).
    pub write: Vec<PathBuf>,
    /// The user's HOME: never granted as an installation.
    pub home: &'a Path,
}

/// What a judge is granted, as paths: read and run, read, read and write.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grants {
    pub rx: Vec<PathBuf>,
    pub ro: Vec<PathBuf>,
    pub rw: Vec<PathBuf>,
}

/// What the host's files say about a judge's grants, read before they are made (by
/// [`Site::host`]) so that making them reads nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Host {
    /// Its platform's system (`None`: this one's).
    pub system: Option<&'static System>,
    /// The allow-list of `/etc` as it is on this machine.
    pub etc: Vec<PathBuf>,
    /// The program's installations, then those of an `exec:` seat's command.
    pub installs: Vec<PathBuf>,
    /// A reviewer's checkout's git data.
    pub git: Option<PathBuf>,
    /// Granted paths that are not there.
    pub missing: BTreeSet<PathBuf>,
    /// Granted paths that are symbolic links.
    pub links: BTreeSet<PathBuf>,
}

impl Site<'_> {
    /// What the host's files say about this site's grants: the one reading of them.
    pub fn host(&self) -> Host {
        let mut installs = install_roots(self.program, self.path_env, self.home, false);
        if let Some(command) = &self.command {
            installs.extend(install_roots(command, self.path_env, self.home, true));
        }
        let mut host = Host {
            etc: etc(HERE),
            installs,
            git: self.checkout.map(git_common_dir),
            ..Host::default()
        };
        let granted = self.grants(&host);
        for p in granted.rx.iter().chain(&granted.ro).chain(&granted.rw) {
            match std::fs::symlink_metadata(p) {
                Err(_) => host.missing.insert(p.clone()),
                Ok(m) if m.file_type().is_symlink() => host.links.insert(p.clone()),
                Ok(_) => false,
            };
        }
        host
    }

    /// Its grants, as `host` says the machine is.
    pub fn grants(&self, host: &Host) -> Grants {
        let mut rx: Vec<PathBuf> = host.system().run.iter().map(PathBuf::from).collect();
        rx.extend(host.etc.iter().cloned());
        // The program as it is named (a link into its installation), and its installation.
        rx.push(self.program.to_path_buf());
        rx.extend(host.installs.iter().cloned());
        rx.extend(self.read.iter().cloned());
        let mut ro = Vec::new();
        if let Some(checkout) = self.checkout {
            ro.push(checkout.to_path_buf());
            ro.extend(host.git.iter().cloned());
        }
        let mut rw = vec![self.private.to_path_buf()];
        rw.extend(self.write.iter().cloned());
        Grants {
            rx: dedup(rx),
            ro: dedup(ro),
            rw: dedup(rw),
        }
    }
}

impl Grants {
    /// The rules for them at Landlock's `abi`, with the TCP ports the judge may connect to; in a
    /// jail its private `/tmp` and `/dev/shm` are its own too.
    pub fn rules(&self, system: &System, abi: u8, tcp: Vec<u16>, jailed: bool) -> Reach {
        let mut ro: Vec<PathBuf> = system.read.iter().map(PathBuf::from).collect();
        ro.extend(
            system
                .etc_own
                .iter()
                .map(|f| Path::new(system.etc_dir).join(f)),
        );
        ro.extend(self.ro.iter().cloned());
        let mut rw = self.rw.clone();
        if jailed {
            rw.extend(JAIL_WRITE.iter().map(PathBuf::from));
        }
        Reach {
            abi,
            rx: self.rx.clone(),
            ro: dedup(ro),
            rw: dedup(rw),
            devices: system.devices.iter().map(PathBuf::from).collect(),
            tcp,
            to: Vec::new(),
        }
    }

    /// What a jail shows: every granted path that is there (as `host` says), a folder inside
    /// another it shows with the same access left out.
    pub fn shown(&self, host: &Host) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let there = |p: &&PathBuf| !host.missing.contains(*p);
        let read: Vec<PathBuf> = self
            .rx
            .iter()
            .chain(&self.ro)
            .filter(there)
            .cloned()
            .collect();
        let covered = |p: &PathBuf, by: &[PathBuf]| {
            by.iter()
                .any(|o| o != p && p.starts_with(o) && !host.links.contains(o))
        };
        let kept_read = read
            .iter()
            .filter(|p| !covered(p, &read))
            .cloned()
            .collect();
        let write = self.rw.iter().filter(there).cloned().collect();
        (kept_read, write)
    }
}

impl Host {
    /// Its platform's system.
    pub fn system(&self) -> &'static System {
        self.system.unwrap_or(HERE)
    }
}

/// `system`'s allow-list of `/etc` as it is listed, before the machine's own (`python3*`)
/// are added.
pub fn etc_listed(system: &System) -> Vec<PathBuf> {
    let dir = Path::new(system.etc_dir);
    system.etc.iter().map(|f| dir.join(f)).collect()
}

/// `system`'s allow-list of `/etc` as it is on this machine (`python3*` folders included).
fn etc(system: &System) -> Vec<PathBuf> {
    let mut out = etc_listed(system);
    for entry in std::fs::read_dir(system.etc_dir)
        .into_iter()
        .flatten()
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with("python3") {
            out.push(entry.path());
        }
    }
    out
}

fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = BTreeSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// The folders a program needs to start: its installation, and its interpreter's when it is
/// a script (`#!/usr/bin/env node`, a venv's python, a version manager's shim); a Python
/// script's own site-packages beside it (`pip install --user`). `alone`: a program that
/// belongs to no installation is granted as a file, not with its folder.
pub fn install_roots(program: &Path, path_env: &str, home: &Path, alone: bool) -> Vec<PathBuf> {
    let Ok(real) = program.canonicalize() else {
        return Vec::new();
    };
    let mut roots = install_root(&real, home);
    if alone && roots == [real.parent().unwrap_or(Path::new("/"))] {
        roots = vec![real.clone()];
    }
    let Some(named) = shebang(&real, path_env) else {
        return roots;
    };
    // A shim (pyenv's, asdf's) is a script of its manager: the manager's folder is the
    // installation, whichever version it picks.
    if let Some(manager) = shim_manager(&named) {
        roots.push(manager);
    } else if let Ok(interpreter) = named.canonicalize() {
        roots.extend(install_root(&interpreter, home));
    }
    let python = named
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("python"));
    if python {
        roots.extend(site_packages_beside(&real));
    }
    roots
}

/// The folder of a version manager whose shim `program` is: `ROOT/shims/NAME` with
/// `ROOT/versions` (pyenv, rbenv, nodenv) or `ROOT/installs` (asdf).
fn shim_manager(program: &Path) -> Option<PathBuf> {
    let dir = program.parent()?;
    let root = dir.parent()?;
    let manager = dir.file_name()? == "shims"
        && (root.join("versions").is_dir() || root.join("installs").is_dir());
    manager.then(|| root.canonicalize().unwrap_or_else(|_| root.to_path_buf()))
}

/// `PREFIX/lib/python3.*/site-packages` for a script in `PREFIX/bin`: where a user install
/// keeps the packages the script imports (`~/.local/lib/python3.X/site-packages`), and nothing
/// else of the prefix (its `share` holds other programs' logins).
fn site_packages_beside(script: &Path) -> Vec<PathBuf> {
    let Some(prefix) = script
        .parent()
        .filter(|b| b.file_name().is_some_and(|n| n == "bin"))
        .and_then(Path::parent)
    else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(prefix.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// Why `program` cannot run confined, when its installation is the user's HOME itself (a
/// package installed at the top of HOME): the walls never grant the HOME.
pub fn installed_in_home(program: &Path, home: &Path) -> Option<String> {
    let real = program.canonicalize().ok()?;
    let home = home.canonicalize().ok()?;
    let dir = real.parent()?;
    let npm = real
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last()
        .and_then(Path::parent);
    let root = npm.unwrap_or(dir);
    (root == home).then(|| {
        format!(
            "{} is installed in the top folder of your HOME ({}), which no judge is granted: install it into a folder of its own (e.g. npm install --prefix ~/.local/share/NAME, or a venv)",
            real.display(),
            home.display()
        )
    })
}

/// The installation a program's real path belongs to: an npm package tree (the folder of its
/// topmost `node_modules`), a Python venv and the Python it was made from, a Python prefix,
/// else the program's own folder. Never the HOME or a folder above it: then the file alone.
fn install_root(real: &Path, home: &Path) -> Vec<PathBuf> {
    let dir = real.parent().unwrap_or(Path::new("/"));
    let npm = real
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last()
        .and_then(Path::parent);
    let venv = dir.parent().filter(|v| v.join("pyvenv.cfg").is_file());
    let mut roots = match (npm, venv) {
        (Some(tree), _) => vec![tree.to_path_buf()],
        (None, Some(venv)) => {
            let mut r = vec![venv.to_path_buf()];
            r.extend(venv_home(venv));
            r
        }
        (None, None) => vec![python_prefix(dir).unwrap_or(dir).to_path_buf()],
    };
    for root in &mut roots {
        if home.starts_with(&*root) {
            *root = real.to_path_buf();
        }
    }
    roots
}

/// The prefix of the Python a venv was made from (`home = PREFIX/bin` in pyvenv.cfg).
fn venv_home(venv: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let bin = cfg.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "home").then(|| PathBuf::from(v.trim()))
    })?;
    let bin = bin.canonicalize().unwrap_or(bin);
    Some(python_prefix(&bin).unwrap_or(&bin).to_path_buf())
}

/// `PREFIX` for `PREFIX/bin` when it is a Python's installation: `PREFIX/bin` holds the
/// interpreter and `PREFIX/lib` its library. (`~/.local` has the library of `pip install
/// --user` and no interpreter: it is no Python's, and its `share` holds other programs' logins.)
fn python_prefix(bin: &Path) -> Option<&Path> {
    let prefix = bin
        .parent()
        .filter(|_| bin.file_name().is_some_and(|n| n == "bin"))?;
    let has_interpreter = ["python3", "python"].iter().any(|n| bin.join(n).is_file());
    let has_library = std::fs::read_dir(prefix.join("lib"))
        .ok()?
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("python"));
    (has_interpreter && has_library).then_some(prefix)
}

/// The interpreter a script's first line names, found on `path_env` for `env`.
fn shebang(script: &Path, path_env: &str) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if Path::new(first).file_name()? != "env" {
        return Some(PathBuf::from(first));
    }
    let name = words.find(|w| !w.starts_with('-'))?;
    crate::engine::harness::find_on_path(name, path_env)
}

/// Where a checkout's git data lives: for a worktree (`.git` is a file naming its folder in the
/// main repository) the main repository's git folder, which git needs to read; else `.git` in it.
/// Read from the files git writes, without running git.
pub fn git_common_dir(checkout: &Path) -> PathBuf {
    let own = checkout.join(".git");
    let linked = std::fs::read_to_string(&own).ok().and_then(|text| {
        let dir = checkout.join(text.trim().strip_prefix("gitdir:")?.trim());
        let common = std::fs::read_to_string(dir.join("commondir")).ok();
        Some(match common {
            Some(c) => dir.join(c.trim()),
            None => dir,
        })
    });
    let found = linked.unwrap_or(own);
    found.canonicalize().unwrap_or(found)
}

/// Whether `ids` may pass through every folder above `path`.
pub fn reachable(path: &Path, (uid, gid): (u32, u32)) -> bool {
    use std::os::unix::fs::MetadataExt;
    path.ancestors().skip(1).all(|dir| {
        std::fs::metadata(dir).is_ok_and(|m| {
            let bits = match (m.uid() == uid, m.gid() == gid) {
                (true, _) => m.mode() >> 6,
                (false, true) => m.mode() >> 3,
                _ => m.mode(),
            };
            bits & 0o1 != 0
        })
    })
}

/// The folder a CLI is installed in, for a harness that must let its own sandbox read it
/// (`{install}`): the first of [`install_roots`] of the executable found on PATH.
pub fn installation(name: &str, path_var: &str) -> Option<PathBuf> {
    let exe = crate::engine::harness::find_on_path(name, path_var)?;
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
    install_roots(&exe, path_var, &home, false)
        .into_iter()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for f in files {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        t
    }

    #[test]
    fn an_npm_cli_is_its_package_tree() {
        let t = tree(&["npm/claude/node_modules/@a/claude/cli.js"]);
        let cli = t.path().join("npm/claude/node_modules/@a/claude/cli.js");
        let home = Path::new("/nonexistent-home");
        assert_eq!(install_root(&cli, home), [t.path().join("npm/claude")]);
    }

    #[test]
    fn a_venv_cli_is_its_venv_and_the_python_it_was_made_from() {
        let t = tree(&["py/bin/python3", "py/lib/python3.13/os.py", "venv/bin/kimi"]);
        let cfg = format!("home = {}\n", t.path().join("py/bin").display());
        std::fs::write(t.path().join("venv/pyvenv.cfg"), cfg).unwrap();
        let roots = install_root(&t.path().join("venv/bin/kimi"), Path::new("/nonexistent"));
        let t = t.path().canonicalize().unwrap();
        assert_eq!(roots, [t.join("venv"), t.join("py")]);
    }

    #[test]
    fn a_program_in_the_home_folder_is_granted_alone_never_the_home() {
        let t = tree(&["bin/judge.sh"]);
        let script = t.path().join("bin/judge.sh");
        // The program's folder is the HOME itself, or the HOME is inside it.
        let alone = vec![script.clone()];
        assert_eq!(install_root(&script, &t.path().join("bin")), alone);
        assert_eq!(install_root(&script, &t.path().join("bin/deeper")), alone);
    }

    #[test]
    fn a_script_brings_its_interpreter() {
        let t = tree(&["tools/node", "cli/run"]);
        std::fs::write(t.path().join("cli/run"), "#!/usr/bin/env -S node --x\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            t.path().join("tools/node"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let path = t.path().join("tools").display().to_string();
        let run = t.path().join("cli/run");
        let roots = install_roots(&run, &path, Path::new("/nonexistent"), false);
        let t = t.path().canonicalize().unwrap();
        assert_eq!(roots, [t.join("cli"), t.join("tools")]);
        // An exec: seat's script is granted alone, not with what lies beside it.
        let roots = install_roots(&run, &path, Path::new("/nonexistent"), true);
        assert_eq!(roots, [t.join("cli/run"), t.join("tools")]);
    }

    /// Issue 22, finding 6: "a seat program in `~/.local/bin` is taken for a Python
    /// installation as soon as `~/.local/lib/python3.X` exists (any `pip install --user`), and
    /// then all of `~/.local` is granted", its other programs' logins with it.
    #[test]
    fn a_user_install_brings_its_site_packages_never_its_prefix() {
        let t = tree(&[
            "home/.local/bin/kimi",
            "home/.local/lib/python3.11/site-packages/kimi/__init__.py",
            "home/.local/share/opencode/auth.json",
        ]);
        let t = t.path().canonicalize().unwrap();
        let kimi = t.join("home/.local/bin/kimi");
        std::fs::write(&kimi, "#!/usr/bin/python3\nimport kimi\n").unwrap();
        let roots = install_roots(&kimi, "/usr/bin", &t.join("home"), false);
        assert!(
            !roots.iter().any(|r| r == &t.join("home/.local")),
            "{roots:?}"
        );
        assert!(
            roots.contains(&t.join("home/.local/lib/python3.11/site-packages")),
            "{roots:?}"
        );
        assert!(
            !roots
                .iter()
                .any(|r| t.join("home/.local/share").starts_with(r)),
            "{roots:?}"
        );
        // A real prefix has its interpreter beside the library, and is the installation.
        let py = tree(&["py/bin/python3", "py/lib/python3.13/os.py", "py/bin/tool"]);
        let py = py.path().canonicalize().unwrap();
        let roots = install_roots(
            &py.join("py/bin/tool"),
            "",
            Path::new("/nonexistent"),
            false,
        );
        assert_eq!(roots, [py.join("py")]);
    }

    /// Issue 22: "an `exec:` seat whose script starts `#!/usr/bin/env python3` under pyenv (a
    /// shim in HOME) … fails today with nothing but the script's own error". The shim is its
    /// manager's: the manager's folder is the installation.
    #[test]
    fn a_version_managers_shim_brings_the_managers_folder() {
        let t = tree(&[
            "pyenv/shims/python3",
            "pyenv/versions/3.13.1/bin/python3",
            "seat/judge.py",
        ]);
        let t = t.path().canonicalize().unwrap();
        std::fs::write(t.join("seat/judge.py"), "#!/usr/bin/env python3\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let exe = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(t.join("pyenv/shims/python3"), exe).unwrap();
        let path = t.join("pyenv/shims").display().to_string();
        let roots = install_roots(
            &t.join("seat/judge.py"),
            &path,
            Path::new("/nonexistent"),
            true,
        );
        assert_eq!(roots, [t.join("seat/judge.py"), t.join("pyenv")]);
    }

    /// Issue 22: "a harness installed inside HOME's top folder" is a clear error, never a
    /// quieter sandbox; one in a folder of its own under HOME is its installation.
    #[test]
    fn a_cli_installed_at_the_top_of_home_is_refused() {
        let t = tree(&[
            "home/node_modules/@a/claude/cli.js",
            "home/.cache/tools/npm/claude/node_modules/@a/claude/cli.js",
        ]);
        let t = t.path().canonicalize().unwrap();
        let home = t.join("home");
        let why = installed_in_home(&home.join("node_modules/@a/claude/cli.js"), &home).unwrap();
        assert!(why.contains("top folder of your HOME"), "{why}");
        let own = home.join(".cache/tools/npm/claude/node_modules/@a/claude/cli.js");
        assert_eq!(installed_in_home(&own, &home), None);
        assert_eq!(
            install_root(&own, &home),
            [home.join(".cache/tools/npm/claude")]
        );
    }

    #[test]
    fn a_worktrees_git_data_is_the_main_repositorys() {
        let root = std::env::temp_dir().join(format!("panel-gitdir-{}", std::process::id()));
        let (main, tree) = (root.join("main"), root.join("tree"));
        let admin = main.join(".git/worktrees/tree");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir_all(&tree).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        assert_eq!(git_common_dir(&tree), root.join("main/.git"));
        // A checkout with its own .git folder, or none (a dry run's notional one), names its own.
        assert_eq!(git_common_dir(&main), root.join("main/.git"));
        assert_eq!(
            git_common_dir(Path::new("/nonexistent/x")),
            Path::new("/nonexistent/x/.git")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
