"""Witnesses' cosignatures of checkpoints (C2SP tlog-cosignature), checked byte for byte
against the specification written out here, stored only when they verify against a known
witness key, published with the checkpoint; and the consistency proof a witness asks for."""

import base64
import hashlib
import json
from io import StringIO

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError

from casefiles import audit, checkpoints, cosignatures, services
from casefiles.models import AuditCheckpoint, AuditEntry, Cosignature

TEXT = "athar/audit\n12\n" + "ab" * 32 + "\n"


def _flip(line, at):
    """The line with one base64 digit of its signature changed."""
    return line[:at] + ("B" if line[at] == "A" else "A") + line[at + 1 :]


def _spec_line(name, private, text, t):
    """The C2SP cosignature/v1 line, from the specification's words."""
    raw = private.public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode("utf-8") + b"\n" + b"\x04" + raw).digest()[:4]
    signed = b"cosignature/v1\ntime " + str(t).encode("ascii") + b"\n" + text.encode()
    signature = private.sign(signed)  # Ed25519 is deterministic
    return (
        "\u2014 "
        + name
        + " "
        + base64.b64encode(key_id + t.to_bytes(8, "big") + signature).decode()
    )


def test_the_line_is_the_c2sp_form_byte_for_byte():
    private = Ed25519PrivateKey.generate()
    line = cosignatures.sign_line("court.example/witness", private, TEXT, 1767225600)
    assert line == _spec_line("court.example/witness", private, TEXT, 1767225600)
    assert line.startswith("— court.example/witness ")
    assert cosignatures.message(TEXT, 7) == b"cosignature/v1\ntime 7\n" + TEXT.encode()
    assert (
        cosignatures.verify_line(line, TEXT, "court.example/witness", private.public_key())
        == 1767225600
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda line, text: (line, text.replace("12", "13")), "does not verify"),
        (lambda line, text: (line.replace("—", "-"), text), "not a cosignature line"),
        (lambda line, text: (line.replace(" ", "  ", 1), text), "not a cosignature line"),
        (lambda line, text: (_flip(line, -10), text), "does not verify"),
        (lambda line, text: (line[:-4], text), "not base64|not 76"),
        (lambda line, text: (line.replace("witness", "witnesz"), text), "signed as"),
    ],
    ids=["other-checkpoint", "hyphen", "two-spaces", "altered-signature", "cut", "other-name"],
)
def test_a_line_that_is_not_exactly_this_witness_cosigning_this_checkpoint_is_refused(change, why):
    private = Ed25519PrivateKey.generate()
    line, text = change(cosignatures.sign_line("witness", private, TEXT, 100), TEXT)
    with pytest.raises(cosignatures.CosignatureError, match=why):
        cosignatures.verify_line(line, text, "witness", private.public_key())


def test_a_line_by_another_key_of_the_same_name_is_refused():
    line = cosignatures.sign_line("witness", Ed25519PrivateKey.generate(), TEXT, 100)
    with pytest.raises(cosignatures.CosignatureError, match="not by the key known"):
        cosignatures.verify_line(line, TEXT, "witness", Ed25519PrivateKey.generate().public_key())


# Stored, audited, published ---------------------------------------------------------------


@pytest.fixture
def witnesses(settings, tmp_path):
    """Two witnesses the organisation knows, in an ATHAR_WITNESS_KEYS file."""
    keys = {"ngo.example/witness": Ed25519PrivateKey.generate(),
            "court.example/w1": Ed25519PrivateKey.generate()}  # fmt: skip
    folder = tmp_path / "witnesses"
    folder.mkdir()
    lines = ["# name, then its public key file"]
    for n, (name, private) in enumerate(keys.items()):
        (folder / f"w{n}.pem").write_text(checkpoints.public_pem(private.public_key()))
        lines.append(f"{name} w{n}.pem")
    (folder / "witnesses.txt").write_text("\n".join(lines) + "\n")
    settings.ATHAR_WITNESS_KEYS = str(folder / "witnesses.txt")
    return keys


@pytest.fixture
def published(key, settings, tmp_path):
    """Two published checkpoints (sizes 3 and 6) under $ATHAR_DATA_DIR/checkpoints."""
    settings.DATA_DIR = tmp_path / "data"
    for n in range(3):
        audit.record(None, "test.event", n=n)
    first, _ = services.publish_audit_checkpoint()
    for n in range(2):
        audit.record(None, "test.event", n=n)
    second, where = services.publish_audit_checkpoint()
    return first, second, where


