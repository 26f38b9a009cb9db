"""Signed Merkle checkpoints: proofs checked against an independent implementation of
RFC 6962, tampering detected, forged signatures refused, and the documented OpenSSL
command run exactly as written."""

import base64
import hashlib
import json
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from casefiles import audit, checkpoints
from casefiles.audit import GENESIS_HASH, HASHED_FIELDS, entry_hash
from casefiles.models import AuditCheckpoint, AuditEntry
from tests.db_guard import guard_lifted

DOC = Path(django_settings.BASE_DIR) / "docs" / "audit-checkpoints.md"


# An independent RFC 6962 implementation: the definitions of §2.1, as recursion over
# lists, and verifiers that rebuild the roots along the same recursion. -----------------


def _h(data):
    return hashlib.sha256(data).digest()


def ref_mth(d):
    if len(d) == 0:
        return _h(b"")
    if len(d) == 1:
        return _h(b"\x00" + d[0])
    k = 1
    while k * 2 < len(d):
        k *= 2
    return _h(b"\x01" + ref_mth(d[:k]) + ref_mth(d[k:]))


def _k(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def ref_path(m, d):
    if len(d) <= 1:
        return []
    k = _k(len(d))
    if m < k:
        return [*ref_path(m, d[:k]), ref_mth(d[k:])]
    return [*ref_path(m - k, d[k:]), ref_mth(d[:k])]


def ref_proof(m, d):
    def sub(m, d, b):
        n = len(d)
        if m == n:
            return [] if b else [ref_mth(d)]
        k = _k(n)
        if m <= k:
            return [*sub(m, d[:k], b), ref_mth(d[k:])]
        return [*sub(m - k, d[k:], False), ref_mth(d[:k])]

    return sub(m, d, True)


def ref_root_from_path(leaf_data, m, n, path):
    """Rebuild the root from an audit path, following PATH's recursion (None if malformed)."""
    path = list(path)
    if n == 1:
        return None if path else _h(b"\x00" + leaf_data)
    if not path:
        return None
    k, sibling = _k(n), path[-1]
    if m < k:
        left = ref_root_from_path(leaf_data, m, k, path[:-1])
        return None if left is None else _h(b"\x01" + left + sibling)
    right = ref_root_from_path(leaf_data, m - k, n - k, path[:-1])
    return None if right is None else _h(b"\x01" + sibling + right)


def ref_roots_from_proof(m, n, proof, old_root):
    """(old root, new root) rebuilt along SUBPROOF's recursion, or None if malformed."""

    def sub(m, n, b, proof):
        # returns (old subtree root, new subtree root) for a subtree of n leaves whose
        # first m leaves belong to the old tree
        if m == n:
            if b:
                return None if proof else (old_root, old_root)
            return None if len(proof) != 1 else (proof[0], proof[0])
        if not proof:
            return None
        k, last = _k(n), proof[-1]
        if m <= k:
            inner = sub(m, k, b, proof[:-1])
            if inner is None:
                return None
            return inner[0], _h(b"\x01" + inner[1] + last)
        inner = sub(m - k, n - k, False, proof[:-1])
        if inner is None:
            return None
        return _h(b"\x01" + last + inner[0]), _h(b"\x01" + last + inner[1])

    return sub(m, n, True, list(proof))


LEAVES = [hashlib.sha256(f"entry {i}".encode()).digest() for i in range(70)]


def test_roots_and_proofs_match_the_reference_for_every_size_up_to_70():
    for n in range(1, 71):
        d = LEAVES[:n]
        root = ref_mth(d)
        assert checkpoints.root_of(d) == (n, root)
        for m in range(n):
            path = checkpoints.inclusion_proof(d, m, n)
            assert path == ref_path(m, d), (m, n)
            assert ref_root_from_path(d[m], m, n, path) == root
            assert checkpoints.verify_inclusion(d[m], m, n, path, root)
        for m in range(1, n + 1):
            proof = checkpoints.consistency_proof(d, m, n)
            assert proof == ref_proof(m, d), (m, n)
            old = ref_mth(d[:m])
            assert ref_roots_from_proof(m, n, proof, old) == (old, root), (m, n)
            assert checkpoints.verify_consistency(m, n, old, root, proof), (m, n)


def test_verifiers_refuse_wrong_leaves_indexes_and_proof_hashes():
    bad = hashlib.sha256(b"forged").digest()
    for n in range(1, 71):
        d = LEAVES[:n]
        root = ref_mth(d)
        for m in range(n):
            path = checkpoints.inclusion_proof(d, m, n)
            assert not checkpoints.verify_inclusion(bad, m, n, path, root)
            if n > 1:
                assert not checkpoints.verify_inclusion(d[m], (m + 1) % n, n, path, root)
            for i in range(len(path)):
                forged = [*path[:i], bad, *path[i + 1 :]]
                assert not checkpoints.verify_inclusion(d[m], m, n, forged, root)
        for m in range(1, n):
            proof = checkpoints.consistency_proof(d, m, n)
            old = ref_mth(d[:m])
            assert not checkpoints.verify_consistency(m, n, bad, root, proof)
            assert not checkpoints.verify_consistency(m, n, old, bad, proof)
            for i in range(len(proof)):
                forged = [*proof[:i], bad, *proof[i + 1 :]]
                assert not checkpoints.verify_consistency(m, n, old, root, forged)


# On the real log ------------------------------------------------------------------------


@pytest.fixture
def log(db, key):
    for n in range(10):
        audit.record(None, "test.event", n=n, text=f"event {n}")


def _checkpoint(tmp_path):
    call_command("audit_checkpoint", "--out", str(tmp_path))
    row = AuditCheckpoint.objects.order_by("-size").first()
    return tmp_path / f"checkpoint-{row.size}"


def _verify(path, *args):
    try:
        call_command("verify_audit", "--checkpoint", str(path / "checkpoint.json"), *args)
    except CommandError as exc:
        return str(exc)
    return "ok"


def _rows():
    return list(AuditEntry.objects.order_by("seq").values(*HASHED_FIELDS))


def _rewrite_log(rows):
    """What someone holding the database could do: replace the log with these contents,
    renumbered and re-chained, so that the hash chain alone looks whole."""
    table = AuditEntry._meta.db_table
    with guard_lifted(table):
        with connection.cursor() as cursor:
            cursor.execute(f'DELETE FROM "{table}"')
        prev = GENESIS_HASH
        for seq, row in enumerate(rows, start=1):
            values = {**row, "seq": seq}
            entry = AuditEntry(**values, prev_hash=prev, hash=entry_hash(prev, values))
            entry._via_record = True
            entry.save()
            prev = entry.hash
    assert audit.verify_chain().ok


def test_a_checkpoint_is_stored_signed_and_verifies_with_later_entries(log, tmp_path, key):
    path = _checkpoint(tmp_path)
    row = AuditCheckpoint.objects.get()
    assert row.size == 10
    assert row.root == ref_mth(checkpoints.stored_leaves()[:10]).hex()
    assert (path / "checkpoint.txt").read_text() == f"athar/audit\n10\n{row.root}\n"
    key.public_key().verify((path / "checkpoint.sig").read_bytes(), row.signed_text.encode())
    assert AuditEntry.objects.order_by("-seq").first().action == "audit.checkpoint"
    audit.record(None, "test.later")
    assert _verify(path, "--entry", "4") == "ok"


def test_a_second_checkpoint_carries_a_consistency_proof_from_the_first(log, tmp_path):
    first = _checkpoint(tmp_path)
    audit.record(None, "test.later")
    second = _checkpoint(tmp_path)
    a = json.loads((first / "checkpoint.json").read_text())
    b = json.loads((second / "checkpoint.json").read_text())
    proof = [bytes.fromhex(p) for p in b["consistency_from_previous"]["proof"]]
    assert b["consistency_from_previous"]["size"] == a["size"] == 10
    assert b["size"] == 12  # the first checkpoint's own entry, then test.later
    old, new = bytes.fromhex(a["root"]), bytes.fromhex(b["root"])
    assert ref_roots_from_proof(10, 12, proof, old) == (old, new)


def test_a_changed_entry_fails_even_when_the_chain_is_recomputed(log, tmp_path):
    path = _checkpoint(tmp_path)
    rows = _rows()
    rows[4]["details"] = {**rows[4]["details"], "text": "something else"}
    _rewrite_log(rows)
    assert "no longer hash to the signed root" in _verify(path)


def test_a_removed_entry_fails_even_when_the_chain_is_recomputed(log, tmp_path):
    path = _checkpoint(tmp_path)
    rows = _rows()
    del rows[6]
    _rewrite_log(rows)
    assert "no longer hash to the signed root" in _verify(path)


def test_reordered_entries_fail_even_when_the_chain_is_recomputed(log, tmp_path):
    path = _checkpoint(tmp_path)
    rows = _rows()
    rows[2], rows[3] = rows[3], rows[2]
    _rewrite_log(rows)
    assert "no longer hash to the signed root" in _verify(path)


def test_entries_cut_from_the_end_fail(log, tmp_path):
    path = _checkpoint(tmp_path)
    _rewrite_log(_rows()[:8])
    assert "fewer than the 10 signed" in _verify(path)


def test_a_forged_signature_fails(log, tmp_path):
    path = _checkpoint(tmp_path)
    data = json.loads((path / "checkpoint.json").read_text())
    sig = bytearray(base64.b64decode(data["signature"]))
    sig[0] ^= 1
    data["signature"] = base64.b64encode(bytes(sig)).decode()
    (path / "checkpoint.json").write_text(json.dumps(data))
    assert "signature does not verify" in _verify(path)


def test_a_checkpoint_signed_by_another_key_fails_even_with_that_key_beside_it(log, tmp_path):
    path = _checkpoint(tmp_path)
    data = json.loads((path / "checkpoint.json").read_text())
    _rewrite_log(_rows()[:7])  # the forger rewrote the log and signs its new root
    forger = Ed25519PrivateKey.generate()
    signed = checkpoints.SignedCheckpoint("athar/audit", 7, ref_mth(checkpoints.stored_leaves()))
    data.update(
        size=7,
        root=signed.root.hex(),
        signed_text=signed.text(),
        signature=base64.b64encode(forger.sign(signed.text().encode())).decode(),
        public_key=checkpoints.public_pem(forger.public_key()),
    )
    (path / "checkpoint.json").write_text(json.dumps(data))
    assert "signature does not verify" in _verify(path)


def test_verification_with_an_explicitly_trusted_public_key(log, tmp_path, key):
    path = _checkpoint(tmp_path)
    trusted = tmp_path / "trusted.pem"
    trusted.write_text(checkpoints.public_pem(key.public_key()))
    assert _verify(path, "--public-key", str(trusted)) == "ok"
    trusted.write_text(checkpoints.public_pem(Ed25519PrivateKey.generate().public_key()))
    assert "signature does not verify" in _verify(path, "--public-key", str(trusted))


def _documented(pattern):
    blocks = re.findall(r"```(\w*)\n(.*?)```", DOC.read_text(), re.S)
    return [body for lang, body in blocks if re.search(pattern, body)]


def test_the_documented_openssl_command_verifies_a_checkpoint_and_catches_a_change(log, tmp_path):
    (block,) = _documented(r"(?m)^openssl pkeyutl")
    (command,) = [line for line in block.splitlines() if line.startswith("openssl")]
    path = _checkpoint(tmp_path)
    result = subprocess.run(shlex.split(command), cwd=path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Signature Verified Successfully" in result.stdout
    text = (path / "checkpoint.txt").read_text().replace("\n10\n", "\n11\n")
    (path / "checkpoint.txt").write_text(text)
    result = subprocess.run(shlex.split(command), cwd=path, capture_output=True, text=True)
    assert result.returncode != 0
    assert "Signature Verification Failure" in result.stdout + result.stderr


def test_the_documented_python_checks_the_proofs_verify_audit_prints(log, tmp_path, capsys):
    (code,) = _documented(r"def verify_consistency")
    namespace = {}
    exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 (our own documentation)
    path = _checkpoint(tmp_path)
    audit.record(None, "test.later")
    capsys.readouterr()
    assert _verify(path, "--entry", "7") == "ok"
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    consistency = next(x["consistency"] for x in lines if "consistency" in x)
    inclusion = next(x["inclusion"] for x in lines if "inclusion" in x)
    data = json.loads((path / "checkpoint.json").read_text())
    hashes = [bytes.fromhex(h) for h in AuditEntry.objects.values_list("hash", flat=True)]
    assert namespace["root"](hashes[:10]).hex() == data["root"]
    assert namespace["verify_inclusion"](
        inclusion["entry_hash"], 6, 10, inclusion["proof"], data["root"]
    )
    assert not namespace["verify_inclusion"](
        inclusion["entry_hash"], 5, 10, inclusion["proof"], data["root"]
    )
    args = (10, consistency["new_size"], data["root"], consistency["new_root"])
    assert namespace["verify_consistency"](*args, consistency["proof"])
    assert not namespace["verify_consistency"](*args, [*consistency["proof"][::-1], "00" * 32])


def test_the_development_key_is_generated_once_and_kept_private(settings, tmp_path):
    settings.ATHAR_CHECKPOINT_KEY = ""
    settings.ATHAR_CHECKPOINT_KEY_FILE = tmp_path / "checkpoint_key.pem"
    first = checkpoints.public_pem(checkpoints.signing_key().public_key())
    assert first == checkpoints.public_pem(checkpoints.signing_key().public_key())
    assert stat.S_IMODE(settings.ATHAR_CHECKPOINT_KEY_FILE.stat().st_mode) == 0o600


def test_the_key_may_be_given_as_base64(settings, key):
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    settings.ATHAR_CHECKPOINT_KEY = base64.b64encode(raw).decode()
    assert checkpoints.public_pem(checkpoints.signing_key().public_key()) == (
        checkpoints.public_pem(key.public_key())
    )


def test_checkpoints_cannot_be_changed_in_the_database(log, tmp_path):
    from django.db import DatabaseError, transaction

    _checkpoint(tmp_path)
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("UPDATE casefiles_auditcheckpoint SET root = 'x'")


def test_verify_audit_takes_the_folder_audit_checkpoint_prints(log, tmp_path, capsys):
    call_command("audit_checkpoint", "--out", str(tmp_path))
    printed = capsys.readouterr().out
    folder = re.search(r"written to (\S+)", printed)[1]
    audit.record(None, "test.later")
    call_command("audit_checkpoint", "--out", str(tmp_path))
    capsys.readouterr()
    # The folder it printed, the newest one by its stable name, and the folder of them all.
    for named in (folder, tmp_path / "latest", tmp_path):
        call_command("verify_audit", "--checkpoint", str(named), "--entry", "3")
        out = capsys.readouterr().out
        assert "checkpoint OK" in out and "entry 3 is included" in out
    assert "size 12" in out  # the folder of folders: the newest checkpoint
    assert (tmp_path / "latest").resolve() == (tmp_path / "checkpoint-12").resolve()
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match=r"no checkpoint\.json"):
        call_command("verify_audit", "--checkpoint", str(tmp_path / "empty"))
