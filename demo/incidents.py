"""The incident of the demo story (``story.INCIDENT``): recorded through the incidents
app's services, each step once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence.models import EvidenceItem
from incidents.models import Incident, Link
from incidents.services import incidents as services
from legal.models import LegalElement
from people.models import Testimony
from places.models import Place
from vocabularies.models import Scheme, Term

from . import photos, story

if TYPE_CHECKING:
    from .seed import Seeder


def _term(scheme: str, code: str | None) -> Term | None:
    return Term.objects.get(scheme=scheme, code=code) if code else None


class IncidentStory:
    def __init__(self, seeder: Seeder) -> None:
        self.seeder = seeder
        self.case = seeder.case
        self.spec = story.INCIDENT
        self.actor = seeder.users[self.spec["by"]]

    def run(self) -> None:
        incident = Incident.objects.filter(case=self.case, title_en=self.spec["title_en"]).first()
        if incident is None:
            incident = services.create_incident(
                actor=self.actor,
                case=self.case,
                title_en=self.spec["title_en"],
                title_ar=self.spec["title_ar"],
                description_en=self.spec["description_en"],
                description_ar=self.spec["description_ar"],
                precision=self.spec["precision"],
                starts_on=self.spec["starts_on"],
                place=Place.objects.get(code=self.spec["place"]),
            )
            self.seeder._made(f"incident {incident.reference}")
        incident.case = self.case
        if not incident.acts.exists():
            for victim, act_type, method, unit, involvement in self.spec["acts"]:
                services.add_act(
                    actor=self.actor,
                    incident=incident,
                    victim=self.seeder.people[victim],
                    act_type=Term.objects.get(scheme=Scheme.ACT_TYPE, code=act_type),
                    method=_term(Scheme.METHOD, method),
                    unit=_term(Scheme.PERPETRATOR_TYPE, unit),
                    involvement=_term(Scheme.INVOLVEMENT, involvement),
                )
                self.seeder._made(f"act on {incident.reference}")
        if not Link.objects.filter(incident=incident).exists():
            for name in self.spec["links"]:
                services.link_record(actor=self.actor, incident=incident, record=self._record(name))
                self.seeder._made(f"{incident.reference} linked to {name}")

    def _record(self, name: str) -> EvidenceItem | Testimony | LegalElement:
        if name == "photo":
            return EvidenceItem.objects.get(
                case=self.case,
                batch__acquired_from=story.CARD_SOURCE,
                original_path__endswith=photos.card_name(story.IDENTIFICATION["photo"]),
            )
        if name == "testimony":
            witness = self.seeder.people[story.TESTIMONY["witness"]]
            return Testimony.objects.get(case=self.case, witness=witness)
        return LegalElement.objects.get(code=name)
