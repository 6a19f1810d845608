# The web client in headless chromium over https and wss (docs/security.md):
# the page and its WebSocket come from a TLS listener whose certificate the
# browser is told to trust by its public key (chromium's SPKI pin flag,
# the way a test trusts a test CA's certificate without a system store).
import base64
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from conftest import Server
from test_browser import shot, text_of, wait
from test_tls import make_certificates


def spki_pin(certificate):
    cert = x509.load_pem_x509_certificate(certificate.read_bytes())
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def test_the_web_client_over_https_and_wss(tmp_path):
    ca, cert, key = make_certificates(tmp_path / "certs")
    server = Server(tmp_path / "data", settings=[f"tls-cert-file={cert}", f"tls-key-file={key}", "tls-websocket=on"])
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800", "--lang=en-US",
                f"--user-data-dir={tmp_path / 'profile'}", f"--ignore-certificate-errors-spki-list={spki_pin(cert)}"]:
        options.add_argument(arg)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        d.get(f"https://localhost:{server.ws_port}/?token={server.token('alice')}")
        wait(d, "alice connected over wss", lambda: text_of(d, "#connection") == "connected")
        assert d.execute_script("return location.protocol") == "https:"
        shot(d, "web-client-over-https.png")
    finally:
        d.quit()
        server.stop()
