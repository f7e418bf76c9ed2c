//! What the man pages say that clap's definitions do not: each page's EXIT
//! STATUS, EXAMPLES and SEE ALSO sections, kept beside the pages' other
//! text here so that a new subcommand without them fails a test.

use clap_mangen::roff::{Roff, bold, roman};

/// One page's own text.
pub(super) struct Page {
    /// The subcommand (`publish`), or `ccc` for ccc(1).
    pub command: &'static str,
    /// Command lines with what each does, in the order a reader meets them.
    pub examples: &'static [(&'static str, &'static str)],
    /// Exit codes this command has beyond the ones every command has, or
    /// means otherwise.
    pub exits: &'static [(&'static str, &'static str)],
    /// Related subcommands' pages, besides ccc(1).
    pub see_also: &'static [&'static str],
}

/// Exit codes every command has (README, "Exit codes").
const COMMON_EXITS: &[(&str, &str)] = &[
    ("0", "Success."),
    (
        "1",
        "The command failed; the line starting with error: says what failed. An internal error is a bug in ccc.",
    ),
    (
        "2",
        "The command line is wrong (an unknown flag, a malformed PKG@VERSION, a value out of range), found before any work.",
    ),
    (
        "130, 143",
        "Stopped by SIGINT (Ctrl-C) or SIGTERM. Long commands stop at their next safe point, leaving the catalog as it was; a second signal exits at once.",
    ),
];

