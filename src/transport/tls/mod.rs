//! TLS by rustls (1.2 and 1.3, ring's algorithms), with ALPN `h2` and
//! `http/1.1`. The certificate and key are PEM files, read at start and
//! again on [`Certificate::reload`] (SIGHUP): handshakes after a reload
//! use the new pair, connections already open keep theirs, and a pair
//! that does not load is reported and the old one kept.
//!
//! Sessions resume from tickets the client keeps (RFC 8446 4.6.1),
//! encrypted with keys the server rotates (rustls's `Ticketer`), as
//! nginx's default: a returning client skips the certificate and its
//! signature, however many clients came between. A TLS 1.3 resumption
//! still agrees a new key by ECDHE; a TLS 1.2 ticket carries its
//! session's secret, as nginx's do, so the keys' rotation bounds what a
//! stolen one opens.
//!
//! Every TLS 1.3 handshake, full or resumed, ends with one ticket: a
//! ticket serves one resumption, so each connection leaves the client
//! the one its next connection uses. rustls sends two by default; the
//! second costs both sides a ticket sealed, sent and opened on every
//! connection, and a client that reconnects one connection at a time
//! never uses it (OpenSSL servers, nginx's, send one after a resumption).
//!
//! A connection's records go through `Stream`, on rustls's unbuffered
//! API, whose buffers exist only while they hold bytes.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use tokio::net::TcpStream;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, ServerConfig};

mod stream;
pub(crate) use stream::Stream;

/// Accepts TLS connections with the certificate in force.
#[derive(Clone)]
pub struct Acceptor(Arc<ServerConfig>);

impl Acceptor {
    pub(crate) async fn accept(&self, tcp: TcpStream) -> io::Result<Stream> {
        Stream::accept(tcp, self.0.clone()).await
    }
}

/// The certificate and key files, and the pair loaded from them.
pub(crate) struct Certificate {
    cert: PathBuf,
    key: PathBuf,
    current: Arc<Current>,
}

/// The pair handshakes use now.
struct Current(RwLock<Arc<CertifiedKey>>);

impl fmt::Debug for Current {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Current")
    }
}

impl ResolvesServerCert for Current {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.0
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
    }
}

impl Certificate {
    /// Loads `cert` (the chain, leaf first) and `key`, and checks that
    /// they belong together.
    pub(crate) fn load(cert: &Path, key: &Path) -> Result<Certificate, String> {
        let pair = load_pair(cert, key)?;
        Ok(Certificate {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            current: Arc::new(Current(RwLock::new(Arc::new(pair)))),
        })
    }

    /// Reads the files again; on success later handshakes use the new
    /// pair.
    pub(crate) fn reload(&self) -> Result<(), String> {
        let pair = load_pair(&self.cert, &self.key)?;
        *self
            .current
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(pair);
        Ok(())
    }

    /// An acceptor that always uses the pair in force.
    pub(crate) fn acceptor(&self) -> Result<Acceptor, String> {
        let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_cert_resolver(self.current.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        config.ticketer = ring::Ticketer::new().map_err(|e| e.to_string())?;
        config.send_tls13_tickets = 1;
        Ok(Acceptor(Arc::new(config)))
    }
}

/// Why a key file does not read as a PEM private key, in words: an
/// encrypted key, a PEM cut short, a certificate where the key should be.
fn unreadable_key(key: &Path, e: &rustls_pki_types::pem::Error) -> String {
    use rustls_pki_types::pem::Error as Pem;
    let text = std::fs::read(key).unwrap_or_default();
    let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
    let key = key.display();
    if has(b"ENCRYPTED PRIVATE KEY") || has(b"Proc-Type: 4,ENCRYPTED") {
        return format!(
            "the private key {key} is encrypted (a passphrase protects it); ccc reads unencrypted \
             keys: write one with `openssl pkey -in {key} -out key.pem` and keep it readable by \
             ccc alone"
        );
    }
    match e {
        Pem::MissingSectionEnd { .. } | Pem::IllegalSectionStart { .. } => format!(
            "the private key {key} is cut short: its `-----BEGIN ...-----` line has no matching \
             `-----END ...-----` line"
        ),
        Pem::NoItemsFound if has(b"BEGIN CERTIFICATE") => format!(
            "{key} holds a certificate, not a private key: --tls-key names the key \
             (`-----BEGIN PRIVATE KEY-----`)"
        ),
        Pem::NoItemsFound => format!(
            "{key} holds no PEM private key (`-----BEGIN PRIVATE KEY-----`, `RSA PRIVATE KEY` or \
             `EC PRIVATE KEY`)"
        ),
        Pem::Base64Decode(_) => {
            format!("the private key {key} is damaged: its base64 does not decode")
        }
        e => format!("cannot read the private key {key}: {e}"),
    }
}

/// Why a private key read from PEM cannot sign, in words: an RSA key
/// rustls refuses says why (too small, too large, inconsistent).
fn unusable_key(key: &Path, private: &PrivateKeyDer<'_>, e: &rustls::Error) -> String {
    let rsa = match private {
        PrivateKeyDer::Pkcs1(der) => Some(::ring::rsa::KeyPair::from_der(der.secret_pkcs1_der())),
        PrivateKeyDer::Pkcs8(der) => Some(::ring::rsa::KeyPair::from_pkcs8(der.secret_pkcs8_der())),
        _ => None,
    };
    let key = key.display();
    match rsa.and_then(Result::err).map(|why| why.to_string()) {
        Some(why) if why == "TooSmall" => format!(
            "the private key {key} is an RSA key shorter than 2048 bits, which the TLS \
             library refuses; make a 2048-bit (or an ECDSA P-256) key and certificate"
        ),
        Some(why) if why == "TooLarge" => {
            format!(
                "the private key {key} is an RSA key longer than 8192 bits, which ccc cannot use"
            )
        }
        Some(why) if why != "WrongAlgorithm" && why != "InvalidEncoding" => {
            format!("the private key {key} is an RSA key ccc cannot use: {why}")
        }
        _ => format!(
            "cannot use the private key {key}: {e} (ccc takes RSA of 2048 to 8192 bits, ECDSA \
             P-256 or P-384, or Ed25519)"
        ),
    }
}

fn load_pair(cert: &Path, key: &Path) -> Result<CertifiedKey, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect())
        .map_err(|e| format!("cannot read the certificate {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "{} holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)",
            cert.display()
        ));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| unreadable_key(key, &e))?;
    let signing =
        ring::sign::any_supported_type(&private).map_err(|e| unusable_key(key, &private, &e))?;
    let pair = CertifiedKey::new(chain, signing);
    pair.keys_match().map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => format!(
            "the private key {} does not belong to the certificate {}",
            key.display(),
            cert.display()
        ),
        e => format!(
            "cannot check {} against {}: {e}",
            key.display(),
            cert.display()
        ),
    })?;
    Ok(pair)
}
