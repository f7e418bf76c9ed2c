//! The import map written into a version's own pages at publish
//! (`ccc publish --importmap`): each HTML page that loads modules gets
//! the map inline, `<script type="importmap">…</script>`, just before its
//! first `<script type="module">` or `<link rel="modulepreload">`, since
//! a browser takes a map only before the first module it loads.
//!
//! Pages are read and written by lol_html, which tokenizes as browsers
//! do, so a `<script>` in a comment or in a string is not taken for one;
//! every byte outside the insertion is kept as it was. A page that loads
//! no module is left unchanged. A page that has an import map already is
//! refused rather than merged: a browser takes one map per page before
//! its first module, and two sources for one specifier would leave it to
//! guess which the page meant.

use super::{Generated, ImportMap};
use crate::catalog::Catalog;
use crate::catalog::publish::Rewritten;
use crate::catalog::query::Page;
use crate::catalog::rows::VersionRow;
use crate::error::{Error, Result};
use lol_html::html_content::ContentType;
use lol_html::{HtmlRewriter, Settings, element};
use serde::Serialize;
use std::cell::RefCell;

/// The pages of a version that a publish wrote the map into, and the
/// map itself: what `ccc publish --importmap --json` reports.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Written {
    /// The pages the map went into, by path.
    pub pages: Vec<String>,
    /// The map and what went into it, as `ccc importmap --json` has it.
    #[serde(flatten)]
    pub generated: Generated,
}

/// What a page's rewrite found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rewrite {
    /// The page with the map before its first module.
    Written(Vec<u8>),
    /// The page loads no module: no map.
    NoModules,
    /// The page has its own import map, at this 1-based line.
    HasMap { line: u32 },
}

/// `page` with `map` written before its first module script or
/// modulepreload link.
pub(crate) fn insert(page: &[u8], map: &ImportMap) -> Rewrite {
    let json = inline_json(map);
    let first_module: RefCell<Option<usize>> = RefCell::new(None);
    let own_map: RefCell<Option<usize>> = RefCell::new(None);
    let mut out = Vec::with_capacity(page.len() + json.len() + 64);
    let settings = Settings::new()
        .append_element_content_handler(element!("script[type]", |el| {
            let kind = el.get_attribute("type").unwrap_or_default();
            let kind = kind.trim();
            let start = el.source_location().bytes().start;
            if kind.eq_ignore_ascii_case("importmap") {
                own_map.borrow_mut().get_or_insert(start);
            } else if kind.eq_ignore_ascii_case("module") {
                before_first(el, start, page, &json, &first_module);
            }
            Ok(())
        }))
        .append_element_content_handler(element!("link[rel]", |el| {
            let rel = el.get_attribute("rel").unwrap_or_default();
            if rel
                .split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case("modulepreload"))
            {
                let start = el.source_location().bytes().start;
                before_first(el, start, page, &json, &first_module);
            }
            Ok(())
        }));
    let mut rewriter = HtmlRewriter::new(settings, |chunk: &[u8]| out.extend_from_slice(chunk));
    // A page lol_html cannot read to its end is served as it was.
    let read = rewriter.write(page).and_then(|()| rewriter.end());
    if let Some(start) = own_map.into_inner() {
        return Rewrite::HasMap {
            line: line_of(page, start),
        };
    }
    match (read, first_module.into_inner()) {
        (Ok(()), Some(_)) => Rewrite::Written(out),
        _ => Rewrite::NoModules,
    }
}