pub(super) const PAGES: &[Page] = &[
    Page {
        command: "ccc",
        examples: &[
            (
                "ccc publish app@1.4.0 dist/",
                "Publish a build folder as app@1.4.0 into ./cdn.db.",
            ),
            ("ccc ls app", "List app's versions, newest first."),
            ("ccc serve", "Serve the catalog on http://127.0.0.1:8333."),
            (
                "ccc gc --keep 3",
                "Keep the 3 newest releases of each package and give the rest's space back.",
            ),
        ],
        exits: &[("4", "ccc causal --strict: the ledger audit found an error.")],
        see_also: &[
            "publish",
            "ls",
            "inspect",
            "diff",
            "cat",
            "tag",
            "rm",
            "token",
            "audit",
            "gc",
            "deltas",
            "recompress",
            "verify",
            "check",
            "importmap",
            "backup",
            "follow",
            "export",
            "serve",
            "causal",
        ],
    },
    Page {
        command: "publish",
        examples: &[
            ("ccc publish app@1.4.0 dist/", "Publish a build folder."),
            (
                "ccc publish app-1.4.0.tgz",
                "Publish an npm tarball; its package.json names the package and version.",
            ),
            (
                "tar -cz -C dist . | ccc publish app@1.4.0 -",
                "Publish an archive read from stdin.",
            ),
            (
                "ccc publish app@2.0.0-rc.1 dist/ --tag next",
                "Publish a prerelease under the dist-tag next; latest stays.",
            ),
            (
                "ccc publish --force app@1.4.0 dist/",
                "Replace a published version, atomically.",
            ),
        ],
        exits: &[],
        see_also: &["ls", "inspect", "tag", "rm", "gc"],
    },
    Page {
        command: "ls",
        examples: &[
            ("ccc ls", "Every package with its latest version and size."),
            ("ccc ls app", "app's versions, newest first."),
            (
                "ccc ls app@latest --json",
                "The files of app's latest version, as JSON.",
            ),
        ],
        exits: &[],
        see_also: &["inspect", "diff", "cat"],
    },
    Page {
        command: "inspect",
        examples: &[
            (
                "ccc inspect app@1.4.0",
                "A version's sizes, compression and dedup.",
            ),
            (
                "ccc inspect app@1.4.0/js/main.js --json | jq -r .integrity",
                "A file's Subresource Integrity value.",
            ),
        ],
        exits: &[],
        see_also: &["ls", "diff", "cat"],
    },
    Page {
        command: "diff",
        examples: &[
            (
                "ccc diff app@1.4.0 app@1.5.0",
                "Files added, removed and changed.",
            ),
            (
                "ccc diff app@1.4.0 latest --json",
                "Against whatever latest names, as JSON.",
            ),
        ],
        exits: &[],
        see_also: &["ls", "inspect"],
    },
    Page {
        command: "cat",
        examples: &[
            (
                "ccc cat app@1.4.0/js/main.js",
                "A file's original bytes, on stdout.",
            ),
            (
                "ccc cat app@latest/package.json | jq .version",
                "A file of the version latest names.",
            ),
        ],
        exits: &[],
        see_also: &["ls", "inspect"],
    },
    Page {
        command: "tag",
        examples: &[
            (
                "ccc tag add app@2.0.0-rc.1 next",
                "Point the dist-tag next at a version.",
            ),
            ("ccc tag ls app", "app's tags and the versions they name."),
            ("ccc tag rm app next", "Remove a tag."),
        ],
        exits: &[],
        see_also: &["publish", "ls"],
    },
    Page {
        command: "site",
        examples: &[
            (
                "ccc site set www.example.com app --spa",
                "Serve app's latest at the root of www.example.com, index.html for routes.",
            ),
            (
                "ccc tag add app@1.3.2 latest",
                "Roll the site back: servers answer with 1.3.2 within a second.",
            ),
            (
                "ccc site set default app@beta --hsts 365days",
                "Every other host: app's beta tag, with HSTS over HTTPS.",
            ),
            ("ccc site ls", "What each site serves now."),
        ],
        exits: &[],
        see_also: &["serve", "tag", "publish", "check"],
    },
    Page {
        command: "rm",
        examples: &[
            (
                "ccc rm app@1.0.0",
                "Remove a version; its content stays until gc.",
            ),
            (
                "ccc rm app@1.0.0 --purge http://127.0.0.1:6081/",
                "Remove it and purge its files from an HTTP cache in front.",
            ),
        ],
        exits: &[],
        see_also: &["gc", "ls"],
    },
    Page {
        command: "gc",
        examples: &[
            (
                "ccc gc --keep 3 --dry-run",
                "Show which versions would stay and which would go, and why.",
            ),
            (
                "ccc gc --keep 3",
                "Keep the 3 newest releases of each package.",
            ),
            (
                "ccc gc --older-than 30days",
                "Remove versions published more than 30 days ago.",
            ),
        ],
        exits: &[],
        see_also: &["rm", "verify", "backup"],
    },
    Page {
        command: "deltas",
        examples: &[
            (
                "ccc deltas",
                "Make the deltas every version lacks, against its predecessors.",
            ),
            ("ccc deltas app -j 1", "Only app's versions, on one core."),
        ],
        exits: &[],
        see_also: &["publish", "inspect", "serve"],
    },
    Page {
        command: "recompress",
        examples: &[
            (
                "ccc recompress",
                "Bring every brotli stream up to quality 11 now, on every core.",
            ),
            (
                "ccc recompress -j 1 --json",
                "On one core, and say what it saved as JSON.",
            ),
        ],
        exits: &[],
        see_also: &["publish", "serve", "verify"],
    },
    Page {
        command: "verify",
        examples: &[
            (
                "ccc verify",
                "Check the database and every blob against its sha256.",
            ),
            ("ccc verify --json", "The same report as JSON."),
        ],
        exits: &[],
        see_also: &["gc", "backup"],
    },
    Page {
        command: "check",
        examples: &[
            (
                "ccc check dist/",
                "Check a build before publishing it: every import, url() and src resolves.",
            ),
            (
                "ccc check app-1.4.0.tgz",
                "Check an npm tarball, read as publish reads it.",
            ),
            (
                "ccc check app@1.4.0 --json",
                "Check a published version; every problem with its file, line and column.",
            ),
        ],
        exits: &[(
            "1",
            "A reference is missing, matches a file only under another case, or leaves the version; or the command failed (a folder or archive that is not there, a version not in the catalog), and the line starting with error: says what failed.",
        )],
        see_also: &["publish", "inspect", "importmap"],
    },
    Page {
        command: "importmap",
        examples: &[
            (
                "ccc importmap app@1.4.0 > importmap.json",
                "The import map of app 1.4.0 and the packages it imports, root-relative URLs.",
            ),
            (
                "ccc importmap app@1.4.0 --integrity --base https://cdn.example.com",
                "Every module pinned to its sha256, URLs on the CDN's origin.",
            ),
            (
                "ccc importmap app@latest --json",
                "The map with the versions it pins and every specifier left unresolved.",
            ),
        ],
        exits: &[(
            "1",
            "A specifier could not be resolved (the map is still written, each one named on stderr), or the version has no package.json.",
        )],
        see_also: &["check", "publish", "serve"],
    },
    Page {
        command: "backup",
        examples: &[
            (
                "ccc backup /backups/cdn-$(date +%F).db",
                "A consistent copy, while the catalog is served and published to.",
            ),
            (
                "ccc --db /backups/cdn-2026-12-01.db verify",
                "Check a copy.",
            ),
        ],
        exits: &[],
        see_also: &["verify", "export"],
    },
    Page {
        command: "follow",
        examples: &[
            (
                "ccc --db /srv/ccc/cdn.db follow s3://bucket/cdn",
                "Keep /srv/ccc/cdn.db a copy of the writer's, from the Litestream replica in bucket/cdn.",
            ),
            (
                "ccc --db /srv/ccc/cdn.db follow /mnt/replica --once",
                "From a file replica: bring the copy up to date once, then exit.",
            ),
        ],
        exits: &[(
            "0",
            "Stopped by SIGINT or SIGTERM (between rounds), or, with --once, the copy is the replica's newest.",
        )],
        see_also: &["serve", "backup"],
    },
    Page {
        command: "export",
        examples: &[
            (
                "ccc export app /srv/www/assets",
                "Every version of app as files with .gz and .br siblings, for nginx.",
            ),
            ("ccc export app@1.4.0 out/", "One version."),
        ],
        exits: &[],
        see_also: &["serve", "backup"],
    },
    Page {
        command: "serve",
        examples: &[
            ("ccc serve", "Serve ./cdn.db on http://127.0.0.1:8333."),
            (
                "ccc serve --bind 0.0.0.0 --port 80 --cache-bytes 1GiB",
                "On every address, with a 1 GiB cache.",
            ),
            (
                "ccc serve --access-log --log-format json | jq .",
                "With an access log, one JSON object per line on stdout.",
            ),
        ],
        exits: &[(
            "0",
            "Success, also when stopped by SIGINT or SIGTERM, after the requests in flight: that is how a server ends.",
        )],
        see_also: &["site", "causal", "export", "follow", "token", "audit"],
    },
    Page {
        command: "token",
        examples: &[
            (
                "ccc token create ci-app --scope publish,tag:app --expires 90d",
                "A token for CI that may publish app's versions and move its dist-tags, for 90 days; printed once on stdout.",
            ),
            (
                "ccc token create scraper --scope read-stats",
                "A token that may read /_stats and /metrics where --stats-allow restricts them.",
            ),
            (
                "ccc token ls",
                "Every token: scopes, expiry, last use, state.",
            ),
            (
                "ccc token revoke ci-app",
                "Revoke a token at once, as when it has leaked.",
            ),
        ],
        exits: &[],
        see_also: &["serve", "audit", "publish"],
    },
    Page {
        command: "audit",
        examples: &[
            (
                "ccc audit",
                "The last 100 changes made over HTTP, oldest first.",
            ),
            (
                "ccc audit --token ci-app --since 7d --json",
                "What the token ci-app did in the last week, as JSON.",
            ),
        ],
        exits: &[],
        see_also: &["token", "serve"],
    },
    Page {
        command: "causal",
        examples: &[
            (
                "ccc causal",
                "Profile serve under its own load on a free port, and print which sites are worth optimizing.",
            ),
            (
                "ccc causal --rounds 8 --coz-out profile.coz --json-out run.json",
                "More rounds, a profile for Coz's viewer and every cell as JSON.",
            ),
        ],
        exits: &[("4", "With --strict: the ledger audit found an error.")],
        see_also: &["serve"],
    },
];

