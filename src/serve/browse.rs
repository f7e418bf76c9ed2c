//! The browse UI: the catalog's listings as HTML pages, for people with a
//! browser.
//!
//! ```text
//! /assets/                 every package: latest version, versions, files, stored bytes
//! /assets/PKG/             the package's versions: tags, publish dates, files, sizes
//! /assets/PKG/VERSION/     the version's files: sizes raw and stored, type,
//!                          compression, SRI integrity with a copy button
//! ```
//!
//! A client gets these pages only when it ranks `text/html` above JSON
//! ([`crate::http::negotiate::format`]); everyone else keeps the JSON. The
//! pages are built from the rows the store returns for the JSON, so both
//! say the same thing.
//!
//! # Self-contained and escaped
//!
//! A page makes no other request: one inline stylesheet ([`STYLE`]), a few
//! lines of inline script for the copy buttons ([`SCRIPT`]), an empty
//! `data:` icon so the browser does not ask for `/favicon.ico`. The
//! [`CSP`] header allows exactly that stylesheet and that script by hash
//! and nothing else, so even a name that slipped through escaping could
//! not run a script.
//!
//! Every text from the catalog (package names, paths, content types) is
//! written through [`Html`], which escapes `& < > " '` for element content
//! and double-quoted attribute values alike; every link is built by
//! [`route::asset_url`] or [`route::package_url`], which percent-encode
//! each segment, and is HTML-escaped as well.
//!
//! # Cost
//!
//! A page is one pass of `write!` into a string reserved ahead; the answer
//! compresses it with gzip for clients that take it. The test
//! `tests::ten_thousand_files_render_fast` bounds the time of a
//! 10,000-file version and measures the page's weight.

use crate::catalog::query::{self, AssetRow, PackageRow, PackageVersions, VersionFiles};
use crate::http::not_found::Missing;
use crate::http::route;
use crate::units::{human_size, human_time, rfc3339};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};
use std::fmt::{self, Display, Write};
use std::sync::LazyLock;