/// Writes the map before `el` when no module came before it: on a line
/// of its own, indented as `el` is, when `el` begins its line.
fn before_first(
    el: &mut lol_html::html_content::Element<'_, '_>,
    start: usize,
    page: &[u8],
    json: &str,
    first_module: &RefCell<Option<usize>>,
) {
    if first_module.borrow().is_some() {
        return;
    }
    *first_module.borrow_mut() = Some(start);
    let line_start = page[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let indent = &page[line_start..start];
    let mut html = format!("<script type=\"importmap\">{json}</script>");
    if indent.iter().all(|&b| b == b' ' || b == b'\t') {
        html.push('\n');
        html.push_str(&String::from_utf8_lossy(indent));
    }
    el.before(&html, ContentType::Html);
}

/// The 1-based line of byte `offset` of `page`.
fn line_of(page: &[u8], offset: usize) -> u32 {
    let newlines = page[..offset.min(page.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    newlines as u32 + 1
}

/// `map` as JSON that cannot end the script it is written in: every `<`
/// (only ever inside a string) is escaped, so `</script>` or `<!--` in a
/// specifier stays text.
pub(crate) fn inline_json(map: &ImportMap) -> String {
    // A map of strings always serializes.
    serde_json::to_string(map)
        .unwrap_or_default()
        .replace('<', "\\u003c")
}

/// Generates the import map of `root` from `catalog` and writes it into
/// each of its pages that load modules: the new bytes of each page that
/// changed, by path, and what was written. A page with its own import
/// map refuses the version ([`Error::ImportMapRefused`]); so does any
/// specifier left unresolved, with `strict`.
pub(crate) fn write_into_pages(
    catalog: &Catalog,
    root: &VersionRow,
    options: &super::Options,
    strict: bool,
) -> Result<(Rewritten, Written)> {
    let generated = super::generate(catalog, root.clone(), options)?;
    let refused = |why: String| Error::ImportMapRefused {
        package: root.package.clone(),
        version: root.version.to_string(),
        why,
    };
    if strict && let Some(first) = generated.unresolved.first() {
        return Err(refused(format!(
            "{} left out of its import map (--strict), first {first}",
            crate::units::count_verb(generated.unresolved.len() as u64, "specifier", "is", "are")
        )));
    }
    let mut rewritten = Vec::new();
    for file in catalog.files(root.id, Page::ALL)? {
        if !file.content_type.starts_with("text/html") {
            continue;
        }
        crate::interrupt::check()?;
        let page = catalog.decoded(&file)?;
        match insert(&page, &generated.importmap) {
            Rewrite::Written(bytes) => rewritten.push((file.path, bytes)),
            Rewrite::NoModules => {}
            Rewrite::HasMap { line } => {
                return Err(refused(format!(
                    "its page {} has an import map of its own (line {line}), and --importmap \
                     writes the version's: remove the page's, or publish without --importmap",
                    file.path
                )));
            }
        }
    }
    let pages = rewritten.iter().map(|(path, _)| path.clone()).collect();
    Ok((rewritten, Written { pages, generated }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn map() -> ImportMap {
        ImportMap {
            imports: BTreeMap::from([("lib".into(), "/assets/lib/1.0.0/index.js".into())]),
            ..ImportMap::default()
        }
    }

    fn written(page: &str) -> String {
        match insert(page.as_bytes(), &map()) {
            Rewrite::Written(bytes) => String::from_utf8(bytes).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_map_goes_before_the_first_module_indented_as_it_is() {
        let page = "<!doctype html>\n<html><head>\n  <link rel=\"stylesheet\" href=\"a.css\">\n  \
                    <link rel=\"modulepreload\" href=\"./chunk.js\">\n  <script type=\"module\" \
                    src=\"./main.js\"></script>\n</head></html>\n";
        let map =
            r#"<script type="importmap">{"imports":{"lib":"/assets/lib/1.0.0/index.js"}}</script>"#;
        assert_eq!(
            written(page),
            page.replace(
                "  <link rel=\"modulepreload\"",
                &format!("  {map}\n  <link rel=\"modulepreload\"")
            )
        );
        // Not at the start of its line: no new line.
        let page = "<body><p>x</p><SCRIPT TYPE=Module>import 'lib'</SCRIPT></body>";
        assert_eq!(
            written(page),
            format!("<body><p>x</p>{map}<SCRIPT TYPE=Module>import 'lib'</SCRIPT></body>")
        );
    }

    #[test]
    fn pages_without_modules_or_with_their_own_map_are_not_written() {
        for page in [
            "<html><script src=\"classic.js\"></script></html>",
            "<!-- <script type=\"module\" src=\"x.js\"></script> -->",
            "<script type=\"text/plain\">&lt;script type=module&gt;</script>",
            "",
        ] {
            assert_eq!(
                insert(page.as_bytes(), &map()),
                Rewrite::NoModules,
                "{page}"
            );
        }
        let page = "<head>\n<script type=\"module\" src=\"a.js\"></script>\n\
                    <script type=\"importmap\">{}</script>\n</head>";
        assert_eq!(insert(page.as_bytes(), &map()), Rewrite::HasMap { line: 3 });
    }

    #[test]
    fn a_specifier_cannot_close_the_script() {
        let mut evil = map();
        evil.imports
            .insert("</script><script>alert(1)//".into(), "/x.js".into());
        let json = inline_json(&evil);
        assert!(!json.contains('<'), "{json}");
        let back: ImportMap = serde_json::from_str::<serde_json::Value>(&json)
            .map(|v| ImportMap {
                imports: serde_json::from_value(v["imports"].clone()).unwrap(),
                ..ImportMap::default()
            })
            .unwrap();
        assert_eq!(back, evil);
    }
}
