from types import SimpleNamespace

import pytest

from missing.models import Antemortem
from missing.services import missing as services
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import register_person

FAMILY_CONTACT = "أخوه عمر، هاتف +963955000111"
MARKS = "ندبة فوق الحاجب الأيسر"


@pytest.fixture
def missing(cast, tmp_path):
    """A victim with an antemortem profile, his mother, and three photos of the case
    (bodies 0007, 0012 and 0020, taken in August 2013)."""
    victim = register_person(cast.case, cast.investigator, role="victim")
    mother = register_person(cast.case, cast.investigator, role="witness")
    files = {
        f"DSC_{n:04d}.JPG": jpeg_bytes(n, taken=f"2013:08:{10 + i} 10:00:00")
        for i, n in enumerate([7, 12, 20])
    }
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    profile = services.save_profile(
        actor=cast.investigator,
        case=cast.case,
        person=victim,
        values=Antemortem(
            physical="Tall, slim",
            clothing="Grey jacket",
            marks=MARKS,
            dental="Chipped incisor",
            last_seen_text="Airport road checkpoint",
            detainee_number="4417",
            family_contact=FAMILY_CONTACT,
        ),
    )
    return SimpleNamespace(
        victim=victim,
        mother=mother,
        profile=profile,
        items={int(i.original_filename[4:8]): i for i in batch.items.all()},
    )


def identify_first(cast, missing, *, present="The lead and the mother", status="identified"):
    """The lead prepares a session, shows its first candidate to the mother, who identifies
    the victim in it: (the session, the candidate as stored)."""
    from missing.models import Candidate

    session = services.prepare_session(
        actor=cast.lead, case=cast.case, profile=missing.profile, family_member=missing.mother
    )
    candidate = session.candidates.first()
    services.show_candidate(actor=cast.lead, case=cast.case, candidate=candidate)
    services.identify(
        actor=cast.lead,
        case=cast.case,
        candidate=candidate,
        confidence="certain",
        consent=True,
        present=present,
        status=status,
    )
    return session, Candidate.objects.get(pk=candidate.pk)
