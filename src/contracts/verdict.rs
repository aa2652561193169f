//! The verdict contract: what a judge must answer, as a JSON Schema for the harnesses that take
//! one, and as the check every answer passes, whatever the harness promised.

use serde_json::{Map, Value, json};

use crate::records::Verdict;

/// The JSON Schema of a verdict.
pub fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["holds", "breaks"]},
            "reason": {"type": "string"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1}
        },
        "required": ["verdict", "reason", "confidence"],
        "additionalProperties": false
    })
}

/// A verdict that meets the contract.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub verdict: Verdict,
    pub reason: String,
    pub confidence: f64,
}

/// Checks an answer object; `Err` says, in one line, how it misses the contract.
pub fn check_verdict(obj: &Map<String, Value>) -> Result<Answer, String> {
    let verdict = match obj.get("verdict") {
        Some(Value::String(v)) if v == "holds" => Verdict::Holds,
        Some(Value::String(v)) if v == "breaks" => Verdict::Breaks,
        Some(other) => {
            return Err(format!(
                "verdict {other} is neither \"holds\" nor \"breaks\""
            ));
        }
        None => return Err("no \"verdict\" in the answer".into()),
    };
    let reason = match obj.get("reason") {
        Some(Value::String(r)) if !r.trim().is_empty() => r.clone(),
        Some(Value::String(_)) => return Err("the reason is empty".into()),
        Some(other) => return Err(format!("reason {other} is not a string")),
        None => return Err("no \"reason\" in the answer".into()),
    };
    let confidence = match obj.get("confidence") {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(c) if (0.0..=1.0).contains(&c) => c,
            _ => return Err(format!("confidence {n} is outside 0 to 1")),
        },
        Some(other) => return Err(format!("confidence {other} is not a number")),
        None => return Err("no \"confidence\" in the answer".into()),
    };
    Ok(Answer {
        verdict,
        reason,
        confidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(v: Value) -> Result<Answer, String> {
        check_verdict(v.as_object().unwrap())
    }

    #[test]
    fn a_verdict_meets_the_contract() {
        let a = check(json!({"verdict":"holds","reason":"r","confidence":0.5})).unwrap();
        assert_eq!(a.verdict, Verdict::Holds);
        assert_eq!(a.confidence, 0.5);
    }

    #[test]
    fn answers_outside_the_contract_say_why() {
        assert_eq!(
            check(json!({"verdict":"maybe","reason":"r","confidence":0.5})).unwrap_err(),
            "verdict \"maybe\" is neither \"holds\" nor \"breaks\""
        );
        assert_eq!(
            check(json!({"answer":"yes"})).unwrap_err(),
            "no \"verdict\" in the answer"
        );
        assert_eq!(
            check(json!({"verdict":"breaks","reason":"r","confidence":1.5})).unwrap_err(),
            "confidence 1.5 is outside 0 to 1"
        );
        assert_eq!(
            check(json!({"verdict":"breaks","reason":"r","confidence":"high"})).unwrap_err(),
            "confidence \"high\" is not a number"
        );
        assert_eq!(
            check(json!({"verdict":"breaks","reason":" ","confidence":1})).unwrap_err(),
            "the reason is empty"
        );
    }
}
