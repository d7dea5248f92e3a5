//! A certificate authority generated at test time (rcgen), and HTTPS serving of an axum
//! router on loopback with a certificate it signed: the TLS authorization server of the auth
//! tests. A client trusts it only when given the CA (e.g. through `SSL_CERT_FILE`).

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::cluster::TempDir;

/// A test CA: its certificate as a PEM file, and a server configuration for `localhost` and
/// `127.0.0.1` signed by it.
pub struct TestCa {
    dir: TempDir,
    server: Arc<rustls::ServerConfig>,
}

impl TestCa {
    /// A new CA named `name`, and a leaf certificate it signed for `localhost`/`127.0.0.1`.
    pub fn new(name: &str) -> TestCa {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, name);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);

        let leaf_key = KeyPair::generate().unwrap();
        let mut leaf =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        leaf.distinguished_name
            .push(DnType::CommonName, "localhost");
        let leaf_cert = leaf.signed_by(&leaf_key, &issuer).unwrap();

        let dir = TempDir::new("test-ca");
        std::fs::write(dir.path().join("ca.pem"), ca_cert.pem()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf_cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
            )
            .unwrap();
        TestCa {
            dir,
            server: Arc::new(server),
        }
    }

    /// The CA certificate's PEM file (for `SSL_CERT_FILE`).
    pub fn pem_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Serves `app` over HTTPS (HTTP/1.1) on `listener` until the task is aborted.
    pub fn serve(&self, listener: TcpListener, app: Router) -> JoinHandle<()> {
        let acceptor = TlsAcceptor::from(self.server.clone());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, app) = (acceptor.clone(), app.clone());
                tokio::spawn(async move {
                    // A client that does not trust the CA aborts the handshake: nothing to serve.
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let _ = Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
                        .await;
                });
            }
        })
    }
}
