//! A harness row's logins, as data: where each kind of login its users have is kept, what a
//! judge is given of it, and how panel refreshes it outside the walls
//! ([`crate::engine::logins`] carries them out). A new CLI's login is a row, not code.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// One kind of login, in the row's list in the CLI's own order of precedence: the first one
/// the user has is the one used, and only it reaches a judge.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Login {
    /// What `--doctor` calls it: `pro-max`, `chatgpt`, `google`, `api-key`, …
    pub kind: String,
    /// For a CLI of many providers: the login is for the seats whose model starts with this
    /// (`google/`); absent: for every seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<String>,
    /// Variables of the user's environment that hold it (the first set one counts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// The service tiers its provider offers it beside the standard one (`flex`): `--tier`
    /// asks for one through the row's `{tier}` argv group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<String>,
    /// A file of the user's that holds it (`~/…`, `${VAR:-default}/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// On macOS: the service of a generic password in the user's login Keychain that holds
    /// the same JSON as `file`, looked in before it (the CLI's own order there: the Keychain,
    /// then the file). Read and written with `security`, never a secret on its command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keychain: Option<String>,
    /// For a JSON file: the JSON pointer that must hold a value for the file to be this login
    /// (one file may hold several kinds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has: Option<String>,
    /// For a file that holds a token to hand on (no refresh): the JSON pointer of the token; a
    /// `*` step stands for any one key (the first that has the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// This login comes before the row's others when the user's configuration says the CLI
    /// uses it (gemini's `security.auth.selectedType`, which wins over its variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefer: Option<Prefer>,
    /// A command whose standard output is the token (`gh auth token`, `secret-tool lookup …`),
    /// run outside the walls with the user's environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// A JSON file of the user's whose values fill the `{/pointer}` words of `command` (the
    /// account copilot last logged in with); without them the login is not there. A file
    /// login's `has` and `token` are filled from the file itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<String>,
    /// Beginnings of a token the CLI passes over as if it were not set (copilot ignores a
    /// classic `ghp_` token): the broker passes over it too, to the row's next login; with no
    /// other login it says why instead of handing it on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_over: Vec<String>,
    /// Where a judge gets a file login: this path under its private HOME, the refresh token
    /// in it replaced by one that works nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The variable a judge gets the token in (a command's output, the access token of a
    /// file, a variable the CLI itself does not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_env: Option<String>,
    /// How panel refreshes it, for a login whose access token expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<Refresh>,
    /// The hosts and ports a judge reaches with this login, beside the row's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<String>,
    /// JSON merged into the row's files (path under HOME → object) when this login is used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, serde_json::Value>,
    /// Variables set for a judge when this login is used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set_env: BTreeMap<String, String>,
    /// For a JSON file holding more than this login (every provider's, MCP servers'): the JSON
    /// pointers a judge's copy keeps, all else left out; `{provider}` stands for the seat's
    /// provider (its model up to the first `/`). Empty: the file is handed on whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_keep: Vec<String>,
    /// Values written into a judge's copy of the store (pointer → value), beside its refresh
    /// token's removal: what keeps the CLI from refreshing early (kimi's `expires_in`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judge_set: BTreeMap<String, serde_json::Value>,
    /// Where its CLI sends the credential, and the model endpoints it may go to: a judge holds a
    /// placeholder in its place, and its proxy puts the live one in on those requests alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<Credential>,
    /// Why a judge holds this login's live credential instead (its CLI cannot take a
    /// placeholder, or it has not been measured): `--doctor` and the records say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<String>,
    /// Why this login, where the user has it, cannot work for a judge (the CLI refuses it):
    /// no judge is launched with it, and `--doctor` says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unusable: Option<String>,
    /// The one command that logs the user in again, for `--doctor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What was measured of it, or why it could not be (`--doctor` says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// How a CLI sends a login's credential, and where to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Credential {
    /// The request header that carries it (`authorization`, `x-api-key`).
    pub header: String,
    /// What comes before it in that header (`Bearer `), as the CLI was measured to send it
    /// (the proxy keeps whichever one word of a scheme the CLI writes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheme: String,
    /// Its model endpoints: every request that carries it goes to one of these.
    pub endpoints: Vec<ModelEndpoint>,
}

/// One model endpoint: a base URL, and the methods and paths under it the CLI's model
/// requests use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelEndpoint {
    /// `https://host[:port][/path]`: the CLI's own address for it.
    pub base: String,
    /// A variable of the user's that moves it elsewhere (`ANTHROPIC_BASE_URL`): its value is
    /// the base instead, where set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_env: Option<String>,
    pub methods: Vec<String>,
    /// Paths under the base, each whole segments (`/v1/messages` is not `/v1/messagesX`).
    pub paths: Vec<String>,
}

/// A value in a file of the user's that chooses a login.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Prefer {
    /// `~/…` or `${VAR:-default}/…`: a JSON file.
    pub file: String,
    /// The JSON pointer of the value.
    pub at: String,
    /// The value that chooses this login.
    pub is: serde_json::Value,
}

