//! References in JavaScript, read from oxc's syntax tree: static and
//! dynamic `import`, `export … from`, `new URL('…', import.meta.url)`,
//! `importScripts(…)`, `require('./…')`, and the `sourceMappingURL`
//! comment.
//!
//! Why oxc: it parses ES2024 modules and scripts, JSX included, as
//! browsers and bundlers do, and is among the fastest JavaScript parsers
//! in any language (its speed on real files: bench/PUBLISH.md); a syntax
//! tree, unlike a pattern,
//! tells `import('./a.js')` from the same text in a string or a comment.

use super::{Kind, Lines, Reference};
use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Argument, CallExpression, ExportAllDeclaration, ExportFromDeclaration, Expression,
    IdentifierReference, ImportDeclaration, ImportExpression, NewExpression,
};
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType, Span};

/// The references of the script or module `text` at `path`. A file that
/// does not parse has none (the browser would not run it either; `check`
/// reports it through the count of files read).
#[cfg(test)]
pub(crate) fn references(path: &str, text: &str) -> Vec<Reference> {
    read(path, text).references
}

/// Whether the script `text` at `path` is CommonJS: no `import` or
/// `export` anywhere, and it names `require`, `module` or `exports` (a UMD
/// bundle too). A browser that imports it as a module gets no exports
/// from it (`does not provide an export named 'default'`), or fails on
/// `require`.
pub(crate) fn is_commonjs(path: &str, text: &str) -> bool {
    read(path, text).commonjs
}

/// What reading a script found.
pub(super) struct Read {
    pub(super) references: Vec<Reference>,
    pub(super) commonjs: bool,
}

/// Parses `text` once for its references and [`is_commonjs`].
pub(super) fn read(path: &str, text: &str) -> Read {
    let allocator = Allocator::default();
    // As a module first, the goal of today's front-end code; a file that
    // only parses as a script (CommonJS with sloppy-mode syntax) is read
    // again as one. Errors a parser recovers from (strict-mode rules) still
    // leave the tree whole, so most scripts are read once.
    let module = SourceType::from_path(path).unwrap_or_default();
    let mut parsed = Parser::new(&allocator, text, module).parse();
    if parsed.panicked {
        parsed = Parser::new(&allocator, text, module.with_script(true)).parse();
    }
    if parsed.panicked {
        return Read {
            references: Vec::new(),
            commonjs: false,
        };
    }
    let mut found = Found {
        text,
        lines: Lines::of(text),
        refs: Vec::new(),
        names_commonjs: false,
    };
    found.visit_program(&parsed.program);
    if let Some(comment) = parsed.program.comments.last() {
        let body = comment.content_span().source_text(text);
        if let Some(url) = source_map_url(body) {
            let offset = comment.content_span().start as usize + body.find(url).unwrap_or(0);
            found.push_at(Kind::SourceMap, url.to_string(), offset, false);
        }
    }
    Read {
        commonjs: found.names_commonjs && !parsed.module_record.has_module_syntax,
        references: found.refs,
    }
}

/// The URL of a `# sourceMappingURL=URL` (or the older `@`) comment's
/// text.
pub(super) fn source_map_url(comment: &str) -> Option<&str> {
    let rest = comment.trim_start();
    let rest = rest.strip_prefix('#').or_else(|| rest.strip_prefix('@'))?;
    let url = rest.trim_start().strip_prefix("sourceMappingURL=")?;
    let url = url.split_whitespace().next()?;
    // An inline map is no file.
    (!url.starts_with("data:")).then_some(url)
}

struct Found<'t> {
    text: &'t str,
    lines: Lines,
    refs: Vec<Reference>,
    /// `require`, `module` or `exports` is used (as a free name; a local
    /// of that name is rare enough to count too).
    names_commonjs: bool,
}

impl Found<'_> {
    fn push_at(&mut self, kind: Kind, written: String, offset: usize, runtime: bool) {
        let (line, column) = self.lines.at(offset);
        self.refs.push(Reference {
            kind,
            written,
            line,
            column,
            runtime,
        });
    }

    /// A reference given as `expression`: a string (or a template without
    /// substitutions) is resolved; anything else is built at runtime.
    fn expression(&mut self, kind: Kind, expression: &Expression<'_>) {
        match literal(expression) {
            Some(value) => self.push_at(kind, value, expression.span().start as usize, false),
            None => {
                let span = expression.span();
                self.push_at(kind, self.source(span), span.start as usize, true)
            }
        }
    }

    fn source(&self, span: Span) -> String {
        span.source_text(self.text).to_string()
    }
}

/// The string `expression` always is, when it is one.
fn literal(expression: &Expression<'_>) -> Option<String> {
    match expression {
        Expression::StringLiteral(s) => Some(s.value.to_string()),
        Expression::TemplateLiteral(t) if t.expressions.is_empty() => t
            .quasis
            .first()
            .and_then(|q| q.value.cooked.as_ref())
            .map(|s| s.to_string()),
        _ => None,
    }
}

/// The first argument as an expression (not a spread).
fn first<'b, 'a>(arguments: &'b [Argument<'a>]) -> Option<&'b Expression<'a>> {
    arguments.first().and_then(Argument::as_expression)
}

