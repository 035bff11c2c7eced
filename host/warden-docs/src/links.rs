//! Links that resolve: every relative link, image and `#anchor` of the built book
//! (its HTML, so the anchors are the ones mdBook made), and every relative
//! link of the README, into the book's pages or the repository's files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A book built into a folder: its pages, each read once with the ids it has.
pub struct Site {
    root: PathBuf,
    pages: Vec<(PathBuf, String)>,
    ids: HashMap<PathBuf, HashSet<String>>,
}

impl Site {
    pub fn load(site: &Path) -> Site {
        let root = site.canonicalize().unwrap_or_else(|_| site.to_path_buf());
        let pages: Vec<(PathBuf, String)> = crate::files_named(&root, "html")
            .into_iter()
            .map(|page| {
                let html = std::fs::read_to_string(&page).unwrap_or_default();
                (page.canonicalize().unwrap_or(page), html)
            })
            .collect();
        let ids = pages
            .iter()
            .map(|(page, html)| (page.clone(), attributes(html, "id").into_iter().collect()))
            .collect();
        Site { root, pages, ids }
    }

    /// The pages whose HTML holds `text`, by their path in the book.
    pub fn pages_containing(&self, text: &str) -> Vec<String> {
        let holding = self.pages.iter().filter(|(_, html)| html.contains(text));
        holding
            .map(|(page, _)| {
                page.strip_prefix(&self.root)
                    .unwrap_or(page)
                    .display()
                    .to_string()
            })
            .collect()
    }

    /// Each broken link of the book, as `page: link: reason`.
    pub fn broken(&self) -> Vec<String> {
        let mut broken = Vec::new();
        for (page, html) in &self.pages {
            // mdBook's not-found page links by the site's root URL, which exists
            // only once the book is served.
            if page.file_name().is_some_and(|name| name == "404.html") {
                continue;
            }
            let shown = page
                .strip_prefix(&self.root)
                .unwrap_or(page)
                .display()
                .to_string();
            for href in attributes(html, "href")
                .into_iter()
                .chain(attributes(html, "src"))
            {
                if is_external(&href) {
                    continue;
                }
                let (path, fragment) = href.split_once('#').unwrap_or((&href, ""));
                let target = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap_or(&self.root).join(path)
                };
                let outside = target
                    .canonicalize()
                    .is_ok_and(|target| !target.starts_with(&self.root));
                let reason = if outside {
                    Some("outside the book".to_owned())
                } else {
                    self.unresolved(&target, fragment)
                };
                if let Some(reason) = reason {
                    broken.push(format!("{shown}: {href}: {reason}"));
                }
            }
        }
        broken.dedup();
        broken
    }

    /// Each broken relative link of `markdown` (the README at `root`): a
    /// missing file, or a page or anchor that the book does not have.
    pub fn broken_in_readme(&self, markdown: &str, root: &Path) -> Vec<String> {
        let mut broken = Vec::new();
        for (line, href) in markdown_links(markdown) {
            if is_external(&href) {
                continue;
            }
            let (path, fragment) = href.split_once('#').unwrap_or((&href, ""));
            let path = path.trim_start_matches("./");
            let reason = match Path::new(path).strip_prefix("docs/src") {
                Ok(chapter) if path.ends_with(".md") => {
                    self.unresolved(&self.root.join(chapter).with_extension("html"), fragment)
                }
                _ if !fragment.is_empty() => {
                    Some("anchors are checked in the book's pages only".to_owned())
                }
                _ => (!root.join(path).exists()).then(|| "no such file".to_owned()),
            };
            if let Some(reason) = reason {
                broken.push(format!("README.md:{line}: {href}: {reason}"));
            }
        }
        broken
    }

    fn unresolved(&self, target: &Path, fragment: &str) -> Option<String> {
        let target = if target.is_dir() {
            target.join("index.html")
        } else {
            target.to_path_buf()
        };
        let Ok(target) = target.canonicalize() else {
            return Some("no such file".to_owned());
        };
        if fragment.is_empty() {
            return None;
        }
        match self.ids.get(&target) {
            Some(ids) if ids.contains(fragment) => None,
            Some(_) => Some(format!("no heading or element with the id {fragment:?}")),
            None => Some("an anchor into a file that is not one of the book's pages".to_owned()),
        }
    }
}

fn is_external(href: &str) -> bool {
    ["http:", "https:", "mailto:", "javascript:", "//"]
        .iter()
        .any(|scheme| href.starts_with(scheme))
}

