
use builtin;
use str;

set edit:completion:arg-completer[ccc] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'ccc'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'ccc'= {
            cand --db 'The catalog file'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand publish 'Publish a directory or a tar archive as PKG@VERSION, in one atomic transaction'
            cand ls 'List packages, one package''s versions, or one version''s files'
            cand list 'List packages, one package''s versions, or one version''s files'
            cand inspect 'Show a version''s sizes, compression and dedup, or one file in detail'
            cand diff 'Show the files added, removed and changed from one version to another'
            cand cat 'Write a file''s original bytes to stdout'
            cand tag 'Add, remove or list a package''s dist-tags'
            cand site 'Serve a package''s dist-tag at the root of a host: an app''s front door'
            cand rm 'Remove versions from the catalog (their blobs stay until `ccc gc`)'
            cand gc 'Prune old versions, drop unreferenced blobs and reclaim disk space'
            cand deltas 'Make the deltas the catalog lacks, for versions published before ccc made them or without them (`ccc publish --no-deltas`)'
            cand recompress 'Recompress brotli streams at quality 11, as `ccc serve` does in the background'
            cand verify 'Check the database and that every blob decodes to its recorded sha256'
            cand check 'Check that every reference of a version''s files resolves inside it'
            cand importmap 'Write the import map that loads a version and what it imports from the catalog, without a bundler'
            cand backup 'Copy the catalog to OUT, consistently, while it is served or published to'
            cand follow 'Keep the catalog a copy of a writer''s, from its Litestream replica'
            cand serve 'Serve the catalog over HTTP'
            cand token 'Make, list and revoke the tokens that may change the catalog over HTTP'
            cand audit 'Show the audit log: what was changed over HTTP, by which token, from where, and tokens made and revoked; oldest first'
            cand export 'Write versions out as plain files with precompressed `.gz` and `.br` siblings'
            cand causal 'Profile `serve` under live load: which code is worth optimizing?'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;publish'= {
            cand --exclude 'Leave out paths matching GLOB (relative to SOURCE''s root; `*` crosses `/`). May be repeated. A matching directory is left out whole'
            cand --level 'Gzip level, 1 (fastest) to 9 (smallest)'
            cand --brotli-quality 'Brotli quality, 1 (fastest) to 11 (smallest); 0 stores no brotli. A brotli stream is kept beside the gzip one when it is at least 5% smaller, and sent to clients that accept `br`. `ccc serve` (in the background) and `ccc recompress` bring streams up to 11 afterwards; files published at 0 are left without'
            cand --tag 'Point the dist-tag TAG (`next`, `beta`, or `latest`) at the version'
            cand --purge 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version''s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"'
            cand --purge-delay 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower''s interval plus a restore)'
            cand --max-file-size 'Refuse files larger than SIZE'
            cand --chunked-from 'Store files of SIZE or more as they are, in 64 KiB chunks that publish, serve, cat and export read one at a time, instead of compressed whole: memory never holds such a file'
            cand --base 'With --importmap: where the map''s URLs start, like https://cdn.example.com [default: none, so URLs are root-relative (/assets/...) for pages served by the same ccc]'
            cand --max-unpacked-size 'Refuse an archive whose tar stream, decompressed, is larger than SIZE'
            cand -j 'Compression threads, at least 1 [default: one per core]'
            cand --jobs 'Compression threads, at least 1 [default: one per core]'
            cand --wait 'Give up after waiting DURATION for another ccc''s lock on the catalog [default: wait as long as it takes, saying so after a second]'
            cand --to 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)'
            cand --token-file 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN'
            cand --ca-file 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots'
            cand --db 'The catalog file'
            cand --force 'Replace the version if it exists, atomically (its dist-tags stay on it)'
            cand --dry-run 'Do everything except commit, and report what would be stored'
            cand --strict 'Refuse the version, publishing nothing, when a reference of its files is missing, matches a file only under another case, or leaves it (what `ccc check` reports)'
            cand --no-check 'Do not read the references of scripts, stylesheets and pages'
            cand --importmap 'Write the version''s import map (the one `ccc importmap` prints) into each of its HTML pages that load modules, inline before the first `<script type="module">` or `<link rel="modulepreload">`, inside the publish: the version is never served with another map. A page with an import map of its own refuses the version; a specifier the map cannot resolve is a warning, and with --strict refuses it too'
            cand --integrity 'With --importmap: pin every module the map can reach to its bytes (`integrity`, as `ccc importmap --integrity`)'
            cand --no-deltas 'Make no deltas. By default each script, stylesheet, JSON and wasm file is also coded against the same file (or hashed-name family) in the newest earlier version and the one `latest` named (dcb and dcz, RFC 9842), kept where clearly smaller than its brotli stream: a browser holding that version downloads only the change'
            cand --no-create 'Refuse to create the catalog when --db names none (or an empty file), instead of creating it: for scripts and servers, where a missing catalog is a mistake to stop at, not a first publish'
            cand -q 'Print no progress and no summary'
            cand --quiet 'Print no progress and no summary'
            cand --json 'Print the summary as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;ls'= {
            cand --limit 'List at most N rows (0: all of them). Default: 100 in a table, all in JSON'
            cand --offset 'Skip the first N rows of the listing'
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand --names 'Print names alone, one per line: the packages, a package''s versions as PKG@VERSION (newest first), or a version''s paths. For scripts and shell completion; all of them unless --limit is given'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;list'= {
            cand --limit 'List at most N rows (0: all of them). Default: 100 in a table, all in JSON'
            cand --offset 'Skip the first N rows of the listing'
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand --names 'Print names alone, one per line: the packages, a package''s versions as PKG@VERSION (newest first), or a version''s paths. For scripts and shell completion; all of them unless --limit is given'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;inspect'= {
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of tables'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;diff'= {
            cand --limit 'Show at most N files that differ (0: all of them). Default: 100 in a table, all in JSON'
            cand --offset 'Skip the first N files that differ, in path order'
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;cat'= {
            cand --db 'The catalog file'
            cand --gzip 'Write a gzip stream instead: the stored one, or for files stored raw, one made on the fly'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;tag'= {
            cand --to 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)'
            cand --token-file 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN'
            cand --ca-file 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots'
            cand --db 'The catalog file'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand add 'Point TAG at PKG@VERSION (moving it if it names another version)'
            cand rm 'Remove TAG from PKG (`latest` then is the newest release again)'
            cand ls 'List PKG''s tags, `latest` first, with the versions they name'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;tag;add'= {
            cand --to 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)'
            cand --token-file 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN'
            cand --ca-file 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots'
            cand --db 'The catalog file'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;tag;rm'= {
            cand --to 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)'
            cand --token-file 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN'
            cand --ca-file 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots'
            cand --db 'The catalog file'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;tag;ls'= {
            cand --to 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)'
            cand --token-file 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN'
            cand --ca-file 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots'
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;tag;help'= {
            cand add 'Point TAG at PKG@VERSION (moving it if it names another version)'
            cand rm 'Remove TAG from PKG (`latest` then is the newest release again)'
            cand ls 'List PKG''s tags, `latest` first, with the versions they name'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;tag;help;add'= {
        }
        &'ccc;tag;help;rm'= {
        }
        &'ccc;tag;help;ls'= {
        }
        &'ccc;tag;help;help'= {
        }
        &'ccc;site'= {
            cand --db 'The catalog file'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand set 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had'
            cand rm 'Stop serving a site at HOST (its package and versions stay)'
            cand ls 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;site;set'= {
            cand --hsts 'Send `Strict-Transport-Security: max-age=...` for this long on every answer over HTTPS, like 365days'
            cand --skew-versions 'How many versions the site served before the current one still answer their fingerprinted files, so that a page open during a deploy can load its own chunks (0: none)'
            cand --skew-age 'For how long after the site stopped serving a version (default: a day)'
            cand --db 'The catalog file'
            cand --spa 'Answer a path that has no file and no extension (`/settings/profile`) with `/index.html`, for single-page apps that route in the browser'
            cand --clean-urls 'Answer `/about` with `/about.html` when there is no file `about`'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;site;rm'= {
            cand --db 'The catalog file'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;site;ls'= {
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;site;help'= {
            cand set 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had'
            cand rm 'Stop serving a site at HOST (its package and versions stay)'
            cand ls 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;site;help;set'= {
        }
        &'ccc;site;help;rm'= {
        }
        &'ccc;site;help;ls'= {
        }
        &'ccc;site;help;help'= {
        }
        &'ccc;rm'= {
            cand --purge 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version''s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"'
            cand --purge-delay 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower''s interval plus a restore)'
            cand --to 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)'
            cand --token-file 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN'
            cand --ca-file 'With --to: check the server''s certificate against the PEM certificates in FILE (a private CA) instead of the system''s roots'
            cand --db 'The catalog file'
            cand --all 'Remove every version of the named packages'
            cand --dry-run 'Show what would be removed, and change nothing'
            cand --json 'Print what was removed as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;gc'= {
            cand --keep 'Keep the N newest releases of each package, and the prereleases newer than them (0 only with --delete-all-versions)'
            cand --keep-prereleases 'With --keep, also keep the M newest prereleases that are older than the package''s newest release [default: 0]'
            cand --older-than 'Remove versions published longer ago than DURATION, like `30days`, `2weeks` or `12h`'
            cand --purge 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version''s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"'
            cand --purge-delay 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower''s interval plus a restore)'
            cand --db 'The catalog file'
            cand --delete-all-versions 'Allow --keep 0: remove every version, `latest` included (with --older-than, every version older than that)'
            cand --dry-run 'List every choice (what goes, what stays and why), and change nothing'
            cand -q 'Print no progress'
            cand --quiet 'Print no progress'
            cand --json 'Print the report as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;deltas'= {
            cand -j 'Coding threads, at least 1 [default: one per core]'
            cand --jobs 'Coding threads, at least 1 [default: one per core]'
            cand --db 'The catalog file'
            cand -q 'Print no progress'
            cand --quiet 'Print no progress'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;recompress'= {
            cand -j 'Compressing threads, at least 1 [default: one per core]'
            cand --jobs 'Compressing threads, at least 1 [default: one per core]'
            cand --db 'The catalog file'
            cand -q 'Print no progress'
            cand --quiet 'Print no progress'
            cand --json 'Print what was done as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;verify'= {
            cand --db 'The catalog file'
            cand -q 'Print no progress'
            cand --quiet 'Print no progress'
            cand --json 'Print the report as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;check'= {
            cand --db 'The catalog file'
            cand --site 'Check as a site serves the build, at the root of its host (`ccc site`): a root path (`/assets/index-B3x9a.js`, what Vite''s default `base: ''/''` writes) names a file of the build instead of leaving it. Without the flag, a version in the catalog that a site serves is checked so'
            cand --json 'Print the report as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;importmap'= {
            cand --base 'Where the URLs start, like https://cdn.example.com (an http or https URL, optionally with a path); default: none, so URLs are root-relative (/assets/...) for pages served by the same ccc'
            cand --registry 'The npm registry asked what the packages the catalog lacks depend on, so that all of them are listed at once [default: npm''s npm_config_registry, else https://registry.npmjs.org/]'
            cand --db 'The catalog file'
            cand --integrity 'Pin every module the map can reach to its bytes: `integrity` with each file''s `sha256-...` Subresource Integrity value, which browsers check before running it'
            cand --json 'Print the map with what went into it (the versions it pins, the specifiers left unresolved, the packages lacking) as JSON'
            cand --offline 'Ask no registry: list only the packages the map itself lacks, by range'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;backup'= {
            cand --db 'The catalog file'
            cand --force 'Replace OUT if it exists'
            cand -q 'Print no progress'
            cand --quiet 'Print no progress'
            cand --json 'Print the report as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;follow'= {
            cand --interval 'How often to look for new transactions'
            cand --db 'The catalog file'
            cand --once 'Bring the catalog up to date once and exit (0 when it is the replica''s newest)'
            cand -q 'Print nothing but errors'
            cand --quiet 'Print nothing but errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;serve'= {
            cand --bind 'Address or host name to listen on; a name (`localhost`) listens on every address it resolves to'
            cand --port 'Port to listen on; 0 picks a free one (the first line of output names it) [default: 8333 for `serve`, a free one for `causal`, whose server only its own load reaches]'
            cand --threads 'Threads serving connections, at least 1; a request the cache cannot answer holds its thread while the catalog is read [default: one per core]'
            cand --cache-capacity 'Most assets kept in memory; 0 turns the cache off [default: no limit but --cache-bytes]'
            cand --cache-bytes 'Most bytes the asset cache holds in memory, like 1GiB: bodies, names, prepared headers and the cache index'
            cand --index-bytes 'Most bytes the file index holds in memory, like 64MiB; 0 turns it off. It keeps what the catalog said of each file a miss read (where its bytes are, their digests, its headers'' values), so the file''s next miss reads only its bytes, as nginx''s open_file_cache does'
            cand --in-flight-bytes 'Most bytes responses in flight hold beyond the cache, like 256MiB: bodies read for a response the cache does not keep, pieces being sent, decoders. A file longer than 64 KiB is sent from the catalog a checked piece at a time when its whole body does not fit; a piece waits for room (within --send-timeout)'
            cand --alias-max-age 'How long caches may reuse a redirect from a dist-tag or a range (`max-age`) before they revalidate it; 0 makes them revalidate every time (a 304 while the alias has not moved)'
            cand --not-found-max-age 'How long caches may keep a 404 for a missing package, version or file (`max-age`; 0: not at all), so that a scan of missing paths is answered by the cache in front instead of the catalog. A version published after such a 404 is seen through that cache at most this much later'
            cand --max-lag 'On a replica kept by `ccc follow` (or examples/deploy/ccc-follow): the longest its follower may go without confirming that the catalog served is the replica''s newest (it touches `DB.follow` each time it does). Past it, or with no such file, `/healthz` says `stale` and answers 503, so a load balancer takes the replica out; stderr says when the replica turns stale and when it recovers, and at start when no follower has confirmed it yet'
            cand --access-log 'Write a line for every request, in --log-format: to stdout, or appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again, for log rotation (logrotate renames the file, then signals). While the log goes to stdout, stdout holds its lines alone: the `listening on` and final lines go to stderr'
            cand --log-format 'The access log''s format: `combined` is nginx''s default format, `json` one object per line (fields in docs/JSON.md). Needs --access-log'
            cand --log-exclude 'Leave requests whose path (without the query) matches GLOB out of the access log, like `/healthz` or `/metrics` (repeatable; `*` crosses `/`). They are still counted in /_stats and /metrics'
            cand --trust-proxy 'A proxy (an address or a CIDR block, repeatable) whose `Forwarded` or `X-Forwarded-For` names the client the access log records, read from the right past every trusted proxy. Requests from anyone else are logged as their peer'
            cand --max-connections 'Most client connections open at once. Past it the longest idle keep-alive connections are closed to make room; when none is idle a new connection is answered 503 with `Retry-After: 1` and closed [default: 16384, or fewer if the open-files limit is lower]'
            cand --header-timeout 'Time a client has to send a complete request head (line and headers), from connecting or from the first byte of a later request; then the connection is closed'
            cand --keepalive-timeout 'Time an idle keep-alive connection is kept open'
            cand --send-timeout 'Time a client may take no response bytes at all before its connection is closed. A slow client holds only its own connection, never a worker'
            cand --body-timeout 'Time a client may go without sending a byte of an upload''s body (--publish-api), counted between two reads, not for the whole body; then the upload fails, nothing is published, and the connection is closed'
            cand --shutdown-timeout 'On SIGINT or SIGTERM, how long requests in flight (a long download too) may take to finish after the server stops accepting; then the connections left are closed'
            cand --tls-cert 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain, leaf first. SIGHUP reads it and the key again'
            cand --tls-key 'The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1)'
            cand --redirect-http 'With --tls-cert: also listen for plain HTTP on PORT (on the --bind addresses, or a socket systemd passes with FileDescriptorName=redirect) and answer every request there with a 308 to the same URL over HTTPS'
            cand --acme-dir 'With --redirect-http: answer ACME''s HTTP-01 challenges (/.well-known/acme-challenge/TOKEN) there from this webroot, the folder given to `certbot certonly --webroot -w DIR` or `lego --http.webroot DIR`; renewals then need no other server on port 80'
            cand --max-upload-size 'With --publish-api: the largest upload taken; a larger one is answered 413 and nothing is published'
            cand --max-unpacked-size 'With --publish-api: refuse an upload whose tar stream, decompressed, is larger than SIZE (a gzip bomb), answered 422'
            cand --publish-wait 'With --publish-api: how long a change waits for the one before it (the catalog takes one at a time); then it is answered 503 with Retry-After'
            cand --writer 'On a replica: the writer''s URL, which the write API names to a client that sends a change here'
            cand --stats-allow 'Answer /_stats and /metrics only to these addresses (a CIDR block, repeatable), and to a bearer of a token with the read-stats scope, as nginx''s allow/deny restricts stub_status [default: anyone]'
            cand --db 'The catalog file'
            cand --log-misses 'Print a line to stderr for every cache miss'
            cand --publish-api 'Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc rm --to` with a token made by `ccc token create` (PUT and DELETE under /-/api/v1/). Off unless given: a catalog may be served by many servers, and only its writer, over TLS, should take writes'
            cand --reuse-port 'Share the port with other processes that set it too (SO_REUSEPORT), so a new `ccc serve` can start before the old one stops. Both must set it. For such a handover to drop nothing, Linux needs net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf); with its default, 0, the connections queued on the old server''s socket when it closes are reset, and serve warns at start. Not needed under systemd socket activation, which passes the socket itself'
            cand --no-recompress 'Leave brotli streams at the quality publish gave them. By default a server that may write its catalog (not a replica) brings them up to quality 11 in the background, on idle CPU only, as `ccc recompress` does: fewer bytes for brotli clients'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;token'= {
            cand --db 'The catalog file'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Make a token and print it, once, on stdout'
            cand ls 'List the tokens: name, scopes, expiry, last use, state'
            cand revoke 'Revoke the token NAME: every server of the catalog refuses it from its next request'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;token;create'= {
            cand --scope 'What the token may do, as ACTIONS:GLOBS, like `publish,tag:@team/*` or `read-stats` (repeatable)'
            cand --expires 'How long the token lasts, like 90d or 1y; `never` for a token that does not expire'
            cand --db 'The catalog file'
            cand --json 'Print the token and its details as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;token;ls'= {
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;token;revoke'= {
            cand --db 'The catalog file'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;token;help'= {
            cand create 'Make a token and print it, once, on stdout'
            cand ls 'List the tokens: name, scopes, expiry, last use, state'
            cand revoke 'Revoke the token NAME: every server of the catalog refuses it from its next request'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;token;help;create'= {
        }
        &'ccc;token;help;ls'= {
        }
        &'ccc;token;help;revoke'= {
        }
        &'ccc;token;help;help'= {
        }
        &'ccc;audit'= {
            cand --limit 'Show the last N rows [default: 100; 0: all]'
            cand --since 'Only rows newer than DURATION ago, like 24h or 7d'
            cand --token 'Only the rows of the token NAME'
            cand --db 'The catalog file'
            cand --json 'Print JSON instead of a table'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;export'= {
            cand --db 'The catalog file'
            cand --json 'Print the summary as JSON'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;causal'= {
            cand --bind 'Address or host name to listen on; a name (`localhost`) listens on every address it resolves to'
            cand --port 'Port to listen on; 0 picks a free one (the first line of output names it) [default: 8333 for `serve`, a free one for `causal`, whose server only its own load reaches]'
            cand --threads 'Threads serving connections, at least 1; a request the cache cannot answer holds its thread while the catalog is read [default: one per core]'
            cand --cache-capacity 'Most assets kept in memory; 0 turns the cache off [default: no limit but --cache-bytes]'
            cand --cache-bytes 'Most bytes the asset cache holds in memory, like 1GiB: bodies, names, prepared headers and the cache index'
            cand --index-bytes 'Most bytes the file index holds in memory, like 64MiB; 0 turns it off. It keeps what the catalog said of each file a miss read (where its bytes are, their digests, its headers'' values), so the file''s next miss reads only its bytes, as nginx''s open_file_cache does'
            cand --in-flight-bytes 'Most bytes responses in flight hold beyond the cache, like 256MiB: bodies read for a response the cache does not keep, pieces being sent, decoders. A file longer than 64 KiB is sent from the catalog a checked piece at a time when its whole body does not fit; a piece waits for room (within --send-timeout)'
            cand --alias-max-age 'How long caches may reuse a redirect from a dist-tag or a range (`max-age`) before they revalidate it; 0 makes them revalidate every time (a 304 while the alias has not moved)'
            cand --not-found-max-age 'How long caches may keep a 404 for a missing package, version or file (`max-age`; 0: not at all), so that a scan of missing paths is answered by the cache in front instead of the catalog. A version published after such a 404 is seen through that cache at most this much later'
            cand --max-lag 'On a replica kept by `ccc follow` (or examples/deploy/ccc-follow): the longest its follower may go without confirming that the catalog served is the replica''s newest (it touches `DB.follow` each time it does). Past it, or with no such file, `/healthz` says `stale` and answers 503, so a load balancer takes the replica out; stderr says when the replica turns stale and when it recovers, and at start when no follower has confirmed it yet'
            cand --access-log 'Write a line for every request, in --log-format: to stdout, or appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again, for log rotation (logrotate renames the file, then signals). While the log goes to stdout, stdout holds its lines alone: the `listening on` and final lines go to stderr'
            cand --log-format 'The access log''s format: `combined` is nginx''s default format, `json` one object per line (fields in docs/JSON.md). Needs --access-log'
            cand --log-exclude 'Leave requests whose path (without the query) matches GLOB out of the access log, like `/healthz` or `/metrics` (repeatable; `*` crosses `/`). They are still counted in /_stats and /metrics'
            cand --trust-proxy 'A proxy (an address or a CIDR block, repeatable) whose `Forwarded` or `X-Forwarded-For` names the client the access log records, read from the right past every trusted proxy. Requests from anyone else are logged as their peer'
            cand --max-connections 'Most client connections open at once. Past it the longest idle keep-alive connections are closed to make room; when none is idle a new connection is answered 503 with `Retry-After: 1` and closed [default: 16384, or fewer if the open-files limit is lower]'
            cand --header-timeout 'Time a client has to send a complete request head (line and headers), from connecting or from the first byte of a later request; then the connection is closed'
            cand --keepalive-timeout 'Time an idle keep-alive connection is kept open'
            cand --send-timeout 'Time a client may take no response bytes at all before its connection is closed. A slow client holds only its own connection, never a worker'
            cand --body-timeout 'Time a client may go without sending a byte of an upload''s body (--publish-api), counted between two reads, not for the whole body; then the upload fails, nothing is published, and the connection is closed'
            cand --shutdown-timeout 'On SIGINT or SIGTERM, how long requests in flight (a long download too) may take to finish after the server stops accepting; then the connections left are closed'
            cand --tls-cert 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain, leaf first. SIGHUP reads it and the key again'
            cand --tls-key 'The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1)'
            cand --redirect-http 'With --tls-cert: also listen for plain HTTP on PORT (on the --bind addresses, or a socket systemd passes with FileDescriptorName=redirect) and answer every request there with a 308 to the same URL over HTTPS'
            cand --acme-dir 'With --redirect-http: answer ACME''s HTTP-01 challenges (/.well-known/acme-challenge/TOKEN) there from this webroot, the folder given to `certbot certonly --webroot -w DIR` or `lego --http.webroot DIR`; renewals then need no other server on port 80'
            cand --max-upload-size 'With --publish-api: the largest upload taken; a larger one is answered 413 and nothing is published'
            cand --max-unpacked-size 'With --publish-api: refuse an upload whose tar stream, decompressed, is larger than SIZE (a gzip bomb), answered 422'
            cand --publish-wait 'With --publish-api: how long a change waits for the one before it (the catalog takes one at a time); then it is answered 503 with Retry-After'
            cand --writer 'On a replica: the writer''s URL, which the write API names to a client that sends a change here'
            cand --stats-allow 'Answer /_stats and /metrics only to these addresses (a CIDR block, repeatable), and to a bearer of a token with the read-stats scope, as nginx''s allow/deny restricts stub_status [default: anyone]'
            cand --sites 'Sites to profile, comma-separated [default: all]'
            cand --speedups 'Virtual speedups in percent, comma-separated (0 is always added)'
            cand --rounds 'Rounds over every site and speedup (at least 1)'
            cand --window 'Shortest measurement window of one experiment'
            cand --max-window 'Longest window, when progress is slow (at least --window)'
            cand --warmup 'Load before the first experiment (warms caches, measures the rate)'
            cand --settle 'Pause after each experiment starts, before measuring'
            cand --min-delta 'Progress counts an experiment needs to be reliable (at least 5, the least Coz''s viewer plots)'
            cand --seed 'Seed of the experiment order (printed, so a run can be repeated)'
            cand --load '`builtin:N`: N keep-alive clients of ccc''s own; `external`: wait for someone else''s load (wrk, oha, ...)'
            cand --urls 'URL list for the built-in load, one per line, used in order [default: every asset, 80% of requests on the first 50]'
            cand --external-wake 'How a request from a client moves the worker''s virtual clock'
            cand --site-clock 'What times a visit of the selected site: elapsed time less the profiler''s own pauses (`wall`), or the thread''s CPU time (`cpu`), for sites that block on what optimizing them would not shorten'
            cand --idle-cores 'What idle cores do while profiling: `spin` keeps each awake with a lowest-priority (SCHED_IDLE) spinner, so waking a thread costs the same whether the profiler pauses threads or not; `sleep` leaves them to the OS (less power, predictions that run low)'
            cand --json-out 'Write every cell, the summary and the ledger as JSON (`-` for stdout), as --coz-out writes Coz''s profile'
            cand --coz-out 'Write a profile Coz''s viewer loads'
            cand --coz-format 'Format of --coz-out'
            cand --ledger 'Print the delay-accounting audit: per cell, or per cell and thread'
            cand --plot 'Draw the speedup curves as SVG'
            cand --db 'The catalog file'
            cand --log-misses 'Print a line to stderr for every cache miss'
            cand --publish-api 'Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc rm --to` with a token made by `ccc token create` (PUT and DELETE under /-/api/v1/). Off unless given: a catalog may be served by many servers, and only its writer, over TLS, should take writes'
            cand --reuse-port 'Share the port with other processes that set it too (SO_REUSEPORT), so a new `ccc serve` can start before the old one stops. Both must set it. For such a handover to drop nothing, Linux needs net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf); with its default, 0, the connections queued on the old server''s socket when it closes are reset, and serve warns at start. Not needed under systemd socket activation, which passes the socket itself'
            cand --coz-append 'Append to --coz-out instead of replacing it'
            cand --strict 'Exit 4 when the ledger audit finds an error'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'ccc;help'= {
            cand publish 'Publish a directory or a tar archive as PKG@VERSION, in one atomic transaction'
            cand ls 'List packages, one package''s versions, or one version''s files'
            cand inspect 'Show a version''s sizes, compression and dedup, or one file in detail'
            cand diff 'Show the files added, removed and changed from one version to another'
            cand cat 'Write a file''s original bytes to stdout'
            cand tag 'Add, remove or list a package''s dist-tags'
            cand site 'Serve a package''s dist-tag at the root of a host: an app''s front door'
            cand rm 'Remove versions from the catalog (their blobs stay until `ccc gc`)'
            cand gc 'Prune old versions, drop unreferenced blobs and reclaim disk space'
            cand deltas 'Make the deltas the catalog lacks, for versions published before ccc made them or without them (`ccc publish --no-deltas`)'
            cand recompress 'Recompress brotli streams at quality 11, as `ccc serve` does in the background'
            cand verify 'Check the database and that every blob decodes to its recorded sha256'
            cand check 'Check that every reference of a version''s files resolves inside it'
            cand importmap 'Write the import map that loads a version and what it imports from the catalog, without a bundler'
            cand backup 'Copy the catalog to OUT, consistently, while it is served or published to'
            cand follow 'Keep the catalog a copy of a writer''s, from its Litestream replica'
            cand serve 'Serve the catalog over HTTP'
            cand token 'Make, list and revoke the tokens that may change the catalog over HTTP'
            cand audit 'Show the audit log: what was changed over HTTP, by which token, from where, and tokens made and revoked; oldest first'
            cand export 'Write versions out as plain files with precompressed `.gz` and `.br` siblings'
            cand causal 'Profile `serve` under live load: which code is worth optimizing?'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ccc;help;publish'= {
        }
        &'ccc;help;ls'= {
        }
        &'ccc;help;inspect'= {
        }
        &'ccc;help;diff'= {
        }
        &'ccc;help;cat'= {
        }
        &'ccc;help;tag'= {
            cand add 'Point TAG at PKG@VERSION (moving it if it names another version)'
            cand rm 'Remove TAG from PKG (`latest` then is the newest release again)'
            cand ls 'List PKG''s tags, `latest` first, with the versions they name'
        }
        &'ccc;help;tag;add'= {
        }
        &'ccc;help;tag;rm'= {
        }
        &'ccc;help;tag;ls'= {
        }
        &'ccc;help;site'= {
            cand set 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had'
            cand rm 'Stop serving a site at HOST (its package and versions stay)'
            cand ls 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)'
        }
        &'ccc;help;site;set'= {
        }
        &'ccc;help;site;rm'= {
        }
        &'ccc;help;site;ls'= {
        }
        &'ccc;help;rm'= {
        }
        &'ccc;help;gc'= {
        }
        &'ccc;help;deltas'= {
        }
        &'ccc;help;recompress'= {
        }
        &'ccc;help;verify'= {
        }
        &'ccc;help;check'= {
        }
        &'ccc;help;importmap'= {
        }
        &'ccc;help;backup'= {
        }
        &'ccc;help;follow'= {
        }
        &'ccc;help;serve'= {
        }
        &'ccc;help;token'= {
            cand create 'Make a token and print it, once, on stdout'
            cand ls 'List the tokens: name, scopes, expiry, last use, state'
            cand revoke 'Revoke the token NAME: every server of the catalog refuses it from its next request'
        }
        &'ccc;help;token;create'= {
        }
        &'ccc;help;token;ls'= {
        }
        &'ccc;help;token;revoke'= {
        }
        &'ccc;help;audit'= {
        }
        &'ccc;help;export'= {
        }
        &'ccc;help;causal'= {
        }
        &'ccc;help;help'= {
        }
    ]
    $completions[$command]
}
