//! References in CSS, read with cssparser's tokenizer (the one Firefox's
//! style engine uses): `url(…)` in any value, `@import` with a string or
//! a `url()`, and the `sourceMappingURL` comment. `image-set()` and
//! `src:` lists are values like any other, so each `url()` in them is
//! read.
//!
//! Why cssparser rather than a full CSS parser: finding references needs
//! tokens and nesting, not the meaning of each property; the tokenizer
//! handles escapes, comments and strings as browsers do, at a fraction of
//! lightningcss's cost to build and run.

use super::{Kind, Reference};
use cssparser::{Parser, Token};

/// The references of the stylesheet `text`.
pub(crate) fn references(text: &str) -> Vec<Reference> {
    let mut parser = Parser::new(text);
    let mut refs = Vec::new();
    walk(&mut parser, &mut refs, false);
    refs
}

fn walk(parser: &mut Parser<'_>, refs: &mut Vec<Reference>, mut after_import: bool) {
    loop {
        let location = parser.current_source_location();
        let push = |refs: &mut Vec<Reference>, kind, written: &str| {
            refs.push(Reference {
                kind,
                written: written.to_string(),
                line: location.line + 1,
                column: location.column,
                runtime: false,
            })
        };
        let token = match parser.next_including_whitespace_and_comments() {
            Ok(token) => token.clone(),
            Err(_) => return,
        };
        match token {
            Token::UnquotedUrl(url) => {
                let kind = if after_import {
                    Kind::CssImport
                } else {
                    Kind::CssUrl
                };
                push(refs, kind, &url);
                after_import = false;
            }
            Token::QuotedString(path) if after_import => {
                push(refs, Kind::CssImport, &path);
                after_import = false;
            }
            Token::AtKeyword(name) => after_import = name.eq_ignore_ascii_case("import"),
            Token::Comment(body) => {
                if let Some(url) = super::js::source_map_url(body) {
                    push(refs, Kind::SourceMap, url);
                }
            }
            Token::Function(name) if name.eq_ignore_ascii_case("url") => {
                let kind = if after_import {
                    Kind::CssImport
                } else {
                    Kind::CssUrl
                };
                after_import = false;
                let _ = parser.parse_nested_block(|inner| {
                    let location = inner.current_source_location();
                    if let Ok(Token::QuotedString(path)) = inner.next() {
                        refs.push(Reference {
                            kind,
                            written: path.to_string(),
                            line: location.line + 1,
                            column: location.column,
                            runtime: false,
                        });
                    }
                    Ok::<(), cssparser::ParseError<()>>(())
                });
            }
            Token::Function(_)
            | Token::ParenthesisBlock
            | Token::SquareBracketBlock
            | Token::CurlyBracketBlock => {
                let _ = parser.parse_nested_block(|inner| {
                    walk(inner, refs, false);
                    Ok::<(), cssparser::ParseError<()>>(())
                });
            }
            Token::Semicolon => after_import = false,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_imports_and_the_source_map_are_read() {
        let text = "@import 'base.css';\n@import url(\"theme.css\") screen;\n\
                    @font-face { src: url(../fonts/icons.woff2?v=6) format('woff2'), url( \"../fonts/icons.ttf\" ); }\n\
                    .logo { background: image-set(url(a.png) 1x, url('b.png') 2x); }\n\
                    /* url(not-this.png) */ .q::after { content: 'url(nor-this.png)'; }\n\
                    /*# sourceMappingURL=app.css.map */\n";
        let refs = super::super::kinds_and_lines(references(text));
        assert_eq!(
            refs,
            vec![
                (Kind::CssImport, "base.css".into(), 1),
                (Kind::CssImport, "theme.css".into(), 2),
                (Kind::CssUrl, "../fonts/icons.woff2?v=6".into(), 3),
                (Kind::CssUrl, "../fonts/icons.ttf".into(), 3),
                (Kind::CssUrl, "a.png".into(), 4),
                (Kind::CssUrl, "b.png".into(), 4),
                (Kind::SourceMap, "app.css.map".into(), 6),
            ]
        );
    }
}