/// The page of `command`, if it has one.
pub(super) fn page(command: &str) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.command == command)
}

/// The EXIT STATUS, EXAMPLES and SEE ALSO sections of `page`.
pub(super) fn sections(page: &Page) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    // A page's own meaning of a common code replaces it.
    let own = |code: &str| page.exits.iter().find(|(c, _)| *c == code);
    let common = COMMON_EXITS.iter().map(|exit| own(exit.0).unwrap_or(exit));
    let extra = page
        .exits
        .iter()
        .filter(|(c, _)| COMMON_EXITS.iter().all(|(common, _)| common != c));
    for (code, meaning) in common.chain(extra) {
        roff.control("TP", [])
            .text([bold(*code)])
            .text([roman(*meaning)]);
    }
    roff.control("SH", ["EXAMPLES"]);
    for (line, what) in page.examples {
        roff.control("PP", []).text([roman(*what)]);
        roff.control("RS", [])
            .control("nf", [])
            .text([bold(*line)])
            .control("fi", [])
            .control("RE", []);
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut related: Vec<String> = Vec::new();
    if page.command != "ccc" {
        related.push("ccc".into());
    }
    related.extend(page.see_also.iter().map(|c| format!("ccc-{c}")));
    let mut text = Vec::new();
    for (i, name) in related.iter().enumerate() {
        if i > 0 {
            text.push(roman(", "));
        }
        text.push(bold(name.as_str()));
        text.push(roman("(1)"));
    }
    roff.text(text);
    roff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_public_command_has_examples_and_pages_it_names() {
        let cmd = super::super::public_command();
        let mut commands: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(|s| s.get_name())
            .collect();
        commands.push("ccc");
        for command in &commands {
            let page = page(command).unwrap_or_else(|| panic!("no page text for {command}"));
            assert!(!page.examples.is_empty(), "{command} has no examples");
            for (line, _) in page.examples {
                assert!(line.contains("ccc "), "{command}: {line}");
            }
            for related in page.see_also {
                assert!(commands.contains(related), "{command} names {related}");
            }
        }
        assert_eq!(
            PAGES.len(),
            commands.len(),
            "a page for a command that is gone"
        );
    }
}
