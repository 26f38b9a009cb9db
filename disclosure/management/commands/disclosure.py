"""manage.py disclosure request|approve|refuse|build|report: packages from the command line.

    manage.py disclosure request --case REF --select all|EV-…[,…] --recipient "…" \\
        --purpose SCOPE --as USER          (prints the package's id)
    manage.py disclosure approve ID --as USER
    manage.py disclosure build ID --out DIR
    manage.py disclosure report ID --out FILE --as USER   (the custody report its bag holds)
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from casefiles import audit
from casefiles.access import Action, can
from casefiles.models import Case
from disclosure import services
from disclosure.contents import review
from disclosure.models import Package
from disclosure.services.building import bag_report


def _user(username: str):
    user = get_user_model().objects.filter(is_active=True, username=username).first()
    if user is None:
        raise CommandError(f"No active user {username!r}.")
    return user


def _package(pk: int) -> Package:
    package = Package.objects.select_related("case", "requested_by").filter(pk=pk).first()
    if package is None:
        raise CommandError(f"No package {pk}.")
    return package


def _why(exc: ValidationError | PermissionDenied) -> str:
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc) or "Refused."


class Command(BaseCommand):
    help = "Request, approve and build disclosure packages."

    def add_arguments(self, parser):
        steps = parser.add_subparsers(dest="step", required=True)
        ask = steps.add_parser("request", help="request a package (prints its id)")
        ask.add_argument("--case", required=True)
        ask.add_argument("--select", default="all", help="all, or EV-…,T-… references")
        ask.add_argument("--recipient", required=True)
        ask.add_argument("--recipient-reference", default="")
        ask.add_argument("--purpose", required=True, help="a consent scope, e.g. prosecution")
        ask.add_argument("--name", action="append", default=[], help="name_ar or name_latin")
        ask.add_argument("--as", dest="username", required=True)
        yes = steps.add_parser("approve", help="approve a package (a lead, not the requester)")
        yes.add_argument("id", type=int)
        yes.add_argument("--allow-name", action="append", default=[])
        yes.add_argument("--as", dest="username", required=True)
        no = steps.add_parser("refuse", help="refuse a package, with the reason")
        no.add_argument("id", type=int)
        no.add_argument("--reason", required=True)
        no.add_argument("--as", dest="username", required=True)

        build = steps.add_parser("build", help="build an approved package into DIR")
        build.add_argument("id", type=int)
        build.add_argument("--out", type=Path, required=True, help="a new folder for the bag")
        build.add_argument("--as", dest="username", help="who builds it (default: the system)")
        issue = steps.add_parser("report", help="a built package's custody report, from its bag")
        issue.add_argument("id", type=int)
        issue.add_argument("--out", type=Path, required=True, help="a new file for the PDF")
        issue.add_argument("--as", dest="username", required=True)

    def handle(self, *args, step, **options):
        try:
            getattr(self, f"do_{step}")(**options)
        except (ValidationError, PermissionDenied) as exc:
            raise CommandError(_why(exc)) from None

    def do_request(
        self, *, case, select, recipient, recipient_reference, purpose, name, username, **_
    ):
        found = Case.objects.filter(reference=case).first()
        if found is None:
            raise CommandError(f"No case {case!r}.")
        package = services.request_package(
            actor=_user(username),
            case=found,
            recipient=recipient,
            recipient_reference=recipient_reference,
            purpose=purpose,
            select=select,
            named_fields=name,
        )
        self.stdout.write(str(package.pk))  # alone on stdout: PKG=$(... request ...)
        self._say_contents(package)

    def _say_contents(self, package: Package) -> None:
        """What goes in and what is left out and why, as the package's page says it
        (the same review, the same headings), on stderr."""
        found = review(package.requested_by, package)
        said = [f"{package.code}: {len(found.included)} records go in"]
        for _key, title, lines in found.left_out:
            said.append(f"{title} ({len(lines)})")
            said += [
                f"  {line.ref}: {line.reason}"
                + (f" ({', '.join(line.codes)})" if line.codes else "")
                for line in lines
            ]
        for text in said:  # plain: a report, not an error
            self.stderr.write(text, style_func=lambda s: s)

    def do_approve(self, *, id, allow_name, username, **_):
        package = services.approve_package(
            actor=_user(username), package=_package(id), allowed_fields=allow_name
        )
        self.stdout.write(f"{package.code} approved: {package.total} records")

    def do_refuse(self, *, id, reason, username, **_):
        package = services.refuse_package(
            actor=_user(username), package=_package(id), reason=reason
        )
        self.stdout.write(f"{package.code} refused")

    def do_build(self, *, id, out, username, **_):
        if out.exists() and any(out.iterdir()):
            raise CommandError(f"{out} is not empty: give a new folder.")
        package = _package(id)
        actor = _user(username) if username else None
        if package.status != Package.Status.BUILDING:
            package = services.start_build(actor=actor, package=package)
        try:
            package = services.run_build(package, out=out)
        except Exception as exc:
            raise CommandError(f"{package.code} failed: {type(exc).__name__}: {exc}") from None
        self.stdout.write(
            f"{package.code} ready in {out}\n"
            f"tar file {package.stored_path} sha256 {package.sha256}\n"
            f"tagmanifest-sha256.txt sha256 {package.tagmanifest_sha256}"
        )

    def do_report(self, *, id, out, username, **_):
        """The report the package's bag holds, from its stored tar file (audited)."""
        user, package = _user(username), _package(id)
        if not can(user, Action.EXPORT, package.case):
            raise CommandError(f"{username} may not disclose in {package.case.reference}.")
        if package.status != Package.Status.READY or not package.stored_path.is_file():
            raise CommandError(f"{package.code} is not built.")
        if out.exists():
            raise CommandError(f"{out} exists: give a new file.")
        pdf = bag_report(package)
        sha256 = hashlib.sha256(pdf).hexdigest()
        with transaction.atomic(durable=True):
            audit.record(
                user, "disclosure.report", target=package, case=package.case, sha256=sha256
            )
        with out.open("xb") as fh:
            fh.write(pdf)
        self.stdout.write(f"{package.code} custody report in {out}, sha256 {sha256}")
