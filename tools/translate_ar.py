"""Fill casefiles/locale/ar/LC_MESSAGES/django.po from the table below (run by
`make messages` after makemessages; untranslated strings are listed and left empty)."""

import re
import sys
from pathlib import Path

PO = Path(__file__).resolve().parent.parent / "casefiles/locale/ar/LC_MESSAGES/django.po"

AR = {
    "Lead": "مسؤول القضية",
    "Investigator": "محقّق",
    "Lawyer": "محامٍ",
    "Observer": "مراقب",
    "An inactive account cannot be given access to a case.": "لا يمكن منح حساب معطَّل صلاحية الوصول إلى قضية.",
    "The role “%(role)s” needs an account in the group %(groups)s.": "الدور «%(role)s» يتطلّب حسابًا في المجموعة %(groups)s.",
    "Revoke the selected memberships now": "إلغاء العضويات المحدّدة الآن",
    "Access revoked.": "أُلغيت صلاحية الوصول.",
    "Cases and audit": "القضايا وسجلّ التدقيق",
    "Signed in": "تسجيل دخول",
    "Failed sign-in": "محاولة دخول فاشلة",
    "Signed out": "تسجيل خروج",
    "Case opened": "فتح قضية",
    "Case changed": "تعديل قضية",
    "Case viewed": "الاطلاع على قضية",
    "Access granted": "منح صلاحية",
    "Access changed": "تعديل صلاحية",
    "Access revoked": "إلغاء صلاحية",
    "Audit log viewed": "الاطلاع على سجلّ التدقيق",
    "Actor": "المنفِّذ",
    "Action": "الإجراء",
    "Case": "القضية",
    "Date": "التاريخ",
    "Use 3 to 32 capital letters, digits and hyphens, e.g. SYR-2014-001.": "استخدم من 3 إلى 32 حرفًا لاتينيًا كبيرًا أو رقمًا أو شرطة، مثل SYR-2014-001.",
    "Open": "مفتوحة",
    "In review": "قيد المراجعة",
    "Closed": "مغلقة",
    "Archived": "مؤرشفة",
    "Internal": "داخلية",
    "Confidential": "سرّية",
    "Strictly confidential": "سرّية للغاية",
    "reference": "المرجع",
    "title": "العنوان",
    "summary": "الملخّص",
    "status": "الحالة",
    "sensitivity": "درجة الحساسية",
    "jurisdiction": "الولاية القضائية",
    "created at": "تاريخ الإنشاء",
    "case": "قضية",
    "cases": "قضايا",
    "role": "الدور",
    "granted at": "تاريخ المنح",
    "expires at": "تاريخ الانتهاء",
    "revoked at": "تاريخ الإلغاء",
    "membership": "عضوية",
    "memberships": "العضويات",
    "audit entry": "قيد تدقيق",
    "audit entries": "قيود التدقيق",
    "The expiry must be in the future.": "يجب أن يكون تاريخ الانتهاء في المستقبل.",
    "A revoked membership cannot be changed; grant a new one.": "لا يمكن تعديل عضوية ملغاة؛ امنح عضوية جديدة.",
    "English": "الإنجليزية",
    "Arabic": "العربية",
    "Evidence": "الأدلّة",
    "People and testimony": "الأشخاص والشهادات",
    "Not allowed": "غير مسموح",
    "Your account may not open this page.": "لا يحقّ لحسابك فتح هذه الصفحة.",
    "Not found": "غير موجود",
    "There is nothing here, or you have no access to it.": "لا يوجد شيء هنا، أو ليس لديك صلاحية الوصول إليه.",
    "Athar": "أثر",
    "Main": "القائمة الرئيسية",
    "My cases": "قضاياي",
    "Audit log": "سجلّ التدقيق",
    "Administration": "الإدارة",
    "Sign out": "تسجيل الخروج",
    "Filter": "تصفية",
    "When (UTC)": "الوقت (UTC)",
    "Object": "العنصر",
    "Address": "العنوان الشبكي",
    "No entries match.": "لا توجد قيود مطابقة.",
    "Pages": "الصفحات",
    "Newer": "الأحدث",
    "Page %(n)s of %(total)s": "الصفحة %(n)s من %(total)s",
    "Older": "الأقدم",
    "Status": "الحالة",
    "Sensitivity": "درجة الحساسية",
    "Jurisdiction": "الولاية القضائية",
    "My role": "دوري",
    "Summary": "الملخّص",
    "Members": "الأعضاء",
    "User": "المستخدم",
    "Role": "الدور",
    "Granted": "تاريخ المنح",
    "Expires": "ينتهي في",
    "Reference": "المرجع",
    "Title": "العنوان",
    "You are not a member of any case yet. An administrator or a case lead can give you access.": "لست عضوًا في أي قضية بعد. يمكن لمدير النظام أو لمسؤول القضية منحك صلاحية الوصول.",
    "Sign in": "تسجيل الدخول",
    "Username": "اسم المستخدم",
    "Password": "كلمة المرور",
}

ENTRY = re.compile(r'((?:#.*\n)*)msgid ((?:".*"\n)+)msgstr ((?:".*"\n)+)')


def unquote(block: str) -> str:
    return "".join(line[1:-1] for line in block.strip().splitlines()).replace('\\"', '"')


def quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"\n'


def main() -> int:
    missing = []

    def fill(m: re.Match) -> str:
        msgid = unquote(m[2])
        if not msgid:
            return m[0]
        if msgid not in AR:
            missing.append(msgid)
            return m[0]
        comments = m[1].replace("#, fuzzy\n", "")
        return f"{comments}msgid {m[2]}msgstr {quote(AR[msgid])}"

    text = ENTRY.sub(fill, PO.read_text())
    text = text.replace('"Language: \\n"', '"Language: ar\\n"')
    text = text.replace('#, fuzzy\nmsgid ""\nmsgstr ""', 'msgid ""\nmsgstr ""', 1)
    text = text.replace("PACKAGE VERSION", "Athar").replace("SOME DESCRIPTIVE TITLE.", "Athar")
    PO.write_text(text)
    for msgid in missing:
        print(f"untranslated: {msgid}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
