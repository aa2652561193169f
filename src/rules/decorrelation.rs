//! Decorrelation: judges of one model family looking through one lens, or reviewers of one
//! family, are one opinion counted twice.

/// One judge as the rule sees it: its name, its lens, its seat and the seat's model family.
#[derive(Clone, Copy, Debug)]
pub struct Sitting<'a> {
    pub name: &'a str,
    pub lens: &'a str,
    pub question: &'a str,
    pub seat: &'a str,
    pub family: Option<&'a str>,
}

/// Two judges with the same lens and the same model family are one judge in two costumes. A
/// seat whose family is unknown stands for a family of its own, its words compared without the
/// spacing (`exec:llm -m x ` is `exec:llm -m x`).
pub fn correlated(judges: &[Sitting]) -> Option<String> {
    let family = |s: &Sitting| match s.family {
        Some(f) => f.to_lowercase(),
        None => format!(
            "seat {}",
            s.seat.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    };
    for (i, a) in judges.iter().enumerate() {
        for b in &judges[i + 1..] {
            if a.question == b.question && family(a) == family(b) {
                let which = match a.family {
                    Some(f) => format!("the model family {f}"),
                    None => format!(
                        "the seat {} (its family is unknown: state it with --family)",
                        a.seat
                    ),
                };
                return Some(format!(
                    "judges {} and {} share the lens {:?} and {which}: one judge in two costumes. Give them different lenses or families, or pass --allow-correlated to pay twice for one opinion",
                    a.name, b.name, a.lens
                ));
            }
        }
    }
    None
}

/// The family rule: `None` when no two reviewers share a model family and none shares the
/// writer's; otherwise one message naming every clash. Families compare case-insensitively.
pub fn family_clash(reviewers: &[(&str, &str)], writer_family: Option<&str>) -> Option<String> {
    let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    let mut clashes = Vec::new();
    if let Some(writer) = writer_family {
        for (name, family) in reviewers {
            if same(family, writer) {
                clashes.push(format!(
                    "{name} shares the model family {family} with the writer"
                ));
            }
        }
    }
    for (i, (a, fa)) in reviewers.iter().enumerate() {
        for (b, fb) in &reviewers[i + 1..] {
            if same(fa, fb) {
                clashes.push(format!("{a} and {b} share the model family {fa}"));
            }
        }
    }
    if clashes.is_empty() {
        return None;
    }
    Some(format!(
        "{}: reviewers of one family are one opinion counted twice; give each a seat from another family",
        clashes.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_rule_names_every_clash() {
        assert_eq!(
            family_clash(
                &[("review-1", "anthropic"), ("review-2", "openai")],
                Some("google")
            ),
            None
        );
        let msg = family_clash(
            &[
                ("review-1", "anthropic"),
                ("review-2", "OpenAI"),
                ("review-3", "openai"),
            ],
            Some("anthropic"),
        )
        .unwrap();
        assert!(
            msg.starts_with("review-1 shares the model family anthropic with the writer; review-2 and review-3 share the model family OpenAI"),
            "{msg}"
        );
    }
}
