"""Places rows for tests: gazetteer places (saved as the app saves them, so a town's
keys are written) and the location intake derives for a photo."""

from datetime import date

import factory
from django.utils import timezone

from evidence.models import Provenance
from places.models import ItemLocation, Kind, Place
from tests.evidence.factories import EvidenceItemFactory
from tests.factories import UserFactory


class PlaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Place

    code = factory.Sequence(lambda n: f"T-{n:04d}")
    kind = Kind.TOWN
    name_en = factory.Sequence(lambda n: f"Town {n}")
    name_ar = factory.Sequence(lambda n: f"بلدة {n}")


class ProvenanceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provenance

    item = factory.SubFactory(EvidenceItemFactory)
    acquired_from = "Witness W-0001"
    acquired_by = factory.SubFactory(UserFactory)
    acquired_at = factory.LazyFunction(timezone.now)
    taken_date = date(2013, 8, 21)


class ItemLocationFactory(factory.django.DjangoModelFactory):
    """Where intake placed a photo of ``case``: by default a new photo, taken on ``taken``."""

    class Meta:
        model = ItemLocation

    class Params:
        taken = date(2013, 8, 21)

    item = factory.LazyAttribute(
        lambda o: ProvenanceFactory(item=EvidenceItemFactory(case=o.case), taken_date=o.taken).item
    )
    town = "Damascus"
    town_key = factory.LazyAttribute(lambda o: o.town.lower())
    town_km = 1