/// The `[text](target)` links of Markdown text with their line numbers,
/// outside code blocks and code spans.
pub fn markdown_links(markdown: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    for (line, prose) in crate::prose_lines(markdown) {
        let mut rest = prose.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            links.push((line, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    links
}

/// The lines of Markdown text that use reference-style links (`[text][label]`
/// or a `[label]: target` definition): mdBook renders one whose label is
/// missing as plain text, without a warning, so the guide writes links inline.
pub fn reference_style(markdown: &str) -> Vec<usize> {
    crate::prose_lines(markdown)
        .into_iter()
        .filter(|(_, prose)| {
            let definition = prose.trim_start().starts_with('[') && prose.contains("]: ");
            definition || prose.contains("][")
        })
        .map(|(line, _)| line)
        .collect()
}

/// The values of `name="..."` in an HTML text.
fn attributes(html: &str, name: &str) -> Vec<String> {
    let marker = format!(" {name}=\"");
    let mut values = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&marker) {
        let after = &rest[start + marker.len()..];
        let Some(end) = after.find('"') else { break };
        values.push(unescape(&after[..end]));
        rest = &after[end..];
    }
    values
}

fn unescape(value: &str) -> String {
    value
        .replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> tempfile::TempDir {
        let site = tempfile::tempdir().unwrap();
        std::fs::create_dir(site.path().join("shell")).unwrap();
        std::fs::write(
            site.path().join("index.html"),
            r#"<h1 id="warden">W</h1><a href="shell/exec.html#timeouts">t</a>"#,
        )
        .unwrap();
        std::fs::write(
            site.path().join("shell/exec.html"),
            r#"<h2 id="timeouts">T</h2><a href="../index.html#warden">w</a><a href="https://example.com/x#y">x</a>"#,
        )
        .unwrap();
        site
    }

    #[test]
    fn a_book_whose_links_resolve_has_nothing_broken() {
        let site = site();
        std::fs::write(
            site.path().join("404.html"),
            r#"<base href="/"><a href="/">home</a>"#,
        )
        .unwrap();
        assert_eq!(Site::load(site.path()).broken(), Vec::<String>::new());
    }

    #[test]
    fn a_missing_page_and_a_missing_anchor_are_both_reported() {
        let site = site();
        std::fs::write(
            site.path().join("bad.html"),
            r##"<a href="gone.html">g</a><a href="shell/exec.html#nope">n</a><a href="#here">h</a><img src="gone.png">"##,
        )
            .unwrap();
        assert_eq!(
            Site::load(site.path()).broken(),
            [
                "bad.html: gone.html: no such file",
                "bad.html: shell/exec.html#nope: no heading or element with the id \"nope\"",
                "bad.html: #here: no heading or element with the id \"here\"",
                "bad.html: gone.png: no such file",
            ]
        );
    }

    #[test]
    fn a_link_out_of_the_book_is_reported() {
        let site = site();
        std::fs::write(
            site.path().join("out.html"),
            r#"<a href="/etc/hostname">h</a><a href="../../../../../../../etc/hostname">u</a>"#,
        )
        .unwrap();
        let broken = Site::load(site.path()).broken();
        assert_eq!(
            broken,
            [
                "out.html: /etc/hostname: outside the book",
                "out.html: ../../../../../../../etc/hostname: outside the book"
            ]
        );
    }

    #[test]
    fn reference_style_links_are_found_outside_code() {
        let text = "See [exec][e].\n[e]: docs/src/shell/exec.md\n`[a][b]`\n```\n[x][y]\n```\n[inline](a.md)\n";
        assert_eq!(reference_style(text), [1, 2]);
    }

    #[test]
    fn readme_links_are_checked_against_the_built_pages_and_the_repository() {
        let site = site();
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("ARCHITECTURE.md"), "# A").unwrap();
        let readme = "See [exec](docs/src/shell/exec.md#timeouts), [arch](ARCHITECTURE.md),\n\
                      [gone](./docs/src/shell/gone.md), [bad](docs/src/shell/exec.md#nope), [x](NOPE.md)\n\
                      `[code](not-a-link.md)`\n```\n[fenced](not-a-link.md)\n```\n";
        assert_eq!(
            Site::load(site.path()).broken_in_readme(readme, root.path()),
            [
                "README.md:2: ./docs/src/shell/gone.md: no such file",
                "README.md:2: docs/src/shell/exec.md#nope: no heading or element with the id \"nope\"",
                "README.md:2: NOPE.md: no such file",
            ]
        );
    }
}
