"""The bag a package is built into: valid for the Library of Congress validator and the
Athar profile, signed, verifiable offline with openssl and the bundled verify.py, every
tamper named; byte for byte the same when built again; witnesses kept protected."""

import io
import json
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from casefiles.audit import verify_log
from disclosure import services
from disclosure.exporting import custody_of, items_csv
from disclosure.models import Package
from disclosure.services import building
from evidence.models import CustodyEvent
from tests.evidence.helpers import stored_bytes

from .conftest import BODY, CRITICAL_LATIN, CRITICAL_NAME, STANDARD_LATIN

pytestmark = pytest.mark.django_db
BAGIT = str(Path(sys.executable).parent / "bagit.py")


def approved(world, **kwargs):
    values = {"recipient": BODY, "purpose": "prosecution", "select": "all"}
    values.update(kwargs)
    allowed = values.pop("allowed", [])
    package = services.request_package(actor=world.cast.lawyer, case=world.case, **values)
    return services.approve_package(actor=world.cast.lead, package=package, allowed_fields=allowed)


def build(package, out: Path) -> str:
    stdout = io.StringIO()
    call_command("disclosure", "build", str(package.pk), "--out", str(out), stdout=stdout)
    return stdout.getvalue()


@pytest.fixture
def bag(world, tmp_path):
    package = approved(world)
    build(package, tmp_path / "bag")
    return tmp_path / "bag"


def verify_package(path: Path) -> str:
    out = io.StringIO()
    call_command("verify_package", str(path), stdout=out)
    return out.getvalue()


def test_the_bag_holds_the_originals_byte_for_byte_and_validates(world, bag):
    package = Package.objects.get()
    assert package.status == Package.Status.READY
    originals = sorted((bag / "data" / "originals").iterdir())
    assert [p.name for p in originals] == [f"{package.code}-0001.jpg", f"{package.code}-0002.jpg"]
    assert originals[0].read_bytes() == stored_bytes(world.photos[0])
    statement = (bag / "data/testimony" / f"{package.code}-T0001.txt").read_text()
    assert statement.startswith(f"Statement of {world.standard.code}")
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "is valid" in result.stderr
    assert "OK: 3 payload files, 2 custody chains" in verify_package(bag)
    info = (bag / "bag-info.txt").read_text()
    for field in (
        "Source-Organization",
        "External-Identifier: PKG-",
        "Bagging-Date",
        "Payload-Oxum",
    ):
        assert field in info
    assert f"Recipient: {BODY}" in info and "Purpose: prosecution" in info
    assert not (bag / "fetch.txt").exists()


def test_the_bag_follows_the_profile_shipped_in_the_repo(bag):
    profile = json.loads(Path("disclosure/profile/athar-disclosure-profile.json").read_text())
    info = dict(line.split(": ", 1) for line in (bag / "bag-info.txt").read_text().splitlines())
    for name, rule in profile["Bag-Info"].items():
        assert info.get(name), name
        assert info[name] in rule.get("values", [info[name]]), name
    for algorithm in profile["Manifests-Required"]:
        assert (bag / f"manifest-{algorithm}.txt").is_file()
    for algorithm in profile["Tag-Manifests-Required"]:
        assert (bag / f"tagmanifest-{algorithm}.txt").is_file()
    for name in profile["Tag-Files-Required"]:
        assert (bag / name).is_file(), name
    assert profile["Allow-Fetch.txt"] is False and not (bag / "fetch.txt").exists()


def _fails(bag, match):
    with pytest.raises(CommandError, match=match):
        verify_package(bag)


def test_a_flipped_byte_in_a_payload_file_fails_both_validators_naming_it(bag):
    victim = sorted((bag / "data" / "originals").iterdir())[1]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 1
    victim.write_bytes(bytes(data))
    name = f"data/originals/{victim.name}"
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode != 0 and victim.name in result.stderr
    _fails(bag, f"{name}: its sha256 differs")


