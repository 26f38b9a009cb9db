import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from casefiles.models import AuditEntry
from evidence.intake.staging import staging_dir
from evidence.models import CustodyEvent, Derivative, EvidenceItem, IntakeBatch
from evidence.services import run_fixity
from evidence.storage import evidence_storage
from evidence.tasks import ingest_staged_batch
from evidence.views import thumbnail_url
from tests.evidence.conftest import sha256
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.html import shows

pytestmark = pytest.mark.django_db


@pytest.fixture
def photos(cast, tmp_path):
    files = {f"p{n}.jpg": jpeg_bytes(n, model="D70" if n % 2 else "EOS 40D") for n in range(4)}
    files["same-as-p0.jpg"] = jpeg_bytes(0, quality=70)  # near-identical to p0
    files["broken.jpg"] = b"\xff\xd8\xff" + b"\x00" * 100
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    return {i.original_path: i for i in batch.items.select_related("original")}


def _refs(response):
    return [i.reference for i in response.context["page"]]


def test_the_gallery_shows_thumbnails_lazily_and_filters(client, cast, photos):
    client.force_login(cast.lawyer)
    url = reverse("evidence:gallery", args=[cast.case.reference])
    response = client.get(url)
    html = response.content.decode()
    assert len(_refs(response)) == 6
    assert html.count('loading="lazy"') == 5  # the broken file has no thumbnail
    # No filter chosen reads "Any" (not "Unknown", nor a row of dashes).
    # Every select: five of evidence's, places' governorate or facility.
    assert html.count('<option value="" selected>Any</option>') == 6
    assert not shows(html, "-----") and not shows(html, "Unknown")
    assert len(_refs(client.get(url, {"flagged": "", "kind": ""}))) == 6
    assert len(_refs(client.get(url, {"camera": "D70"}))) == 2
    assert _refs(client.get(url, {"flagged": "true"})) == [photos["broken.jpg"].reference]
    group = photos["p0.jpg"].near_group
    assert set(_refs(client.get(url, {"near_group": group}))) == {
        photos["p0.jpg"].reference,
        photos["same-as-p0.jpg"].reference,
    }
    assert (
        len(_refs(client.get(url, {"taken_after": "2013-08-21", "taken_before": "2013-08-21"})))
        == 5
    )
    nothing = client.get(url, {"taken_after": "2014-01-01", "flagged": ""})
    assert _refs(nothing) == []
    assert 'No evidence matches. <a href="?">Clear the filters</a>' in nothing.content.decode()
    assert len(_refs(client.get(url, {"kind": "photo", "integrity": "intake"}))) == 6
    batch = IntakeBatch.objects.get()
    assert len(_refs(client.get(url, {"batch": batch.pk}))) == 6


def test_the_gallery_costs_the_same_queries_for_more_items(
    client, cast, tmp_path, django_assert_num_queries
):
    take_in(cast.case, cast.investigator, {"a.jpg": jpeg_bytes(1)}, tmp_path / "a")
    client.force_login(cast.lawyer)
    url = reverse("evidence:gallery", args=[cast.case.reference])
    client.get(url)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    take_in(
        cast.case,
        cast.investigator,
        {f"{n}.jpg": jpeg_bytes(10 + n) for n in range(12)},
        tmp_path / "b",
    )
    with django_assert_num_queries(len(few.captured_queries)):
        response = client.get(url)
    assert len(_refs(response)) == 13


def test_the_item_page_shows_metadata_provenance_custody_and_near_identical_items(
    client, cast, photos
):
    item = photos["p0.jpg"]
    client.force_login(cast.lawyer)
    response = client.get(item.get_absolute_url())
    html = response.content.decode()
    assert item.original.sha256 in html
    assert "EOS 40D" in html and "2013:08:21 10:15:00" in html
    assert "33.51" in html and "W-0001" in html
    # At intake the hash is computed, not matched against anything: it says so.
    assert "Acquired" in html and "hash computed at intake" in html
    assert "hash matches" not in html
    assert photos["same-as-p0.jpg"].reference in html
    assert AuditEntry.objects.filter(action="evidence.view", target_id=str(item.pk)).exists()


