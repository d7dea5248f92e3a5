"""Writes a curl config of N tools/call echo requests, each with its own DPoP proof (or,
with --bearer, the same bearer token), for benches/load/callgrind_auth_rate.sh.

    python dpop_requests.py ISSUER URL RESOURCE BODY N OUT [--bearer]

Gets a token from ISSUER (tests/it/support/dpop_issuer.py) bound to a fresh P-256 key,
then signs one proof per request (fresh jti, iat now, ath of the token).
"""

import base64
import hashlib
import json
import secrets
import sys
import time
import urllib.parse
import urllib.request

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

issuer, url, resource, body, n, out = sys.argv[1:7]
bearer = "--bearer" in sys.argv[7:]
key = ec.generate_private_key(ec.SECP256R1())
jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))


def proof(method, htu, token=None):
    claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": htu, "iat": int(time.time())}
    if token:
        digest = hashlib.sha256(token.encode()).digest()
        claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return jwt.encode(claims, key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": jwk})


form = urllib.parse.urlencode({"resource": resource, "scope": "mcp"}).encode()
req = urllib.request.Request(issuer + "/token", data=form, method="POST")
if not bearer:
    req.add_header("DPoP", proof("POST", issuer + "/token"))
token = json.load(urllib.request.urlopen(req))["access_token"]
scheme = "Bearer" if bearer else "DPoP"
with open(out, "w") as f:
    for i in range(int(n)):
        if i:
            f.write("next\n")
        f.write('url = "%s?r=%d"\n' % (url, i))
        f.write('request = "POST"\noutput = "/dev/null"\n')
        f.write('write-out = "%{http_code} %{time_total}\\n"\n')
        for h in ("Content-Type: application/json",
                  "Accept: application/json, text/event-stream",
                  "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: echo",
                  "Authorization: %s %s" % (scheme, token)):
            f.write('header = "%s"\n' % h)
        if not bearer:
            f.write('header = "DPoP: %s"\n' % proof("POST", resource, token))
        f.write('data-binary = "@%s"\n' % body)
