//! Tokens: who may change the catalog over HTTP (`ccc serve
//! --publish-api`), and what each may do. Made, listed and revoked by the
//! catalog's administrator (`ccc token`), on the machine that holds it.
//!
//! # The secret
//!
//! ```text
//! ccc_ 2k7dq4x3mb5z  a7f...(40 chars)...q3  b4xk2ma
//!      selector      verifier                check
//!      (12, public)  (40: 200 random bits)   (7: CRC-32 of the 52 before)
//! ```
//!
//! Lowercase base32 (`a-z`, `2-7`), so a token survives a shell, a URL and
//! a YAML file unquoted, and secret scanners find it by its prefix and
//! shape (`ccc_[a-z2-7]{59}`); the check lets them (and the server) tell a
//! real one from a mistyped or truncated one without asking anyone.
//!
//! The catalog keeps the selector, to find the row, and the SHA-256 of the
//! verifier, never the token. The verifier carries 200 random bits, so a
//! fast hash loses nothing (no one can guess a preimage), and a lookup
//! costs microseconds. A presented token is found by its selector, which
//! is not secret, and its verifier's hash is compared in constant time
//! ([`subtle`]): neither the index lookup nor the comparison tells a
//! client how close a guess came.
//!
//! # Scopes
//!
//! A token may do only what its scopes grant: each scope is a set of
//! [`Action`]s over a set of package globs (`@team/*`, `app`, `*`; `*`
//! also crosses the `/` of a scoped name). A token with no scope can do
//! nothing. `read-stats` takes no package.
//!
//! # Later kinds without a migration
//!
//! `kind` is `secret` for every token made today. Trusted publishing from
//! CI (an OIDC token traded for a short-lived one) fits the same table:
//! a registration is a row of another kind with no selector or hash,
//! whose `claims` (JSON) hold the issuer, repository, workflow and
//! environment to match and whose `scopes` bound what it may mint; a
//! token minted from it is a `secret` row with a short `expires_at`,
//! `created_by` naming the registration and `claims` holding the claims
//! it was minted for (its provenance). Rows of a kind this ccc does not
//! know are listed, and never accepted as a bearer.

use super::{Catalog, SqliteResult};
use crate::error::{Error, Result};
use crate::units::unix_now;
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What every token starts with.
pub(crate) const PREFIX: &str = "ccc_";
const SELECTOR_LEN: usize = 12;
const VERIFIER_LEN: usize = 40;
const CHECK_LEN: usize = 7;
/// A token's length, prefix included.
pub(crate) const TOKEN_LEN: usize = PREFIX.len() + SELECTOR_LEN + VERIFIER_LEN + CHECK_LEN;
const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
/// The kind of every bearer token made by `ccc token create`.
pub(crate) const KIND_SECRET: &str = "secret";

/// What a token may be allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Action {
    /// Publish a version that does not exist yet.
    Publish,
    /// Replace an existing version (`--force`).
    Replace,
    /// Point and remove dist-tags.
    Tag,
    /// Remove versions.
    Remove,
    /// Read `/_stats` and `/metrics` where they are restricted.
    ReadStats,
}

impl Action {
    pub(crate) const ALL: [Action; 5] = [
        Action::Publish,
        Action::Replace,
        Action::Tag,
        Action::Remove,
        Action::ReadStats,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Action::Publish => "publish",
            Action::Replace => "replace",
            Action::Tag => "tag",
            Action::Remove => "remove",
            Action::ReadStats => "read-stats",
        }
    }

    fn parse(text: &str) -> std::result::Result<Action, String> {
        Action::ALL
            .into_iter()
            .find(|a| a.name() == text)
            .ok_or_else(|| {
                format!(
                    "`{text}` is not an action; the actions are {}",
                    Action::ALL.map(Action::name).join(", ")
                )
            })
    }

    /// Whether the action is on packages (all but `read-stats`).
    fn on_packages(self) -> bool {
        self != Action::ReadStats
    }
}

/// Actions over packages: one `--scope`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Scope {
    pub actions: Vec<Action>,
    /// Package globs; empty for `read-stats` alone.
    pub packages: Vec<String>,
}

