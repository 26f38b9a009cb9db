import os
from types import SimpleNamespace

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.http import QueryDict
from django.test import Client
from django.test.client import MULTIPART_CONTENT
from django.utils import translation
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_totp.models import TOTPDevice

from casefiles import once
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, LAWYER_GROUP, Role
from tests.factories import CaseFactory, MembershipFactory, UserFactory


@pytest.fixture(autouse=True, scope="session")
def _database_is_the_one_asked_for(django_db_setup, django_db_blocker):
    """`make test` names the vendor of each run; a run on the wrong database fails."""
    expected = os.environ.get("ATHAR_TEST_EXPECT_VENDOR")
    if expected:
        assert connection.vendor == expected, f"suite meant for {expected}, got {connection.vendor}"


@pytest.fixture(autouse=True)
def _default_language():
    """A request in Arabic leaves Arabic active in its thread (LocaleMiddleware does not
    undo it), and with it every later test of that worker: each test starts in the
    default language."""
    translation.activate(django_settings.LANGUAGE_CODE)
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def evidence_store(tmp_path, settings):
    """Each test gets its own empty evidence store; nothing is written under var/."""
    root = tmp_path / "store"
    settings.STORAGE_ROOT = root
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {"BACKEND": "evidence.storage.EvidenceStorage", "OPTIONS": {"location": root}},
    }
    return root


def with_token(data, content_type=None):
    """Form data with a fresh one-time token added, if it names none."""
    if content_type not in (None, MULTIPART_CONTENT) or isinstance(data, str | bytes):
        return data
    if data is None:
        data = {}
    if once.FIELD in data:
        return data
    if isinstance(data, QueryDict):
        data = data.copy()
        data[once.FIELD] = once.new_token()
        return data
    return {**data, once.FIELD: once.new_token()}


class VerifiedClient(Client):
    """A test client whose ``force_login`` also passes the second factor.

    It gives the user a confirmed authenticator device (if they have none) and marks the
    session verified with it exactly as django-otp's ``login()`` does: the session holds
    the device's ``persistent_id``. ``login()`` (password only) is left alone, so a test
    can still show that a password alone gets nobody in. Real two-factor tests go
    through the sign-in form (tests/casefiles/test_two_factor.py).
    """

    def post(self, path, data=None, *args, **kwargs):
        """As a browser posts a form it has just loaded: with the form's one-time token
        (casefiles/once.py), unless the test names one (``once=""`` posts none)."""
        return super().post(path, with_token(data, kwargs.get("content_type")), *args, **kwargs)

    def force_login(self, user, backend=None):
        device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
        if device is None:
            device = TOTPDevice.objects.create(user=user, name="test", confirmed=True)
        user.otp_device = device
        super().force_login(user, backend)
        session = self.session
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
        session.save()


@pytest.fixture
def client():
    return VerifiedClient()


@pytest.fixture
def case(db):
    return CaseFactory(reference="SYR-2014-001", title="Detention photographs")


@pytest.fixture
def other_case(db):
    return CaseFactory(reference="SYR-2013-007", title="Branch testimony")


@pytest.fixture
def cast(db, case):
    """One user per role in ``case``, plus an outsider and a system admin (no membership)."""
    lead = UserFactory(username="lead", groups=[INVESTIGATOR_GROUP])
    investigator = UserFactory(username="investigator", groups=[INVESTIGATOR_GROUP])
    lawyer = UserFactory(username="lawyer", groups=[LAWYER_GROUP])
    observer = UserFactory(username="observer")
    outsider = UserFactory(username="outsider", groups=[INVESTIGATOR_GROUP])
    admin = UserFactory(username="admin", groups=[ADMIN_GROUP], is_staff=True)
    for user, role in [
        (lead, Role.LEAD),
        (investigator, Role.INVESTIGATOR),
        (lawyer, Role.LAWYER),
        (observer, Role.OBSERVER),
    ]:
        MembershipFactory(user=user, case=case, role=role)
    return SimpleNamespace(
        case=case,
        lead=lead,
        investigator=investigator,
        lawyer=lawyer,
        observer=observer,
        outsider=outsider,
        admin=admin,
    )
