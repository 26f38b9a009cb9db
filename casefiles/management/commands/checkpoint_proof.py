import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from casefiles import services


class Command(BaseCommand):
    help = (
        "Print the consistency proof between two stored checkpoints, as JSON: "
        '{"from": {"size", "root"}, "to": {"size", "root"}, "proof": [hex, ...]}. A witness '
        "checks it from the last checkpoint it cosigned before cosigning the next. See "
        "docs/audit-checkpoints.md."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--from", dest="old", type=int, required=True, help="size of the earlier checkpoint"
        )
        parser.add_argument(
            "--to", dest="new", type=int, default=None, help="size of the later (default: newest)"
        )

    def handle(self, *args, **options):
        try:
            proof = services.consistency_between(options["old"], options["new"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(json.dumps(proof, sort_keys=True))
