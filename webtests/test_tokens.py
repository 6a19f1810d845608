# Login tokens minted the way an app's backend mints them with PyJWT
# (docs/security.md): HS256, ES256 and EdDSA keys with key ids, published
# to the server as a JWKS; each logs a WebSocket client in, and a token
# signed by a key the server does not hold is refused with 401.
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives import serialization

from conftest import JsonPeer, RequestFailed, Server, b64url


def ec_jwk(kid, private_key):
    numbers = private_key.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256",
            "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}


def ed_jwk(kid, private_key):
    raw = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "x": b64url(raw)}


def test_pyjwt_tokens_log_in_and_a_stranger_key_is_refused(tmp_path):
    hs_secret = b"an app backend's secret of 32 by"
    es_key = ec.generate_private_key(ec.SECP256R1())
    ed_key = ed25519.Ed25519PrivateKey.generate()
    jwks = {"keys": [{"kty": "oct", "kid": "hs-1", "alg": "HS256", "k": b64url(hs_secret)},
                     ec_jwk("es-1", es_key), ed_jwk("ed-1", ed_key)]}
    keys_file = tmp_path / "token-keys.json"
    keys_file.write_text(json.dumps(jwks))
    server = Server(tmp_path / "data", settings=[f"token-keys-file={keys_file}"])
    try:
        expiry = int(time.time()) + 600
        for kid, key, alg in [("hs-1", hs_secret, "HS256"), ("es-1", es_key, "ES256"), ("ed-1", ed_key, "EdDSA")]:
            token = jwt.encode({"sub": f"user-{kid}", "exp": expiry, "device": "browser"}, key, algorithm=alg, headers={"kid": kid})
            peer = JsonPeer(server)
            login = peer.request({"login": {"token": token}})
            assert login["login"]["userId"] == f"user-{kid}" and login["login"]["deviceId"] == "browser", (kid, login)
            peer.ws.close()

        stranger = ec.generate_private_key(ec.SECP256R1())
        token = jwt.encode({"sub": "mallory", "exp": expiry}, stranger, algorithm="ES256", headers={"kid": "es-1"})
        peer = JsonPeer(server)
        with pytest.raises(RequestFailed) as refused:
            peer.request({"login": {"token": token}})
        assert refused.value.error["code"] == "UNAUTHENTICATED" and "signature" in refused.value.error["message"], refused.value.error
    finally:
        server.stop()
