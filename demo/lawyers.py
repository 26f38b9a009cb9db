"""The lawyers' part of the demo story (``story.ASSESSMENTS``, ``story.LINKS``,
``story.PHOTO_REVIEW``): written through legal's services, each step once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from casefiles.reviewing import ReviewStatus
from evidence import services as evidence_services
from evidence.models import EvidenceItem
from legal.models import Assessment, ElementLink, LegalElement
from legal.services import assessments, links, review
from legal.services.common import Reviewed
from people.models import Testimony

from . import photos, story

if TYPE_CHECKING:
    from .seed import Seeder


class LawyersWork:
    def __init__(self, seeder: Seeder) -> None:
        self.seeder = seeder
        self.case = seeder.case
        self.users = seeder.users

    def run(self) -> None:
        self.graphic()
        self.records: dict[str, Reviewed] = {"photo": self._photo(), "testimony": self._statement()}
        self.assess()
        self.link()
        self.review_photo()

    def graphic(self) -> None:
        spec = story.GRAPHIC
        first = (
            EvidenceItem.objects.filter(case=self.case, batch__acquired_from=story.CARD_SOURCE)
            .order_by("reference")
            .values_list("pk", flat=True)[: spec["first"]]
        )
        marked = evidence_services.set_graphic(
            actor=self.users[spec["by"]],
            case=self.case,
            items=EvidenceItem.objects.filter(pk__in=list(first)),
        )
        if marked:
            self.seeder._made(f"{', '.join(marked)} marked graphic", len(marked))

    def _photo(self) -> EvidenceItem:
        name = photos.card_name(story.IDENTIFICATION["photo"])
        item = (
            EvidenceItem.objects.filter(
                case=self.case,
                batch__acquired_from=story.CARD_SOURCE,
                original_path__endswith=name,
            )
            .select_related("original")
            .order_by("pk")
            .first()
        )
        if item is None:
            raise RuntimeError("The demo photograph is missing: run seed_demo again.")
        item.case = self.case
        return item

    def _statement(self) -> Testimony:
        witness = self.seeder.people[story.TESTIMONY["witness"]]
        testimony = Testimony.objects.select_related("witness").get(case=self.case, witness=witness)
        testimony.case = self.case
        return testimony

    def assess(self) -> None:
        for spec in story.ASSESSMENTS:
            record, actor = self.records[spec["of"]], self.users[spec["by"]]
            if Assessment.objects.filter(
                assessor=actor, **{"item" if spec["of"] == "photo" else "testimony": record}
            ).exists():
                continue
            grades = {k: spec[k] for k in ("reliability", "credibility", "consistency")}
            assessments.assess(
                actor=actor,
                case=self.case,
                record=record,
                geolocation=spec["geolocation"],
                authenticity=spec["authenticity"],
                rationale=spec["rationale"],
                **grades,
            )
            self.seeder._made(f"{record} assessed by {actor.get_username()}")

    def link(self) -> None:
        lawyer = self.users["lawyer"]
        for spec in story.LINKS:
            record = self.records[spec["of"]]
            element = LegalElement.objects.get(code=spec["element"])
            key = {"item" if spec["of"] == "photo" else "testimony": record}
            link = ElementLink.objects.filter(element=element, **key).first()
            if link is None:
                link = links.link_to_element(
                    actor=lawyer,
                    case=self.case,
                    record=record,
                    element=element,
                    stance=spec["stance"],
                    proposition=spec["proposition"],
                )
                self.seeder._made(f"{record} linked to {element.code}")
            confirmer = spec["confirmed_by"]
            if confirmer and not hasattr(link, "confirmation"):
                link.case = self.case
                links.confirm_link(actor=self.users[confirmer], link=link)
                self.seeder._made(f"link to {element.code} confirmed by {confirmer}")

    def review_photo(self) -> None:
        photo = self._photo()
        spec = story.PHOTO_REVIEW
        if photo.review_status == ReviewStatus.NEW:
            review.decide(
                actor=self.users[spec["submitted_by"]], record=photo, to_status="submitted"
            )
            self.seeder._made(f"{photo} submitted for review")
        if photo.review_status == ReviewStatus.SUBMITTED:
            review.decide(actor=self.users[spec["approved_by"]], record=photo, to_status="approved")
            self.seeder._made(f"{photo} approved")
