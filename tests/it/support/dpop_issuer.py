"""A small OAuth authorization server for the DPoP tests, run as its own process.

It publishes RFC 8414 metadata and a JWKS (one P-256 key, generated at start), and mints
access tokens at POST /token for a client that proves possession of its key with a DPoP
proof (RFC 9449 §4.3: typ, alg, public jwk, signature, htm, htu, iat, jti): JWTs with
`cnf.jkt` (format=jwt), or opaque tokens whose RFC 7662 introspection answer carries `cnf`
(format=opaque). Without a DPoP header it mints plain bearer tokens. The thumbprint is
computed here (RFC 7638), independently of the resource server under test.

Prints {"issuer": "http://127.0.0.1:PORT"} on its first stdout line, then serves until
killed. Needs PyJWT and cryptography (both in the test venv).
"""

import base64
import hashlib
import json
import secrets
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

CLIENT = ("mcp-resource-server", "introspection-secret")
KEY = ec.generate_private_key(ec.SECP256R1())
KID = "dpop-as-1"
PUBLIC_JWK = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(KEY.public_key()))
PUBLIC_JWK.update({"kid": KID, "use": "sig", "alg": "ES256"})
OPAQUE = {}
USED_JTIS = set()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk):
    members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
    required = members[jwk["kty"]]
    canonical = json.dumps({k: jwk[k] for k in required}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def b64json(segment):
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("[issuer] " + fmt % args + "\n")

    def issuer(self):
        return "http://%s:%d" % self.server.server_address[:2]

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        i = self.issuer()
        if self.path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            self.reply(200, {
                "issuer": i,
                "token_endpoint": i + "/token",
                "jwks_uri": i + "/jwks",
                "introspection_endpoint": i + "/introspect",
                "response_types_supported": ["code"],
                "dpop_signing_alg_values_supported": ["ES256"],
            })
        elif self.path == "/jwks":
            self.reply(200, {"keys": [PUBLIC_JWK]})
        else:
            self.reply(404, {"error": "not_found"})

    def form(self):
        length = int(self.headers.get("content-length", "0"))
        return dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))

    def proof_key(self):
        """The thumbprint of the key a valid DPoP proof for POST /token proves, or an error."""
        proof = self.headers.get("dpop")
        if proof is None:
            return None, None
        try:
            header = b64json(proof.split(".")[0])
            if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
                return None, "bad typ or alg"
            key_jwk = header["jwk"]
            if "d" in key_jwk:
                return None, "private key in proof"
            key = jwt.PyJWK(key_jwk, algorithm="ES256").key
            claims = jwt.decode(proof, key=key, algorithms=["ES256"], options={"verify_aud": False})
        except Exception as e:  # noqa: BLE001 - any failure is an invalid proof
            return None, "invalid proof: %s" % e
        if claims.get("htm") != "POST" or claims.get("htu") != self.issuer() + "/token":
            return None, "htm/htu"
        if abs(time.time() - claims.get("iat", 0)) > 60:
            return None, "iat"
        if claims.get("jti") in USED_JTIS:
            return None, "replayed"
        USED_JTIS.add(claims.get("jti"))
        return thumbprint(key_jwk), None

    def do_POST(self):
        form = self.form()
        if self.path == "/token":
            jkt, error = self.proof_key()
            if error:
                self.reply(400, {"error": "invalid_dpop_proof", "error_description": error})
                return
            now = int(time.time())
            claims = {
                "iss": self.issuer(),
                "sub": form.get("sub", "dpop-user"),
                "aud": form["resource"],
                "client_id": "dpop-client",
                "scope": form.get("scope", ""),
                "iat": now,
                "exp": now + 3600,
                "jti": secrets.token_urlsafe(12),
            }
            if jkt:
                claims["cnf"] = {"jkt": jkt}
            if form.get("format", "jwt") == "opaque":
                token = secrets.token_urlsafe(24)
                OPAQUE[token] = dict(claims, active=True, token_type="DPoP" if jkt else "Bearer")
            else:
                token = jwt.encode(claims, KEY, algorithm="ES256", headers={"kid": KID, "typ": "at+jwt"})
            self.reply(200, {"access_token": token, "token_type": "DPoP" if jkt else "Bearer",
                             "expires_in": 3600})
        elif self.path == "/introspect":
            expected = "Basic " + base64.b64encode(("%s:%s" % CLIENT).encode()).decode()
            if self.headers.get("authorization") != expected:
                self.reply(401, {"error": "invalid_client"})
                return
            self.reply(200, OPAQUE.get(form.get("token", ""), {"active": False}))
        else:
            self.reply(404, {"error": "not_found"})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(json.dumps({"issuer": "http://127.0.0.1:%d" % server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
