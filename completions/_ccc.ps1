
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'ccc' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'ccc'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'ccc' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('publish', 'publish', [CompletionResultType]::ParameterValue, 'Publish a directory or a tar archive as PKG@VERSION, in one atomic transaction')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List packages, one package''s versions, or one version''s files')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List packages, one package''s versions, or one version''s files')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show a version''s sizes, compression and dedup, or one file in detail')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Show the files added, removed and changed from one version to another')
            [CompletionResult]::new('cat', 'cat', [CompletionResultType]::ParameterValue, 'Write a file''s original bytes to stdout')
            [CompletionResult]::new('tag', 'tag', [CompletionResultType]::ParameterValue, 'Add, remove or list a package''s dist-tags')
            [CompletionResult]::new('site', 'site', [CompletionResultType]::ParameterValue, 'Serve a package''s dist-tag at the root of a host: an app''s front door')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Remove versions from the catalog (their blobs stay until `ccc gc`)')
            [CompletionResult]::new('gc', 'gc', [CompletionResultType]::ParameterValue, 'Prune old versions, drop unreferenced blobs and reclaim disk space')
            [CompletionResult]::new('deltas', 'deltas', [CompletionResultType]::ParameterValue, 'Make the deltas the catalog lacks, for versions published before ccc made them or without them (`ccc publish --no-deltas`)')
            [CompletionResult]::new('recompress', 'recompress', [CompletionResultType]::ParameterValue, 'Recompress brotli streams at quality 11, as `ccc serve` does in the background')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check the database and that every blob decodes to its recorded sha256')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check that every reference of a version''s files resolves inside it')
            [CompletionResult]::new('importmap', 'importmap', [CompletionResultType]::ParameterValue, 'Write the import map that loads a version and what it imports from the catalog, without a bundler')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Copy the catalog to OUT, consistently, while it is served or published to')
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Keep the catalog a copy of a writer''s, from its Litestream replica')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the catalog over HTTP')
            [CompletionResult]::new('token', 'token', [CompletionResultType]::ParameterValue, 'Make, list and revoke the tokens that may change the catalog over HTTP')
            [CompletionResult]::new('audit', 'audit', [CompletionResultType]::ParameterValue, 'Show the audit log: what was changed over HTTP, by which token, from where, and tokens made and revoked; oldest first')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write versions out as plain files with precompressed `.gz` and `.br` siblings')
            [CompletionResult]::new('causal', 'causal', [CompletionResultType]::ParameterValue, 'Profile `serve` under live load: which code is worth optimizing?')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;publish' {
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out paths matching GLOB (relative to SOURCE''s root; `*` crosses `/`). May be repeated. A matching directory is left out whole')
            [CompletionResult]::new('--level', '--level', [CompletionResultType]::ParameterName, 'Gzip level, 1 (fastest) to 9 (smallest)')
            [CompletionResult]::new('--brotli-quality', '--brotli-quality', [CompletionResultType]::ParameterName, 'Brotli quality, 1 (fastest) to 11 (smallest); 0 stores no brotli. A brotli stream is kept beside the gzip one when it is at least 5% smaller, and sent to clients that accept `br`. `ccc serve` (in the background) and `ccc recompress` bring streams up to 11 afterwards; files published at 0 are left without')
            [CompletionResult]::new('--tag', '--tag', [CompletionResultType]::ParameterName, 'Point the dist-tag TAG (`next`, `beta`, or `latest`) at the version')
            [CompletionResult]::new('--purge', '--purge', [CompletionResultType]::ParameterName, 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version''s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"')
            [CompletionResult]::new('--purge-delay', '--purge-delay', [CompletionResultType]::ParameterName, 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower''s interval plus a restore)')
            [CompletionResult]::new('--max-file-size', '--max-file-size', [CompletionResultType]::ParameterName, 'Refuse files larger than SIZE')
            [CompletionResult]::new('--chunked-from', '--chunked-from', [CompletionResultType]::ParameterName, 'Store files of SIZE or more as they are, in 64 KiB chunks that publish, serve, cat and export read one at a time, instead of compressed whole: memory never holds such a file')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'With --importmap: where the map''s URLs start, like https://cdn.example.com [default: none, so URLs are root-relative (/assets/...) for pages served by the same ccc]')
            [CompletionResult]::new('--max-unpacked-size', '--max-unpacked-size', [CompletionResultType]::ParameterName, 'Refuse an archive whose tar stream, decompressed, is larger than SIZE')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Compression threads, at least 1 [default: one per core]')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Compression threads, at least 1 [default: one per core]')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Give up after waiting DURATION for another ccc''s lock on the catalog [default: wait as long as it takes, saying so after a second]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace the version if it exists, atomically (its dist-tags stay on it)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Do everything except commit, and report what would be stored')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Refuse the version, publishing nothing, when a reference of its files is missing, matches a file only under another case, or leaves it (what `ccc check` reports)')
            [CompletionResult]::new('--no-check', '--no-check', [CompletionResultType]::ParameterName, 'Do not read the references of scripts, stylesheets and pages')
            [CompletionResult]::new('--importmap', '--importmap', [CompletionResultType]::ParameterName, 'Write the version''s import map (the one `ccc importmap` prints) into each of its HTML pages that load modules, inline before the first `<script type="module">` or `<link rel="modulepreload">`, inside the publish: the version is never served with another map. A page with an import map of its own refuses the version; a specifier the map cannot resolve is a warning, and with --strict refuses it too')
            [CompletionResult]::new('--integrity', '--integrity', [CompletionResultType]::ParameterName, 'With --importmap: pin every module the map can reach to its bytes (`integrity`, as `ccc importmap --integrity`)')
            [CompletionResult]::new('--no-deltas', '--no-deltas', [CompletionResultType]::ParameterName, 'Make no deltas. By default each script, stylesheet, JSON and wasm file is also coded against the same file (or hashed-name family) in the newest earlier version and the one `latest` named (dcb and dcz, RFC 9842), kept where clearly smaller than its brotli stream: a browser holding that version downloads only the change')
            [CompletionResult]::new('--no-create', '--no-create', [CompletionResultType]::ParameterName, 'Refuse to create the catalog when --db names none (or an empty file), instead of creating it: for scripts and servers, where a missing catalog is a mistake to stop at, not a first publish')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no progress and no summary')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no progress and no summary')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;ls' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'List at most N rows (0: all of them). Default: 100 in a table, all in JSON')
            [CompletionResult]::new('--offset', '--offset', [CompletionResultType]::ParameterName, 'Skip the first N rows of the listing')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('--names', '--names', [CompletionResultType]::ParameterName, 'Print names alone, one per line: the packages, a package''s versions as PKG@VERSION (newest first), or a version''s paths. For scripts and shell completion; all of them unless --limit is given')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;list' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'List at most N rows (0: all of them). Default: 100 in a table, all in JSON')
            [CompletionResult]::new('--offset', '--offset', [CompletionResultType]::ParameterName, 'Skip the first N rows of the listing')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('--names', '--names', [CompletionResultType]::ParameterName, 'Print names alone, one per line: the packages, a package''s versions as PKG@VERSION (newest first), or a version''s paths. For scripts and shell completion; all of them unless --limit is given')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;inspect' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of tables')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;diff' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N files that differ (0: all of them). Default: 100 in a table, all in JSON')
            [CompletionResult]::new('--offset', '--offset', [CompletionResultType]::ParameterName, 'Skip the first N files that differ, in path order')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;cat' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--gzip', '--gzip', [CompletionResultType]::ParameterName, 'Write a gzip stream instead: the stored one, or for files stored raw, one made on the fly')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;tag' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Point TAG at PKG@VERSION (moving it if it names another version)')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Remove TAG from PKG (`latest` then is the newest release again)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List PKG''s tags, `latest` first, with the versions they name')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;tag;add' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;tag;rm' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;tag;ls' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;tag;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Point TAG at PKG@VERSION (moving it if it names another version)')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Remove TAG from PKG (`latest` then is the newest release again)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List PKG''s tags, `latest` first, with the versions they name')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;tag;help;add' {
            break
        }
        'ccc;tag;help;rm' {
            break
        }
        'ccc;tag;help;ls' {
            break
        }
        'ccc;tag;help;help' {
            break
        }
        'ccc;site' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Stop serving a site at HOST (its package and versions stay)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;site;set' {
            [CompletionResult]::new('--hsts', '--hsts', [CompletionResultType]::ParameterName, 'Send `Strict-Transport-Security: max-age=...` for this long on every answer over HTTPS, like 365days')
            [CompletionResult]::new('--skew-versions', '--skew-versions', [CompletionResultType]::ParameterName, 'How many versions the site served before the current one still answer their fingerprinted files, so that a page open during a deploy can load its own chunks (0: none)')
            [CompletionResult]::new('--skew-age', '--skew-age', [CompletionResultType]::ParameterName, 'For how long after the site stopped serving a version (default: a day)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--spa', '--spa', [CompletionResultType]::ParameterName, 'Answer a path that has no file and no extension (`/settings/profile`) with `/index.html`, for single-page apps that route in the browser')
            [CompletionResult]::new('--clean-urls', '--clean-urls', [CompletionResultType]::ParameterName, 'Answer `/about` with `/about.html` when there is no file `about`')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;site;rm' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;site;ls' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;site;help' {
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Stop serving a site at HOST (its package and versions stay)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;site;help;set' {
            break
        }
        'ccc;site;help;rm' {
            break
        }
        'ccc;site;help;ls' {
            break
        }
        'ccc;site;help;help' {
            break
        }
        'ccc;rm' {
            [CompletionResult]::new('--purge', '--purge', [CompletionResultType]::ParameterName, 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version''s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"')
            [CompletionResult]::new('--purge-delay', '--purge-delay', [CompletionResultType]::ParameterName, 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower''s interval plus a restore)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN')
            [CompletionResult]::new('--ca-file', '--ca-file', [CompletionResultType]::ParameterName, 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Remove every version of the named packages')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Show what would be removed, and change nothing')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print what was removed as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;gc' {
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Keep the N newest releases of each package, and the prereleases newer than them (0 only with --delete-all-versions)')
            [CompletionResult]::new('--keep-prereleases', '--keep-prereleases', [CompletionResultType]::ParameterName, 'With --keep, also keep the M newest prereleases that are older than the package''s newest release [default: 0]')
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Remove versions published longer ago than DURATION, like `30days`, `2weeks` or `12h`')
            [CompletionResult]::new('--purge', '--purge', [CompletionResultType]::ParameterName, 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version''s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"')
            [CompletionResult]::new('--purge-delay', '--purge-delay', [CompletionResultType]::ParameterName, 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower''s interval plus a restore)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--delete-all-versions', '--delete-all-versions', [CompletionResultType]::ParameterName, 'Allow --keep 0: remove every version, `latest` included (with --older-than, every version older than that)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'List every choice (what goes, what stays and why), and change nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;deltas' {
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Coding threads, at least 1 [default: one per core]')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Coding threads, at least 1 [default: one per core]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;recompress' {
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Compressing threads, at least 1 [default: one per core]')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Compressing threads, at least 1 [default: one per core]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print what was done as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;verify' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;check' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--site', '--site', [CompletionResultType]::ParameterName, 'Check as a site serves the build, at the root of its host (`ccc site`): a root path (`/assets/index-B3x9a.js`, what Vite''s default `base: ''/''` writes) names a file of the build instead of leaving it. Without the flag, a version in the catalog that a site serves is checked so')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;importmap' {
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'Where the URLs start, like https://cdn.example.com (an http or https URL, optionally with a path); default: none, so URLs are root-relative (/assets/...) for pages served by the same ccc')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'The npm registry asked what the packages the catalog lacks depend on, so that all of them are listed at once [default: npm''s npm_config_registry, else https://registry.npmjs.org/]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--integrity', '--integrity', [CompletionResultType]::ParameterName, 'Pin every module the map can reach to its bytes: `integrity` with each file''s `sha256-...` Subresource Integrity value, which browsers check before running it')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the map with what went into it (the versions it pins, the specifiers left unresolved, the packages lacking) as JSON')
            [CompletionResult]::new('--offline', '--offline', [CompletionResultType]::ParameterName, 'Ask no registry: list only the packages the map itself lacks, by range')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;backup' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace OUT if it exists')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no progress')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;follow' {
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often to look for new transactions')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--once', '--once', [CompletionResultType]::ParameterName, 'Bring the catalog up to date once and exit (0 when it is the replica''s newest)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;serve' {
            [CompletionResult]::new('--bind', '--bind', [CompletionResultType]::ParameterName, 'Address or host name to listen on; a name (`localhost`) listens on every address it resolves to')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to listen on; 0 picks a free one (the first line of output names it) [default: 8333 for `serve`, a free one for `causal`, whose server only its own load reaches]')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Threads serving connections, at least 1; a request the cache cannot answer holds its thread while the catalog is read [default: one per core]')
            [CompletionResult]::new('--cache-capacity', '--cache-capacity', [CompletionResultType]::ParameterName, 'Most assets kept in memory; 0 turns the cache off [default: no limit but --cache-bytes]')
            [CompletionResult]::new('--cache-bytes', '--cache-bytes', [CompletionResultType]::ParameterName, 'Most bytes the asset cache holds in memory, like 1GiB: bodies, names, prepared headers and the cache index')
            [CompletionResult]::new('--index-bytes', '--index-bytes', [CompletionResultType]::ParameterName, 'Most bytes the file index holds in memory, like 64MiB; 0 turns it off. It keeps what the catalog said of each file a miss read (where its bytes are, their digests, its headers'' values), so the file''s next miss reads only its bytes, as nginx''s open_file_cache does')
            [CompletionResult]::new('--in-flight-bytes', '--in-flight-bytes', [CompletionResultType]::ParameterName, 'Most bytes responses in flight hold beyond the cache, like 256MiB: bodies read for a response the cache does not keep, pieces being sent, decoders. A file longer than 64 KiB is sent from the catalog a checked piece at a time when its whole body does not fit; a piece waits for room (within --send-timeout)')
            [CompletionResult]::new('--alias-max-age', '--alias-max-age', [CompletionResultType]::ParameterName, 'How long caches may reuse a redirect from a dist-tag or a range (`max-age`) before they revalidate it; 0 makes them revalidate every time (a 304 while the alias has not moved)')
            [CompletionResult]::new('--not-found-max-age', '--not-found-max-age', [CompletionResultType]::ParameterName, 'How long caches may keep a 404 for a missing package, version or file (`max-age`; 0: not at all), so that a scan of missing paths is answered by the cache in front instead of the catalog. A version published after such a 404 is seen through that cache at most this much later')
            [CompletionResult]::new('--max-lag', '--max-lag', [CompletionResultType]::ParameterName, 'On a replica kept by `ccc follow` (or examples/deploy/ccc-follow): the longest its follower may go without confirming that the catalog served is the replica''s newest (it touches `DB.follow` each time it does). Past it, or with no such file, `/healthz` says `stale` and answers 503, so a load balancer takes the replica out; stderr says when the replica turns stale and when it recovers, and at start when no follower has confirmed it yet')
            [CompletionResult]::new('--access-log', '--access-log', [CompletionResultType]::ParameterName, 'Write a line for every request, in --log-format: to stdout, or appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again, for log rotation (logrotate renames the file, then signals). While the log goes to stdout, stdout holds its lines alone: the `listening on` and final lines go to stderr')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'The access log''s format: `combined` is nginx''s default format, `json` one object per line (fields in docs/JSON.md). Needs --access-log')
            [CompletionResult]::new('--log-exclude', '--log-exclude', [CompletionResultType]::ParameterName, 'Leave requests whose path (without the query) matches GLOB out of the access log, like `/healthz` or `/metrics` (repeatable; `*` crosses `/`). They are still counted in /_stats and /metrics')
            [CompletionResult]::new('--trust-proxy', '--trust-proxy', [CompletionResultType]::ParameterName, 'A proxy (an address or a CIDR block, repeatable) whose `Forwarded` or `X-Forwarded-For` names the client the access log records, read from the right past every trusted proxy. Requests from anyone else are logged as their peer')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Most client connections open at once. Past it the longest idle keep-alive connections are closed to make room; when none is idle a new connection is answered 503 with `Retry-After: 1` and closed [default: 16384, or fewer if the open-files limit is lower]')
            [CompletionResult]::new('--header-timeout', '--header-timeout', [CompletionResultType]::ParameterName, 'Time a client has to send a complete request head (line and headers), from connecting or from the first byte of a later request; then the connection is closed')
            [CompletionResult]::new('--keepalive-timeout', '--keepalive-timeout', [CompletionResultType]::ParameterName, 'Time an idle keep-alive connection is kept open')
            [CompletionResult]::new('--send-timeout', '--send-timeout', [CompletionResultType]::ParameterName, 'Time a client may take no response bytes at all before its connection is closed. A slow client holds only its own connection, never a worker')
            [CompletionResult]::new('--body-timeout', '--body-timeout', [CompletionResultType]::ParameterName, 'Time a client may go without sending a byte of an upload''s body (--publish-api), counted between two reads, not for the whole body; then the upload fails, nothing is published, and the connection is closed')
            [CompletionResult]::new('--shutdown-timeout', '--shutdown-timeout', [CompletionResultType]::ParameterName, 'On SIGINT or SIGTERM, how long requests in flight (a long download too) may take to finish after the server stops accepting; then the connections left are closed')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain, leaf first. SIGHUP reads it and the key again')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1)')
            [CompletionResult]::new('--redirect-http', '--redirect-http', [CompletionResultType]::ParameterName, 'With --tls-cert: also listen for plain HTTP on PORT (on the --bind addresses, or a socket systemd passes with FileDescriptorName=redirect) and answer every request there with a 308 to the same URL over HTTPS')
            [CompletionResult]::new('--acme-dir', '--acme-dir', [CompletionResultType]::ParameterName, 'With --redirect-http: answer ACME''s HTTP-01 challenges (/.well-known/acme-challenge/TOKEN) there from this webroot, the folder given to `certbot certonly --webroot -w DIR` or `lego --http.webroot DIR`; renewals then need no other server on port 80')
            [CompletionResult]::new('--max-upload-size', '--max-upload-size', [CompletionResultType]::ParameterName, 'With --publish-api: the largest upload taken; a larger one is answered 413 and nothing is published')
            [CompletionResult]::new('--max-unpacked-size', '--max-unpacked-size', [CompletionResultType]::ParameterName, 'With --publish-api: refuse an upload whose tar stream, decompressed, is larger than SIZE (a gzip bomb), answered 422')
            [CompletionResult]::new('--publish-wait', '--publish-wait', [CompletionResultType]::ParameterName, 'With --publish-api: how long a change waits for the one before it (the catalog takes one at a time); then it is answered 503 with Retry-After')
            [CompletionResult]::new('--writer', '--writer', [CompletionResultType]::ParameterName, 'On a replica: the writer''s URL, which the write API names to a client that sends a change here')
            [CompletionResult]::new('--stats-allow', '--stats-allow', [CompletionResultType]::ParameterName, 'Answer /_stats and /metrics only to these addresses (a CIDR block, repeatable), and to a bearer of a token with the read-stats scope, as nginx''s allow/deny restricts stub_status [default: anyone]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--log-misses', '--log-misses', [CompletionResultType]::ParameterName, 'Print a line to stderr for every cache miss')
            [CompletionResult]::new('--publish-api', '--publish-api', [CompletionResultType]::ParameterName, 'Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc rm --to` with a token made by `ccc token create` (PUT and DELETE under /-/api/v1/). Off unless given: a catalog may be served by many servers, and only its writer, over TLS, should take writes')
            [CompletionResult]::new('--reuse-port', '--reuse-port', [CompletionResultType]::ParameterName, 'Share the port with other processes that set it too (SO_REUSEPORT), so a new `ccc serve` can start before the old one stops. Both must set it. For such a handover to drop nothing, Linux needs net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf); with its default, 0, the connections queued on the old server''s socket when it closes are reset, and serve warns at start. Not needed under systemd socket activation, which passes the socket itself')
            [CompletionResult]::new('--no-recompress', '--no-recompress', [CompletionResultType]::ParameterName, 'Leave brotli streams at the quality publish gave them. By default a server that may write its catalog (not a replica) brings them up to quality 11 in the background, on idle CPU only, as `ccc recompress` does: fewer bytes for brotli clients')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;token' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Make a token and print it, once, on stdout')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List the tokens: name, scopes, expiry, last use, state')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke the token NAME: every server of the catalog refuses it from its next request')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;token;create' {
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'What the token may do, as ACTIONS:GLOBS, like `publish,tag:@team/*` or `read-stats` (repeatable)')
            [CompletionResult]::new('--expires', '--expires', [CompletionResultType]::ParameterName, 'How long the token lasts, like 90d or 1y; `never` for a token that does not expire')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the token and its details as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;token;ls' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;token;revoke' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;token;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Make a token and print it, once, on stdout')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List the tokens: name, scopes, expiry, last use, state')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke the token NAME: every server of the catalog refuses it from its next request')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;token;help;create' {
            break
        }
        'ccc;token;help;ls' {
            break
        }
        'ccc;token;help;revoke' {
            break
        }
        'ccc;token;help;help' {
            break
        }
        'ccc;audit' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show the last N rows [default: 100; 0: all]')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only rows newer than DURATION ago, like 24h or 7d')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Only the rows of the token NAME')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON instead of a table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;export' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;causal' {
            [CompletionResult]::new('--bind', '--bind', [CompletionResultType]::ParameterName, 'Address or host name to listen on; a name (`localhost`) listens on every address it resolves to')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to listen on; 0 picks a free one (the first line of output names it) [default: 8333 for `serve`, a free one for `causal`, whose server only its own load reaches]')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Threads serving connections, at least 1; a request the cache cannot answer holds its thread while the catalog is read [default: one per core]')
            [CompletionResult]::new('--cache-capacity', '--cache-capacity', [CompletionResultType]::ParameterName, 'Most assets kept in memory; 0 turns the cache off [default: no limit but --cache-bytes]')
            [CompletionResult]::new('--cache-bytes', '--cache-bytes', [CompletionResultType]::ParameterName, 'Most bytes the asset cache holds in memory, like 1GiB: bodies, names, prepared headers and the cache index')
            [CompletionResult]::new('--index-bytes', '--index-bytes', [CompletionResultType]::ParameterName, 'Most bytes the file index holds in memory, like 64MiB; 0 turns it off. It keeps what the catalog said of each file a miss read (where its bytes are, their digests, its headers'' values), so the file''s next miss reads only its bytes, as nginx''s open_file_cache does')
            [CompletionResult]::new('--in-flight-bytes', '--in-flight-bytes', [CompletionResultType]::ParameterName, 'Most bytes responses in flight hold beyond the cache, like 256MiB: bodies read for a response the cache does not keep, pieces being sent, decoders. A file longer than 64 KiB is sent from the catalog a checked piece at a time when its whole body does not fit; a piece waits for room (within --send-timeout)')
            [CompletionResult]::new('--alias-max-age', '--alias-max-age', [CompletionResultType]::ParameterName, 'How long caches may reuse a redirect from a dist-tag or a range (`max-age`) before they revalidate it; 0 makes them revalidate every time (a 304 while the alias has not moved)')
            [CompletionResult]::new('--not-found-max-age', '--not-found-max-age', [CompletionResultType]::ParameterName, 'How long caches may keep a 404 for a missing package, version or file (`max-age`; 0: not at all), so that a scan of missing paths is answered by the cache in front instead of the catalog. A version published after such a 404 is seen through that cache at most this much later')
            [CompletionResult]::new('--max-lag', '--max-lag', [CompletionResultType]::ParameterName, 'On a replica kept by `ccc follow` (or examples/deploy/ccc-follow): the longest its follower may go without confirming that the catalog served is the replica''s newest (it touches `DB.follow` each time it does). Past it, or with no such file, `/healthz` says `stale` and answers 503, so a load balancer takes the replica out; stderr says when the replica turns stale and when it recovers, and at start when no follower has confirmed it yet')
            [CompletionResult]::new('--access-log', '--access-log', [CompletionResultType]::ParameterName, 'Write a line for every request, in --log-format: to stdout, or appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again, for log rotation (logrotate renames the file, then signals). While the log goes to stdout, stdout holds its lines alone: the `listening on` and final lines go to stderr')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'The access log''s format: `combined` is nginx''s default format, `json` one object per line (fields in docs/JSON.md). Needs --access-log')
            [CompletionResult]::new('--log-exclude', '--log-exclude', [CompletionResultType]::ParameterName, 'Leave requests whose path (without the query) matches GLOB out of the access log, like `/healthz` or `/metrics` (repeatable; `*` crosses `/`). They are still counted in /_stats and /metrics')
            [CompletionResult]::new('--trust-proxy', '--trust-proxy', [CompletionResultType]::ParameterName, 'A proxy (an address or a CIDR block, repeatable) whose `Forwarded` or `X-Forwarded-For` names the client the access log records, read from the right past every trusted proxy. Requests from anyone else are logged as their peer')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Most client connections open at once. Past it the longest idle keep-alive connections are closed to make room; when none is idle a new connection is answered 503 with `Retry-After: 1` and closed [default: 16384, or fewer if the open-files limit is lower]')
            [CompletionResult]::new('--header-timeout', '--header-timeout', [CompletionResultType]::ParameterName, 'Time a client has to send a complete request head (line and headers), from connecting or from the first byte of a later request; then the connection is closed')
            [CompletionResult]::new('--keepalive-timeout', '--keepalive-timeout', [CompletionResultType]::ParameterName, 'Time an idle keep-alive connection is kept open')
            [CompletionResult]::new('--send-timeout', '--send-timeout', [CompletionResultType]::ParameterName, 'Time a client may take no response bytes at all before its connection is closed. A slow client holds only its own connection, never a worker')
            [CompletionResult]::new('--body-timeout', '--body-timeout', [CompletionResultType]::ParameterName, 'Time a client may go without sending a byte of an upload''s body (--publish-api), counted between two reads, not for the whole body; then the upload fails, nothing is published, and the connection is closed')
            [CompletionResult]::new('--shutdown-timeout', '--shutdown-timeout', [CompletionResultType]::ParameterName, 'On SIGINT or SIGTERM, how long requests in flight (a long download too) may take to finish after the server stops accepting; then the connections left are closed')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain, leaf first. SIGHUP reads it and the key again')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1)')
            [CompletionResult]::new('--redirect-http', '--redirect-http', [CompletionResultType]::ParameterName, 'With --tls-cert: also listen for plain HTTP on PORT (on the --bind addresses, or a socket systemd passes with FileDescriptorName=redirect) and answer every request there with a 308 to the same URL over HTTPS')
            [CompletionResult]::new('--acme-dir', '--acme-dir', [CompletionResultType]::ParameterName, 'With --redirect-http: answer ACME''s HTTP-01 challenges (/.well-known/acme-challenge/TOKEN) there from this webroot, the folder given to `certbot certonly --webroot -w DIR` or `lego --http.webroot DIR`; renewals then need no other server on port 80')
            [CompletionResult]::new('--max-upload-size', '--max-upload-size', [CompletionResultType]::ParameterName, 'With --publish-api: the largest upload taken; a larger one is answered 413 and nothing is published')
            [CompletionResult]::new('--max-unpacked-size', '--max-unpacked-size', [CompletionResultType]::ParameterName, 'With --publish-api: refuse an upload whose tar stream, decompressed, is larger than SIZE (a gzip bomb), answered 422')
            [CompletionResult]::new('--publish-wait', '--publish-wait', [CompletionResultType]::ParameterName, 'With --publish-api: how long a change waits for the one before it (the catalog takes one at a time); then it is answered 503 with Retry-After')
            [CompletionResult]::new('--writer', '--writer', [CompletionResultType]::ParameterName, 'On a replica: the writer''s URL, which the write API names to a client that sends a change here')
            [CompletionResult]::new('--stats-allow', '--stats-allow', [CompletionResultType]::ParameterName, 'Answer /_stats and /metrics only to these addresses (a CIDR block, repeatable), and to a bearer of a token with the read-stats scope, as nginx''s allow/deny restricts stub_status [default: anyone]')
            [CompletionResult]::new('--sites', '--sites', [CompletionResultType]::ParameterName, 'Sites to profile, comma-separated [default: all]')
            [CompletionResult]::new('--speedups', '--speedups', [CompletionResultType]::ParameterName, 'Virtual speedups in percent, comma-separated (0 is always added)')
            [CompletionResult]::new('--rounds', '--rounds', [CompletionResultType]::ParameterName, 'Rounds over every site and speedup (at least 1)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Shortest measurement window of one experiment')
            [CompletionResult]::new('--max-window', '--max-window', [CompletionResultType]::ParameterName, 'Longest window, when progress is slow (at least --window)')
            [CompletionResult]::new('--warmup', '--warmup', [CompletionResultType]::ParameterName, 'Load before the first experiment (warms caches, measures the rate)')
            [CompletionResult]::new('--settle', '--settle', [CompletionResultType]::ParameterName, 'Pause after each experiment starts, before measuring')
            [CompletionResult]::new('--min-delta', '--min-delta', [CompletionResultType]::ParameterName, 'Progress counts an experiment needs to be reliable (at least 5, the least Coz''s viewer plots)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed of the experiment order (printed, so a run can be repeated)')
            [CompletionResult]::new('--load', '--load', [CompletionResultType]::ParameterName, '`builtin:N`: N keep-alive clients of ccc''s own; `external`: wait for someone else''s load (wrk, oha, ...)')
            [CompletionResult]::new('--urls', '--urls', [CompletionResultType]::ParameterName, 'URL list for the built-in load, one per line, used in order [default: every asset, 80% of requests on the first 50]')
            [CompletionResult]::new('--external-wake', '--external-wake', [CompletionResultType]::ParameterName, 'How a request from a client moves the worker''s virtual clock')
            [CompletionResult]::new('--site-clock', '--site-clock', [CompletionResultType]::ParameterName, 'What times a visit of the selected site: elapsed time less the profiler''s own pauses (`wall`), or the thread''s CPU time (`cpu`), for sites that block on what optimizing them would not shorten')
            [CompletionResult]::new('--idle-cores', '--idle-cores', [CompletionResultType]::ParameterName, 'What idle cores do while profiling: `spin` keeps each awake with a lowest-priority (SCHED_IDLE) spinner, so waking a thread costs the same whether the profiler pauses threads or not; `sleep` leaves them to the OS (less power, predictions that run low)')
            [CompletionResult]::new('--json-out', '--json-out', [CompletionResultType]::ParameterName, 'Write every cell, the summary and the ledger as JSON (`-` for stdout), as --coz-out writes Coz''s profile')
            [CompletionResult]::new('--coz-out', '--coz-out', [CompletionResultType]::ParameterName, 'Write a profile Coz''s viewer loads')
            [CompletionResult]::new('--coz-format', '--coz-format', [CompletionResultType]::ParameterName, 'Format of --coz-out')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'Print the delay-accounting audit: per cell, or per cell and thread')
            [CompletionResult]::new('--plot', '--plot', [CompletionResultType]::ParameterName, 'Draw the speedup curves as SVG')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The catalog file')
            [CompletionResult]::new('--log-misses', '--log-misses', [CompletionResultType]::ParameterName, 'Print a line to stderr for every cache miss')
            [CompletionResult]::new('--publish-api', '--publish-api', [CompletionResultType]::ParameterName, 'Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc rm --to` with a token made by `ccc token create` (PUT and DELETE under /-/api/v1/). Off unless given: a catalog may be served by many servers, and only its writer, over TLS, should take writes')
            [CompletionResult]::new('--reuse-port', '--reuse-port', [CompletionResultType]::ParameterName, 'Share the port with other processes that set it too (SO_REUSEPORT), so a new `ccc serve` can start before the old one stops. Both must set it. For such a handover to drop nothing, Linux needs net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf); with its default, 0, the connections queued on the old server''s socket when it closes are reset, and serve warns at start. Not needed under systemd socket activation, which passes the socket itself')
            [CompletionResult]::new('--coz-append', '--coz-append', [CompletionResultType]::ParameterName, 'Append to --coz-out instead of replacing it')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Exit 4 when the ledger audit finds an error')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'ccc;help' {
            [CompletionResult]::new('publish', 'publish', [CompletionResultType]::ParameterValue, 'Publish a directory or a tar archive as PKG@VERSION, in one atomic transaction')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List packages, one package''s versions, or one version''s files')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show a version''s sizes, compression and dedup, or one file in detail')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Show the files added, removed and changed from one version to another')
            [CompletionResult]::new('cat', 'cat', [CompletionResultType]::ParameterValue, 'Write a file''s original bytes to stdout')
            [CompletionResult]::new('tag', 'tag', [CompletionResultType]::ParameterValue, 'Add, remove or list a package''s dist-tags')
            [CompletionResult]::new('site', 'site', [CompletionResultType]::ParameterValue, 'Serve a package''s dist-tag at the root of a host: an app''s front door')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Remove versions from the catalog (their blobs stay until `ccc gc`)')
            [CompletionResult]::new('gc', 'gc', [CompletionResultType]::ParameterValue, 'Prune old versions, drop unreferenced blobs and reclaim disk space')
            [CompletionResult]::new('deltas', 'deltas', [CompletionResultType]::ParameterValue, 'Make the deltas the catalog lacks, for versions published before ccc made them or without them (`ccc publish --no-deltas`)')
            [CompletionResult]::new('recompress', 'recompress', [CompletionResultType]::ParameterValue, 'Recompress brotli streams at quality 11, as `ccc serve` does in the background')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check the database and that every blob decodes to its recorded sha256')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check that every reference of a version''s files resolves inside it')
            [CompletionResult]::new('importmap', 'importmap', [CompletionResultType]::ParameterValue, 'Write the import map that loads a version and what it imports from the catalog, without a bundler')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Copy the catalog to OUT, consistently, while it is served or published to')
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Keep the catalog a copy of a writer''s, from its Litestream replica')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the catalog over HTTP')
            [CompletionResult]::new('token', 'token', [CompletionResultType]::ParameterValue, 'Make, list and revoke the tokens that may change the catalog over HTTP')
            [CompletionResult]::new('audit', 'audit', [CompletionResultType]::ParameterValue, 'Show the audit log: what was changed over HTTP, by which token, from where, and tokens made and revoked; oldest first')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write versions out as plain files with precompressed `.gz` and `.br` siblings')
            [CompletionResult]::new('causal', 'causal', [CompletionResultType]::ParameterValue, 'Profile `serve` under live load: which code is worth optimizing?')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ccc;help;publish' {
            break
        }
        'ccc;help;ls' {
            break
        }
        'ccc;help;inspect' {
            break
        }
        'ccc;help;diff' {
            break
        }
        'ccc;help;cat' {
            break
        }
        'ccc;help;tag' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Point TAG at PKG@VERSION (moving it if it names another version)')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Remove TAG from PKG (`latest` then is the newest release again)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List PKG''s tags, `latest` first, with the versions they name')
            break
        }
        'ccc;help;tag;add' {
            break
        }
        'ccc;help;tag;rm' {
            break
        }
        'ccc;help;tag;ls' {
            break
        }
        'ccc;help;site' {
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had')
            [CompletionResult]::new('rm', 'rm', [CompletionResultType]::ParameterValue, 'Stop serving a site at HOST (its package and versions stay)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)')
            break
        }
        'ccc;help;site;set' {
            break
        }
        'ccc;help;site;rm' {
            break
        }
        'ccc;help;site;ls' {
            break
        }
        'ccc;help;rm' {
            break
        }
        'ccc;help;gc' {
            break
        }
        'ccc;help;deltas' {
            break
        }
        'ccc;help;recompress' {
            break
        }
        'ccc;help;verify' {
            break
        }
        'ccc;help;check' {
            break
        }
        'ccc;help;importmap' {
            break
        }
        'ccc;help;backup' {
            break
        }
        'ccc;help;follow' {
            break
        }
        'ccc;help;serve' {
            break
        }
        'ccc;help;token' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Make a token and print it, once, on stdout')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List the tokens: name, scopes, expiry, last use, state')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke the token NAME: every server of the catalog refuses it from its next request')
            break
        }
        'ccc;help;token;create' {
            break
        }
        'ccc;help;token;ls' {
            break
        }
        'ccc;help;token;revoke' {
            break
        }
        'ccc;help;audit' {
            break
        }
        'ccc;help;export' {
            break
        }
        'ccc;help;causal' {
            break
        }
        'ccc;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