impl Scope {
    /// Parses `ACTION[,ACTION...][:GLOB[,GLOB...]]`, like
    /// `publish,tag:@team/*,app` or `read-stats`.
    pub(crate) fn parse(text: &str) -> std::result::Result<Scope, String> {
        let (actions, packages) = match text.split_once(':') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let mut parsed = Vec::new();
        for action in actions.split(',').map(str::trim) {
            let action = Action::parse(action)?;
            if !parsed.contains(&action) {
                parsed.push(action);
            }
        }
        parsed.sort();
        let on_packages = parsed.iter().any(|a| a.on_packages());
        let packages: Vec<String> = match packages {
            None if on_packages => {
                return Err(format!(
                    "`{text}` names no package: write ACTIONS:GLOBS, like `{actions}:@team/*` \
                     or `{actions}:*` for every package"
                ));
            }
            None => Vec::new(),
            Some(_) if !on_packages => {
                return Err(format!(
                    "`{text}`: read-stats takes no package; write `read-stats` alone"
                ));
            }
            Some(globs) => globs
                .split(',')
                .map(|g| g.trim().to_string())
                .collect::<Vec<_>>(),
        };
        for glob in &packages {
            check_glob(glob)?;
        }
        Ok(Scope {
            actions: parsed,
            packages,
        })
    }

    fn allows(&self, action: Action, package: Option<&str>) -> bool {
        if !self.actions.contains(&action) {
            return false;
        }
        match package {
            None => !action.on_packages(),
            Some(package) => self.packages.iter().any(|g| glob_matches(g, package)),
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let actions: Vec<&str> = self.actions.iter().map(|a| a.name()).collect();
        write!(f, "{}", actions.join(","))?;
        if !self.packages.is_empty() {
            write!(f, ":{}", self.packages.join(","))?;
        }
        Ok(())
    }
}

/// A package glob is a package name in which `*` stands for any run of
/// characters (`/` included).
fn check_glob(glob: &str) -> std::result::Result<(), String> {
    if glob.is_empty() {
        return Err("an empty package glob; write `*` for every package".into());
    }
    let literal = glob.replace('*', "x");
    crate::spec::package_name(&literal)
        .map(|_| ())
        .map_err(|e| format!("`{glob}` is not a package glob: {e}"))
}

/// Whether `package` matches `glob`, where `*` matches any run of
/// characters.
fn glob_matches(glob: &str, package: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return glob == package;
    };
    if parts.len() == 1 {
        return glob == package;
    }
    let Some(mut rest) = package.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A token as the catalog lists it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct TokenRow {
    pub name: String,
    pub kind: String,
    pub scopes: Vec<Scope>,
    #[serde(serialize_with = "crate::units::serialize_rfc3339")]
    pub created_at: i64,
    #[serde(serialize_with = "optional_time")]
    pub expires_at: Option<i64>,
    #[serde(serialize_with = "optional_time")]
    pub last_used_at: Option<i64>,
    #[serde(serialize_with = "optional_time")]
    pub revoked_at: Option<i64>,
    pub created_by: String,
    /// `active`, `expired` or `revoked`.
    pub state: &'static str,
}

fn optional_time<S: serde::Serializer>(
    at: &Option<i64>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match at {
        Some(at) => crate::units::serialize_rfc3339(at, s),
        None => s.serialize_none(),
    }
}

impl TokenRow {
    /// Whether the token may do `action` on `package` (None for an
    /// action on no package).
    pub(crate) fn allows(&self, action: Action, package: Option<&str>) -> bool {
        self.state == "active" && self.scopes.iter().any(|s| s.allows(action, package))
    }
}

/// A token just made: its secret, shown once, and its row.
#[derive(Debug, Serialize)]
pub(crate) struct Created {
    pub token: String,
    #[serde(flatten)]
    pub row: TokenRow,
}

/// Why a bearer was refused; each is a 401.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not shaped like a token, or its check does not match.
    Malformed(&'static str),
    /// Well formed, but no token of the catalog (or not its secret).
    Unknown,
    Revoked(String),
    Expired(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Malformed(why) => write!(f, "the bearer is not a ccc token: {why}"),
            Refused::Unknown => write!(f, "the token is not one of this catalog's"),
            Refused::Revoked(name) => write!(f, "the token {name} was revoked"),
            Refused::Expired(name) => write!(f, "the token {name} has expired"),
        }
    }
}

