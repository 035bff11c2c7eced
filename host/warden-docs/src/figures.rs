//! Figures that name their source: outside the benchmarks chapter, a line
//! that states a measured figure (a time in µs or ms, a ratio such as 0.74×,
//! calls per second) must link to the benchmarks chapter, where the figure
//! was measured and how to measure it again is written. Figures inside code
//! (an error text, a command's output) are not claims and are not looked at.

/// The lines of `markdown` (1-based, with the figure found) that state a
/// figure without a link to `benchmarks.md`.
pub fn unsourced(markdown: &str) -> Vec<(usize, String)> {
    crate::prose_lines(markdown)
        .into_iter()
        .filter(|(_, prose)| !links_to_benchmarks(prose))
        .filter_map(|(line, prose)| first_figure(&prose).map(|figure| (line, figure)))
        .collect()
}

fn links_to_benchmarks(prose: &str) -> bool {
    prose
        .split("](")
        .skip(1)
        .any(|target| target.starts_with("benchmarks.md") || target.contains("/benchmarks.md"))
}

/// Micro as the micro sign (U+00B5) and as the Greek letter (U+03BC).
const UNITS: [&str; 6] = ["×", "µs", "μs", "ns", "ms", "calls/s"];

/// The first `NUMBER[ ]UNIT` of `text`, e.g. `1.46×` or `86 µs`.
fn first_figure(text: &str) -> Option<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !chars[i - 1].1.is_alphanumeric());
        if !starts_number {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && (chars[j].1.is_ascii_digit() || matches!(chars[j].1, '.' | ',')) {
            j += 1;
        }
        let number_end = chars.get(j).map_or(text.len(), |(at, _)| *at);
        let after = text[number_end..].trim_start_matches([' ', '\u{a0}', '\u{202f}', '\u{2009}']);
        for unit in UNITS {
            let Some(rest) = after.strip_prefix(unit) else {
                continue;
            };
            if rest
                .chars()
                .next()
                .is_none_or(|next| !next.is_alphanumeric())
            {
                return Some(text[start..text.len() - rest.len()].to_owned());
            }
        }
        i = j.max(i + 1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_without_a_link_to_the_benchmarks_is_reported() {
        let text = "Fast: 1.46× raw bwrap.\nA call takes 86 µs ([measured](benchmarks.md#the-mcp-server)).\n\
                    `the tool ran past its time limit of 300ms`\n```\n5 ms\n```\n8,515 calls/s here\n\
                    2 msgs, 3 mss, v2ms, 10 minutes, 3–é\nby exec (50–230 ms each)\n\
                    says benchmarks.md but links nowhere: 12\u{202f}μs\n";
        assert_eq!(
            unsourced(text),
            [
                (1, "1.46×".to_owned()),
                (7, "8,515 calls/s".to_owned()),
                (9, "230 ms".to_owned()),
                (10, "12\u{202f}μs".to_owned())
            ]
        );
    }
}
