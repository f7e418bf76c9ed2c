//! TLS by rustls (1.2 and 1.3, ring's algorithms), with ALPN `h2` and
//! `http/1.1`. The certificate and key are PEM files, read at start and
//! again on [`Certificate::reload`] (SIGHUP): handshakes after a reload
//! use the new pair, connections already open keep theirs, and a pair
//! that does not load is reported and the old one kept.

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
use tokio_rustls::server::TlsStream;

/// Accepts TLS connections with the certificate in force.
#[derive(Clone)]
pub struct Acceptor(tokio_rustls::TlsAcceptor);

impl Acceptor {
    pub(super) async fn accept(&self, stream: TcpStream) -> io::Result<TlsStream<TcpStream>> {
        self.0.accept(stream).await
    }
}

/// The certificate and key files, and the pair loaded from them.
pub struct Certificate {
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
    pub fn load(cert: &Path, key: &Path) -> Result<Certificate, String> {
        let pair = load_pair(cert, key)?;
        Ok(Certificate {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            current: Arc::new(Current(RwLock::new(Arc::new(pair)))),
        })
    }

    /// Reads the files again; on success later handshakes use the new
    /// pair.
    pub fn reload(&self) -> Result<(), String> {
        let pair = load_pair(&self.cert, &self.key)?;
        *self
            .current
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(pair);
        Ok(())
    }

    /// An acceptor that always uses the pair in force.
    pub fn acceptor(&self) -> Result<Acceptor, String> {
        let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_cert_resolver(self.current.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Acceptor(tokio_rustls::TlsAcceptor::from(Arc::new(config))))
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
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read the private key {}: {e}", key.display()))?;
    let signing = ring::sign::any_supported_type(&private)
        .map_err(|e| format!("cannot use the private key {}: {e}", key.display()))?;
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
