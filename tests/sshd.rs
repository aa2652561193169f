//! A real OpenSSH server on 127.0.0.1 for the fleet test: started as the current user from a
//! temporary folder (its host key, the user key, the configuration, the pid file), stopped
//! when dropped. The "remote machine" is a folder: the key's forced command logs in there, with
//! it as HOME, the test's PATH, and what the client sends of the stand-ins' settings (STANDIN_,
//! PANEL_SANDBOX_, PANEL_PASS_ENV and PANEL_LOGIN_ELSEWHERE). Nothing else of the client's
//! environment gets there, as with a real server's AcceptEnv: what panel-fleet needs on the
//! other side it sends itself.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running sshd and the folder that holds the `ssh` a test puts first on PATH.
pub struct Sshd {
    child: Child,
    /// Holds `ssh`: the real client, given this server's client configuration, each call
    /// logged to `$FAKE_SSH_LOG` as the stand-in logs it. The host is `fakehost`.
    pub bin: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn write(path: &Path, text: &str, mode: u32) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Starts sshd under `dir` with `remote` as the login's folder and `path` as its PATH; `Err`
/// says why it cannot (no sshd or ssh, or the server did not come up).
/// The PATH a login on the "remote machine" gets: the stand-in CLIs, the built tools in
/// `bins`, the bash tools, then the test's own PATH.
pub fn remote_path(bins: &Path) -> std::ffi::OsString {
    let root = crate::util::root();
    let first = [
        root.join("tests/standins"),
        bins.to_path_buf(),
        root.join("bin"),
    ];
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(first.into_iter().chain(std::env::split_paths(&rest))).unwrap()
}

pub fn start(dir: &Path, remote: &Path, path: &std::ffi::OsStr) -> Result<Sshd, String> {
    let sshd = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or("no sshd (apt-get install openssh-server)")?;
    let ssh = which("ssh").ok_or("no ssh (apt-get install openssh-client)")?;
    std::fs::create_dir_all(dir).unwrap();
    let keygen = |name: &str| {
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(name))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("ssh-keygen: {e}"))?;
        ok.status
            .success()
            .then_some(())
            .ok_or_else(|| format!("ssh-keygen: {}", String::from_utf8_lossy(&ok.stderr)))
    };
    keygen("host_key")?;
    keygen("user_key")?;
    let d = |name: &str| dir.join(name).display().to_string();
    // The login: in the remote folder, with the test's PATH; the client's command runs as sshd
    // runs it, with the user's shell.
    write(
        &dir.join("login"),
        &format!(
            "#!/bin/sh\ncd {r} || exit 255\nHOME={r} PATH={p}\nexport HOME PATH\nexec \"$SHELL\" -c \"$SSH_ORIGINAL_COMMAND\"\n",
            r = quote(&remote.display().to_string()),
            p = quote(&path.to_string_lossy()),
        ),
        0o755,
    );
    let user_pub = std::fs::read_to_string(dir.join("user_key.pub")).unwrap();
    write(
        &dir.join("authorized_keys"),
        &format!("command=\"{}\",no-pty {user_pub}", d("login")),
        0o600,
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    write(
        &dir.join("sshd_config"),
        &format!(
            "HostKey {}\nAuthorizedKeysFile {}\nPidFile {}\nUsePAM no\nStrictModes no\n\
             ListenAddress 127.0.0.1\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAcceptEnv STANDIN_* PANEL_SANDBOX_* PANEL_PASS_ENV PANEL_LOGIN_ELSEWHERE\n",
            d("host_key"),
            d("authorized_keys"),
            d("sshd.pid")
        ),
        0o600,
    );
    write(
        &dir.join("ssh_config"),
        &format!(
            "Host fakehost\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {}\n  IdentitiesOnly yes\n  \
             StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  BatchMode yes\n  \
             SendEnv STANDIN_* PANEL_SANDBOX_* PANEL_PASS_ENV PANEL_LOGIN_ELSEWHERE\n",
            d("user_key")
        ),
        0o600,
    );
    let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
    let mut child = Command::new(&sshd)
        .arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(dir.join("sshd_config"))
        .args(["-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("{}: {e}", sshd.display()))?;
    let up = crate::util::wait_until(Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    if !up || child.try_wait().ok().flatten().is_some() {
        let _ = child.kill();
        let _ = child.wait();
        let why = std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default();
        return Err(format!(
            "sshd did not start: {}",
            why.lines().next().unwrap_or("no words")
        ));
    }
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    write(
        &bin.join("ssh"),
        &format!(
            "#!/usr/bin/env bash\n# The real ssh to the test's sshd, each call logged as the stand-in logs it.\n\
             line=$(printf '%q ' \"$@\")\nprintf '%s\\n' \"$line\" >>\"${{FAKE_SSH_LOG:?}}\"\n\
             exec {} -F {} \"$@\"\n",
            quote(&ssh.display().to_string()),
            quote(&d("ssh_config"))
        ),
        0o755,
    );
    // One login through it, before any test relies on it.
    let probe = Command::new(&ssh)
        .arg("-F")
        .arg(dir.join("ssh_config"))
        .args(["fakehost", "pwd"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ssh: {e}"))?;
    if String::from_utf8_lossy(&probe.stdout).trim() != remote.display().to_string() {
        return Err(format!(
            "a login through sshd failed: {}",
            String::from_utf8_lossy(&probe.stderr).trim()
        ));
    }
    Ok(Sshd { child, bin })
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