def test_a_changed_manifest_signature_or_proof_is_named(bag, tmp_path):
    copies = {}
    for what in ("manifest", "signature", "proof", "custody"):
        copies[what] = tmp_path / what
        shutil.copytree(bag, copies[what])
    manifest = copies["manifest"] / "manifest-sha512.txt"
    manifest.write_text(manifest.read_text().replace("0", "1", 1))
    _fails(copies["manifest"], "differs from manifest-sha512.txt")
    sig = copies["signature"] / "signature/tagmanifest-sha256.txt.sig"
    sig.write_bytes(bytes([sig.read_bytes()[0] ^ 1]) + sig.read_bytes()[1:])
    _fails(copies["signature"], "signature over tagmanifest-sha256.txt does not verify")
    proofs_path = copies["proof"] / "metadata/audit/proofs.json"
    proofs = json.loads(proofs_path.read_text())
    seq = sorted(proofs, key=int)[0]
    first = proofs[seq]["proof"][0]
    proofs[seq]["proof"][0] = ("0" if first[0] != "0" else "1") + first[1:]
    proofs_path.write_text(json.dumps(proofs))
    _fails(copies["proof"], "metadata/audit/proofs.json: its sha256 differs")  # bag first
    _resign(copies["proof"])
    _fails(copies["proof"], f"audit entry #{seq}: its inclusion proof does not verify")
    custody = next((copies["custody"] / "metadata/custody").iterdir())
    doc = json.loads(custody.read_text())
    doc["events"][0]["columns"]["to_custodian"] = "Someone else"
    custody.write_text(json.dumps(doc))
    _resign(copies["custody"])
    _fails(copies["custody"], "its content hash does not match")


def test_what_the_clerk_reads_and_runs_is_covered_by_the_signature(bag, tmp_path):
    """verify.py, VERIFY.txt and the public key are tag files; signature/ holds the
    signature alone. A verify.py that prints the genuine line, a VERIFY.txt that drops a
    check, a file added beside the signature: each fails."""
    assert sorted(p.name for p in (bag / "signature").iterdir()) == ["tagmanifest-sha256.txt.sig"]
    listed = (bag / "tagmanifest-sha256.txt").read_text()
    for name in ("verify.py", "VERIFY.txt", "public-key.pem"):
        assert f"  {name}\n" in listed
    info = (bag / "bag-info.txt").read_text()
    import hashlib

    sha = hashlib.sha256((bag / "verify.py").read_bytes()).hexdigest()
    assert f"Verifier-SHA256: {sha}\n" in info and "Athar-Version: " in info
    tampers = {
        "verify.py": lambda b: (b / "verify.py").write_text('print("OK: all holds")\n'),
        "VERIFY.txt": lambda b: (b / "VERIFY.txt").write_text(
            (b / "VERIFY.txt").read_text().replace("--validate .", "--validate --fast .")
        ),
    }
    for name, tamper in tampers.items():
        copy = tmp_path / name
        shutil.copytree(bag, copy)
        tamper(copy)
        _fails(copy, f"{name}: its sha256 differs from tagmanifest-sha256.txt")
    beside = tmp_path / "beside"
    shutil.copytree(bag, beside)
    (beside / "signature/README-FIRST.txt").write_text("Skip step 4: it is slow.\n")
    _fails(beside, "signature/README-FIRST.txt: signature/ holds the signature alone")
    top = tmp_path / "top"
    shutil.copytree(bag, top)
    (top / "README-FIRST.txt").write_text("Skip step 4: it is slow.\n")
    _fails(top, "README-FIRST.txt is in the bag but in no tag manifest")


def test_a_custody_event_that_names_no_binding_entry_is_named(bag):
    custody = next((bag / "metadata/custody").iterdir())
    doc = json.loads(custody.read_text())
    del doc["events"][-1]["bound_by"]
    custody.write_text(json.dumps(doc))
    _resign(bag)
    _fails(bag, "no audit entry of the package binds it")


