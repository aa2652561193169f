//! `panel-judge --doctor`'s records: what each harness has on this machine, and what the
//! judges' walls can be here. Read by people and scripts, not by the tools.

use serde::Serialize;

/// `harness-status`: one harness row on this machine.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HarnessStatus {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: String,
    /// The program the row runs; empty for a row that launches nothing (`replay`).
    pub executable: String,
    /// Whether it can be launched: found on PATH (a row that launches nothing needs nothing).
    pub installed: bool,
    /// Where it was found.
    pub path: Option<String>,
    /// How to install it, when it is not installed and the row says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
    /// The first line `EXECUTABLE --version` printed, control characters escaped and cut.
    pub version: Option<String>,
    /// Why there is no version (not installed, not asked, no answer in time, a failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_note: Option<String>,
    /// Whether a login was found: one of the row's kinds of login. Null when the row needs
    /// none.
    pub login: Option<bool>,
    /// The login its judges would get (the first the row's order finds), never its value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub login_used: Option<LoginStatus>,
    /// Every kind of login looked for, and where: `pro-max: ~/.claude/.credentials.json`.
    pub looked_at: Vec<String>,
    /// What logs the user in, when no login was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub login_fix: Option<String>,
    /// Why a confined judge would refuse this installation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_note: Option<String>,
}

/// A login as `--doctor` finds it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct LoginStatus {
    /// Its kind, as the harness row names it (`pro-max`, `chatgpt`, `api-key`, …).
    pub kind: String,
    /// Where it is: a variable (`$NAME`), a file, or the command that prints it.
    pub at: String,
    /// Whether a judge can use it through the walls: a live access token, or one panel can
    /// refresh before the judge starts.
    pub usable: bool,
    /// When its access token expires (UTC), when that is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Whether panel can refresh it (the row says how, and the store holds a refresh token).
    pub refresh: bool,
    /// The one command that logs the user in again, when panel cannot use it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// Why it is not usable, or what panel does about its expiry; or that the row is unverified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Whether the row was built from the CLI's documentation without being run (a built-in row).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
    /// What a confined judge holds of it: `placeholder` (its proxy puts the live credential
    /// in on its model's requests alone), or `live: why`; none for a login no judge gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_holds: Option<String>,
    /// What the row says of this login (what a judge receives of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `sandbox-status`: what the judges' walls can be on this machine, for this user.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The Landlock ABI judges are confined at (this kernel's, at most the newest tested).
    pub landlock_abi: Option<u8>,
    /// Why there is no Landlock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landlock_note: Option<String>,
    /// Whether this kernel lets this user make a judge's jail (user namespaces and a mount).
    pub jail: bool,
    /// Why no jail can be made, and the fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jail_note: Option<String>,
    /// The `--sandbox` mode asked about.
    pub mode: String,
    /// What each record would say of its judge's walls under that mode (`sandbox`); null
    /// when the mode launches nothing here.
    pub walls: Option<String>,
    /// Why the mode launches nothing here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The ids a root caller's judges run as, `[uid, gid]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_as: Option<[u32; 2]>,
    /// On macOS: whether judges can be put under a Seatbelt profile (`sandbox-exec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seatbelt: Option<bool>,
    /// Why they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seatbelt_note: Option<String>,
    /// What the walls of this platform cannot hold, whatever the mode.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_held: Vec<String>,
}
