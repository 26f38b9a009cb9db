"""RFC 3161 timestamps of checkpoints, from a local OpenSSL timestamp authority."""

import shlex
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from casefiles import audit
from casefiles.models import AuditCheckpoint
from tests.casefiles.test_checkpoints import _documented

TSA_CONFIG = """
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = Test TSA
[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign
[ tsa_ext ]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
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


@pytest.fixture
def tsa(tmp_path):
    """A timestamp authority on 127.0.0.1: its own CA, a TSA certificate, `openssl ts`."""
    d = tmp_path / "tsa"
    d.mkdir()
    (d / "tsa.cnf").write_text(TSA_CONFIG.format(dir=d))
    (d / "serial").write_text("01\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "tsa-ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=Test TSA CA",
        "-config",
        "tsa.cnf",
        "-extensions",
        "ca_ext",
        cwd=d,
    )
    _openssl(
        "req",
        "-new",
        *ec,
        "-keyout",
        "tsa.key",
        "-out",
        "tsa.csr",
        "-subj",
        "/CN=Test TSA",
        "-config",
        "tsa.cnf",
        cwd=d,
    )
    _openssl("x509", "-req", "-in", "tsa.csr", "-CA", "tsa-ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "tsa.pem", "-days", "2", "-extfile", "tsa.cnf",
             "-extensions", "tsa_ext", cwd=d)  # fmt: skip
    refuse = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            query = self.rfile.read(int(self.headers["Content-Length"]))
            if refuse.is_set() or self.headers["Content-Type"] != "application/timestamp-query":
                self.send_response(503)
                self.end_headers()
                return
            (d / "q.tsq").write_bytes(query)
            _openssl("ts", "-reply", "-queryfile", "q.tsq", "-config", "tsa.cnf",
                     "-section", "tsa_config", "-out", "r.tsr", cwd=d)  # fmt: skip
            reply = (d / "r.tsr").read_bytes()
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
                                "refuse": refuse})  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def configured(settings, tsa, key):
    settings.ATHAR_TSA_URL = tsa.url
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
    configured.refuse.set()
    with pytest.raises(CommandError, match="timestamp authority"):
        call_command("audit_checkpoint", "--out", str(tmp_path / "out"))
    assert not AuditCheckpoint.objects.exists()
