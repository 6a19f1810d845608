# The WebSocket listener over TLS (wss, docs/security.md), with Python's
# websockets and ssl as the browser's stand-in: a test CA made with the
# openssl command, the server's certificate for localhost.
import json
import ssl
import subprocess

from websockets.sync.client import connect

from conftest import Server


def make_certificates(folder):
    folder.mkdir()
    (folder / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    p256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for command in (["openssl", "req", "-x509", *p256, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Guildhall Test CA"],
                    ["openssl", "req", *p256, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
                    ["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf"]):
        subprocess.run(command, cwd=folder, check=True, capture_output=True)
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


def test_a_browser_session_over_wss(tmp_path):
    ca, cert, key = make_certificates(tmp_path / "certs")
    server = Server(tmp_path / "data", settings=[f"tls-cert-file={cert}", f"tls-key-file={key}", "tls-websocket=on"])
    try:
        context = ssl.create_default_context(cafile=str(ca))
        url = f"wss://localhost:{server.ws_port}/ws"
        with connect(url, subprotocols=["guildhall.json"], ssl=context, open_timeout=10) as ws:
            ws.send(json.dumps({"request": {"id": "1", "login": {"token": server.token("alice")}}}))
            answer = json.loads(ws.recv(timeout=10))
            assert answer["response"]["login"]["userId"] == "alice", answer
            ws.send(json.dumps({"request": {"id": "2", "createServer": {"name": "over wss"}}}))
            while True:
                frame = json.loads(ws.recv(timeout=10))
                if frame.get("response", {}).get("id") == "2":
                    assert frame["response"]["server"]["name"] == "over wss", frame
                    break
        # A client that does not trust the certificate's CA is refused by its own TLS.
        try:
            connect(url, subprotocols=["guildhall.json"], ssl=ssl.create_default_context(), open_timeout=10)
            assert False, "an untrusted certificate was accepted"
        except ssl.SSLCertVerificationError:
            pass
    finally:
        server.stop()
