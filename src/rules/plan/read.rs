//! Reading a plan file (`pr-classify --plan` writes one): the one plan record, after its
//! `pr-class` record, with member names that can be folders.

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::PanelPlan;
use crate::records::input::Input;

/// The most of a plan file read: a plan and its class record are a few KiB; a pull request
/// of many thousands of files stays far below.
pub const MAX_PLAN: usize = 64 << 20;

/// Reads the `plan` record from pr-classify's output (a `pr-class` record may come first), to
/// [`MAX_PLAN`] bytes.
pub fn read_plan(path: &str) -> Result<PanelPlan> {
    let mut input = Input::open_bounded(path, MAX_PLAN)?;
    let mut buf = String::new();
    let mut plan = None;
    while input.next_line(&mut buf)? {
        if buf.trim().is_empty() {
            continue;
        }
        let value = crate::records::strict::value(&buf)
            .map_err(|e| anyhow::anyhow!("{}: not a JSON record: {e}", input.at()))?;
        match value.get("type").and_then(Value::as_str) {
            Some("plan") if plan.is_some() => bail!("{}: a second plan record", input.at()),
            Some("plan") => {
                plan = Some(
                    crate::records::strict::from_value::<PanelPlan>(value).map_err(|e| {
                        anyhow::anyhow!("{}: a plan record that does not fit: {e}", input.at())
                    })?,
                )
            }
            Some("pr-class") => {}
            Some(other) => bail!(
                "{}: a {other} record; {}",
                input.at(),
                crate::records::destination(other)
            ),
            None => bail!("{}: a record without a \"type\"", input.at()),
        }
    }
    if let Some(plan) = &plan
        && let Some(why) = plan
            .members
            .iter()
            .find_map(|m| crate::records::printable::check_folder_name(&m.name).err())
    {
        bail!("{path}: a member {why}");
    }
    plan.with_context(|| {
        format!(
            "{}: no plan record (make one with pr-classify --plan)",
            input.name
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> PanelPlan {
        let text = r#"{"type":"plan","repo":"acme/app","pr":7,"head":"0123456789abcdef","base":null,"kind":null,
            "class":"standard","headroom":{"opus":true},"members":[{"name":"rp-acme-app-7-01234567-correctness",
            "shape":"correctness","briefId":"correctness","profile":"bd-reviewer","seat":"claude:sonnet",
            "blocking":true,"degraded":false,"reason":"always"}],"spendEstimate":1,"sonnetFor":{}}"#;
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_plan_is_read_after_its_pr_class_record() {
        let dir = std::env::temp_dir().join(format!("panel-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("plan.jsonl");
        let plan_line = serde_json::to_string(&plan()).unwrap();
        std::fs::write(&path, format!("{{\"type\":\"pr-class\"}}\n{plan_line}\n")).unwrap();
        assert_eq!(read_plan(path.to_str().unwrap()).unwrap(), plan());
        std::fs::write(&path, "{\"type\":\"pr-class\"}\n").unwrap();
        assert!(
            read_plan(path.to_str().unwrap())
                .unwrap_err()
                .to_string()
                .contains("no plan record")
        );
        std::fs::write(&path, "{\"type\":\"verdict\"}\n").unwrap();
        let err = read_plan(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(err.contains("line 1: a verdict record"), "{err}");
        // A key given twice is not read as the last of the two.
        let twice = plan_line.replacen("{", "{\"type\":\"plan\",", 1);
        std::fs::write(&path, format!("{twice}\n")).unwrap();
        let err = read_plan(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            err.contains("line 1: not a JSON record: duplicate field `type`"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
