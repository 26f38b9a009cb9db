"""The helpers that read a page as HTML (tests/html.py): they see what a person or a
browser reads, never the CSRF token or a script's contents."""

import pytest
from django.urls import reverse

from tests.html import attrs, has_text, page_text, shows

TOKEN = "xB2kQ9" + "a" * 58  # as a CSRF token can be: random letters and digits

PAGE = f"""<!doctype html><html><head><title>Assessments</title>
<style>.B2 {{ color: red }}</style><script src="/static/js/keys.js">var B2 = 1;</script>
</head><body>
<form method="post"><input type="hidden" name="csrfmiddlewaretoken" value="{TOKEN}">
<input type="hidden" name="item" value="EV-000007"><button>Save</button></form>
<table><tr><td>C</td><td>3</td></tr></table>
<p><strong dir="ltr">A</strong>1 &amp; <em>more</em>
   on   two lines</p><!-- B2, said in a comment -->
<a href="/x/?stance=supports&amp;reviewed=1" title="Reviewed links">links</a>
<img alt="EV-000009" src="/t/9.jpg"><ul><li>one</li><li>two</li></ul>
</body></html>"""


def test_a_string_only_in_the_csrf_token_scripts_styles_or_comments_is_not_shown():
    assert "B2" in PAGE and TOKEN in PAGE  # a raw search finds it
    assert not has_text(PAGE, "B2") and not shows(PAGE, "B2")
    assert not shows(PAGE, TOKEN) and TOKEN not in attrs(PAGE, "value")
    assert "var" not in page_text(PAGE) and "color" not in page_text(PAGE)


def test_text_reads_as_on_screen():
    text = page_text(PAGE)
    assert has_text(PAGE, "A1 & more on two lines")  # inline elements join, entities decode
    assert has_text(PAGE, "A1 &   more")  # the needle's whitespace collapses too
    assert not has_text(PAGE, "C3") and has_text(PAGE, "C 3")  # two cells stay apart
    assert "one two" in text and "onetwo" not in text
    assert has_text(PAGE, "Save") and has_text(PAGE, "Assessments")


def test_attributes_are_read_decoded_and_shown():
    assert attrs(PAGE, "href") == ["/x/?stance=supports&reviewed=1"]
    assert attrs(PAGE, "value", tag="input") == ["EV-000007"]  # the token left out
    assert attrs(PAGE, "src", tag="script") == ["/static/js/keys.js"]
    assert shows(PAGE, "EV-000007") and shows(PAGE, "EV-000009")  # hidden field, alt text
    assert shows(PAGE, "Reviewed links") and not has_text(PAGE, "EV-000009")


@pytest.mark.django_db
def test_a_real_pages_csrf_token_is_never_shown(client, cast):
    client.force_login(cast.lead)
    page = client.get(reverse("case_members", args=[cast.case.reference]))
    token = page.context["csrf_token"]
    raw = page.content.decode()
    assert str(token) in raw
    assert not shows(page, str(token))
    assert has_text(page, cast.case.reference)
