//! References in HTML, read with lol_html (Cloudflare's streaming HTML
//! parser, which tokenizes as browsers do): `src` and `srcset` of images,
//! media, scripts and frames, `href` of the `<link>`s a page loads
//! (stylesheet, modulepreload, preload, icon, manifest), and the paths of
//! a `<script type=importmap>`.
//!
//! Links between pages (`<a href>`) are left out: a site's routes are the
//! server's to answer, and a version is not a site.

use super::{Kind, Lines, Reference};
use lol_html::{RewriteStrSettings, element, rewrite_str, text};
use std::cell::RefCell;

/// Elements and the attribute that names a file they load.
const LOADED: &[(&str, &str)] = &[
    ("script[src]", "src"),
    ("img[src]", "src"),
    ("img[srcset]", "srcset"),
    ("source[src]", "src"),
    ("source[srcset]", "srcset"),
    ("video[src]", "src"),
    ("video[poster]", "poster"),
    ("audio[src]", "src"),
    ("track[src]", "src"),
    ("iframe[src]", "src"),
    ("embed[src]", "src"),
    ("input[src]", "src"),
];

/// `rel` values of a `<link>` whose `href` the page loads.
const LOADED_LINKS: &[&str] = &[
    "stylesheet",
    "modulepreload",
    "preload",
    "prefetch",
    "icon",
    "apple-touch-icon",
    "mask-icon",
    "manifest",
];

/// The references of the page `text`.
pub(crate) fn references(text: &str) -> Vec<Reference> {
    let lines = Lines::of(text);
    let refs = RefCell::new(Vec::new());
    let import_map = RefCell::new((0usize, String::new()));
    let push = |written: &str, offset: usize, kind: Kind| {
        let (line, column) = lines.at(offset);
        refs.borrow_mut().push(Reference {
            kind,
            written: written.to_string(),
            line,
            column,
            runtime: false,
        });
    };
    let mut handlers = Vec::new();
    for (selector, attribute) in LOADED {
        let push = &push;
        handlers.push(element!(*selector, move |el| {
            let offset = el.source_location().bytes().start;
            if let Some(value) = el.get_attribute(attribute) {
                if *attribute == "srcset" {
                    for candidate in value.split(',') {
                        if let Some(url) = candidate.split_whitespace().next() {
                            push(url, offset, Kind::HtmlAttribute);
                        }
                    }
                } else {
                    push(&value, offset, Kind::HtmlAttribute);
                }
            }
            Ok(())
        }));
    }
    handlers.push(element!("link[href][rel]", |el| {
        let offset = el.source_location().bytes().start;
        let rel = el
            .get_attribute("rel")
            .unwrap_or_default()
            .to_ascii_lowercase();
        if rel.split_whitespace().any(|r| LOADED_LINKS.contains(&r))
            && let Some(href) = el.get_attribute("href")
        {
            push(&href, offset, Kind::HtmlAttribute);
        }
        Ok(())
    }));
    handlers.push(text!("script[type=importmap]", |chunk| {
        let mut map = import_map.borrow_mut();
        if map.1.is_empty() {
            map.0 = chunk.source_location().bytes().start;
        }
        map.1.push_str(chunk.as_str());
        Ok(())
    }));
    let settings = handlers
        .into_iter()
        .fold(RewriteStrSettings::new(), |settings, handler| {
            settings.append_element_content_handler(handler)
        });
    // A page that does not parse names nothing more.
    let _ = rewrite_str(text, settings);
    let (offset, map) = import_map.into_inner();
    for path in import_map_paths(&map) {
        push(&path, offset, Kind::ImportMap);
    }
    refs.into_inner()
}

/// Every address an import map maps a specifier to, `imports` and
/// `scopes` alike.
fn import_map_paths(map: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(map) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut add = |table: &serde_json::Value| {
        if let Some(table) = table.as_object() {
            paths.extend(table.values().filter_map(|v| v.as_str()).map(String::from));
        }
    };
    add(&value["imports"]);
    if let Some(scopes) = value["scopes"].as_object() {
        scopes.values().for_each(&mut add);
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaded_files_are_read_and_links_between_pages_are_not() {
        let page = r#"<!doctype html>
<html><head>
<link rel="stylesheet" href="css/app.css">
<link rel="modulepreload" href="./js/chunk.js">
<link rel="icon" href="favicon.ico">
<link rel="canonical" href="https://example.com/">
<script type="importmap">{"imports": {"app": "./js/app.js", "react": "https://esm.sh/react"}}</script>
</head><body>
<img src="img/logo.png" srcset="img/logo@2x.png 2x, img/logo@3x.png 3x">
<a href="other.html">a page</a>
<!-- <script src="commented.js"></script> -->
<script type="module" src="js/app.js"></script>
</body></html>"#;
        let refs = super::super::kinds_and_lines(references(page));
        assert_eq!(
            refs,
            vec![
                (Kind::HtmlAttribute, "css/app.css".into(), 3),
                (Kind::HtmlAttribute, "./js/chunk.js".into(), 4),
                (Kind::HtmlAttribute, "favicon.ico".into(), 5),
                (Kind::HtmlAttribute, "img/logo.png".into(), 9),
                (Kind::HtmlAttribute, "img/logo@2x.png".into(), 9),
                (Kind::HtmlAttribute, "img/logo@3x.png".into(), 9),
                (Kind::HtmlAttribute, "js/app.js".into(), 12),
                (Kind::ImportMap, "./js/app.js".into(), 7),
                (Kind::ImportMap, "https://esm.sh/react".into(), 7),
            ]
        );
    }
}
