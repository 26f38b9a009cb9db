"""RFC 3161 timestamps of checkpoints, from a local OpenSSL timestamp authority."""

import datetime
import shlex
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from rfc3161_client import HashAlgorithm, TimestampRequestBuilder, decode_timestamp_response

from casefiles import audit, timestamps
from casefiles.models import AuditCheckpoint
from tests.casefiles.test_checkpoints import _documented

TSA_CONFIG = """
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = {dir}/serial
signer_cert = {dir}/tsa.pem
certs = {dir}/tsa.pem
signer_key = {dir}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _authority(d, name):
    """A CA and a time-stamping certificate it issued, made with `cryptography`, and the
    OpenSSL configuration of a TSA that signs with it, in folder ``d``."""
    d.mkdir()
    now = datetime.datetime.now(datetime.UTC)
    ca_key, tsa_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )

    def certificate(subject, issuer, public, signer, *extensions):
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(subject))
            .issuer_name(_name(issuer))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=2))
        )
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(signer, hashes.SHA256())

    ca = certificate(
        f"{name} CA",
        f"{name} CA",
        ca_key.public_key(),
        ca_key,
        (x509.BasicConstraints(ca=True, path_length=None), True),
        (x509.KeyUsage(False, False, False, False, False, True, True, False, False), True),
    )
    tsa = certificate(
        name,
        f"{name} CA",
        tsa_key.public_key(),
        ca_key,
        (x509.BasicConstraints(ca=False, path_length=None), False),
        (x509.KeyUsage(True, False, False, False, False, False, False, False, False), True),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), True),
    )
    pem = serialization.Encoding.PEM
    (d / "tsa-ca.pem").write_bytes(ca.public_bytes(pem))
    (d / "tsa.pem").write_bytes(tsa.public_bytes(pem))
    (d / "tsa.key").write_bytes(
        tsa_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (d / "tsa.cnf").write_text(TSA_CONFIG.format(dir=d))
    (d / "serial").write_text("01\n")
    return d


@pytest.fixture
def tsa(tmp_path):
    """A timestamp authority on 127.0.0.1 (`openssl ts -reply` behind a small HTTP
    server), with its own CA. ``mode`` makes it misbehave: "refuse" (503), "tamper" (a
    byte of its reply changed), "other-data" (a reply for other data), "other-tsa" (a
    reply signed by another authority, of another CA)."""
    d = _authority(tmp_path / "tsa", "Test TSA")
    other = _authority(tmp_path / "other", "Other TSA")
    state = {"mode": ""}

    def reply_to(query, where):
        (where / "q.tsq").write_bytes(query)
        _openssl("ts", "-reply", "-queryfile", "q.tsq", "-config", "tsa.cnf",
                 "-section", "tsa_config", "-out", "r.tsr", cwd=where)  # fmt: skip
        return (where / "r.tsr").read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            query = self.rfile.read(int(self.headers["Content-Length"]))
            mode = state["mode"]
            if mode == "refuse" or self.headers["Content-Type"] != "application/timestamp-query":
                self.send_response(503)
                self.end_headers()
                return
            if mode == "other-data":
                query = (
                    TimestampRequestBuilder()
                    .data(b"other data")
                    .hash_algorithm(HashAlgorithm.SHA256)
                    .build()
                    .as_bytes()
                )
            reply = reply_to(query, other if mode == "other-tsa" else d)
            if mode == "tamper":
                reply = reply[:-1] + bytes([reply[-1] ^ 1])
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield type("TSA", (), {"url": f"http://127.0.0.1:{server.server_port}/", "dir": d,
                                "state": state})  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def configured(settings, tsa, key):
    settings.ATHAR_TSA_URL = tsa.url
    settings.ATHAR_TSA_CERTIFICATES = str(tsa.dir / "tsa-ca.pem")
    for n in range(5):
        audit.record(None, "test.event", n=n)
    return tsa


def test_a_checkpoint_is_timestamped_and_the_documented_command_verifies_it(configured, tmp_path):
    call_command("audit_checkpoint", "--out", str(tmp_path / "out"))
    path = tmp_path / "out" / "checkpoint-5"
    assert (path / "checkpoint.tsr").exists()
    assert AuditCheckpoint.objects.get().timestamp_reply
    for name in ("tsa.pem", "tsa-ca.pem"):  # handed over by the TSA
        (path / name).write_bytes((configured.dir / name).read_bytes())
    (block,) = _documented(r"^openssl ts -verify")
    (command,) = [line for line in block.splitlines() if line.startswith("openssl")]
    result = subprocess.run(shlex.split(command), cwd=path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Verification: OK" in result.stdout
    # The token is for this text only.
    (path / "checkpoint.txt").write_text((path / "checkpoint.txt").read_text() + " ")
    result = subprocess.run(shlex.split(command), cwd=path, capture_output=True, text=True)
    assert result.returncode != 0


def test_when_the_authority_refuses_no_checkpoint_is_stored(configured, tmp_path):
    configured.state["mode"] = "refuse"
    with pytest.raises(CommandError, match="timestamp authority"):
        call_command("audit_checkpoint", "--out", str(tmp_path / "out"))
    assert not AuditCheckpoint.objects.exists()


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("tamper", "does not verify against ATHAR_TSA_CERTIFICATES"),
        ("other-data", "not for SHA-256 of this checkpoint's text"),
        ("other-tsa", "does not verify against ATHAR_TSA_CERTIFICATES"),
    ],
)
def test_a_reply_that_does_not_verify_stores_nothing_and_says_why(configured, tmp_path, mode, why):
    configured.state["mode"] = mode
    with pytest.raises(CommandError, match=why):
        call_command("audit_checkpoint", "--out", str(tmp_path / "out"))
    assert not AuditCheckpoint.objects.exists()
    assert not (tmp_path / "out").exists()


def test_a_replayed_reply_with_another_nonce_is_refused(configured):
    data = b"athar/audit\n1\n" + b"0" * 64 + b"\n"
    reply = timestamps.request_timestamp(configured.url, data)
    assert timestamps.check_reply(reply, data, nonce=None)
    nonce = decode_timestamp_response(reply).tst_info.nonce
    with pytest.raises(timestamps.TimestampError, match="nonce"):
        timestamps.check_reply(reply, data, nonce=nonce + 1)


def test_a_tsa_url_without_its_certificates_is_a_configuration_error(configured, settings):
    settings.ATHAR_TSA_CERTIFICATES = ""
    with pytest.raises(ImproperlyConfigured, match="ATHAR_TSA_CERTIFICATES"):
        timestamps.request_timestamp(configured.url, b"x")