/// The pages' one stylesheet: light and dark, a table that scrolls
/// sideways on a narrow screen rather than squeezing its columns.
pub(crate) const STYLE: &str = "\
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;\
--head:#f6f8fa;--link:#0550ae;--chip:#ddf4ff}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;\
--bg:#0d1117;--head:#151b23;--link:#4493f8;--chip:#0c2d6b}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:80rem;padding:1rem;font:15px/1.5 system-ui,sans-serif;\
color:var(--fg);background:var(--bg)}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
nav ol{list-style:none;display:flex;flex-wrap:wrap;gap:.3rem;padding:0;margin:0 0 1rem}
nav li+li::before{content:\"/\";margin-right:.3rem;color:var(--muted)}
nav li,h1{overflow-wrap:anywhere}
h1{font-size:1.4rem;margin:0 0 .2rem}
.meta{color:var(--muted);margin:0 0 1rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{padding:.3rem .6rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600;white-space:nowrap}
td:first-child{overflow-wrap:anywhere;min-width:10rem}
.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.sri{white-space:nowrap}
code{font:13px/1.6 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.tag{display:inline-block;padding:0 .45rem;margin:0 .2rem .1rem 0;border-radius:1rem;\
background:var(--chip);font-size:.8rem}
button{font:inherit;font-size:.8rem;padding:0 .45rem;margin-left:.4rem;cursor:pointer}
@media (max-width:40rem){
thead{display:none}
tr{display:flex;flex-wrap:wrap;gap:0 1rem;padding:.45rem 0;border-bottom:1px solid var(--line)}
td{padding:0;border:0}
td:first-child,.sri{flex-basis:100%}
td.n{text-align:left}
.sri{white-space:normal}.sri code{word-break:break-all}
td:empty{display:none}td::before{color:var(--muted)}
.packages td:nth-child(2)::before{content:\"latest \"}
.packages td:nth-child(3)::before{content:\"versions \"}
.packages td:nth-child(4)::before,.versions td:nth-child(4)::before{content:\"files \"}
.packages td:nth-child(5)::before,.versions td:nth-child(6)::before,\
.files td:nth-child(3)::before{content:\"stored \"}
.packages td:nth-child(6)::before{content:\"created \"}
.versions td:nth-child(5)::before,.files td:nth-child(2)::before{content:\"size \"}
}
";

/// The pages' one script: a click on a copy button puts the integrity
/// value just before it on the clipboard (or, where the Clipboard API is
/// refused, copies through a selected text area) and says so on the
/// button for a moment. One listener for every button, no inline handler.
pub(crate) const SCRIPT: &str = r#"
document.addEventListener("click", (event) => {
  const button = event.target.closest(".sri button");
  if (!button) return;
  const text = button.previousElementSibling.textContent;
  const said = (ok) => {
    button.textContent = ok ? "copied" : "copy failed";
    setTimeout(() => { button.textContent = "copy"; }, 1500);
  };
  const fallback = () => {
    const area = document.createElement("textarea");
    area.value = text;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (_) {}
    area.remove();
    said(ok);
  };
  if (navigator.clipboard) {
    navigator.clipboard.writeText(text).then(() => said(true), fallback);
  } else {
    fallback();
  }
});
"#;

/// `Content-Security-Policy` of every page: the inline stylesheet and
/// script by their hashes, a `data:` icon, nothing else.
pub(crate) static CSP: LazyLock<String> = LazyLock::new(|| {
    let hash = |text: &str| BASE64.encode(Sha256::digest(text.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; \
         img-src data:; base-uri 'none'; form-action 'none'",
        hash(STYLE),
        hash(SCRIPT)
    )
});

/// `/assets/`: every package.
pub(crate) fn index(packages: &[PackageRow]) -> String {
    let mut page = Page::new("packages", 2048 + packages.len() * 400);
    page.crumbs(None, "assets");
    let count = packages.len();
    page.heading(format_args!("Packages"), &[]);
    page.meta(format_args!(
        "{} {}",
        Count(count as u64),
        plural(count, "package")
    ));
    if packages.is_empty() {
        page.push("<p>The catalog is empty: <code>ccc publish</code> adds a package.</p>");
        return page.finish();
    }
    page.table(
        "packages",
        &[
            ("Package", ""),
            ("Latest", ""),
            ("Versions", "n"),
            ("Files in latest", "n"),
            ("Stored", "n"),
            ("Created", ""),
        ],
    );
    for p in packages {
        let url = route::package_url(&p.package);
        page.write(format_args!(
            "<tr><td><a href=\"{}\">{}</a></td><td>",
            Html(&url),
            Html(&p.package)
        ));
        if let Some(latest) = &p.latest {
            page.write(format_args!(
                "<a href=\"{}\">{}</a>",
                Html(&route::asset_url(&p.package, latest, "")),
                Html(latest)
            ));
        }
        page.write(format_args!(
            "</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{}<td>{}</td></tr>\n",
            Count(p.version_count),
            Count(p.latest_file_count),
            Size(p.stored_bytes),
            Time(p.created_at)
        ));
    }
    page.end_table();
    page.finish()
}

/// `/assets/PKG/`: a package's versions, newest first, with the dist-tags
/// that name each; `window` is the page of them `listing` holds.
pub(crate) fn package(listing: &PackageVersions, window: query::Page) -> String {
    let (package, versions) = (listing.package.as_str(), &listing.versions);
    let mut page = Page::new(package, 2048 + versions.len() * 400);
    page.crumbs(Some(None), package);
    page.heading(format_args!("{}", Html(package)), &[]);
    let total = listing.version_count;
    page.meta(format_args!(
        "{} {}{}",
        Count(total),
        plural(total as usize, "version"),
        Shown {
            rows: versions.len() as u64,
            page: window,
            total
        }
    ));
    page.table(
        "versions",
        &[
            ("Version", ""),
            ("Tags", ""),
            ("Published", ""),
            ("Files", "n"),
            ("Size", "n"),
            ("Stored", "n"),
        ],
    );
    for tagged in versions {
        let v = &tagged.version;
        let version = v.version.to_string();
        page.write(format_args!(
            "<tr><td><a href=\"{}\">{}</a></td><td>",
            Html(&route::asset_url(package, &version, "")),
            Html(&version)
        ));
        page.tags(&tagged.tags);
        page.write(format_args!(
            "</td><td>{}</td><td class=\"n\">{}</td>{}{}</tr>\n",
            Time(v.published_at),
            Count(v.file_count),
            Size(v.raw_bytes),
            Size(v.stored_bytes)
        ));
    }
    page.end_table();
    page.finish()
}

/// `/assets/PKG/VERSION/`: a version's files, by path; `tags` are the
/// dist-tags that name the version.
pub(crate) fn version(listing: &VersionFiles, tags: &[String]) -> String {
    let v = &listing.version;
    let version = v.version.to_string();
    let mut page = Page::new(
        &format!("{}@{version}", v.package),
        4096 + listing.files.len() * 400,
    );
    page.crumbs(Some(Some(&v.package)), &version);
    page.heading(
        format_args!("{}@{}", Html(&v.package), Html(&version)),
        tags,
    );
    page.meta(format_args!(
        "published {} · {} {} · {} raw · {} stored ({})",
        Time(v.published_at),
        Count(v.file_count),
        plural(v.file_count as usize, "file"),
        human_size(v.raw_bytes),
        human_size(v.stored_bytes),
        crate::units::ratio(v.stored_bytes, v.raw_bytes),
    ));
    page.table(
        "files",
        &[
            ("File", ""),
            ("Size", "n"),
            ("Stored", "n"),
            ("Type", ""),
            ("Compression", ""),
            ("Integrity", ""),
        ],
    );
    for f in &listing.files {
        page.write(format_args!(
            "<tr><td><a href=\"{}\">{}</a></td>{}{}<td>{}</td><td>{}</td>\
             <td class=\"sri\"><code>{}</code><button>copy</button></td></tr>\n",
            Html(&route::asset_url(&v.package, &version, &f.path)),
            Html(&f.path),
            Size(f.raw_bytes),
            Size(f.stored_bytes),
            // The media type; the JSON has the parameters (charset).
            Html(f.content_type.split(';').next().unwrap_or_default()),
            Compression(f),
            f.integrity(),
        ));
    }
    page.end_table();
    page.script();
    page.finish()
}

/// The page of a 404 for a browser: what is missing, and links to what
/// exists above it.
pub(crate) fn not_found(missing: &Missing) -> String {
    let mut page = Page::new("not found", 2048);
    let package = match missing {
        Missing::Package { .. } => None,
        Missing::Version { package, .. }
        | Missing::NoMatch { package, .. }
        | Missing::Tag { package, .. }
        | Missing::File { package, .. } => Some(package.as_str()),
    };
    page.crumbs(Some(package), "not found");
    page.heading(format_args!("Not found"), &[]);
    page.write(format_args!("<p>{}.</p>", Html(&missing.to_string())));
    page.finish()
}

/// Text escaped for HTML element content and double-quoted attribute
/// values.
pub(crate) struct Html<'a>(pub &'a str);

impl Display for Html<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut plain = 0;
        for (i, byte) in self.0.bytes().enumerate() {
            let escaped = match byte {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                b'\'' => "&#39;",
                _ => continue,
            };
            f.write_str(&self.0[plain..i])?;
            f.write_str(escaped)?;
            plain = i + 1;
        }
        f.write_str(&self.0[plain..])
    }
}

/// A size cell, in IEC units (the JSON has exact byte counts).
struct Size(u64);

impl Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<td class=\"n\">{}</td>", human_size(self.0))
    }
}

/// A file's codings as the server can send them: its stored one, then the
/// others the catalog holds beside it (`gzip, brotli`).
struct Compression<'a>(&'a AssetRow);

impl Display for Compression<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.encoding.describe())?;
        for variant in &self.0.variants {
            write!(f, ", {}", variant.encoding.describe())?;
        }
        Ok(())
    }
}