/// Makes a new secret token: random, with its check.
fn new_secret() -> Result<String> {
    use ring::rand::SecureRandom;
    let mut random = [0u8; SELECTOR_LEN + VERIFIER_LEN];
    ring::rand::SystemRandom::new()
        .fill(&mut random)
        .map_err(|_| Error::Internal("the system gave no random bytes".into()))?;
    // 256 is a multiple of 32: every character is equally likely.
    let body: String = random
        .iter()
        .map(|b| BASE32[usize::from(b & 31)] as char)
        .collect();
    Ok(format!("{PREFIX}{body}{}", check_of(&body)))
}

/// The 7 characters that end a token: the CRC-32 of the 52 before them,
/// in base32, high bits first.
fn check_of(body: &str) -> String {
    let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(body.as_bytes());
    (0..CHECK_LEN)
        .rev()
        .map(|i| BASE32[((u64::from(crc) >> (5 * i)) & 31) as usize] as char)
        .collect()
}

/// The selector and the verifier of a presented token, once its shape and
/// check are right.
fn split(token: &str) -> std::result::Result<(&str, &str), Refused> {
    let Some(rest) = token.strip_prefix(PREFIX) else {
        return Err(Refused::Malformed("it does not start with ccc_"));
    };
    if rest.len() != TOKEN_LEN - PREFIX.len() {
        return Err(Refused::Malformed(
            "it is not 63 characters long (cut short?)",
        ));
    }
    if !rest.bytes().all(|b| BASE32.contains(&b)) {
        return Err(Refused::Malformed("it holds characters no token has"));
    }
    let (body, check) = rest.split_at(SELECTOR_LEN + VERIFIER_LEN);
    if check_of(body) != check {
        return Err(Refused::Malformed("its check does not match (mistyped?)"));
    }
    Ok(body.split_at(SELECTOR_LEN))
}

fn hash_of(verifier: &str) -> [u8; 32] {
    Sha256::digest(verifier.as_bytes()).into()
}

const COLUMNS: &str =
    "name, kind, scopes, created_at, expires_at, last_used_at, revoked_at, created_by";

fn row_of(r: &rusqlite::Row<'_>, now: i64) -> rusqlite::Result<TokenRow> {
    let scopes: String = r.get(2)?;
    let expires_at: Option<i64> = r.get(4)?;
    let revoked_at: Option<i64> = r.get(6)?;
    let state = match (revoked_at, expires_at) {
        (Some(_), _) => "revoked",
        (None, Some(at)) if at <= now => "expired",
        _ => "active",
    };
    Ok(TokenRow {
        name: r.get(0)?,
        kind: r.get(1)?,
        // A row this ccc cannot read grants nothing.
        scopes: serde_json::from_str(&scopes).unwrap_or_default(),
        created_at: r.get(3)?,
        expires_at,
        last_used_at: r.get(5)?,
        revoked_at,
        created_by: r.get(7)?,
        state,
    })
}

impl Catalog {
    /// Makes the token `name` with `scopes`, expiring at `expires_at`
    /// (unix seconds; None: never), and records it in the audit log.
    /// Returns its secret, which is stored nowhere.
    pub(crate) fn create_token(
        &self,
        name: &str,
        scopes: Vec<Scope>,
        expires_at: Option<i64>,
    ) -> Result<Created> {
        check_name(name)?;
        let path = self.path().to_path_buf();
        let tx = self.write_transaction()?;
        let taken: bool = tx
            .prepare("SELECT 1 FROM tokens WHERE name = ?1 AND revoked_at IS NULL")
            .and_then(|mut s| s.exists([name]))
            .at(&path)?;
        if taken {
            return Err(Error::Token(format!(
                "a token named {name} exists; revoke it first (`ccc token revoke {name}`) or \
                 choose another name"
            )));
        }
        let token = new_secret()?;
        let (selector, verifier) =
            split(&token).map_err(|e| Error::Internal(format!("a new token: {e}")))?;
        let now = unix_now();
        let scopes_json =
            serde_json::to_string(&scopes).map_err(|e| Error::Internal(e.to_string()))?;
        tx.execute(
            "INSERT INTO tokens (name, kind, selector, hash, scopes, created_at, expires_at,
                                 created_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'admin')",
            params![
                name,
                KIND_SECRET,
                selector,
                &hash_of(verifier)[..],
                scopes_json,
                now,
                expires_at
            ],
        )
        .at(&path)?;
        let detail = scopes
            .iter()
            .map(Scope::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        super::audit::record(
            &tx,
            &super::audit::Entry::local("token-create", name, 0, &detail),
        )
        .at(&path)?;
        tx.commit().at(&path)?;
        let row = TokenRow {
            name: name.to_string(),
            kind: KIND_SECRET.into(),
            scopes,
            created_at: now,
            expires_at,
            last_used_at: None,
            revoked_at: None,
            created_by: "admin".into(),
            state: "active",
        };
        Ok(Created { token, row })
    }

