//! The ledger as a picture: a standalone SVG with the pairwise kappa heat map and a bar per
//! judge (holds, breaks, abstained). Plain SVG written by hand; every name read from a record
//! is XML-escaped, control characters dropped (XML 1.0 cannot carry them).

use std::fmt::Write;

use crate::records::ledger::LedgerReport;

/// `text` as XML character data or an attribute value.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A kappa's colour: blue (chance or worse) through white to red (one judge twice).
fn colour(kappa: Option<f64>) -> String {
    let Some(k) = kappa else {
        return "#cccccc".into();
    };
    let k = k.clamp(-1.0, 1.0);
    let (r, g, b) = if k >= 0.0 {
        (255.0, 255.0 - 200.0 * k, 255.0 - 200.0 * k)
    } else {
        (255.0 + 200.0 * k, 255.0 + 200.0 * k, 255.0)
    };
    format!("#{:02x}{:02x}{:02x}", r as u8, g as u8, b as u8)
}

const CELL: usize = 28;
const LABEL: usize = 260;
const BAR: usize = 300;

pub fn render(r: &LedgerReport) -> String {
    let n = r.judges.len();
    let top = 60;
    let map_h = n * CELL;
    let bars_top = top + map_h + 60;
    let height = bars_top + n * 22 + 40;
    let width = (LABEL + n * CELL + 40).max(LABEL + BAR + 160);
    let mut s = String::new();
    header(&mut s, r, width, height);
    heat_map(&mut s, r, top);
    bars(&mut s, r, bars_top);
    s.push_str("</svg>\n");
    s
}

/// The picture's frame and title: the panels read, Fleiss' kappa and Krippendorff's alpha.
fn header(s: &mut String, r: &LedgerReport, width: usize, height: usize) {
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="10" y="24" font-size="16">Agreement beyond chance (Cohen's kappa), {} panels</text>"#,
        r.summary.panels
    );
    let _ = writeln!(
        s,
        r#"<text x="10" y="42">Fleiss' kappa {}, Krippendorff's alpha {} (95 % intervals)</text>"#,
        super::figure(r.summary.fleiss_kappa, r.summary.fleiss_kappa_ci95),
        super::figure(r.summary.alpha, r.summary.alpha_ci95)
    );
}

/// The heat map of pairwise kappa from `top` down, each judge numbered along both edges.
fn heat_map(s: &mut String, r: &LedgerReport, top: usize) {
    for (i, j) in r.judges.iter().enumerate() {
        let y = top + i * CELL;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{} {}</text>"#,
            LABEL - 6,
            y + CELL / 2 + 4,
            i + 1,
            xml(&j.name)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            LABEL + i * CELL + CELL / 2,
            top - 6,
            i + 1
        );
    }
    for p in &r.pairs {
        for (row, col) in [(p.a_index, p.b_index), (p.b_index, p.a_index)] {
            let _ = writeln!(
                s,
                r#"<rect class="cell" x="{}" y="{}" width="{CELL}" height="{CELL}" fill="{}" stroke="white"><title>{} &amp; {}: kappa {}, {} shared panels</title></rect>"#,
                LABEL + (col - 1) * CELL,
                top + (row - 1) * CELL,
                colour(p.kappa),
                xml(&p.a),
                xml(&p.b),
                p.kappa.map_or("n/a".into(), |k| format!("{k:.2}")),
                p.shared_panels
            );
        }
    }
}

/// A bar per judge from `bars_top` down: its holds, breaks and abstentions, its panels and flags.
fn bars(s: &mut String, r: &LedgerReport, bars_top: usize) {
    let (yes, no) = match r.summary.pairwise {
        true => ("A", "B"),
        false => ("holds", "breaks"),
    };
    let what = if r.summary.pairwise {
        "Preferences"
    } else {
        "Verdicts"
    };
    let _ = writeln!(
        s,
        r#"<text x="10" y="{}" font-size="16">{what} per judge: {yes}, {no}, abstained</text>"#,
        bars_top - 16
    );
    for (i, j) in r.judges.iter().enumerate() {
        let y = bars_top + i * 22;
        let total = (j.holds + j.breaks + j.abstained).max(1) as f64;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{} {}</text>"#,
            LABEL - 6,
            y + 13,
            i + 1,
            xml(&j.name)
        );
        let mut x = LABEL as f64;
        for (n, fill, what) in [
            (j.holds, "#4caf50", yes),
            (j.breaks, "#e53935", no),
            (j.abstained, "#9e9e9e", "abstained"),
        ] {
            let w = BAR as f64 * n as f64 / total;
            let _ = writeln!(
                s,
                r#"<rect class="bar" x="{x:.1}" y="{y}" width="{w:.1}" height="16" fill="{fill}"><title>{what} {n}</title></rect>"#
            );
            x += w;
        }
        let flags: Vec<&str> = j.flags.iter().map(|f| f.flag).collect();
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{} panels {}</text>"#,
            LABEL + BAR + 8,
            y + 13,
            j.panels,
            flags.join(" ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_a_name_stays_text() {
        assert_eq!(
            xml("</svg><script>&\"'\x1b"),
            "&lt;/svg&gt;&lt;script&gt;&amp;&quot;&#39;\u{fffd}"
        );
    }

    #[test]
    fn kappa_colours_run_from_blue_to_red() {
        assert_eq!(colour(Some(1.0)), "#ff3737");
        assert_eq!(colour(Some(0.0)), "#ffffff");
        assert_eq!(colour(Some(-1.0)), "#3737ff");
        assert_eq!(colour(None), "#cccccc");
    }
}