/// How an OAuth login is refreshed, and where its tokens sit in the user's store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Refresh {
    /// The token endpoint, `https://…`.
    pub url: String,
    /// How the request's fields are sent: `json` or `form`.
    #[serde(default)]
    pub body: Body,
    /// The request's fields; `{refresh}` stands for the refresh token.
    pub request: BTreeMap<String, String>,
    /// More request headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// JSON pointers into the store: the access token, the refresh token.
    pub access: String,
    pub refresh_token: String,
    /// The pointer of the access token's expiry; absent: the `exp` of the access token (a JWT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// How that expiry is written.
    #[serde(default)]
    pub expires_as: TimeAs,
    /// More fields written back from the answer: store pointer → the answer's field,
    /// `{words:FIELD}` (its space-separated words, as a list), or `{now}` (this moment, written
    /// as `expiresAs` says; `{now:rfc3339}` as RFC 3339).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub save: BTreeMap<String, String>,
    /// Seconds before its expiry that the CLI itself refreshes an access token.
    #[serde(default)]
    pub margin: u64,
    /// The CLI's own locks around its refresh, taken in order; none: panel's, beside the store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock: Vec<Lock>,
    /// What a judge's copy holds where the refresh token was: nothing (`drop`: the CLI then
    /// never asks for a refresh), an empty string (`empty`, for a CLI that cannot read its
    /// store without the field), or a token that works nowhere (`stand-in`, for a CLI that will
    /// not start without one).
    #[serde(default)]
    pub judge: JudgeRefresh,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum JudgeRefresh {
    #[default]
    Drop,
    /// An empty string (a CLI that will not read its store without the field).
    Empty,
    StandIn,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Body {
    #[default]
    Json,
    Form,
}

/// How a moment is written in a store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TimeAs {
    /// Milliseconds since the epoch.
    #[default]
    UnixMs,
    /// Seconds since the epoch.
    UnixS,
    /// An RFC 3339 date and time in UTC.
    Rfc3339,
}

/// A CLI's lock: a folder made with `mkdir` (proper-lockfile's, stale after `stale` seconds
/// without an update) or a file held with `flock`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lock {
    /// `~/…` or `${VAR:-default}/…`; `{real}` in it is replaced by the real path of the folder
    /// it names first (claude's legacy lock sits beside its configuration folder's real path).
    pub path: String,
    #[serde(default)]
    pub kind: LockKind,
    /// Seconds after which a `mkdir` lock nobody updates is taken over.
    #[serde(default = "default_stale")]
    pub stale: u64,
}

fn default_stale() -> u64 {
    60
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    #[default]
    Mkdir,
    Flock,
}

impl Login {
    /// Says which field of a login is wrong.
    pub fn check(&self) -> Result<()> {
        let sources = [
            !self.env.is_empty(),
            self.file.is_some(),
            !self.command.is_empty(),
        ];
        if sources.iter().filter(|s| **s).count() != 1 {
            bail!(
                "logins: {}: give exactly one of env, file and command",
                self.kind
            );
        }
        if self.refresh.is_some() && self.file.is_none() {
            bail!(
                "logins: {}: refresh needs a file to keep the tokens in",
                self.kind
            );
        }
        if let Some(service) = &self.keychain {
            if self.file.is_none() {
                bail!(
                    "logins: {}: keychain holds the JSON of a file, and there is no file",
                    self.kind
                );
            }
            if service.is_empty()
                || service
                    .chars()
                    .any(|c| c == '"' || c == '\\' || c.is_control())
            {
                bail!(
                    "logins: {}: keychain: a service name with no quote, backslash or control character",
                    self.kind
                );
            }
        }
        if self.values.is_some() && self.command.is_empty() {
            bail!(
                "logins: {}: values fill a command's words, and there is no command",
                self.kind
            );
        }
        if !self.command.is_empty() && self.to_env.is_none() {
            bail!(
                "logins: {}: a command's token needs toEnv, the variable a judge gets it in",
                self.kind
            );
        }
        let pointers = self.refresh.iter().flat_map(|r| {
            [Some(&r.access), Some(&r.refresh_token), r.expires.as_ref()]
                .into_iter()
                .flatten()
                .chain(r.save.keys())
        });
        let prefer = self.prefer.iter().map(|p| &p.at);
        for p in pointers.chain(&self.has).chain(&self.token).chain(prefer) {
            if !p.starts_with('/') {
                bail!(
                    "logins: {}: {p:?} is not a JSON pointer (it starts with /)",
                    self.kind
                );
            }
        }
        if let Some(r) = &self.refresh {
            if !r.url.starts_with("https://") {
                bail!("logins: {}: refresh.url must be https://", self.kind);
            }
            if !r.request.values().any(|v| v.contains("{refresh}")) {
                bail!(
                    "logins: {}: refresh.request never sends {{refresh}}",
                    self.kind
                );
            }
        }
        for e in &self.egress {
            crate::engine::sandbox::egress::Endpoint::parse(e)
                .map_err(|e| anyhow::anyhow!("logins: {}: egress: {e}", self.kind))?;
        }
        self.check_swap()
    }

    /// Says what is wrong with its swap, if it has one.
    fn check_swap(&self) -> Result<()> {
        let Some(c) = &self.swap else {
            return Ok(());
        };
        if self.live.is_some() {
            bail!("logins: {}: give one of swap and live", self.kind);
        }
        if c.header.is_empty() || c.header != c.header.to_ascii_lowercase() {
            bail!(
                "logins: {}: swap.header: a header name in lower case",
                self.kind
            );
        }
        for m in &c.endpoints {
            crate::engine::sandbox::swap::base(&m.base)
                .map_err(|e| anyhow::anyhow!("logins: {}: swap: {e}", self.kind))?;
            if m.methods.is_empty() || m.paths.iter().any(|p| !p.starts_with('/')) {
                bail!(
                    "logins: {}: swap: each endpoint names its methods and its paths (each from /)",
                    self.kind
                );
            }
        }
        Ok(())
    }
}
