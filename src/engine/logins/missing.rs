//! A seat with no login: whether it is launched (its CLI answers only with one, and the user
//! names no other way it logs in), and what logs the user in.

use super::{User, order};
use crate::engine::harness::{Harness, Login};

/// Why a seat of `row` for `model` is not launched, when the user has none of its logins:
/// its CLI cannot answer without one (the row has `loginElsewhere`), the row has some for the
/// seat, and the user sets none of the `loginElsewhere` variables. One line: where each was
/// looked for, and what logs in.
pub fn none_for(row: &Harness, model: Option<&str>, user: &User) -> Option<String> {
    let elsewhere = row.login_elsewhere.as_ref()?;
    let fitting: Vec<&Login> = order(row, model, user).collect();
    let said = user.var(LOGIN_ELSEWHERE).unwrap_or_default();
    let told = said.split(',').any(|name| name.trim() == row.name);
    if fitting.is_empty() || told || elsewhere.iter().any(|v| user.var(v).is_some()) {
        return None;
    }
    let mut looked: Vec<String> = Vec::new();
    for l in &fitting {
        let at = match (&l.env[..], &l.file, &l.command[..]) {
            ([_, ..], _, _) => l.env.iter().map(|v| format!("${v}")).collect(),
            (_, Some(f), _) => {
                let path = user.path(f);
                match path.strip_prefix(user.home) {
                    Ok(rest) => format!("~/{}", rest.display()),
                    Err(_) => path.display().to_string(),
                }
            }
            (_, _, [c, ..]) => format!("`{c} …`"),
            _ => continue,
        };
        if !looked.contains(&at) {
            looked.push(at);
        }
    }
    Some(format!(
        "{} has no login (looked for {}); to log in: {} (one of its own: {LOGIN_ELSEWHERE}={})",
        row.name,
        looked.join(", "),
        how_to_log_in(row, model, user),
        row.name
    ))
}

/// The variable that names, comma-separated, the rows whose CLI logs in a way of its own
/// (a helper, a company's sign-in): their seats are launched without a login panel knows.
const LOGIN_ELSEWHERE: &str = "PANEL_LOGIN_ELSEWHERE";

/// What logs the user in to `row` for a seat of `model`: its logins' commands, or setting
/// their variables.
pub fn how_to_log_in(row: &Harness, model: Option<&str>, user: &User) -> String {
    let mut fixes: Vec<String> = Vec::new();
    let mut vars: Vec<String> = Vec::new();
    for l in order(row, model, user) {
        match (&l.fix, l.env.first()) {
            (Some(f), _) if !fixes.contains(&format!("`{f}`")) => fixes.push(format!("`{f}`")),
            (None, Some(v)) if !vars.contains(v) => vars.push(v.clone()),
            _ => {}
        }
    }
    let set = (!vars.is_empty()).then(|| format!("set {}", vars.join(" or ")));
    let ways: Vec<String> = fixes.into_iter().chain(set).collect();
    match ways.len() {
        0 => "see its documentation".to_string(),
        1 => ways[0].clone(),
        n => format!("{}, or {}", ways[..n - 1].join(", "), ways[n - 1]),
    }
}
