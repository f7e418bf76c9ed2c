vcl 4.1;

import directors;

# Varnish (7.x) in front of `ccc serve`: the configuration ccc recommends,
# and the one tests/deploy_varnish.rs runs. README "Running ccc in
# production" walks through it.
#
#   varnishd -a :80 -f /etc/varnish/ccc.vcl -s malloc,1G
#
# What ccc sends, and why this file needs so little:
# - an exact version's files: `Cache-Control: public, max-age=31536000,
#   immutable`, a strong ETag per representation, `Vary: Accept-Encoding`
#   (and `Available-Dictionary` for a file with deltas: RFC 9842's dcb and
#   dcz, a release coded against one the browser already holds);
# - redirects from `latest` and ranges: `public, max-age=60`;
# - a 404 for a missing package, version or file: `public, max-age=5`
#   (`--not-found-max-age`), so a scan of missing paths stops here; other
#   errors, /_stats and /healthz: `no-store`.
# Varnish honours all of it as it stands. This file adds the purge ccc sends
# on `ccc rm/gc --purge`, a day's cap on how long a file is kept without
# asking ccc (the bound on serving a removed version when a purge was
# missed), brotli and the deltas, which Varnish's own Accept-Encoding
# handling knows nothing of, and two origins taken in turn: a fetch that fails on one
# (an origin restarting, a 5xx) is tried once more on the other, so a
# restart costs clients nothing.

# Each origin's health: `/healthz` every second, so a restarting origin
# (or a replica answering 503 `stale`) leaves the rotation within a couple
# of seconds, and comes back as soon as two of three probes pass.
probe origin_health {
    .url = "/healthz";
    .interval = 1s;
    .timeout = 1s;
    .window = 3;
    .threshold = 2;
    # Healthy from the start: a sick start would answer 503 until the
    # first probe, after every start and every `vcl.load`.
    .initial = 2;
}

# The origins: `ccc serve` on two machines, or two on one (add more the
# same way).
backend ccc_a {
    .host = "127.0.0.1";
    .port = "8333";
    .probe = origin_health;
}

backend ccc_b {
    .host = "127.0.0.1";
    .port = "8334";
    .probe = origin_health;
}

sub vcl_init {
    new origins = directors.round_robin();
    origins.add_backend(ccc_a);
    origins.add_backend(ccc_b);
}

# Who may purge: the machines that run `ccc rm` and `ccc gc`.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    set req.backend_hint = origins.backend();
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(405, "PURGE is not allowed from this address"));
        }
        # Drops every variant stored under the URL; vcl_purge then does
        # the same for the brotli clients' copy (see vcl_hash).
        if (req.restarts == 0) {
            unset req.http.X-Ccc-Br;
        }
        return (purge);
    }
    if (req.method != "GET" && req.method != "HEAD") {
        # ccc answers 405 with the methods it takes.
        return (pass);
    }
    if (req.url ~ "^/(_stats|healthz)(\?|$)") {
        # Each origin's own counters and health, never a cached copy.
        return (pass);
    }
    # ccc's answers depend on the URL, Accept-Encoding and
    # Available-Dictionary only; a cookie the site set for its pages must
    # not turn every asset into a pass.
    unset req.http.Cookie;

    # A delta is for a client that holds a dictionary (one SHA-256, RFC
    # 9842) and takes both dcb and dcz, as Chromium does: ccc answers it
    # with the smaller, and Varnish keeps that copy apart from the others
    # through the `Vary: Available-Dictionary` ccc sends. Anything else
    # (a malformed value, a client that takes one coding only or refuses
    # one) loses the header, so that it shares everyone's brotli copy.
    if (req.http.Available-Dictionary !~ "^\s*:[A-Za-z0-9+/]{43}=:\s*$" ||
        req.http.Accept-Encoding !~ "(^|,)\s*dcb\s*(,|$)" ||
        req.http.Accept-Encoding !~ "(^|,)\s*dcz\s*(,|$)") {
        unset req.http.Available-Dictionary;
    }

    # Varnish reduces Accept-Encoding to `gzip` or nothing once this
    # returns. A client that takes brotli is remembered here, gets its own
    # copy of each URL (vcl_hash) and is fetched with its preference
    # (vcl_backend_fetch); ccc answers br, or gzip when it has no brotli.
    # A client with a dictionary takes brotli too.
    unset req.http.X-Ccc-Br;
    if (req.http.Accept-Encoding ~ "(^|,)\s*br\s*(,|;\s*q=(1|0?\.0*[1-9])|$)" ||
        req.http.Available-Dictionary) {
        set req.http.X-Ccc-Br = "1";
    }
    return (hash);
}

sub vcl_hash {
    # The URL alone, not the Host: ccc serves the same catalog under every
    # name it is reached by, and a purge from `ccc rm` names no site.
    hash_data(req.url);
    if (req.http.X-Ccc-Br) {
        hash_data("br");
    }
    return (lookup);
}

sub vcl_purge {
    if (!req.http.X-Ccc-Br) {
        set req.http.X-Ccc-Br = "1";
        return (restart);
    }
    return (synth(200, "Purged"));
}

sub vcl_backend_fetch {
    if (bereq.retries > 0) {
        # The next origin in turn: not the one that just failed.
        set bereq.backend = origins.backend();
    }
    if (bereq.http.Available-Dictionary) {
        set bereq.http.Accept-Encoding = "dcb, dcz, br, gzip";
    } else if (bereq.http.X-Ccc-Br) {
        set bereq.http.Accept-Encoding = "br, gzip";
    }
    unset bereq.http.X-Ccc-Br;
}

sub vcl_backend_response {
    # An origin shutting down or without its catalog answers 5xx; another
    # may not. One more try, on the next origin.
    if (beresp.status >= 500 && bereq.retries < 1) {
        return (retry);
    }
    if (beresp.http.Cache-Control ~ "immutable" && beresp.ttl > 1d) {
        # A file is kept a day without asking ccc, then revalidated with
        # its ETag (a 304 costs ccc no body): a removed version whose purge
        # was missed leaves within a day. Clients still get a year.
        set beresp.ttl = 1d;
        set beresp.keep = 7d;
    }
    # A dictionary ccc has no delta against (one from a release too old,
    # or a made-up hash) is answered brotli: that copy is not kept under
    # the dictionary's name, so that made-up hashes cannot fill the cache
    # with copies of the same bytes. The next such request asks ccc again,
    # which answers from its own cache.
    if (bereq.http.Available-Dictionary &&
        beresp.http.Content-Encoding !~ "^(dcb|dcz)$") {
        set beresp.uncacheable = true;
        set beresp.ttl = 60s;
        return (deliver);
    }
    # A stale copy is served no longer than a revalidation takes.
    set beresp.grace = 10s;
}

sub vcl_deliver {
    # For whoever debugs a deployment: did this come from the cache?
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
    unset resp.http.X-Ccc-Br;
}

sub vcl_backend_error {
    # No answer at all (connection refused or reset: an origin restarting):
    # one more try, on the next origin.
    if (bereq.retries < 1) {
        return (retry);
    }
}
