"""The victim's antemortem profile of the demo story (``story.MISSING``): recorded
through the missing app's services, once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from missing.models import Antemortem, Profile
from missing.services import missing as services
from places.models import Place

from . import story

if TYPE_CHECKING:
    from .seed import Seeder


class MissingStory:
    def __init__(self, seeder: Seeder) -> None:
        self.seeder = seeder
        self.spec = story.MISSING

    def run(self) -> None:
        person = self.seeder.people[self.spec["person"]]
        if Profile.objects.filter(person=person).exists():
            return
        values = Antemortem(**{k: self.spec[k] for k in Antemortem.__dataclass_fields__})
        services.save_profile(
            actor=self.seeder.users[self.spec["by"]],
            case=self.seeder.case,
            person=person,
            values=values,
            last_seen_on=self.spec["last_seen_on"],
            last_seen_place=Place.objects.get(code=self.spec["last_seen_place"]),
        )
        self.seeder._made(f"antemortem profile of {person.code}")