impl<'a> Visit<'a> for Found<'_> {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        if matches!(it.name.as_str(), "require" | "module" | "exports") {
            self.names_commonjs = true;
        }
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        self.push_at(
            Kind::Import,
            it.source.value.to_string(),
            it.source.span.start as usize,
            false,
        );
    }

    fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
        self.push_at(
            Kind::Import,
            it.source.value.to_string(),
            it.source.span.start as usize,
            false,
        );
    }

    fn visit_export_all_declaration(&mut self, it: &ExportAllDeclaration<'a>) {
        self.push_at(
            Kind::Import,
            it.source.value.to_string(),
            it.source.span.start as usize,
            false,
        );
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        self.expression(Kind::DynamicImport, &it.source);
        walk::walk_import_expression(self, it);
    }

    fn visit_new_expression(&mut self, it: &NewExpression<'a>) {
        // `new URL(path, import.meta.url)`: a file beside this module.
        let relative_to_module = it
            .arguments
            .get(1)
            .and_then(Argument::as_expression)
            .is_some_and(|base| {
                matches!(base, Expression::StaticMemberExpression(m)
                if m.property.name == "url" && matches!(m.object, Expression::ImportMeta(_)))
            });
        if it.callee.is_specific_id("URL")
            && relative_to_module
            && let Some(path) = first(&it.arguments)
        {
            self.expression(Kind::NewUrl, path);
        }
        walk::walk_new_expression(self, it);
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if it.callee.is_specific_id("importScripts") {
            for argument in it.arguments.iter().filter_map(Argument::as_expression) {
                self.expression(Kind::ImportScripts, argument);
            }
        } else if it.callee.is_specific_id("require")
            && it.arguments.len() == 1
            && let Some(path) = first(&it.arguments)
        {
            // Only a relative literal names a file of the version; a
            // package name is Node's to find, a variable a plugin's.
            match literal(path) {
                Some(value)
                    if value.starts_with("./")
                        || value.starts_with("../")
                        || value == "."
                        || value == ".." =>
                {
                    self.push_at(Kind::Require, value, path.span().start as usize, false)
                }
                _ => {}
            }
        }
        walk::walk_call_expression(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(path: &str, text: &str) -> Vec<(Kind, String, bool)> {
        references(path, text)
            .into_iter()
            .map(|r| (r.kind, r.written, r.runtime))
            .collect()
    }

    #[test]
    fn every_kind_of_module_reference_is_read() {
        let text = r#"import a from "./a.js";
import "./side.js";
export { b } from './b.js';
export * from "./c.js";
const lazy = () => import("./chunk-1.js");
const lang = () => import(`./locale/${navigator.language}.js`);
const plain = () => import(`./plain.js`);
const worker = new URL("./worker.js", import.meta.url);
const elsewhere = new URL("./not-a-file.js", location.href);
// import("./in-a-comment.js")
const s = "import('./in-a-string.js')";
//# sourceMappingURL=app.js.map
"#;
        assert_eq!(
            written("app.js", text),
            vec![
                (Kind::Import, "./a.js".into(), false),
                (Kind::Import, "./side.js".into(), false),
                (Kind::Import, "./b.js".into(), false),
                (Kind::Import, "./c.js".into(), false),
                (Kind::DynamicImport, "./chunk-1.js".into(), false),
                (
                    Kind::DynamicImport,
                    "`./locale/${navigator.language}.js`".into(),
                    true
                ),
                (Kind::DynamicImport, "./plain.js".into(), false),
                (Kind::NewUrl, "./worker.js".into(), false),
                (Kind::SourceMap, "app.js.map".into(), false),
            ]
        );
    }

    #[test]
    fn scripts_name_files_through_require_and_import_scripts() {
        let text = "importScripts('./sw-lib.js', base + 'x.js');\n\
                    const util = require('./util');\nconst react = require('react');\n\
                    require('.'); require('..'); require('./'); require('.x');\n";
        assert_eq!(
            written("sw.js", text),
            vec![
                (Kind::ImportScripts, "./sw-lib.js".into(), false),
                (Kind::ImportScripts, "base + 'x.js'".into(), true),
                (Kind::Require, "./util".into(), false),
                (Kind::Require, ".".into(), false),
                (Kind::Require, "..".into(), false),
                (Kind::Require, "./".into(), false),
            ]
        );
    }

    #[test]
    fn commonjs_is_told_from_modules_and_plain_scripts() {
        // react@18.3.1's index.js, and a UMD bundle.
        let react = "'use strict';\nif (process.env.NODE_ENV === 'production') {\n\
                     module.exports = require('./cjs/react.production.min.js');\n}\n";
        assert!(is_commonjs("index.js", react));
        let umd = "(function (global, factory) { typeof exports === 'object' && \
                   typeof module !== 'undefined' ? factory(exports) : factory(global.X = {}); \
                   }(this, function (exports) { exports.x = 1; }));";
        assert!(is_commonjs("x.umd.js", umd));
        assert!(is_commonjs("a.cjs", "exports.a = 1;"));
        // A module that mentions them is still a module; a script that
        // names none is a plain script (a polyfill), which imports fine.
        assert!(!is_commonjs(
            "a.js",
            "export const m = typeof module === 'object';"
        ));
        assert!(!is_commonjs("a.js", "import x from './x.js'; x(require);"));
        assert!(!is_commonjs("polyfill.js", "window.thing = 1;"));
        assert!(!is_commonjs("broken.js", "module.exports = {"));
    }

    #[test]
    fn positions_are_where_the_reference_is_written() {
        let refs = references("a.js", "let x = 1;\n  import('./b.js');\n");
        assert_eq!((refs[0].line, refs[0].column), (2, 10));
    }

    #[test]
    fn an_inline_source_map_is_no_file() {
        assert!(
            references(
                "a.js",
                "x;\n//# sourceMappingURL=data:application/json;base64,e30=\n"
            )
            .is_empty()
        );
    }
}