    /// Every token, active first, then by name.
    pub(crate) fn tokens(&self) -> Result<Vec<TokenRow>> {
        if !self.has_tokens() {
            return Ok(Vec::new());
        }
        let now = unix_now();
        let sql = format!("SELECT {COLUMNS} FROM tokens ORDER BY revoked_at IS NOT NULL, name, id");
        let mut stmt = self.conn().prepare(&sql).at(self.path())?;
        let rows = stmt
            .query_map([], |r| row_of(r, now))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .at(self.path())?;
        let (mut active, rest): (Vec<_>, Vec<_>) =
            rows.into_iter().partition(|r| r.state == "active");
        active.extend(rest);
        Ok(active)
    }

    /// Revokes the token `name` at once: every server of the catalog (and
    /// of its replicas, once they have the change) refuses it from its
    /// next request.
    pub(crate) fn revoke_token(&self, name: &str) -> Result<TokenRow> {
        let path = self.path().to_path_buf();
        let tx = self.write_transaction()?;
        let now = unix_now();
        let changed = tx
            .execute(
                "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
                params![name, now],
            )
            .at(&path)?;
        if changed == 0 {
            return Err(Error::Token(format!(
                "no active token is named {name} (`ccc token ls` lists them)"
            )));
        }
        super::audit::record(
            &tx,
            &super::audit::Entry::local("token-revoke", name, 0, ""),
        )
        .at(&path)?;
        let sql = format!(
            "SELECT {COLUMNS} FROM tokens WHERE name = ?1 AND revoked_at = ?2 ORDER BY id DESC"
        );
        let row = tx
            .query_row(&sql, params![name, now], |r| row_of(r, now))
            .at(&path)?;
        tx.commit().at(&path)?;
        Ok(row)
    }

    /// The token whose secret is `token`, or why it is refused. A revoked
    /// or expired token is named only once its secret has matched.
    pub(crate) fn authenticate(
        &self,
        token: &str,
    ) -> Result<std::result::Result<TokenRow, Refused>> {
        let (selector, verifier) = match split(token) {
            Ok(parts) => parts,
            Err(refused) => return Ok(Err(refused)),
        };
        if !self.has_tokens() {
            return Ok(Err(Refused::Unknown));
        }
        let now = unix_now();
        let sql = format!("SELECT {COLUMNS}, hash FROM tokens WHERE selector = ?1 AND kind = ?2");
        let found = self
            .conn()
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_row(params![selector, KIND_SECRET], |r| {
                    Ok((row_of(r, now)?, r.get::<_, Vec<u8>>(8)?))
                })
                .optional()
            })
            .at(self.path())?;
        // The hash is computed and compared whether or not a row was found.
        let presented = hash_of(verifier);
        let (row, stored) = match found {
            Some((row, stored)) => (Some(row), stored),
            None => (None, vec![0u8; 32]),
        };
        use subtle::ConstantTimeEq;
        let same: bool = presented[..].ct_eq(stored.as_slice()).into();
        Ok(match row {
            Some(row) if same => match row.state {
                "revoked" => Err(Refused::Revoked(row.name)),
                "expired" => Err(Refused::Expired(row.name)),
                _ => Ok(row),
            },
            _ => Err(Refused::Unknown),
        })
    }
}

/// A token's name: what `ls` lists and the audit log records.
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "`{name}` is not a token name: 1 to 64 letters, digits, `-`, `_` or `.`, like \
             ci-github or deploy.app"
        )))
    }
}

