//! [`Algorithm`]: the JWT signature algorithms a resource server may accept, our own type
//! (mapped to the JWT library's inside this module only).

use std::fmt;

/// A JWT signature algorithm a [`ResourceServer`](super::ResourceServer) may accept
/// ([`ResourceServerBuilder::algorithms`](super::ResourceServerBuilder::algorithms)).
///
/// Only asymmetric algorithms exist here: a resource server verifies with the issuer's
/// public keys, so `none` and the HMAC family cannot be chosen at all. [`Algorithm::ALL`]
/// is the default set.
///
/// ```
/// use stateless_mcp::auth::{Algorithm, ResourceServer};
///
/// assert_eq!(Algorithm::ES256.to_string(), "ES256");
/// let auth = ResourceServer::builder("https://mcp.example.com/mcp")
///     .issuer("https://auth.example.com")
///     .algorithms([Algorithm::ES256, Algorithm::EdDSA])
///     .build()
///     .unwrap();
/// # drop(auth);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// EdDSA (Ed25519).
    EdDSA,
}

impl Algorithm {
    /// Every algorithm, the default set a resource server accepts.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
        Algorithm::ES256,
        Algorithm::ES384,
        Algorithm::EdDSA,
    ];

    /// Its name in a JOSE header (`alg`), e.g. `"RS256"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::RS256 => "RS256",
            Algorithm::RS384 => "RS384",
            Algorithm::RS512 => "RS512",
            Algorithm::PS256 => "PS256",
            Algorithm::PS384 => "PS384",
            Algorithm::PS512 => "PS512",
            Algorithm::ES256 => "ES256",
            Algorithm::ES384 => "ES384",
            Algorithm::EdDSA => "EdDSA",
        }
    }

    /// The JWT library's value for it.
    pub(crate) fn to_jwt(self) -> jsonwebtoken::Algorithm {
        use jsonwebtoken::Algorithm as J;
        match self {
            Algorithm::RS256 => J::RS256,
            Algorithm::RS384 => J::RS384,
            Algorithm::RS512 => J::RS512,
            Algorithm::PS256 => J::PS256,
            Algorithm::PS384 => J::PS384,
            Algorithm::PS512 => J::PS512,
            Algorithm::ES256 => J::ES256,
            Algorithm::ES384 => J::ES384,
            Algorithm::EdDSA => J::EdDSA,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Algorithm;

    #[test]
    fn every_algorithm_maps_to_the_same_name_in_the_jwt_library() {
        for a in Algorithm::ALL {
            assert_eq!(format!("{:?}", a.to_jwt()), a.as_str());
            assert_eq!(
                a.as_str().parse::<jsonwebtoken::Algorithm>().unwrap(),
                a.to_jwt()
            );
        }
    }
}