def test_the_item_page_costs_the_same_queries_however_long_its_custody(
    client, cast, photos, django_assert_num_queries
):
    item = photos["p1.jpg"]
    client.force_login(cast.lawyer)
    client.get(item.get_absolute_url())
    with CaptureQueriesContext(connection) as before:
        client.get(item.get_absolute_url())
    for _ in range(4):
        run_fixity(case=cast.case)
    assert item.custody_events.count() == 5
    with django_assert_num_queries(len(before.captured_queries)):
        response = client.get(item.get_absolute_url())
    html = response.content.decode()
    assert "fixity check #" not in html  # the four sweeps that matched fold into one line
    assert "Fixity checked 4 times, last on " in html and ", all matched." in html


def test_the_original_downloads_as_an_attachment_byte_for_byte_and_leaves_a_trace(
    client, cast, photos, tmp_path
):
    item = photos["p2.jpg"]
    client.force_login(cast.lawyer)
    response = client.get(reverse("evidence:download", args=[cast.case.reference, item.reference]))
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="p2.jpg"')
    assert response["X-Content-Type-Options"] == "nosniff"
    body = b"".join(response.streaming_content)
    assert body == (tmp_path / "m" / "p2.jpg").read_bytes() and sha256(body) == item.original.sha256
    event = CustodyEvent.objects.get(item=item, action="copied")
    assert (event.actor, event.hash_result) == (cast.lawyer, "match")
    assert AuditEntry.objects.filter(action="evidence.download", actor=cast.lawyer).exists()


def test_an_unreadable_original_is_refused_and_recorded_not_an_error_page(client, cast, photos):
    item = photos["p3.jpg"]
    path = Path(evidence_storage().path(item.original.storage_key))
    path.chmod(0o644)
    path.unlink()
    path.mkdir()  # reading it fails, as a failing disk would
    client.force_login(cast.lawyer)
    response = client.get(reverse("evidence:download", args=[cast.case.reference, item.reference]))
    assert response.status_code == 410
    assert "cannot be read from the store" in response.content.decode()
    refused = CustodyEvent.objects.get(item=item, action="accessed")
    assert refused.hash_result == "missing" and "refused" in refused.purpose


def test_a_changed_original_is_not_served_and_the_mismatch_is_recorded(client, cast, photos):
    item = photos["p3.jpg"]
    path = Path(evidence_storage().path(item.original.storage_key))
    path.chmod(0o644)
    path.write_bytes(b"tampered")
    client.force_login(cast.lawyer)
    response = client.get(reverse("evidence:download", args=[cast.case.reference, item.reference]))
    assert not CustodyEvent.objects.filter(item=item, action="copied").exists()
    refused = CustodyEvent.objects.get(item=item, action="accessed")
    assert refused.hash_result == "mismatch" and "refused" in refused.purpose
    item.refresh_from_db()
    assert item.integrity == "changed"
    # The member who may see the item is told why, and where the record of it is.
    assert response.status_code == 409
    html = response.content.decode()
    assert "The original no longer matches its hash" in html
    assert f'href="{item.get_absolute_url()}#custody"' in html
    assert b"tampered" not in response.content
    entry = AuditEntry.objects.get(action="evidence.download_refused", actor=cast.lawyer)
    assert entry.details["hash_result"] == "mismatch" and entry.target_id == str(item.pk)
    assert not AuditEntry.objects.filter(action="evidence.download").exists()
    assert 'id="custody"' in client.get(item.get_absolute_url()).content.decode()

    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    arabic = client.get(reverse("evidence:download", args=[cast.case.reference, item.reference]))
    assert arabic.status_code == 409
    assert "لم تعد بصمة الأصل مطابقة" in arabic.content.decode()


def test_thumbnails_are_served_and_previews_made_on_first_view(client, cast, photos):
    item = photos["p1.jpg"]
    client.force_login(cast.observer)
    args = [cast.case.reference, item.reference]
    thumb = client.get(thumbnail_url(cast.observer, *args, item.pk))
    assert thumb["Content-Type"] == "image/jpeg"
    assert not Derivative.objects.filter(original=item.original, kind="preview").exists()
    preview = client.get(reverse("evidence:preview", args=args))
    assert preview.status_code == 200
    made = Derivative.objects.get(original=item.original, kind="preview")
    assert max(made.width, made.height) == 320  # never enlarged past the original
    assert made.tool.startswith("Pillow")