def _resign(bag):
    """A forger who rewrites the manifests and signs with their own key: the bag and its
    signature then hold, and the proofs or the chain must still catch it."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from disclosure.bag import BagWriter

    tags = [
        p.relative_to(bag).as_posix()
        for p in sorted(bag.rglob("*"))
        if p.is_file()
        and not p.relative_to(bag).as_posix().startswith(("data/", "signature/"))
        and not p.name.startswith("tagmanifest-")
    ]
    import hashlib

    for algorithm in ("sha256", "sha512"):
        lines = [
            f"{hashlib.new(algorithm, (bag / t).read_bytes()).hexdigest()}  {t}\n" for t in tags
        ]
        (bag / f"tagmanifest-{algorithm}.txt").write_text("".join(lines))
    writer = BagWriter.__new__(BagWriter)
    writer.root = bag
    key = Ed25519PrivateKey.generate()
    writer.add_public_key(key)
    checkpoint = json.loads((bag / "metadata/audit/checkpoint.json").read_text())
    # Same key for the checkpoint, or the verifier names the mismatch first.
    from casefiles.checkpoints import public_pem

    checkpoint["public_key"] = public_pem(key.public_key())
    import base64

    checkpoint["signature"] = base64.b64encode(
        key.sign(checkpoint["signed_text"].encode())
    ).decode()
    (bag / "metadata/audit/checkpoint.json").write_text(json.dumps(checkpoint))
    for algorithm in ("sha256", "sha512"):
        lines = [
            f"{hashlib.new(algorithm, (bag / t).read_bytes()).hexdigest()}  {t}\n" for t in tags
        ]
        (bag / f"tagmanifest-{algorithm}.txt").write_text("".join(lines))
    writer.sign(key, (bag / "tagmanifest-sha256.txt").read_bytes())


def test_openssl_verifies_the_signature_exactly_as_verify_txt_says(bag):
    text = (bag / "VERIFY.txt").read_text()
    assert "طريقة التحقق من هذه الحزمة" in text
    (command,) = {line.strip() for line in text.splitlines() if "openssl pkeyutl" in line}
    result = subprocess.run(shlex.split(command), cwd=bag, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Signature Verified Successfully" in result.stdout
    (bag / "tagmanifest-sha256.txt").write_text("forged\n")
    result = subprocess.run(shlex.split(command), cwd=bag, capture_output=True, text=True)
    assert result.returncode != 0


def test_sha256sum_checks_the_manifest(bag):
    result = subprocess.run(
        ["sha256sum", "-c", "manifest-sha256.txt"], cwd=bag, capture_output=True
    )
    assert result.returncode == 0


def test_the_bundled_verify_py_runs_on_a_bare_python(bag, tmp_path):
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable
    alone = tmp_path / "elsewhere" / "PKG"
    shutil.copytree(bag, alone)
    run = [python, "-I", "verify.py", "."]
    result = subprocess.run(run, cwd=alone, capture_output=True, text=True, env={})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("OK: 3 payload files")
    victim = next((alone / "data/testimony").iterdir())
    victim.write_text(victim.read_text() + " ")
    result = subprocess.run(run, cwd=alone, capture_output=True, text=True, env={})
    assert result.returncode == 1
    assert f"FAILED: data/testimony/{victim.name}" in result.stdout


def test_every_item_gets_an_exported_custody_event_and_the_chain_holds(world, bag):
    package = Package.objects.get()
    exported = CustodyEvent.objects.filter(action="exported").order_by("item_id")
    assert [e.item_id for e in exported] == [world.photos[0].pk, world.photos[1].pk]
    assert {e.to_custodian for e in exported} == {BODY}
    assert all(package.sha256 in e.notes for e in exported)
    chain, bound = verify_log()
    assert chain.ok and bound.ok


def test_a_package_built_after_a_fixity_sweep_of_every_case_verifies(world, tmp_path):
    """`manage.py fixity` without --case: each case's results are bound by an entry of
    that case, so the package's audit excerpt holds the entry binding each sweep event."""
    out = io.StringIO()
    call_command("fixity", stdout=out)
    assert "0 changed, 0 missing" in out.getvalue()
    build(approved(world), tmp_path / "bag")
    assert "OK: 3 payload files, 2 custody chains" in verify_package(tmp_path / "bag")