/// After a count, which rows of a paged listing a page shows, with a link
/// to the next page: ` · 101–200 shown · next`. Nothing when it shows all.
struct Shown {
    rows: u64,
    page: query::Page,
    total: u64,
}

impl Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.page.offset;
        if offset == 0 && self.rows >= self.total {
            return Ok(());
        }
        if self.rows == 0 {
            return write!(f, " · none past offset {}", Count(offset));
        }
        let last = offset + self.rows;
        write!(f, " · {}–{} shown", Count(offset + 1), Count(last))?;
        if let Some(limit) = self.page.limit
            && last < self.total
        {
            write!(
                f,
                " · <a href=\"?limit={limit}&amp;offset={last}\">next</a>"
            )?;
        }
        Ok(())
    }
}

/// A count with thousands separators: `10,000`.
struct Count(u64);

impl Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                f.write_char(',')?;
            }
            f.write_char(digit)?;
        }
        Ok(())
    }
}

/// A time as people read it, machine-readable in `datetime`.
struct Time(i64);

impl Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<time datetime=\"{}\">{}</time>",
            rfc3339(self.0),
            human_time(self.0)
        )
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// A page being written: head, breadcrumbs, heading, content, end.
struct Page {
    html: String,
}

impl Page {
    fn new(title: &str, capacity: usize) -> Page {
        let mut page = Page {
            html: String::with_capacity(capacity + STYLE.len() + SCRIPT.len()),
        };
        page.write(format_args!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
             <title>{} · ccc</title><link rel=\"icon\" href=\"data:,\">\
             <style>{STYLE}</style></head>\n<body>\n",
            Html(title)
        ));
        page
    }

    fn push(&mut self, html: &str) {
        self.html.push_str(html);
    }

    fn write(&mut self, args: fmt::Arguments<'_>) {
        // Writing into a String cannot fail.
        let _ = self.html.write_fmt(args);
    }

    /// Breadcrumbs: `assets / PKG / here`. `above` are the levels above
    /// this page, as links: `assets` alone, or `assets` and the package.
    fn crumbs(&mut self, above: Option<Option<&str>>, here: &str) {
        self.push("<nav aria-label=\"breadcrumbs\"><ol>");
        if let Some(package) = above {
            self.push("<li><a href=\"/assets/\">assets</a></li>");
            if let Some(package) = package {
                self.write(format_args!(
                    "<li><a href=\"{}\">{}</a></li>",
                    Html(&route::package_url(package)),
                    Html(package)
                ));
            }
        }
        self.write(format_args!(
            "<li aria-current=\"page\">{}</li></ol></nav>\n<main>\n",
            Html(here)
        ));
    }

    /// The page's heading, with the tags naming the version it shows.
    fn heading(&mut self, text: fmt::Arguments<'_>, tags: &[String]) {
        self.write(format_args!("<h1>{text}"));
        if !tags.is_empty() {
            self.push(" ");
            self.tags(tags);
        }
        self.push("</h1>\n");
    }

    fn meta(&mut self, text: fmt::Arguments<'_>) {
        self.write(format_args!("<p class=\"meta\">{text}</p>\n"));
    }

    /// A chip per dist-tag.
    fn tags(&mut self, tags: &[String]) {
        for tag in tags {
            self.write(format_args!("<span class=\"tag\">{}</span>", Html(tag)));
        }
    }

    /// Opens a table of `kind` (its class, which labels the cells when a
    /// narrow screen stacks them); a column's class is `n` for numbers
    /// (right-aligned).
    fn table(&mut self, kind: &str, columns: &[(&str, &str)]) {
        self.write(format_args!(
            "<div class=\"scroll\"><table class=\"{kind}\"><thead><tr>"
        ));
        for (name, class) in columns {
            if class.is_empty() {
                self.write(format_args!("<th>{name}</th>"));
            } else {
                self.write(format_args!("<th class=\"{class}\">{name}</th>"));
            }
        }
        self.push("</tr></thead>\n<tbody>\n");
    }

    fn end_table(&mut self) {
        self.push("</tbody></table></div>\n");
    }

    fn script(&mut self) {
        self.write(format_args!("<script>{SCRIPT}</script>\n"));
    }

    fn finish(mut self) -> String {
        self.push("</main>\n</body></html>\n");
        self.html
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Encoding;
    use crate::catalog::query::{TaggedVersion, Variant};
    use crate::catalog::rows::VersionRow;
    use crate::http::route::{Route, route};
    use semver::Version;
    use std::io::Write as _;
    use std::time::{Duration, Instant};

    /// Names a hostile publisher could choose; all are valid file paths.
    const HOSTILE: [&str; 9] = [
        "<script>alert(1)</script>.js",
        "\"><img src=x onerror=alert(1)>.css",
        "it's.js",
        "a&b&amp;c.txt",
        "with space/and%20percent%.txt",
        "日本語/файл ✓.json",
        "q?x=1#frag.js",
        "javascript:alert(1)",
        "</code></td></tr></table><b>.txt",
    ];

    fn version_files(package: &str, paths: &[String]) -> VersionFiles {
        let files: Vec<AssetRow> = paths
            .iter()
            .enumerate()
            .map(|(i, path)| AssetRow {
                path: path.clone(),
                content_type: "text/javascript; charset=utf-8",
                encoding: if i % 2 == 0 {
                    Encoding::Gzip
                } else {
                    Encoding::Identity
                },
                raw_bytes: 1000 + i as u64 * 37,
                stored_bytes: 400 + i as u64 * 11,
                // Every fourth file, a gzip one, also has a brotli stream.
                variants: if i % 4 == 0 {
                    vec![Variant {
                        encoding: Encoding::Brotli,
                        stored_bytes: 350 + i as u64 * 10,
                    }]
                } else {
                    vec![]
                },
                sha256: Sha256::digest(path.as_bytes()).into(),
                blob_id: i as i64,
            })
            .collect();
        VersionFiles {
            version: VersionRow {
                id: 1,
                package: package.into(),
                version: Version::new(1, 2, 3),
                published_at: 1_795_000_000,
                file_count: files.len() as u64,
                raw_bytes: files.iter().map(|f| f.raw_bytes).sum(),
                stored_bytes: files.iter().map(|f| f.stored_bytes).sum(),
            },
            files,
        }
    }

    /// The values of every `name="..."` attribute, entities decoded.
    fn attributes(page: &str, name: &str) -> Vec<String> {
        let open = format!(" {name}=\"");
        page.match_indices(&open)
            .map(|(at, _)| {
                let rest = &page[at + open.len()..];
                unescape(&rest[..rest.find('"').expect("closing quote")])
            })
            .collect()
    }

    /// The text of every `<a ...>text</a>`, entities decoded.
    fn link_texts(page: &str) -> Vec<String> {
        page.match_indices("<a href=")
            .map(|(at, _)| {
                let rest = &page[at..];
                let start = rest.find('>').expect("end of tag") + 1;
                let end = rest.find("</a>").expect("closing tag");
                unescape(&rest[start..end])
            })
            .collect()
    }

    /// The five entities [`Html`] writes, back to text (`&amp;` last).
    fn unescape(text: &str) -> String {
        text.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    }

    #[test]
    fn hostile_names_stay_text_and_links_reach_them() {
        let paths: Vec<String> = HOSTILE.iter().map(|p| p.to_string()).collect();
        let package = "@evil/pkg";
        let page = version(&version_files(package, &paths), &[]);
        // The page's own script is the only element a name could have
        // opened; no name reaches the markup unescaped.
        assert_eq!(page.matches("<script").count(), 1, "{page}");
        assert_eq!(page.matches("<img").count(), 0, "{page}");
        assert_eq!(page.matches("<b>").count(), 0, "{page}");
        assert_eq!(page.matches("<table").count(), 1, "{page}");
        for hostile in HOSTILE
            .iter()
            .filter(|h| h.contains(['<', '>', '&', '"', '\'']))
        {
            assert!(!page.contains(hostile), "{hostile} is in the page as is");
        }
        // Every file's link routes back to exactly that file, and shows
        // its name as text.
        let hrefs = attributes(&page, "href");
        let files: Vec<&String> = hrefs
            .iter()
            .filter(|h| h.starts_with("/assets/@evil/pkg/1.2.3/"))
            .collect();
        assert_eq!(files.len(), HOSTILE.len(), "{hrefs:?}");
        for (href, path) in files.iter().zip(&paths) {
            assert!(
                href.bytes().all(|b| b.is_ascii_graphic()),
                "{href} is not an escaped URL"
            );
            assert_eq!(
                route("GET", href),
                Ok(Route::Asset {
                    package: package.into(),
                    version: "1.2.3".into(),
                    path: path.clone().into(),
                }),
                "{href}"
            );
        }
        let texts = link_texts(&page);
        for path in &paths {
            assert!(texts.contains(path), "{path} is not a link's text");
        }
        // The breadcrumbs lead to the package and the index.
        assert!(hrefs.contains(&"/assets/".to_string()));
        assert!(hrefs.contains(&"/assets/@evil/pkg/".to_string()));
    }

    #[test]
    fn hostile_package_pages_escape_too() {
        let page = package(
            &PackageVersions {
                package: "a&b".into(),
                created_at: 0,
                version_count: 1,
                tags: vec![],
                versions: vec![TaggedVersion {
                    version: version_files("a&b", &[]).version,
                    tags: vec!["<beta>".into()],
                }],
            },
            query::Page::ALL,
        );
        assert!(page.contains("<h1>a&amp;b</h1>"), "{page}");
        assert!(page.contains("<span class=\"tag\">&lt;beta&gt;</span>"));
        assert!(page.contains("href=\"/assets/a&amp;b/1.2.3/\""));
        let missing = not_found(&Missing::Version {
            package: "<x>".into(),
            version: "9.9.9".into(),
        });
        assert!(
            missing.contains("&lt;x&gt; has no version 9.9.9"),
            "{missing}"
        );
        assert!(!missing.contains("<x>"));
    }

    #[test]
    fn html_escapes_the_five_characters() {
        assert_eq!(
            Html("a<b>&\"c'd é").to_string(),
            "a&lt;b&gt;&amp;&quot;c&#39;d é"
        );
        assert_eq!(Html("").to_string(), "");
        assert_eq!(Html("&&").to_string(), "&amp;&amp;");
    }

    #[test]
    fn counts_have_thousands_separators() {
        let shown = |n| Count(n).to_string();
        assert_eq!(shown(0), "0");
        assert_eq!(shown(999), "999");
        assert_eq!(shown(1000), "1,000");
        assert_eq!(shown(10_000), "10,000");
        assert_eq!(shown(1_234_567), "1,234,567");
    }

    #[test]
    fn the_compression_column_names_every_coding_held() {
        let paths: Vec<String> = ["a.js", "b.js", "c.js"].map(String::from).into();
        let page = version(&version_files("app", &paths), &[]);
        let row = |path: &str| {
            let start = page.find(&format!(">{path}</a>")).expect("a row");
            let end = page[start..].find("</tr>").expect("row end") + start;
            page[start..end].to_string()
        };
        assert!(
            row("a.js").contains("<td>gzip, brotli</td>"),
            "{}",
            row("a.js")
        );
        assert!(
            row("b.js").contains("<td>uncompressed</td>"),
            "{}",
            row("b.js")
        );
        assert!(row("c.js").contains("<td>gzip</td>"), "{}", row("c.js"));
    }

    #[test]
    fn the_policy_allows_exactly_the_inline_style_and_script() {
        let page = version(&version_files("app", &["a.js".into()]), &[]);
        let between = |open: &str, close: &str| {
            let start = page.find(open).expect("opening tag") + open.len();
            let end = page[start..].find(close).expect("closing tag") + start;
            BASE64.encode(Sha256::digest(&page.as_bytes()[start..end]))
        };
        let style = format!("style-src 'sha256-{}'", between("<style>", "</style>"));
        let script = format!("script-src 'sha256-{}'", between("<script>", "</script>"));
        assert!(CSP.contains(&style), "{} lacks {style}", *CSP);
        assert!(CSP.contains(&script), "{} lacks {script}", *CSP);
        assert!(CSP.starts_with("default-src 'none';"));
        // No other source of anything: no inline handler, no external URL.
        assert!(!page.contains(" on"), "an inline handler");
        assert!(!page.contains("http:") && !page.contains("https:"));
    }

    /// A 10,000-file version: render time and page weight, raw and as the
    /// server sends it gzipped.
    #[test]
    fn ten_thousand_files_render_fast() {
        let paths: Vec<String> = (0..10_000)
            .map(|i| {
                format!(
                    "static/chunks/{:02}/module-{i:05}.{:08x}.js",
                    i % 50,
                    i * 7919
                )
            })
            .collect();
        let listing = version_files("@acme/web-app", &paths);
        let started = Instant::now();
        let page = version(&listing, &[]);
        let rendered = started.elapsed();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(page.as_bytes()).unwrap();
        let gzipped = gz.finish().unwrap().len();
        let compressed = started.elapsed() - rendered;
        eprintln!(
            "10,000 files: rendered in {rendered:?}, gzipped in {compressed:?}; \
             {} bytes ({} per file), {gzipped} gzipped ({} per file)",
            page.len(),
            page.len() / 10_000,
            gzipped / 10_000,
        );
        assert_eq!(page.matches("<tr>").count(), 10_001);
        // Generous bounds for a loaded machine and an unoptimized build;
        // a release build renders it in a few milliseconds.
        assert!(
            rendered < Duration::from_secs(2),
            "rendered in {rendered:?}"
        );
        assert!(page.len() < 10_000 * 450, "{} bytes", page.len());
        assert!(gzipped < 10_000 * 100, "{gzipped} bytes gzipped");
    }
}