def test_uploading_a_few_files_takes_them_in_at_once(client, cast):
    client.force_login(cast.investigator)
    form = client.get(reverse("evidence:upload", args=[cast.case.reference])).content.decode()
    assert 'placeholder="uploaded in the browser"' in form  # what a blank method records
    response = client.post(
        reverse("evidence:upload", args=[cast.case.reference]),
        {
            "files": [
                SimpleUploadedFile("one.jpg", jpeg_bytes(50)),
                SimpleUploadedFile("two.jpg", jpeg_bytes(51)),
            ],
            "acquired_from": "W-0017",
            "medium": "phone",
        },
    )
    batch = IntakeBatch.objects.get()
    assert response.status_code == 302 and response["Location"] == batch.get_absolute_url()
    assert (batch.status, batch.stored, batch.method) == ("done", 2, "uploaded in the browser")
    assert {i.original.sha256 for i in batch.items.all()} == {
        sha256(jpeg_bytes(50)),
        sha256(jpeg_bytes(51)),
    }
    page = client.get(batch.get_absolute_url()).content.decode()
    assert "W-0017" in page and "Done" in page
    assert not staging_dir(batch).exists()  # the staged copies are gone, the store holds all


def test_a_rejected_upload_keeps_what_was_typed(client, cast):
    client.force_login(cast.investigator)
    response = client.post(
        reverse("evidence:upload", args=[cast.case.reference]),
        {"acquired_from": "W-0017", "medium": "USB stick S/N 4471"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="W-0017"' in html and 'value="USB stick S/N 4471"' in html
    assert "This field is required" in html
    assert not IntakeBatch.objects.exists()


def test_an_observer_cannot_upload(client, cast):
    client.force_login(cast.observer)
    assert client.get(reverse("evidence:upload", args=[cast.case.reference])).status_code == 404


def test_an_observer_sees_the_photo_but_cannot_take_a_copy_of_the_original(client, cast, photos):
    item = photos["p0.jpg"]
    client.force_login(cast.observer)
    page = client.get(item.get_absolute_url()).content.decode()
    download = reverse("evidence:download", args=[cast.case.reference, item.reference])
    assert download not in page
    assert client.get(download).status_code == 404
    assert not CustodyEvent.objects.filter(action="copied").exists()


def _zip_upload(names):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for n, name in enumerate(names):
            zf.writestr(name, jpeg_bytes(60 + n))
    return SimpleUploadedFile("drive.zip", buffer.getvalue(), content_type="application/zip")


def test_a_zip_upload_is_queued_as_a_background_task_that_takes_it_in(
    client, cast, django_capture_on_commit_callbacks
):
    client.force_login(cast.investigator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("evidence:upload", args=[cast.case.reference]),
            {"files": [_zip_upload(["a/1.jpg", "a/2.jpg", "b/3.jpg"])], "acquired_from": "S-0003"},
        )
    batch = IntakeBatch.objects.get()
    assert batch.status == "pending"
    page = client.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' in page  # the page follows the task's progress
    queued = DBTaskResult.objects.get()
    assert queued.task_path == "evidence.tasks.ingest_staged_batch"
    assert queued.args_kwargs["args"] == [batch.pk, cast.investigator.pk]
    # What `manage.py db_worker` does with the queued row (the worker itself closes its
    # connections between tasks, which a test's rolled-back transaction cannot survive).
    ingest_staged_batch.call(*queued.args_kwargs["args"])
    batch.refresh_from_db()
    assert (batch.status, batch.stored) == ("done", 4)
    assert set(EvidenceItem.objects.values_list("original_path", flat=True)) == {
        "drive.zip",  # the archive as uploaded, and each of its members
        "drive.zip/a/1.jpg",
        "drive.zip/a/2.jpg",
        "drive.zip/b/3.jpg",
    }
    assert 'http-equiv="refresh"' not in client.get(response["Location"]).content.decode()


def test_an_investigator_describes_an_item_and_the_change_is_audited(client, cast, photos):
    item = photos["p1.jpg"]
    client.force_login(cast.investigator)
    url = reverse("evidence:item_edit", args=[cast.case.reference, item.reference])
    bad = client.post(url, {"title": "Body 17", "claimed_date": "not a date", "tags": "x"})
    assert bad.status_code == 200 and 'value="Body 17"' in bad.content.decode()
    response = client.post(
        url,
        {
            "title": "Body 17",
            "description": "جثة في المستودع",
            "claimed_date": "2013-08-20",
            "claimed_place": "Mezzeh",
            "tags": "hangar, Mezzeh 601, hangar",
        },
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.title, str(item.claimed_date)) == ("Body 17", "2013-08-20")
    assert sorted(item.tags.values_list("name", flat=True)) == ["Mezzeh 601", "hangar"]
    entry = AuditEntry.objects.get(action="evidence.update")
    assert entry.details["changes"]["title"] == ["p1.jpg", "Body 17"]
    page = client.get(item.get_absolute_url()).content.decode()
    assert "جثة في المستودع" in page and "Mezzeh 601" in page
    client.force_login(cast.lawyer)
    assert client.get(url).status_code == 404


def test_a_lead_sees_who_viewed_and_downloaded_an_item(client, cast, photos):
    item = photos["p2.jpg"]
    client.force_login(cast.lawyer)
    client.get(item.get_absolute_url())
    client.get(reverse("evidence:download", args=[cast.case.reference, item.reference]))
    client.force_login(cast.lead)
    page = client.get(item.get_absolute_url()).content.decode()
    who = reverse(
        "casefiles:case_target_audit", args=[cast.case.reference, "evidence.evidenceitem", item.pk]
    )
    assert who in page
    html = client.get(who).content.decode()
    assert "lawyer" in html and "evidence.download" in html and "evidence.view" in html
    client.force_login(cast.lawyer)
    assert who not in client.get(item.get_absolute_url()).content.decode()


def test_gallery_pages_and_previews_leave_a_trace(client, cast, photos):
    item = photos["p1.jpg"]
    client.force_login(cast.observer)
    client.get(reverse("evidence:gallery", args=[cast.case.reference]), {"camera": "D70"})
    seen = AuditEntry.objects.get(action="evidence.gallery", actor=cast.observer)
    assert sorted(seen.details["items"]) == sorted(
        i.reference for i in photos.values() if i.provenance.camera_model == "D70"
    )
    client.get(reverse("evidence:preview", args=[cast.case.reference, item.reference]))
    assert AuditEntry.objects.filter(
        action="evidence.preview", actor=cast.observer, target_id=str(item.pk)
    ).exists()


def test_an_uploaded_office_document_is_kept_whole_not_opened_as_an_archive(client, cast):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:  # a .docx is a ZIP inside
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", "<w:document>statement of W-0017</w:document>")
    docx = buffer.getvalue()
    client.force_login(cast.investigator)
    client.post(
        reverse("evidence:upload", args=[cast.case.reference]),
        {"files": [SimpleUploadedFile("statement.docx", docx)], "acquired_from": "W-0017"},
    )
    item = EvidenceItem.objects.select_related("original").get()
    assert (item.original_path, item.original.sha256) == ("statement.docx", sha256(docx))


def test_an_admin_who_is_no_member_reads_no_case_content_in_the_audit_log(client, cast, photos):
    import json

    from casefiles import audit as audit_chain
    from evidence import services as evidence_services

    item = photos["p0.jpg"]
    evidence_services.update_item(
        actor=cast.investigator, item=item, tags=[], description="Body of A. K., scar on arm"
    )
    client.force_login(cast.admin)
    body = b"".join(client.get(reverse("casefiles:audit_export_jsonl")).streaming_content)
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert "scar on arm" not in body.decode() and "p0.jpg" not in body.decode()
    update = next(line for line in lines if line["action"] == "evidence.update")
    assert update["details"] is None
    # Withheld, yet every exported entry's hash still checks from the line alone.
    for line in lines:
        assert (
            audit_chain.entry_hash(line["prev_hash"], {**line, "at": _dt(line["at"])})
            == (line["hash"])
        )
    entry = AuditEntry.objects.get(action="evidence.update")
    page = client.get(reverse("admin:casefiles_auditentry_change", args=[entry.pk]))
    assert "scar on arm" not in page.content.decode()
    assert audit_chain.details_sha256(entry.details) in page.content.decode()
    # Once a member of the case, the same admin reads the same entry's details in full.
    from tests.factories import MembershipFactory

    MembershipFactory(user=cast.admin, case=cast.case, role="observer")
    body = b"".join(client.get(reverse("casefiles:audit_export_jsonl")).streaming_content)
    assert "scar on arm" in body.decode()


def _dt(text):
    from datetime import datetime

    return datetime.fromisoformat(text)


def test_the_evidence_pages_speak_arabic_right_to_left(client, cast, photos):
    client.force_login(cast.lawyer)
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    item = photos["p0.jpg"]
    html = client.get(item.get_absolute_url()).content.decode()
    assert 'dir="rtl"' in html
    assert "سلسلة الحيازة" in html and "حُسبت البصمة عند الاستلام" in html
    # The app's own words in the record are said in Arabic; the record keeps them as written.
    assert "نُسخ من الوسيط" in html and "حُسبت البصمة عند القراءة الأولى" in html
    assert "copied from the medium" not in html and "hashed while first read" not in html
    assert item.provenance.method == "copied from the medium"
    gallery = client.get(reverse("evidence:gallery", args=[cast.case.reference]))
    assert "الأدلّة" in gallery.content.decode()


def test_only_the_apps_own_words_in_a_record_are_translated():
    from django.utils import translation

    from evidence.templatetags.own_words import own_words

    with translation.override("ar"):
        assert own_words("intake") == "الاستلام"
        assert own_words("fixity check #12") == "فحص السلامة رقم 12"
        assert own_words("fixity check #12, by hand") == "fixity check #12, by hand"
        # What a person typed is shown as typed, even a word the interface translates.
        assert own_words("Yes") == "Yes" and own_words("handed over at the border") == (
            "handed over at the border"
        )


def test_what_the_app_found_is_said_in_the_reader_s_language_beside_what_a_person_typed():
    from django.utils import translation

    from evidence.templatetags.own_words import own_words

    digest = "ab" * 32
    with translation.override("ar"):
        # A fixity sweep's note of an intake manifest, and of a missing original.
        assert own_words(f"intake manifest; found sha256 {digest}") == (
            f"بيان الاستلام; البصمة التي وُجدت (sha256): {digest}"
        )
        assert own_words("not found in the store") == "غير موجود في المخزن"
        assert own_words("unreadable: Permission denied") == "تعذّرت القراءة: Permission denied"
        # A transfer recorded by hand whose re-hash differed: the words typed, as typed.
        assert own_words(f"sealed bag 12; to the lab\nfound sha256 {digest}") == (
            f"sealed bag 12; to the lab\nالبصمة التي وُجدت (sha256): {digest}"  # noqa: RUF001
        )
        # Not the app's pattern (a digest too short): as recorded.
        assert own_words("found sha256 abc") == "found sha256 abc"


def test_an_empty_case_says_so_even_when_filter_is_pressed_with_nothing_chosen(client, cast):
    client.force_login(cast.lawyer)
    url = reverse("evidence:gallery", args=[cast.case.reference])
    fields = ("kind", "taken_after", "taken_before", "camera", "batch", "integrity", "flagged")
    for query in ({}, dict.fromkeys(fields, "")):
        assert "No evidence in this case yet." in client.get(url, query).content.decode()


def _chosen(html, name):
    """What a select of the page's filter form shows as chosen (its value)."""
    import re

    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S).group(1)
    return re.findall(r'<option value="([^"]*)" selected>', select)


@pytest.mark.parametrize("chosen", ["true", "false"])
def test_the_flagged_filter_stays_chosen_and_survives_pressing_filter_again(
    client, cast, photos, chosen
):
    client.force_login(cast.lawyer)
    url = reverse("evidence:gallery", args=[cast.case.reference])
    first = client.get(url, {"flagged": chosen})
    html = first.content.decode()
    assert _chosen(html, "flagged") == [chosen]
    # Pressing Filter again sends what the form shows: the same items come back.
    again = client.get(url, {"flagged": _chosen(html, "flagged")[0], "kind": ""})
    assert _refs(again) == _refs(first)
    assert _chosen(again.content.decode(), "flagged") == [chosen]
    flagged = [photos["broken.jpg"].reference]
    assert (_refs(first) == flagged) == (chosen == "true")
    assert _chosen(client.get(url).content.decode(), "flagged") == [""]