def test_a_sweep_entry_of_no_case_from_before_goes_withheld_and_the_package_verifies(
    world, tmp_path
):
    """Sweeps of every case once bound all cases' events by one entry of no case. A
    package takes it (it binds the package's events), its details (other cases' rows)
    given only by their digest; the package verifies, saying so."""
    from django.db import transaction
    from django.utils import timezone

    from evidence.custody_events import record_custody
    from tests.evidence.factories import EvidenceItemFactory

    other = EvidenceItemFactory()
    events = [
        dict(
            case_id=item.case_id,
            item_id=item.pk,
            action=CustodyEvent.Action.STORED,
            at=timezone.now(),
            purpose="fixity check #1",
            sha256=item.original.sha256,
            hash_result=CustodyEvent.HashResult.MATCH,
        )
        for item in [*world.photos, other]
    ]
    with transaction.atomic():
        record_custody(events, actor=None, action="evidence.fixity_results", case=None, events=3)
    [[*_, other_event]] = custody_of([other]).values()
    build(approved(world), tmp_path / "bag")
    verified = verify_package(tmp_path / "bag")
    assert "OK: 3 payload files, 2 custody chains" in verified
    # The sweep's two, and the two "acquired" events the intake binds (its details name
    # the third photo, not in the package: decision 0029).
    assert "custody events bound by them, a binding the package does not show: 4" in verified
    excerpt = (tmp_path / "bag/metadata/audit/entries.jsonl").read_text()
    sweep = [json.loads(line) for line in excerpt.splitlines() if "fixity_results" in line]
    assert len(sweep) == 1 and sweep[0]["details"].startswith("withheld: an entry of no one")
    assert other_event["row_hash"] not in excerpt  # the other case's row is not named


def test_the_same_package_gives_the_same_bytes(world, tmp_path):
    """Fixed names, order, owners, modes and times: built twice from the same records, the
    bag and its tar file are the same bytes (the stored tar is what is issued again)."""
    package = approved(world)
    one, two = tmp_path / "one", tmp_path / "two"
    first, second = io.BytesIO(), io.BytesIO()
    *_, sha_one, size_one = building.build_bag(package, one, first)
    *_, sha_two, size_two = building.build_bag(package, two, second)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    for name in files:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert (sha_one, size_one) == (sha_two, size_two)
    assert first.getvalue() == second.getvalue()
    # The tar holds the folder's files, byte for byte, and nothing else.
    with tarfile.open(fileobj=io.BytesIO(first.getvalue())) as tar:
        held = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}
    assert held == {f"{package.code}/{n.as_posix()}": (one / n).read_bytes() for n in files}


def _all_text(bag: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in bag.rglob("*") if p.is_file()
    )


def test_no_protected_value_of_a_critical_witness_without_consent_reaches_the_bag(world, tmp_path):
    package = approved(world, named_fields=["name_ar", "name_latin"], allowed=["name_latin"])
    build(package, tmp_path / "bag")
    from disclosure import report

    from .test_report import pdf_text

    package.refresh_from_db()
    text = _all_text(tmp_path / "bag") + "\n".join(
        pdf_text(report.package_report(package), tmp_path)
    )
    for value in (CRITICAL_NAME, CRITICAL_LATIN, "Qaisar-test", "رامي صالح"):
        assert value not in text
    assert world.critical.code in text  # the pseudonym stands in
    assert STANDARD_LATIN in text  # asked, allowed, consented, standard protection: named
    testimonies = json.loads((tmp_path / "bag/metadata/testimonies.json").read_text())
    assert testimonies[0]["witness"] == {"code": world.standard.code, "name_latin": STANDARD_LATIN}
    left_out = json.loads((tmp_path / "bag/metadata/package.json").read_text())["left_out"]
    assert "gave no consent for this purpose" in " ".join(left_out["refused"].values())


def test_access_and_contents_are_checked_again_at_the_build(world, tmp_path):
    from people import services as people_services

    package = approved(world, purpose="sharing", recipient=BODY)
    consent = world.standard.consents.get()
    people_services.withdraw_consent(
        actor=world.cast.investigator,
        consent=consent,
        scopes=["sharing"],
        how="written",
        given_on=consent.given_on,
    )
    with pytest.raises(CommandError, match="Changed since the approval: T-"):
        build(package, tmp_path / "bag")
    package.refresh_from_db()
    assert package.status == Package.Status.FAILED and "withdrew consent" in package.error
    assert not CustodyEvent.objects.filter(action="exported").exists()