/// Parses `--scope`.
pub(crate) fn parse_scope(text: &str) -> std::result::Result<Scope, String> {
    Scope::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_token_is_shaped_and_checked() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), TOKEN_LEN);
        assert!(a.starts_with("ccc_"));
        assert!(a[4..].bytes().all(|c| BASE32.contains(&c)));
        let (selector, verifier) = split(&a).unwrap();
        assert_eq!((selector.len(), verifier.len()), (12, 40));
        // One character changed anywhere is caught by the check.
        for i in 4..a.len() {
            let mut bytes = a.clone().into_bytes();
            bytes[i] = if bytes[i] == b'a' { b'b' } else { b'a' };
            let changed = String::from_utf8(bytes).unwrap();
            assert!(
                matches!(split(&changed), Err(Refused::Malformed(_))),
                "{changed}"
            );
        }
        assert!(matches!(split(&a[..60]), Err(Refused::Malformed(_))));
        assert!(matches!(split("Bearer x"), Err(Refused::Malformed(_))));
    }

    #[test]
    fn scopes_parse_and_match_as_written() {
        let s = Scope::parse("tag,publish:@team/*,app").unwrap();
        assert_eq!(s.actions, vec![Action::Publish, Action::Tag]);
        assert_eq!(s.to_string(), "publish,tag:@team/*,app");
        assert!(s.allows(Action::Publish, Some("@team/ui")));
        assert!(s.allows(Action::Tag, Some("app")));
        assert!(!s.allows(Action::Publish, Some("@other/ui")));
        assert!(!s.allows(Action::Publish, Some("app2")));
        assert!(!s.allows(Action::Replace, Some("app")));
        assert!(!s.allows(Action::ReadStats, None));
        let all = Scope::parse("remove:*").unwrap();
        assert!(all.allows(Action::Remove, Some("@x/y")));
        let stats = Scope::parse("read-stats").unwrap();
        assert!(stats.allows(Action::ReadStats, None));
        assert!(!stats.allows(Action::Publish, Some("app")));
        for bad in [
            "publish",
            "read-stats:app",
            "push:app",
            "publish:",
            "publish:App Name",
        ] {
            assert!(Scope::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn globs_match_whole_names() {
        for (glob, name, want) in [
            ("*", "@a/b", true),
            ("app", "app", true),
            ("app", "app-x", false),
            ("@team/*", "@team/x", true),
            ("@team/*", "@teamx/x", false),
            ("app-*-ui", "app-core-ui", true),
            ("app-*-ui", "app-core-uix", false),
            ("*-ui", "x-ui", true),
            ("a*a", "a", false),
        ] {
            assert_eq!(glob_matches(glob, name), want, "{glob} {name}");
        }
    }

    #[test]
    fn only_the_token_itself_authenticates() {
        let catalog = Catalog::in_memory().unwrap();
        let publish = Scope::parse("publish:app").unwrap();
        let made = catalog
            .create_token("ci", vec![publish], Some(unix_now() + 3600))
            .unwrap();
        let found = catalog.authenticate(&made.token).unwrap().unwrap();
        assert_eq!(found.name, "ci");
        assert!(found.allows(Action::Publish, Some("app")));
        assert!(!found.allows(Action::Remove, Some("app")));
        // Same selector, another verifier with a valid check.
        let (selector, _) = split(&made.token).unwrap();
        let body = format!("{selector}{}", "a".repeat(VERIFIER_LEN));
        let forged = format!("{PREFIX}{body}{}", check_of(&body));
        assert_eq!(
            catalog.authenticate(&forged).unwrap(),
            Err(Refused::Unknown)
        );
        assert!(
            catalog
                .create_token("ci", vec![], None)
                .is_err_and(|e| e.to_string().contains("exists"))
        );
        catalog.revoke_token("ci").unwrap();
        assert_eq!(
            catalog.authenticate(&made.token).unwrap(),
            Err(Refused::Revoked("ci".into()))
        );
        // The name is free again once revoked.
        let again = catalog.create_token("ci", vec![], Some(1)).unwrap();
        assert_eq!(
            catalog.authenticate(&again.token).unwrap(),
            Err(Refused::Expired("ci".into()))
        );
        let listed = catalog.tokens().unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].state, "expired");
        assert_eq!(listed[1].state, "revoked");
        // Nothing stored holds the secret.
        let stored: Vec<String> = catalog
            .conn()
            .prepare("SELECT quote(selector) || quote(hash) || scopes FROM tokens")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let (_, verifier) = split(&made.token).unwrap();
        assert!(stored.iter().all(|s| !s.contains(verifier)));
    }
}