def test_a_known_witness_cosignature_is_stored_audited_and_published(
    witnesses, published, tmp_path
):
    _first, row, where = published
    lines = [
        cosignatures.sign_line(name, private, row.signed_text, 1767225600 + n)
        for n, (name, private) in enumerate(witnesses.items())
    ]
    (tmp_path / "cosig.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = StringIO()
    call_command("cosignature", "add", "--checkpoint", str(row.size), str(tmp_path / "cosig.txt"),
                 stdout=out)  # fmt: skip
    assert "cosigned by ngo.example/witness at 1767225600" in out.getvalue()
    stored = Cosignature.objects.filter(checkpoint=row).order_by("time")
    assert [(c.witness, c.time) for c in stored] == [
        ("ngo.example/witness", 1767225600),
        ("court.example/w1", 1767225601),
    ]
    assert stored[0].key_fingerprint == checkpoints.fingerprint(
        witnesses["ngo.example/witness"].public_key()
    )
    entries = AuditEntry.objects.filter(action="audit.cosignature_added").order_by("seq")
    assert [e.details["witness"] for e in entries] == ["ngo.example/witness", "court.example/w1"]
    assert {e.target_id for e in entries} == {str(row.pk)}
    # Published: the bundle's sorted lines, and checkpoint.cosig beside the checkpoint.
    assert checkpoints.bundle(row, None)["cosignatures"] == sorted(lines)
    assert (where / "checkpoint.cosig").read_text(encoding="utf-8") == "".join(
        f"{line}\n" for line in sorted(lines)
    )
    assert json.loads((where / "checkpoint.json").read_text())["cosignatures"] == sorted(lines)
    # The same line again is the same cosignature: nothing new.
    services.add_cosignature(row, lines[0])
    assert Cosignature.objects.count() == 2
    assert AuditEntry.objects.filter(action="audit.cosignature_added").count() == 2


def test_cosignatures_the_organisation_cannot_verify_are_refused(witnesses, published, tmp_path):
    first, row, _where = published
    ngo = witnesses["ngo.example/witness"]
    refused = {
        "no witness named 'stranger' is known": cosignatures.sign_line(
            "stranger", Ed25519PrivateKey.generate(), row.signed_text, 1
        ),
        "does not verify for this checkpoint": cosignatures.sign_line(
            "ngo.example/witness", ngo, first.signed_text, 1
        ),
        "not by the key known": cosignatures.sign_line(
            "ngo.example/witness", Ed25519PrivateKey.generate(), row.signed_text, 1
        ),
        "not a cosignature line": "ngo.example/witness AAAA",
    }
    for why, line in refused.items():
        (tmp_path / "c.txt").write_text(line + "\n", encoding="utf-8")
        with pytest.raises(CommandError, match=why):
            call_command(
                "cosignature", "add", "--checkpoint", str(row.size), str(tmp_path / "c.txt")
            )
    services.add_cosignature(
        row, cosignatures.sign_line("ngo.example/witness", ngo, row.signed_text, 5)
    )
    with pytest.raises(Exception, match="already cosigned"):
        services.add_cosignature(
            row, cosignatures.sign_line("ngo.example/witness", ngo, row.signed_text, 6)
        )
    assert Cosignature.objects.count() == 1
    assert AuditEntry.objects.filter(action="audit.cosignature_added").count() == 1
    with pytest.raises(CommandError, match="no checkpoint of size 4"):
        call_command("cosignature", "add", "--checkpoint", "4", str(tmp_path / "c.txt"))


def test_the_proof_a_witness_asks_for_verifies_between_the_two_checkpoints(published):
    first, second, _where = published
    out = StringIO()
    call_command("checkpoint_proof", "--from", str(first.size), stdout=out)
    data = json.loads(out.getvalue())
    assert data["from"] == {"size": first.size, "root": first.root}
    assert data["to"] == {"size": second.size, "root": second.root}
    assert checkpoints.verify_consistency(
        first.size,
        second.size,
        bytes.fromhex(first.root),
        bytes.fromhex(second.root),
        [bytes.fromhex(p) for p in data["proof"]],
    )
    out = StringIO()
    call_command("checkpoint_proof", "--from", str(first.size), "--to", str(first.size), stdout=out)
    assert json.loads(out.getvalue())["proof"] == []
    for args, why in (
        (["--from", "2"], "No checkpoint of size 2"),
        (["--from", str(first.size), "--to", "5"], "No checkpoint of size 5"),
        (["--from", str(second.size), "--to", str(first.size)], "must not be larger"),
    ):
        with pytest.raises(CommandError, match=why):
            call_command("checkpoint_proof", *args)
    assert AuditCheckpoint.objects.count() == 2


def test_no_proof_is_given_from_a_log_rewritten_under_the_checkpoints(published):
    from tests.casefiles.test_checkpoints import _rewrite_log, _rows

    first, _second, _where = published
    rows = _rows()
    rows[1]["details"] = {"n": 99}  # an entry the first checkpoint covers, changed
    _rewrite_log(rows)
    with pytest.raises(CommandError, match=f"no longer matches checkpoint {first.size}"):
        call_command("checkpoint_proof", "--from", str(first.size))
