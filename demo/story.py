"""What the demo holds: fictional accounts, cases, people and statements.

The main case follows the shape of the "Caesar" photographs (a military-police
photographer smuggles out forensic photographs of detainees; families search them for
the missing) with invented people, places, numbers and words. Any resemblance to a real
person is accidental.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, LAWYER_GROUP, Role

# username, full name, system groups, staff; the password is "athar-demo-<username>".
DEMO_USERS = [
    ("admin", "Demo Admin", [ADMIN_GROUP], True),
    # A second admin: a grant or reset that needs two people is approved by the other
    # (decision 0022); with one admin such steps wait.
    ("admin2", "Hana Mansour", [ADMIN_GROUP], True),
    ("lead", "Layla Haddad", [INVESTIGATOR_GROUP], False),
    ("investigator", "Omar Khalil", [INVESTIGATOR_GROUP], False),
    ("lawyer", "Sara Nasser", [LAWYER_GROUP], False),
    ("observer", "Yusuf Darwish", [], False),
]


def demo_password(username: str) -> str:
    return f"athar-demo-{username}"


MAIN_CASE = "DEMO-2014-001"

DEMO_CASES: list[dict[str, Any]] = [
    {
        "reference": MAIN_CASE,
        "title": "Photographs of detainees (fictional) — صور المعتقلين",
        "summary": (
            "A fictional case for trying Athar: a drive of forensic photographs smuggled out "
            "by a military-police photographer, and the testimony of families who search "
            "for the missing.\n\n"
            "قضية وهمية لتجربة «أثر»: قرص من الصور الجنائية هرّبه مصوّر في الشرطة العسكرية، "
            "وشهادات عائلات تبحث عن المفقودين."
        ),
        "jurisdiction": "Universal jurisdiction (fictional)",
        "members": {
            "lead": Role.LEAD,
            "investigator": Role.INVESTIGATOR,
            "lawyer": Role.LAWYER,
            "observer": Role.OBSERVER,
        },
    },
    {
        "reference": "DEMO-2013-007",
        "title": "شهادات فرع التحقيق (قضية وهمية) — Interrogation branch testimony",
        "summary": (
            "شهادات وهمية لمعتقلين سابقين عن ظروف الاحتجاز في فرع تحقيق.\n\n"
            "Fictional testimony of former detainees about conditions in an interrogation "
            "branch. The demo investigator is not a member of this case."
        ),
        "jurisdiction": "",
        "members": {"lead": Role.LEAD, "lawyer": Role.LAWYER},
    },
]

# The photographs: one camera card, handed over by the photographer's go-between.
CARD_SOURCE = "W-0003 via a go-between (fictional)"
CARD_MEDIUM = "SD card, 8 GB, from a Nikon D90 (fictional)"
CARD_FOLDER = "camera-card"  # under $ATHAR_DATA_DIR/demo/

# The people, in the order they are registered. ``key`` names them below; ``by`` is the
# demo user who registers them; ``roles`` are further roles in the case.
PEOPLE: list[dict[str, Any]] = [
    {
        "key": "detainee",
        "by": "investigator",
        "role": "witness",
        "protection": "standard",
        "identity": {
            "name_ar": "مازن فؤاد السعدي",
            "name_latin": "Mazen Fouad al-Saadi",
            "birth_date": "1984",
            "risk_notes": "Lives abroad; family still in the country (fictional).",
        },
    },
    {
        "key": "mother",
        "by": "investigator",
        "role": "witness",
        "protection": "standard",  # raised to high below, with the reason
        "raise_to": "high",
        "raise_reason": (
            "Her neighbours were questioned about her visits to us: only those who must "
            "know her name should see it (fictional)."
        ),
        "roles": ["family"],
        "identity": {
            "name_ar": "نوال حسن العمر",
            "name_latin": "Nawal Hassan al-Omar",
            "aliases": "أم سليم\nUmm Salim",
            "birth_date": "1962-05",
            "phone": "+000 0000 0000 (fictional)",
        },
    },
    {
        "key": "photographer",
        "by": "lead",
        "role": "witness",
        "protection": "critical",
        "roles": ["source"],
        "identity": {
            "name_ar": "وليد منير الخطيب",
            "name_latin": "Walid Munir al-Khatib",
            "aliases": "قيصر\nQaisar (code name)",
            "risk_notes": "Defected; his identity is known to the case lead alone (fictional).",
        },
    },
    {
        "key": "victim",
        "by": "investigator",
        "role": "victim",
        "protection": "standard",
        "identity": {
            "name_ar": "سليم ماهر العمر",
            "name_latin": "Salim Maher al-Omar",
            "birth_date": "1991-03-14",
        },
        "victim": {
            "victim_status": "missing",
            "last_seen_on": date(2012, 11, 18),
            "last_seen_place": "A checkpoint on the road to the airport (fictional)",
        },
    },
]

# The mother is the mother of the victim.
RELATIONS = [("mother", "mother", "victim")]

# Consents: (who, scopes, how, given on, named bodies); then withdrawals:
# (who, the given date of the consent withdrawn, scopes withdrawn, how, on).
CONSENTS: list[tuple[str, list[str], str, date, str]] = [
    (
        "detainee",
        ["investigation", "prosecution", "sharing"],
        "written",
        date(2014, 3, 12),
        "A war-crimes unit of a European prosecutor (fictional)\nA UN investigative "
        "mechanism (fictional)",
    ),
    (
        "mother",
        ["investigation", "publication", "recontact"],
        "oral_recorded",
        date(2014, 4, 2),
        "",
    ),
    ("photographer", ["investigation", "prosecution"], "written", date(2014, 1, 20), ""),
]
WITHDRAWALS = [("mother", date(2014, 4, 2), ["publication"], "oral_recorded", date(2014, 6, 1))]

TESTIMONY: dict[str, Any] = {
    "witness": "detainee",
    "by": "investigator",
    "approver": "lead",
    "taken_at": datetime(2014, 3, 12, 9, 30, tzinfo=UTC),
    "language": "ar",
    "mode": "in_person",
    "place": "An interview room (fictional)",
    "interpreter": "",
}

STATEMENT_V1 = """\
اعتُقلت في شهر تشرين الأول ٢٠١٢ عند حاجز على طريق المطار، ونُقلت إلى فرع التحقيق (الوهمي).
بقيت في مهجع جماعي مع نحو خمسين معتقلاً.
في أواخر تشرين الثاني أُدخل إلى المهجع شاب قال إن اسمه سليم، من حيّنا.
كان مصاباً في وجهه، وفوق حاجبه الأيسر أثر جرح قديم.
بعد نحو أسبوعين نودي على رقمه ولم يعد.
أُفرج عني في ربيع ٢٠١٣."""

STATEMENT_V2 = """\
اعتُقلت في شهر تشرين الأول ٢٠١٢ عند حاجز على طريق المطار، ونُقلت إلى فرع التحقيق (الوهمي).
بقيت في المهجع رقم ٣ مع نحو خمسين معتقلاً.
في ١٩ تشرين الثاني ٢٠١٢ أُدخل إلى المهجع شاب قال إن اسمه سليم العمر، من حيّنا.
كان مصاباً في وجهه، وفوق حاجبه الأيسر أثر جرح قديم.
بعد نحو أسبوعين نودي على رقمه ولم يعد.
أُفرج عني في ربيع ٢٠١٣."""

REVISION_REASON = (
    "Read back to the witness: he gave the cell number, the day Salim arrived and his family name."
)

# The mother recognises her son in one photograph of the card.
IDENTIFICATION: dict[str, Any] = {
    "photo": 30,  # its index on the camera card (a scene of its own)
    "witness": "mother",
    "identified": "victim",
    "by": "investigator",
    "confidence": "certain",
    "method": "photo",
    "identified_on": date(2014, 4, 2),
    "notes": "She recognised the scar above his left eyebrow (fictional).",
    "title": "Photograph in which a mother recognised her son (fictional)",
}

# A later link of that photo's chain of custody: copied to the lawyers' review set.
CUSTODY: dict[str, Any] = {
    "action": "transferred",
    "by": "investigator",
    "at": datetime(2014, 4, 10, 14, 0, tzinfo=UTC),
    "from_custodian": "Omar Khalil, investigator (fictional)",
    "to_custodian": "Sara Nasser, lawyer (fictional)",
    "location": "Evidence room, locked cabinet 2 (fictional)",
    "purpose": "Review of the identification",
}

# The lawyers' work on the case: the identified photograph and the statement assessed,
# linked to the elements of the crimes against humanity they prove, the links confirmed
# by a second lawyer; the photograph submitted and approved. Elements no evidence supports
# yet stay gaps in the matrix (enforced disappearance's refusal to inform, for one).
ASSESSMENTS: list[dict[str, Any]] = [
    {
        "of": "photo",
        "by": "lawyer",
        "reliability": "B",
        "credibility": "2",
        "consistency": "same",
        "geolocation": "locality",
        "authenticity": "Camera metadata consistent with the card's other photographs.",
        "rationale": "Numbering and framing match the series; the scar matches the mother's "
        "account (fictional).",
    },
    {
        "of": "photo",
        "by": "lead",
        "reliability": "A",
        "credibility": "2",
        "consistency": "same",
        "geolocation": "unknown",
        "authenticity": "",
        "rationale": "Handed over by the photographer himself; place not visible (fictional).",
    },
    {
        "of": "testimony",
        "by": "lawyer",
        "reliability": "B",
        "credibility": "3",
        "consistency": "partly",
        "geolocation": "locality",
        "authenticity": "",
        "rationale": "Dates given from memory; the cell number came only at the read-back "
        "(fictional).",
    },
]
LINKS: list[dict[str, Any]] = [
    {
        "of": "photo",
        "element": "RS-7-1-a.1",
        "stance": "supports",
        "proposition": "The photograph shows the body of Salim, whom his mother recognised "
        "(fictional).",
        "confirmed_by": "lead",
    },
    {
        "of": "photo",
        "element": "RS-7-1-f.1",
        "stance": "supports",
        "proposition": "Bruising and ligature marks on the wrists (fictional).",
        "confirmed_by": "lead",
    },
    {
        "of": "testimony",
        "element": "RS-7-1-i.1",
        "stance": "supports",
        "proposition": "Salim was called by his number and never came back (fictional).",
        "confirmed_by": "lead",
    },
    {
        "of": "testimony",
        "element": "RS-7-1-e.1",
        "stance": "supports",
        "proposition": "About fifty detainees held in one cell for months (fictional).",
        "confirmed_by": None,
    },
    {
        "of": "testimony",
        "element": "RS-7-CTX.1",
        "stance": "context",
        "proposition": "Arrests at checkpoints on the airport road (fictional).",
        "confirmed_by": None,
    },
]
PHOTO_REVIEW = {"submitted_by": "lawyer", "approved_by": "lead"}

# The first photographs of the card show bodies at close range: a lawyer marks them
# graphic (blurred in every list until someone chooses to look at one).
GRAPHIC: dict[str, Any] = {"by": "lawyer", "first": 6}

# The incident the story is about (incidents app): the victim's arrest at a checkpoint
# and his detention, with the photo his mother identified, her statement and the element
# of imprisonment it bears on. Terms are HURIDOCS codes (vocabularies/thesauri/v1.json).
INCIDENT: dict[str, Any] = {
    "by": "investigator",
    "title_en": "Arrest at a checkpoint on the airport road, and detention (fictional)",
    "title_ar": "اعتقال على حاجز على طريق المطار، واحتجاز (متخيَّل)",
    "description_en": (
        "The victim was taken from a bus at a checkpoint and held by an intelligence "
        "branch; his family has not seen him since (fictional)."
    ),
    "description_ar": (
        "أُنزل الضحية من حافلة على حاجز واحتجزه فرع أمني؛ لم تره عائلته منذ ذلك الحين (متخيَّل)."
    ),
    "precision": "day",
    "starts_on": date(2012, 11, 18),
    "place": "SY-DI",
    "acts": [
        # (victim, act type, method, unit, degree of involvement)
        ("victim", "030101000000", None, "010106000000", "010100000000"),  # arrest
        ("victim", "030102000000", "030100000000", "010106000000", "010100000000"),  # detention
    ],
    "links": ["photo", "testimony", "RS-7-1-e.1"],
}

# The victim's antemortem profile (missing app): what his mother told the case of him,
# protected like his identity. The lead prepares a family session from it in the demo.
MISSING: dict[str, Any] = {
    "person": "victim",
    "by": "investigator",
    "physical": "About 1.75 m, slim, dark curly hair, brown eyes (fictional).",
    "clothing": "A grey jacket over a blue shirt, jeans, black trainers (fictional).",
    "marks": "A scar above the left eyebrow from a childhood fall (fictional).",
    "dental": "A chipped upper front tooth (fictional).",
    "last_seen_text": "Taken from a bus at a checkpoint on the airport road (fictional).",
    "last_seen_on": date(2012, 11, 18),
    "last_seen_place": "SY-DI",
    # What identifies him, sealed here only (decision 0023): the person has neither.
    "detainee_number": "4417/000 (fictional)",
    "detention_branch": "Branch 000, an interrogation branch (fictional)",
    "family_contact": "His mother, through the case lead; +000 0000 0001 (fictional).",
}
