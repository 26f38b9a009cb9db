"""One way to read: pages (and the API) read case data through the apps' reads modules,
which apply case access and the per-person protection rule at once (docs/reads.md).

- ``visible_to`` alone is case access only: an item attached to a statement the reader
  may not read passes it. The reads modules close that: ``readable_by`` leaves it out,
  ``listed_for`` marks it, and a page built on them shows its reference only.
- No view module uses a model manager (``Model.objects``, ``_default_manager``): every
  view the URL resolver reaches, and every view module of the apps (a future ``api``
  app's too), reads through the reads modules.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from casefiles.models import Case
from evidence import reads as evidence_reads
from evidence.models import EvidenceItem
from legal.models import ElementLink, LegalElement
from legal.services import links
from people import reads as people_reads
from people import services as people_services
from people.models import Testimony as Statement
from people.protection import attachment_refusal, withheld_testimonies
from tests.evidence.factories import EvidenceItemFactory
from tests.factories import CaseFactory, MembershipFactory, register_person

ROOT = Path(__file__).resolve().parent.parent
SCAN_TITLE = "Statement of the sister of the guard, page one"


def _statement(cast, level: str, case: Case | None = None) -> Statement:
    case = case or cast.case
    witness = register_person(case, cast.lead, protection_level=level)
    return people_services.create_testimony(
        actor=cast.lead,
        case=case,
        witness=witness,
        text="They took us to the branch at dawn.",
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
        interviewers=[],
    )


@pytest.fixture
def scan(cast):
    """A scan attached to a Critical protection witness's testimony: the observer and the
    investigator may not read the statement, so not the scan either."""
    testimony = _statement(cast, "critical")
    return EvidenceItemFactory(case=cast.case, title=SCAN_TITLE, testimony=testimony)


@pytest.mark.django_db
def test_visible_to_alone_passes_a_withheld_scan_and_the_reads_module_does_not(cast, scan):
    observer = cast.observer
    assert attachment_refusal(observer, scan)  # the rule: the scan is the statement
    # The old path: case access only. A page built on it shows the scan.
    assert EvidenceItem.objects.visible_to(observer).filter(pk=scan.pk).exists()
    # The reads module: case access and the protection rule at once.
    assert not evidence_reads.readable_by(observer, cast.case).filter(pk=scan.pk).exists()
    assert not evidence_reads.readable_by(observer).filter(pk=scan.pk).exists()
    listed = evidence_reads.listed_for(observer, cast.case).get(pk=scan.pk)
    assert listed.withheld is True
    # Who may read the statement reads the scan.
    for reader in (cast.lead, cast.lawyer):
        assert evidence_reads.readable_by(reader).filter(pk=scan.pk).exists()


@pytest.mark.django_db
def test_a_page_of_links_shows_a_withheld_scan_by_its_reference_only(client, cast, scan):
    """The element's links page read the links through ``visible_to`` alone and showed
    the title of an item attached to a statement the reader may not read."""
    element = LegalElement.objects.filter(retired_at__isnull=True).first()
    links.link_to_element(
        actor=cast.lawyer,
        case=cast.case,
        record=scan,
        element=element,
        stance="supports",
        proposition="Places the guard at the branch.",
    )
    assert ElementLink.objects.visible_to(cast.observer).filter(item=scan).exists()
    url = reverse("legal:element_links", args=[cast.case.reference, element.code])
    client.force_login(cast.observer)
    html = client.get(url).content.decode()
    assert scan.reference in html
    assert SCAN_TITLE not in html
    client.force_login(cast.lawyer)
    assert SCAN_TITLE in client.get(url).content.decode()


@pytest.mark.django_db
def test_the_rule_across_cases_is_the_rule_of_each_case(cast):
    """``withheld_testimonies(user)`` (every case at once, for lists that span cases)
    withholds in each case exactly what ``withheld_testimonies(user, case)`` does."""
    other = CaseFactory(reference="SYR-2015-002")
    MembershipFactory(user=cast.lead, case=other, role="lead")
    MembershipFactory(user=cast.investigator, case=other, role="lead")
    MembershipFactory(user=cast.lawyer, case=other, role="observer")
    for level in ("standard", "high", "critical"):
        _statement(cast, level)
        _statement(cast, level, case=other)
    # A High protection witness the investigator registered, and one they interviewed.
    own = register_person(cast.case, cast.investigator, protection_level="critical")
    for witness, interviewers in (
        (own, []),
        (register_person(cast.case, cast.lead, protection_level="high"), [cast.investigator]),
    ):
        people_services.create_testimony(
            actor=cast.lead if interviewers else cast.investigator,
            case=cast.case,
            witness=witness,
            text="A statement.",
            taken_at=timezone.now(),
            language="en",
            mode="in_person",
            interviewers=interviewers,
        )
    users = [cast.lead, cast.investigator, cast.lawyer, cast.observer, cast.outsider, cast.admin]
    seen_withheld = False
    for user in users:
        anywhere = set(withheld_testimonies(user).values_list("pk", flat=True))
        for case in (cast.case, other):
            each = set(withheld_testimonies(user, case).values_list("pk", flat=True))
            assert anywhere & set(case.testimonies.values_list("pk", flat=True)) == each
            seen_withheld |= bool(each) and user in (cast.investigator, cast.observer)
        readable = set(people_reads.testimonies_readable_by(user).values_list("pk", flat=True))
        assert not readable & anywhere
    assert seen_withheld


# The view modules: what the URL resolver reaches, and every module named as views are.
VIEW_MODULE_GLOBS = ("*/views.py", "*/views/*.py", "*/*_views.py", "api/**/*.py")
APPS = (
    "accounts",
    "athar",
    "casefiles",
    "demo",
    "disclosure",
    "evidence",
    "incidents",
    "legal",
    "missing",
    "people",
    "places",
    "search",
    "vocabularies",
    "api",
)
# The Django admin reads for its own pages (admin tools never read case content:
# casefiles/admin_policy.py); it is no page of the app's.
NOT_PAGES = ("casefiles.admin",)


def _resolved_view_modules() -> set[str]:
    modules: set[str] = set()

    def walk(resolver: URLResolver) -> None:
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern)
                continue
            assert isinstance(pattern, URLPattern)
            view = pattern.callback
            view = getattr(view, "view_class", view)
            while hasattr(view, "__wrapped__"):
                view = view.__wrapped__
            module = inspect.getmodule(view)
            name = module.__name__ if module else ""
            if name.split(".")[0] in APPS and name not in NOT_PAGES:
                modules.add(name)

    walk(get_resolver())
    return modules


def _globbed_view_modules() -> set[str]:
    found = set()
    for pattern in VIEW_MODULE_GLOBS:
        for path in ROOT.glob(pattern):
            if "migrations" in path.parts or path.parts[len(ROOT.parts)] not in APPS:
                continue
            found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


_SHORTCUTS = ("get_object_or_404", "get_list_or_404")


def manager_uses(source: str) -> list[str]:
    """Each ``X.objects`` / ``X._default_manager`` / ``X._base_manager`` in ``source``, and
    each shortcut handed a model rather than a queryset (it reads through the model's
    default manager: ``get_object_or_404(Case, ...)``, ``get_object_or_404(get_user_model())``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in (
            "objects",
            "_default_manager",
            "_base_manager",
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _SHORTCUTS
            and node.args
        ):
            model = node.args[0]
            if (isinstance(model, ast.Name) and model.id[:1].isupper()) or (
                isinstance(model, ast.Call) and ast.unparse(model.func) == "get_user_model"
            ):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_walk_finds_the_views_and_the_check_finds_a_manager():
    resolved = _resolved_view_modules()
    assert {"evidence.views", "people.views", "accounts.signin", "legal.matrix_views"} <= resolved
    assert "evidence.views" in _globbed_view_modules()
    assert manager_uses("items = EvidenceItem.objects.visible_to(user)")
    assert manager_uses("get_user_model()._default_manager.all()")
    assert manager_uses("case = get_object_or_404(Case, reference=ref)")
    assert manager_uses("subject = get_object_or_404(get_user_model(), pk=pk)")
    assert not manager_uses("get_object_or_404(reads.links_of(user, incident), pk=pk)")
    assert not manager_uses("items = reads.readable_by(user, case)")


def test_no_view_reads_through_a_model_manager():
    """Pages (and the API, once it is here) read through the reads modules: a view that
    used ``Model.objects.visible_to`` alone would pass what the protection rule keeps."""
    modules = _resolved_view_modules() | _globbed_view_modules()
    found = {}
    for name in sorted(modules):
        source = Path(importlib.import_module(name).__file__ or "").read_text()
        if uses := manager_uses(source):
            found[name] = uses
    assert not found, f"read through the app's reads module instead: {found}"


def _name(f) -> str:
    return f"{f.__module__}.{f.__qualname__}"


def test_every_registered_panel_filter_kind_sealed_column_and_hook_is_documented():
    """docs/reads.md lists the app registries in one place: it names what is registered."""
    from casefiles import audit, panels, reviewing
    from evidence import filters
    from evidence import hooks as evidence_hooks
    from people import hooks as people_hooks
    from people import sealed
    from search import kinds

    doc = (ROOT / "docs" / "reads.md").read_text()
    registered = [f"`{slot}`" for slot in panels._slots]
    registered += [_name(r) for slot in panels._slots for r in panels.panels_for(slot)]
    registered += [_name(make) for make, _content in filters._extra_filters]
    registered += [f"`{kind.name}`" for kind in kinds.kinds()]
    for columns in sealed.registered():
        registered += [f"`{columns.model.__name__}`", *(f"`{c}`" for c in columns.columns)]
    hooks = evidence_hooks._positions_hooks + people_hooks._status_hooks
    registered += [_name(f) for f in [*hooks, *reviewing._reopeners, *audit._followers]]
    assert len(registered) > 40
    missing = [name for name in registered if name not in doc]
    assert not missing, f"add them to docs/reads.md: {missing}"
