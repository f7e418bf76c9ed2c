# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ccc_global_optspecs
    string join \n db= h/help V/version
end

function __fish_ccc_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ccc_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ccc_using_subcommand
    set -l cmd (__fish_ccc_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ccc -n "__fish_ccc_needs_command" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_needs_command" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "publish" -d 'Publish a directory or a tar archive as PKG@VERSION, in one atomic transaction'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "ls" -d 'List packages, one package\'s versions, or one version\'s files'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "list" -d 'List packages, one package\'s versions, or one version\'s files'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "inspect" -d 'Show a version\'s sizes, compression and dedup, or one file in detail'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "diff" -d 'Show the files added, removed and changed from one version to another'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "cat" -d 'Write a file\'s original bytes to stdout'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "tag" -d 'Add, remove or list a package\'s dist-tags'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "site" -d 'Serve a package\'s dist-tag at the root of a host: an app\'s front door'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "rm" -d 'Remove versions from the catalog (their blobs stay until `ccc gc`)'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "gc" -d 'Prune old versions, drop unreferenced blobs and reclaim disk space'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "deltas" -d 'Make the deltas the catalog lacks, for versions published before ccc made them or without them (`ccc publish --no-deltas`)'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "recompress" -d 'Recompress brotli streams at quality 11, as `ccc serve` does in the background'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "verify" -d 'Check the database and that every blob decodes to its recorded sha256'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "check" -d 'Check that every reference of a version\'s files resolves inside it'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "importmap" -d 'Write the import map that loads a version and what it imports from the catalog, without a bundler'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "backup" -d 'Copy the catalog to OUT, consistently, while it is served or published to'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "follow" -d 'Keep the catalog a copy of a writer\'s, from its Litestream replica'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "serve" -d 'Serve the catalog over HTTP'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "token" -d 'Make, list and revoke the tokens that may change the catalog over HTTP'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "audit" -d 'Show the audit log: what was changed over HTTP, by which token, from where, and tokens made and revoked; oldest first'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "export" -d 'Write versions out as plain files with precompressed `.gz` and `.br` siblings'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "causal" -d 'Profile `serve` under live load: which code is worth optimizing?'
complete -c ccc -n "__fish_ccc_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l exclude -d 'Leave out paths matching GLOB (relative to SOURCE\'s root; `*` crosses `/`). May be repeated. A matching directory is left out whole' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l level -d 'Gzip level, 1 (fastest) to 9 (smallest)' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l brotli-quality -d 'Brotli quality, 1 (fastest) to 11 (smallest); 0 stores no brotli. A brotli stream is kept beside the gzip one when it is at least 5% smaller, and sent to clients that accept `br`. `ccc serve` (in the background) and `ccc recompress` bring streams up to 11 afterwards; files published at 0 are left without' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l tag -d 'Point the dist-tag TAG (`next`, `beta`, or `latest`) at the version' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l purge -d 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version\'s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l purge-delay -d 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower\'s interval plus a restore)' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l max-file-size -d 'Refuse files larger than SIZE' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l chunked-from -d 'Store files of SIZE or more as they are, in 64 KiB chunks that publish, serve, cat and export read one at a time, instead of compressed whole: memory never holds such a file' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l base -d 'With --importmap: where the map\'s URLs start, like https://cdn.example.com [default: none, so URLs are root-relative (/assets/...) for pages served by the same ccc]' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l max-unpacked-size -d 'Refuse an archive whose tar stream, decompressed, is larger than SIZE' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -s j -l jobs -d 'Compression threads, at least 1 [default: one per core]' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l wait -d 'Give up after waiting DURATION for another ccc\'s lock on the catalog [default: wait as long as it takes, saying so after a second]' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l to -d 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)' -r
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l token-file -d 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l ca-file -d 'With --to: check the server\'s certificate against the PEM certificates in FILE (a private CA) instead of the system\'s roots' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l force -d 'Replace the version if it exists, atomically (its dist-tags stay on it)'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l dry-run -d 'Do everything except commit, and report what would be stored'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l strict -d 'Refuse the version, publishing nothing, when a reference of its files is missing, matches a file only under another case, or leaves it (what `ccc check` reports)'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l no-check -d 'Do not read the references of scripts, stylesheets and pages'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l importmap -d 'Write the version\'s import map (the one `ccc importmap` prints) into each of its HTML pages that load modules, inline before the first `<script type="module">` or `<link rel="modulepreload">`, inside the publish: the version is never served with another map. A page with an import map of its own refuses the version; a specifier the map cannot resolve is a warning, and with --strict refuses it too'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l integrity -d 'With --importmap: pin every module the map can reach to its bytes (`integrity`, as `ccc importmap --integrity`)'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l no-deltas -d 'Make no deltas. By default each script, stylesheet, JSON and wasm file is also coded against the same file (or hashed-name family) in the newest earlier version and the one `latest` named (dcb and dcz, RFC 9842), kept where clearly smaller than its brotli stream: a browser holding that version downloads only the change'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l no-create -d 'Refuse to create the catalog when --db names none (or an empty file), instead of creating it: for scripts and servers, where a missing catalog is a mistake to stop at, not a first publish'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -s q -l quiet -d 'Print no progress and no summary'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -l json -d 'Print the summary as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand publish" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand ls" -l limit -d 'List at most N rows (0: all of them). Default: 100 in a table, all in JSON' -r
complete -c ccc -n "__fish_ccc_using_subcommand ls" -l offset -d 'Skip the first N rows of the listing' -r
complete -c ccc -n "__fish_ccc_using_subcommand ls" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand ls" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand ls" -l names -d 'Print names alone, one per line: the packages, a package\'s versions as PKG@VERSION (newest first), or a version\'s paths. For scripts and shell completion; all of them unless --limit is given'
complete -c ccc -n "__fish_ccc_using_subcommand ls" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand ls" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand list" -l limit -d 'List at most N rows (0: all of them). Default: 100 in a table, all in JSON' -r
complete -c ccc -n "__fish_ccc_using_subcommand list" -l offset -d 'Skip the first N rows of the listing' -r
complete -c ccc -n "__fish_ccc_using_subcommand list" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand list" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand list" -l names -d 'Print names alone, one per line: the packages, a package\'s versions as PKG@VERSION (newest first), or a version\'s paths. For scripts and shell completion; all of them unless --limit is given'
complete -c ccc -n "__fish_ccc_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand list" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand inspect" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand inspect" -l json -d 'Print JSON instead of tables'
complete -c ccc -n "__fish_ccc_using_subcommand inspect" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand inspect" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand diff" -l limit -d 'Show at most N files that differ (0: all of them). Default: 100 in a table, all in JSON' -r
complete -c ccc -n "__fish_ccc_using_subcommand diff" -l offset -d 'Skip the first N files that differ, in path order' -r
complete -c ccc -n "__fish_ccc_using_subcommand diff" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand diff" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand diff" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand cat" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand cat" -l gzip -d 'Write a gzip stream instead: the stored one, or for files stored raw, one made on the fly'
complete -c ccc -n "__fish_ccc_using_subcommand cat" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand cat" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -l to -d 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)' -r
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -l token-file -d 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -l ca-file -d 'With --to: check the server\'s certificate against the PEM certificates in FILE (a private CA) instead of the system\'s roots' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -f -a "add" -d 'Point TAG at PKG@VERSION (moving it if it names another version)'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -f -a "rm" -d 'Remove TAG from PKG (`latest` then is the newest release again)'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -f -a "ls" -d 'List PKG\'s tags, `latest` first, with the versions they name'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and not __fish_seen_subcommand_from add rm ls help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from add" -l to -d 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)' -r
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from add" -l token-file -d 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from add" -l ca-file -d 'With --to: check the server\'s certificate against the PEM certificates in FILE (a private CA) instead of the system\'s roots' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from add" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from rm" -l to -d 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)' -r
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from rm" -l token-file -d 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from rm" -l ca-file -d 'With --to: check the server\'s certificate against the PEM certificates in FILE (a private CA) instead of the system\'s roots' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from rm" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from rm" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -l to -d 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)' -r
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -l token-file -d 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -l ca-file -d 'With --to: check the server\'s certificate against the PEM certificates in FILE (a private CA) instead of the system\'s roots' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from ls" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "add" -d 'Point TAG at PKG@VERSION (moving it if it names another version)'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Remove TAG from PKG (`latest` then is the newest release again)'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "ls" -d 'List PKG\'s tags, `latest` first, with the versions they name'
complete -c ccc -n "__fish_ccc_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -f -a "set" -d 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had'
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -f -a "rm" -d 'Stop serving a site at HOST (its package and versions stay)'
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -f -a "ls" -d 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)'
complete -c ccc -n "__fish_ccc_using_subcommand site; and not __fish_seen_subcommand_from set rm ls help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -l hsts -d 'Send `Strict-Transport-Security: max-age=...` for this long on every answer over HTTPS, like 365days' -r
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -l skew-versions -d 'How many versions the site served before the current one still answer their fingerprinted files, so that a page open during a deploy can load its own chunks (0: none)' -r
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -l skew-age -d 'For how long after the site stopped serving a version (default: a day)' -r
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -l spa -d 'Answer a path that has no file and no extension (`/settings/profile`) with `/index.html`, for single-page apps that route in the browser'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -l clean-urls -d 'Answer `/about` with `/about.html` when there is no file `about`'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from rm" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from rm" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from ls" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from ls" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from ls" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from help" -f -a "set" -d 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Stop serving a site at HOST (its package and versions stay)'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from help" -f -a "ls" -d 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)'
complete -c ccc -n "__fish_ccc_using_subcommand site; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l purge -d 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version\'s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"' -r
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l purge-delay -d 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower\'s interval plus a restore)' -r
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l to -d 'Send the change to the `ccc serve --publish-api` at URL (like https://cdn.example.com) instead of writing the catalog file. The token comes from CCC_TOKEN or --token-file, never from the command line. Plain http:// is for a server on this machine only (loopback)' -r
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l token-file -d 'With --to: read the token from FILE (its first line) instead of CCC_TOKEN' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l ca-file -d 'With --to: check the server\'s certificate against the PEM certificates in FILE (a private CA) instead of the system\'s roots' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l all -d 'Remove every version of the named packages'
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l dry-run -d 'Show what would be removed, and change nothing'
complete -c ccc -n "__fish_ccc_using_subcommand rm" -l json -d 'Print what was removed as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand rm" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l keep -d 'Keep the N newest releases of each package, and the prereleases newer than them (0 only with --delete-all-versions)' -r
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l keep-prereleases -d 'With --keep, also keep the M newest prereleases that are older than the package\'s newest release [default: 0]' -r
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l older-than -d 'Remove versions published longer ago than DURATION, like `30days`, `2weeks` or `12h`' -r
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l purge -d 'Once the catalog has changed, send PURGE for every file removed or replaced (and its version\'s listing) to the HTTP cache at URL, like http://127.0.0.1:6081 (repeatable, one per cache); see README "Running ccc in production"' -r
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l purge-delay -d 'With --purge, wait DURATION first: the time every origin behind the caches takes to serve the change, or a cache would fetch the old files again (`ccc serve` on this catalog: 250 ms; on a replica: its follower\'s interval plus a restore)' -r
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l delete-all-versions -d 'Allow --keep 0: remove every version, `latest` included (with --older-than, every version older than that)'
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l dry-run -d 'List every choice (what goes, what stays and why), and change nothing'
complete -c ccc -n "__fish_ccc_using_subcommand gc" -s q -l quiet -d 'Print no progress'
complete -c ccc -n "__fish_ccc_using_subcommand gc" -l json -d 'Print the report as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand gc" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand gc" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand deltas" -s j -l jobs -d 'Coding threads, at least 1 [default: one per core]' -r
complete -c ccc -n "__fish_ccc_using_subcommand deltas" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand deltas" -s q -l quiet -d 'Print no progress'
complete -c ccc -n "__fish_ccc_using_subcommand deltas" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand deltas" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand recompress" -s j -l jobs -d 'Compressing threads, at least 1 [default: one per core]' -r
complete -c ccc -n "__fish_ccc_using_subcommand recompress" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand recompress" -s q -l quiet -d 'Print no progress'
complete -c ccc -n "__fish_ccc_using_subcommand recompress" -l json -d 'Print what was done as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand recompress" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand recompress" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand verify" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand verify" -s q -l quiet -d 'Print no progress'
complete -c ccc -n "__fish_ccc_using_subcommand verify" -l json -d 'Print the report as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand verify" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand check" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand check" -l site -d 'Check as a site serves the build, at the root of its host (`ccc site`): a root path (`/assets/index-B3x9a.js`, what Vite\'s default `base: \'/\'` writes) names a file of the build instead of leaving it. Without the flag, a version in the catalog that a site serves is checked so'
complete -c ccc -n "__fish_ccc_using_subcommand check" -l json -d 'Print the report as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand check" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -l base -d 'Where the URLs start, like https://cdn.example.com (an http or https URL, optionally with a path); default: none, so URLs are root-relative (/assets/...) for pages served by the same ccc' -r
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -l registry -d 'The npm registry asked what the packages the catalog lacks depend on, so that all of them are listed at once [default: npm\'s npm_config_registry, else https://registry.npmjs.org/]' -r
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -l integrity -d 'Pin every module the map can reach to its bytes: `integrity` with each file\'s `sha256-...` Subresource Integrity value, which browsers check before running it'
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -l json -d 'Print the map with what went into it (the versions it pins, the specifiers left unresolved, the packages lacking) as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -l offline -d 'Ask no registry: list only the packages the map itself lacks, by range'
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand importmap" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand backup" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand backup" -l force -d 'Replace OUT if it exists'
complete -c ccc -n "__fish_ccc_using_subcommand backup" -s q -l quiet -d 'Print no progress'
complete -c ccc -n "__fish_ccc_using_subcommand backup" -l json -d 'Print the report as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand backup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand backup" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand follow" -l interval -d 'How often to look for new transactions' -r
complete -c ccc -n "__fish_ccc_using_subcommand follow" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand follow" -l once -d 'Bring the catalog up to date once and exit (0 when it is the replica\'s newest)'
complete -c ccc -n "__fish_ccc_using_subcommand follow" -s q -l quiet -d 'Print nothing but errors'
complete -c ccc -n "__fish_ccc_using_subcommand follow" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand follow" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l bind -d 'Address or host name to listen on; a name (`localhost`) listens on every address it resolves to' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l port -d 'Port to listen on; 0 picks a free one (the first line of output names it) [default: 8333 for `serve`, a free one for `causal`, whose server only its own load reaches]' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l threads -d 'Threads serving connections, at least 1; a request the cache cannot answer holds its thread while the catalog is read [default: one per core]' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l cache-capacity -d 'Most assets kept in memory; 0 turns the cache off [default: no limit but --cache-bytes]' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l cache-bytes -d 'Most bytes the asset cache holds in memory, like 1GiB: bodies, names, prepared headers and the cache index' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l index-bytes -d 'Most bytes the file index holds in memory, like 64MiB; 0 turns it off. It keeps what the catalog said of each file a miss read (where its bytes are, their digests, its headers\' values), so the file\'s next miss reads only its bytes, as nginx\'s open_file_cache does' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l in-flight-bytes -d 'Most bytes responses in flight hold beyond the cache, like 256MiB: bodies read for a response the cache does not keep, pieces being sent, decoders. A file longer than 64 KiB is sent from the catalog a checked piece at a time when its whole body does not fit; a piece waits for room (within --send-timeout)' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l alias-max-age -d 'How long caches may reuse a redirect from a dist-tag or a range (`max-age`) before they revalidate it; 0 makes them revalidate every time (a 304 while the alias has not moved)' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l not-found-max-age -d 'How long caches may keep a 404 for a missing package, version or file (`max-age`; 0: not at all), so that a scan of missing paths is answered by the cache in front instead of the catalog. A version published after such a 404 is seen through that cache at most this much later' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l max-lag -d 'On a replica kept by `ccc follow` (or examples/deploy/ccc-follow): the longest its follower may go without confirming that the catalog served is the replica\'s newest (it touches `DB.follow` each time it does). Past it, or with no such file, `/healthz` says `stale` and answers 503, so a load balancer takes the replica out; stderr says when the replica turns stale and when it recovers, and at start when no follower has confirmed it yet' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l access-log -d 'Write a line for every request, in --log-format: to stdout, or appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again, for log rotation (logrotate renames the file, then signals). While the log goes to stdout, stdout holds its lines alone: the `listening on` and final lines go to stderr' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l log-format -d 'The access log\'s format: `combined` is nginx\'s default format, `json` one object per line (fields in docs/JSON.md). Needs --access-log' -r -f -a "combined\t'nginx\'s default: addr - - [time] "request" status bytes "referer" "agent"'
json\t'One JSON object per line'"
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l log-exclude -d 'Leave requests whose path (without the query) matches GLOB out of the access log, like `/healthz` or `/metrics` (repeatable; `*` crosses `/`). They are still counted in /_stats and /metrics' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l trust-proxy -d 'A proxy (an address or a CIDR block, repeatable) whose `Forwarded` or `X-Forwarded-For` names the client the access log records, read from the right past every trusted proxy. Requests from anyone else are logged as their peer' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l max-connections -d 'Most client connections open at once. Past it the longest idle keep-alive connections are closed to make room; when none is idle a new connection is answered 503 with `Retry-After: 1` and closed [default: 16384, or fewer if the open-files limit is lower]' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l header-timeout -d 'Time a client has to send a complete request head (line and headers), from connecting or from the first byte of a later request; then the connection is closed' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l keepalive-timeout -d 'Time an idle keep-alive connection is kept open' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l send-timeout -d 'Time a client may take no response bytes at all before its connection is closed. A slow client holds only its own connection, never a worker' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l body-timeout -d 'Time a client may go without sending a byte of an upload\'s body (--publish-api), counted between two reads, not for the whole body; then the upload fails, nothing is published, and the connection is closed' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l shutdown-timeout -d 'On SIGINT or SIGTERM, how long requests in flight (a long download too) may take to finish after the server stops accepting; then the connections left are closed' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l tls-cert -d 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain, leaf first. SIGHUP reads it and the key again' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l tls-key -d 'The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1)' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l redirect-http -d 'With --tls-cert: also listen for plain HTTP on PORT (on the --bind addresses, or a socket systemd passes with FileDescriptorName=redirect) and answer every request there with a 308 to the same URL over HTTPS' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l acme-dir -d 'With --redirect-http: answer ACME\'s HTTP-01 challenges (/.well-known/acme-challenge/TOKEN) there from this webroot, the folder given to `certbot certonly --webroot -w DIR` or `lego --http.webroot DIR`; renewals then need no other server on port 80' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l max-upload-size -d 'With --publish-api: the largest upload taken; a larger one is answered 413 and nothing is published' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l max-unpacked-size -d 'With --publish-api: refuse an upload whose tar stream, decompressed, is larger than SIZE (a gzip bomb), answered 422' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l publish-wait -d 'With --publish-api: how long a change waits for the one before it (the catalog takes one at a time); then it is answered 503 with Retry-After' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l writer -d 'On a replica: the writer\'s URL, which the write API names to a client that sends a change here' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l stats-allow -d 'Answer /_stats and /metrics only to these addresses (a CIDR block, repeatable), and to a bearer of a token with the read-stats scope, as nginx\'s allow/deny restricts stub_status [default: anyone]' -r
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l log-misses -d 'Print a line to stderr for every cache miss'
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l publish-api -d 'Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc rm --to` with a token made by `ccc token create` (PUT and DELETE under /-/api/v1/). Off unless given: a catalog may be served by many servers, and only its writer, over TLS, should take writes'
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l reuse-port -d 'Share the port with other processes that set it too (SO_REUSEPORT), so a new `ccc serve` can start before the old one stops. Both must set it. For such a handover to drop nothing, Linux needs net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf); with its default, 0, the connections queued on the old server\'s socket when it closes are reset, and serve warns at start. Not needed under systemd socket activation, which passes the socket itself'
complete -c ccc -n "__fish_ccc_using_subcommand serve" -l no-recompress -d 'Leave brotli streams at the quality publish gave them. By default a server that may write its catalog (not a replica) brings them up to quality 11 in the background, on idle CPU only, as `ccc recompress` does: fewer bytes for brotli clients'
complete -c ccc -n "__fish_ccc_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand serve" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -f -a "create" -d 'Make a token and print it, once, on stdout'
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -f -a "ls" -d 'List the tokens: name, scopes, expiry, last use, state'
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -f -a "revoke" -d 'Revoke the token NAME: every server of the catalog refuses it from its next request'
complete -c ccc -n "__fish_ccc_using_subcommand token; and not __fish_seen_subcommand_from create ls revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from create" -l scope -d 'What the token may do, as ACTIONS:GLOBS, like `publish,tag:@team/*` or `read-stats` (repeatable)' -r
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from create" -l expires -d 'How long the token lasts, like 90d or 1y; `never` for a token that does not expire' -r
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from create" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from create" -l json -d 'Print the token and its details as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from create" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from ls" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from ls" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from ls" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from revoke" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from revoke" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "create" -d 'Make a token and print it, once, on stdout'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "ls" -d 'List the tokens: name, scopes, expiry, last use, state'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'Revoke the token NAME: every server of the catalog refuses it from its next request'
complete -c ccc -n "__fish_ccc_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand audit" -l limit -d 'Show the last N rows [default: 100; 0: all]' -r
complete -c ccc -n "__fish_ccc_using_subcommand audit" -l since -d 'Only rows newer than DURATION ago, like 24h or 7d' -r
complete -c ccc -n "__fish_ccc_using_subcommand audit" -l token -d 'Only the rows of the token NAME' -r
complete -c ccc -n "__fish_ccc_using_subcommand audit" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand audit" -l json -d 'Print JSON instead of a table'
complete -c ccc -n "__fish_ccc_using_subcommand audit" -s h -l help -d 'Print help'
complete -c ccc -n "__fish_ccc_using_subcommand audit" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand export" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand export" -l json -d 'Print the summary as JSON'
complete -c ccc -n "__fish_ccc_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand export" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l bind -d 'Address or host name to listen on; a name (`localhost`) listens on every address it resolves to' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l port -d 'Port to listen on; 0 picks a free one (the first line of output names it) [default: 8333 for `serve`, a free one for `causal`, whose server only its own load reaches]' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l threads -d 'Threads serving connections, at least 1; a request the cache cannot answer holds its thread while the catalog is read [default: one per core]' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l cache-capacity -d 'Most assets kept in memory; 0 turns the cache off [default: no limit but --cache-bytes]' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l cache-bytes -d 'Most bytes the asset cache holds in memory, like 1GiB: bodies, names, prepared headers and the cache index' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l index-bytes -d 'Most bytes the file index holds in memory, like 64MiB; 0 turns it off. It keeps what the catalog said of each file a miss read (where its bytes are, their digests, its headers\' values), so the file\'s next miss reads only its bytes, as nginx\'s open_file_cache does' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l in-flight-bytes -d 'Most bytes responses in flight hold beyond the cache, like 256MiB: bodies read for a response the cache does not keep, pieces being sent, decoders. A file longer than 64 KiB is sent from the catalog a checked piece at a time when its whole body does not fit; a piece waits for room (within --send-timeout)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l alias-max-age -d 'How long caches may reuse a redirect from a dist-tag or a range (`max-age`) before they revalidate it; 0 makes them revalidate every time (a 304 while the alias has not moved)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l not-found-max-age -d 'How long caches may keep a 404 for a missing package, version or file (`max-age`; 0: not at all), so that a scan of missing paths is answered by the cache in front instead of the catalog. A version published after such a 404 is seen through that cache at most this much later' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l max-lag -d 'On a replica kept by `ccc follow` (or examples/deploy/ccc-follow): the longest its follower may go without confirming that the catalog served is the replica\'s newest (it touches `DB.follow` each time it does). Past it, or with no such file, `/healthz` says `stale` and answers 503, so a load balancer takes the replica out; stderr says when the replica turns stale and when it recovers, and at start when no follower has confirmed it yet' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l access-log -d 'Write a line for every request, in --log-format: to stdout, or appended to the file PATH (`-`: stdout). SIGUSR1 opens PATH again, for log rotation (logrotate renames the file, then signals). While the log goes to stdout, stdout holds its lines alone: the `listening on` and final lines go to stderr' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l log-format -d 'The access log\'s format: `combined` is nginx\'s default format, `json` one object per line (fields in docs/JSON.md). Needs --access-log' -r -f -a "combined\t'nginx\'s default: addr - - [time] "request" status bytes "referer" "agent"'
json\t'One JSON object per line'"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l log-exclude -d 'Leave requests whose path (without the query) matches GLOB out of the access log, like `/healthz` or `/metrics` (repeatable; `*` crosses `/`). They are still counted in /_stats and /metrics' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l trust-proxy -d 'A proxy (an address or a CIDR block, repeatable) whose `Forwarded` or `X-Forwarded-For` names the client the access log records, read from the right past every trusted proxy. Requests from anyone else are logged as their peer' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l max-connections -d 'Most client connections open at once. Past it the longest idle keep-alive connections are closed to make room; when none is idle a new connection is answered 503 with `Retry-After: 1` and closed [default: 16384, or fewer if the open-files limit is lower]' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l header-timeout -d 'Time a client has to send a complete request head (line and headers), from connecting or from the first byte of a later request; then the connection is closed' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l keepalive-timeout -d 'Time an idle keep-alive connection is kept open' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l send-timeout -d 'Time a client may take no response bytes at all before its connection is closed. A slow client holds only its own connection, never a worker' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l body-timeout -d 'Time a client may go without sending a byte of an upload\'s body (--publish-api), counted between two reads, not for the whole body; then the upload fails, nothing is published, and the connection is closed' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l shutdown-timeout -d 'On SIGINT or SIGTERM, how long requests in flight (a long download too) may take to finish after the server stops accepting; then the connections left are closed' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l tls-cert -d 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain, leaf first. SIGHUP reads it and the key again' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l tls-key -d 'The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1)' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l redirect-http -d 'With --tls-cert: also listen for plain HTTP on PORT (on the --bind addresses, or a socket systemd passes with FileDescriptorName=redirect) and answer every request there with a 308 to the same URL over HTTPS' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l acme-dir -d 'With --redirect-http: answer ACME\'s HTTP-01 challenges (/.well-known/acme-challenge/TOKEN) there from this webroot, the folder given to `certbot certonly --webroot -w DIR` or `lego --http.webroot DIR`; renewals then need no other server on port 80' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l max-upload-size -d 'With --publish-api: the largest upload taken; a larger one is answered 413 and nothing is published' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l max-unpacked-size -d 'With --publish-api: refuse an upload whose tar stream, decompressed, is larger than SIZE (a gzip bomb), answered 422' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l publish-wait -d 'With --publish-api: how long a change waits for the one before it (the catalog takes one at a time); then it is answered 503 with Retry-After' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l writer -d 'On a replica: the writer\'s URL, which the write API names to a client that sends a change here' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l stats-allow -d 'Answer /_stats and /metrics only to these addresses (a CIDR block, repeatable), and to a bearer of a token with the read-stats scope, as nginx\'s allow/deny restricts stub_status [default: anyone]' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l sites -d 'Sites to profile, comma-separated [default: all]' -r -f -a "cache-lookup\t''
cache-insert\t''
sqlite-query\t''
gzip-decode\t''
http-respond\t''
http-parse\t''"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l speedups -d 'Virtual speedups in percent, comma-separated (0 is always added)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l rounds -d 'Rounds over every site and speedup (at least 1)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l window -d 'Shortest measurement window of one experiment' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l max-window -d 'Longest window, when progress is slow (at least --window)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l warmup -d 'Load before the first experiment (warms caches, measures the rate)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l settle -d 'Pause after each experiment starts, before measuring' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l min-delta -d 'Progress counts an experiment needs to be reliable (at least 5, the least Coz\'s viewer plots)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l seed -d 'Seed of the experiment order (printed, so a run can be repeated)' -r
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l load -d '`builtin:N`: N keep-alive clients of ccc\'s own; `external`: wait for someone else\'s load (wrk, oha, ...)' -r -f -a "builtin:8\t''
external\t''"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l urls -d 'URL list for the built-in load, one per line, used in order [default: every asset, 80% of requests on the first 50]' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l external-wake -d 'How a request from a client moves the worker\'s virtual clock' -r -f -a "conn\t'Memo of the last response per connection (exact for closed loops)'
owe\t'Idle workers absorb nothing (Coz\'s rule for blocking I/O)'
skip\t'Idle workers skip all delay (over-predicts closed loops)'"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l site-clock -d 'What times a visit of the selected site: elapsed time less the profiler\'s own pauses (`wall`), or the thread\'s CPU time (`cpu`), for sites that block on what optimizing them would not shorten' -r -f -a "wall\t'Elapsed time, less pauses and idle waits'
cpu\t'The thread\'s CPU time (leaves out blocking and preemption)'"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l idle-cores -d 'What idle cores do while profiling: `spin` keeps each awake with a lowest-priority (SCHED_IDLE) spinner, so waking a thread costs the same whether the profiler pauses threads or not; `sleep` leaves them to the OS (less power, predictions that run low)' -r -f -a "spin\t'A SCHED_IDLE spinner per CPU keeps idle cores out of sleep states'
sleep\t'Idle cores sleep as the OS decides'"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l json-out -d 'Write every cell, the summary and the ledger as JSON (`-` for stdout), as --coz-out writes Coz\'s profile' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l coz-out -d 'Write a profile Coz\'s viewer loads' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l coz-format -d 'Format of --coz-out' -r -f -a "tsv\t'Tab-separated, read by every viewer version'
jsonl\t'JSON lines'"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l ledger -d 'Print the delay-accounting audit: per cell, or per cell and thread' -r -f -a "summary\t''
full\t''"
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l plot -d 'Draw the speedup curves as SVG' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l db -d 'The catalog file' -r -F
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l log-misses -d 'Print a line to stderr for every cache miss'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l publish-api -d 'Take changes over HTTP: `ccc publish --to`, `ccc tag --to` and `ccc rm --to` with a token made by `ccc token create` (PUT and DELETE under /-/api/v1/). Off unless given: a catalog may be served by many servers, and only its writer, over TLS, should take writes'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l reuse-port -d 'Share the port with other processes that set it too (SO_REUSEPORT), so a new `ccc serve` can start before the old one stops. Both must set it. For such a handover to drop nothing, Linux needs net.ipv4.tcp_migrate_req=1 (examples/deploy/60-ccc-reuse-port.conf); with its default, 0, the connections queued on the old server\'s socket when it closes are reset, and serve warns at start. Not needed under systemd socket activation, which passes the socket itself'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l coz-append -d 'Append to --coz-out instead of replacing it'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -l strict -d 'Exit 4 when the ledger audit finds an error'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c ccc -n "__fish_ccc_using_subcommand causal" -s V -l version -d 'Print version'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "publish" -d 'Publish a directory or a tar archive as PKG@VERSION, in one atomic transaction'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "ls" -d 'List packages, one package\'s versions, or one version\'s files'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "inspect" -d 'Show a version\'s sizes, compression and dedup, or one file in detail'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "diff" -d 'Show the files added, removed and changed from one version to another'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "cat" -d 'Write a file\'s original bytes to stdout'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "tag" -d 'Add, remove or list a package\'s dist-tags'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "site" -d 'Serve a package\'s dist-tag at the root of a host: an app\'s front door'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "rm" -d 'Remove versions from the catalog (their blobs stay until `ccc gc`)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "gc" -d 'Prune old versions, drop unreferenced blobs and reclaim disk space'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "deltas" -d 'Make the deltas the catalog lacks, for versions published before ccc made them or without them (`ccc publish --no-deltas`)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "recompress" -d 'Recompress brotli streams at quality 11, as `ccc serve` does in the background'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "verify" -d 'Check the database and that every blob decodes to its recorded sha256'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "check" -d 'Check that every reference of a version\'s files resolves inside it'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "importmap" -d 'Write the import map that loads a version and what it imports from the catalog, without a bundler'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "backup" -d 'Copy the catalog to OUT, consistently, while it is served or published to'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "follow" -d 'Keep the catalog a copy of a writer\'s, from its Litestream replica'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "serve" -d 'Serve the catalog over HTTP'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "token" -d 'Make, list and revoke the tokens that may change the catalog over HTTP'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "audit" -d 'Show the audit log: what was changed over HTTP, by which token, from where, and tokens made and revoked; oldest first'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "export" -d 'Write versions out as plain files with precompressed `.gz` and `.br` siblings'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "causal" -d 'Profile `serve` under live load: which code is worth optimizing?'
complete -c ccc -n "__fish_ccc_using_subcommand help; and not __fish_seen_subcommand_from publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "add" -d 'Point TAG at PKG@VERSION (moving it if it names another version)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "rm" -d 'Remove TAG from PKG (`latest` then is the newest release again)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "ls" -d 'List PKG\'s tags, `latest` first, with the versions they name'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from site" -f -a "set" -d 'Serve PKG at TAG (`latest` when not given) at the root of HOST, replacing the site HOST had'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from site" -f -a "rm" -d 'Stop serving a site at HOST (its package and versions stay)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from site" -f -a "ls" -d 'List the sites, the version each serves now, and the versions skew protection still answers from (`recent`)'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "create" -d 'Make a token and print it, once, on stdout'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "ls" -d 'List the tokens: name, scopes, expiry, last use, state'
complete -c ccc -n "__fish_ccc_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "revoke" -d 'Revoke the token NAME: every server of the catalog refuses it from its next request'