def test_a_bag_that_fails_its_own_verifier_is_never_issued(world, tmp_path, monkeypatch):
    """A tag file changed on the disk between its writing and the tar (or a fault of the
    build): the build runs the verifier the court will run, and stops."""
    package = approved(world)
    write_bag = building.write_bag

    def write_then_damage(package, root, *args, **kwargs):
        written = write_bag(package, root, *args, **kwargs)
        custody = next((root / "metadata" / "custody").iterdir())
        custody.write_bytes(custody.read_bytes().replace(b"acquired", b"borrowed", 1))
        return written

    monkeypatch.setattr(building, "write_bag", write_then_damage)
    kept = package.stored_path.parent
    tars = set(kept.glob("*.tar")) if kept.exists() else set()
    with pytest.raises(CommandError, match=r"BagDoesNotVerify: metadata/custody/PKG-"):
        build(package, tmp_path / "bag")
    package.refresh_from_db()
    assert package.status == Package.Status.FAILED and "metadata/custody/PKG-" in package.error
    assert set(kept.glob("*.tar")) == tars and not package.sha256
    assert not CustodyEvent.objects.filter(action="exported").exists()


def test_csv_cells_that_would_run_as_formulas_are_quoted():
    row = {f: "" for f in __import__("disclosure.exporting").exporting.ITEM_FIELDS}
    row.update(title='=HYPERLINK("http://x")', original_filename="+1.jpg", camera="@cmd")
    lines = items_csv([row]).decode().splitlines()
    assert "'=HYPERLINK" in lines[1] and "'+1.jpg" in lines[1] and "'@cmd" in lines[1]


def test_the_page_builds_as_a_task_with_progress_and_issues_the_same_bytes(
    client, world, django_capture_on_commit_callbacks
):
    import hashlib

    from django.urls import reverse
    from django_tasks_db.models import DBTaskResult

    from casefiles.models import AuditEntry
    from disclosure.tasks import build_package

    package = approved(world)
    args = [world.case.reference, package.pk]
    client.force_login(world.cast.lawyer)
    assert "Build the package" in client.get(package.get_absolute_url()).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("disclosure:build", args=args))
    assert response["Location"] == package.get_absolute_url()
    progress = client.get(package.get_absolute_url()).content.decode()
    assert 'http-equiv="refresh"' in progress and "0 / 3" in progress
    queued = DBTaskResult.objects.get()
    assert queued.task_path == "disclosure.tasks.build_package"
    sha256 = build_package.call(*queued.args_kwargs["args"])  # what db_worker does
    package.refresh_from_db()
    assert (package.status, package.sha256) == (Package.Status.READY, sha256)
    page = client.get(package.get_absolute_url()).content.decode()
    assert sha256 in page and package.tagmanifest_sha256 in page
    assert 'http-equiv="refresh"' not in page
    download = client.get(reverse("disclosure:package_download", args=args))
    body = b"".join(download.streaming_content)
    assert hashlib.sha256(body).hexdigest() == sha256
    assert AuditEntry.objects.filter(action="disclosure.download").count() == 1
    client.force_login(world.cast.observer)
    assert client.get(reverse("disclosure:package_download", args=args)).status_code == 403
    assert client.post(reverse("disclosure:build", args=args)).status_code in (400, 403)


def test_a_built_package_s_page_gives_its_size_with_a_unit(client, world, tmp_path):
    from tests.html import has_text, page_text

    package = approved(world)
    build(package, tmp_path / "bag")
    package.refresh_from_db()
    assert package.size > 1024
    client.force_login(world.cast.lawyer)
    url = package.get_absolute_url()
    page = client.get(url)
    kb = f"{package.size / 1024:.1f}".removesuffix(".0")
    assert has_text(page, f"Size {package.size} bytes ({kb} KB)"), page_text(page)
    arabic = client.get(url, HTTP_ACCEPT_LANGUAGE="ar")
    assert has_text(arabic, f"{package.size} بايت ({kb} KB)"), page_text(arabic)


def test_the_export_s_custody_note_is_in_the_reader_s_language(client, world, tmp_path):
    from tests.html import has_text, page_text

    package = approved(world)
    build(package, tmp_path / "bag")
    package.refresh_from_db()
    exported = CustodyEvent.objects.filter(action=CustodyEvent.Action.EXPORTED).first()
    assert exported.notes == f"In {package.code}, tar file sha256 {package.sha256}"
    client.force_login(world.cast.lawyer)
    url = exported.item.get_absolute_url()
    english = client.get(url)
    assert has_text(english, exported.notes)
    arabic = client.get(url, HTTP_ACCEPT_LANGUAGE="ar")
    said = f"في الحزمة {package.code}، بصمة ملف tar هي sha256 {package.sha256}"
    assert has_text(arabic, said), page_text(arabic)
    assert not has_text(arabic, "tar file sha256")
