from types import SimpleNamespace

import pytest
from django.utils import timezone

from people import services as people_services
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import register_person
from vocabularies.models import Scheme, Term


def term(scheme, code):
    return Term.objects.get(scheme=scheme, code=code)


@pytest.fixture
def story(cast, tmp_path):
    """A victim, a witness, a suspect, a photo and a statement in ``cast.case``; the terms
    an act needs."""
    victim = register_person(cast.case, cast.investigator, role="victim", name_ar="سامر")
    witness = register_person(cast.case, cast.investigator, role="witness")
    suspect = register_person(cast.case, cast.investigator, role="perpetrator")
    batch = take_in(cast.case, cast.investigator, {"a.jpg": jpeg_bytes(1)}, tmp_path / "m")
    testimony = people_services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="He was taken at the checkpoint.",
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
    )
    return SimpleNamespace(
        victim=victim,
        witness=witness,
        suspect=suspect,
        item=batch.items.get(),
        testimony=testimony,
        # HURIDOCS act types, methods, perpetrator types and degrees of involvement.
        arrest=term(Scheme.ACT_TYPE, "030101000000"),
        torture=term(Scheme.ACT_TYPE, "020111110000"),
        beating=term(Scheme.METHOD, "030100000000"),
        falanga=term(Scheme.METHOD, "030104000000"),
        intelligence=term(Scheme.PERPETRATOR_TYPE, "010106000000"),
        carried_out=term(Scheme.INVOLVEMENT, "010100000000"),
        gave_orders=term(Scheme.INVOLVEMENT, "010200000000"),
    )
