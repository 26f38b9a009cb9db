"""manage.py reindex [--case REF] [--kind K]: rebuild the search index from the records."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from casefiles import audit
from casefiles.models import Case
from search import index, names_index
from search.kinds import kinds


class Command(BaseCommand):
    help = (
        "Rebuild the search index (every kind, or --kind) of every case (or --case) and "
        "the blind index of people's names. Writes keep the index current by themselves; "
        "this is for data written before the index existed, or restored from elsewhere."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--case", help="only this case (its reference)")
        parser.add_argument(
            "--kind", action="append", choices=[k.name for k in kinds()], help="only this kind"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        case = None
        if options["case"]:
            case = Case.objects.filter(reference=options["case"]).first()
            if case is None:
                raise CommandError(f"No case {options['case']!r}.")
        written = index.reindex(case.pk if case else None, options["kind"])
        people = 0
        if not options["kind"] or "person" in options["kind"]:
            with transaction.atomic():
                people = names_index.reindex(case.pk if case else None)
        with transaction.atomic(durable=True):
            audit.record(None, "search.reindex", case=case, entries=written, names_of=people)
        for name, count in written.items():
            self.stdout.write(f"{name}: {count}")
        self.stdout.write(f"names keyed: {people} people")
