"""manage.py search "QUERY" --as USER [--case REF] [--kind K] [--json]: the search page's
results for that user, from the command line (audited as the page is)."""

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from casefiles.models import Case
from search.kinds import kinds
from search.query import search


class Command(BaseCommand):
    help = "Search as USER sees: the same results as /search/, grouped by kind."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query")
        parser.add_argument("--as", dest="username", required=True, help="whose view")
        parser.add_argument("--case", help="only this case (its reference)")
        parser.add_argument(
            "--kind", action="append", choices=[k.name for k in kinds()], help="only this kind"
        )
        parser.add_argument("--limit", type=int, default=10, help="results per kind")
        parser.add_argument("--json", action="store_true", help="JSON on standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model().objects.filter(username=options["username"], is_active=True)
        user = users.first()
        if user is None:
            raise CommandError(f"No active user {options['username']!r}.")
        case = None
        if options["case"]:
            # A case the user is not a member of reads as one that does not exist.
            case = Case.objects.visible_to(user).filter(reference=options["case"]).first()
            if case is None:
                raise CommandError(f"No case {options['case']!r}.")
        if not 1 <= options["limit"] <= 100:
            raise CommandError("--limit: from 1 to 100.")
        results = search(
            user, options["query"], case=case, kinds=options["kind"], limit=options["limit"]
        )
        if options["json"]:
            doc = {
                "query": results.query,
                "groups": [
                    {
                        "kind": g.kind.name,
                        "more": g.more,
                        "hits": [h.as_json() for h in g.hits],
                    }
                    for g in results.groups
                ],
            }
            self.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2))
            return
        if not results.groups:
            self.stdout.write("no results")
        for g in results.groups:
            self.stdout.write(f"{g.kind.label} ({len(g.hits)}{'+' if g.more else ''})")
            for h in g.hits:
                self.stdout.write(f"  {h.case} {h.reference}  {h.url}")
