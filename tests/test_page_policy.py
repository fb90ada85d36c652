"""The policy of every page this project writes (a run's HTML export, the static site's page): a Content-Security-Policy
that fetches nothing from elsewhere and refuses a <base>, a form's post and plugins, and a referrer policy that sends
no address to another site (round five, item 8; the landed pages set no base-uri, form-action or referrer policy)."""

import re

from app import gallery
from app.render.export import render_html
from app.render.site import index_html


def policy(page: str) -> dict[str, str]:
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert meta, "no Content-Security-Policy"
    return {d.split()[0]: " ".join(d.split()[1:]) for d in meta.group(1).split(";") if d.strip()}


def test_an_export_and_the_site_refuse_a_base_a_form_and_plugins():
    pages = {
        "export": render_html(gallery.load(gallery.names()[0])),
        "site": index_html(None, None),
        "site with the engine": index_html(None, None, engine={"files": []}),
    }
    for name, page in pages.items():
        p = policy(page)
        assert p["default-src"] == "'none'", name
        assert (p["base-uri"], p["object-src"], p["form-action"]) == ("'none'",) * 3, (name, p)
        assert "frame-ancestors" not in p, name  # embeds stay frameable (and a meta policy cannot set it)
        assert '<meta name="referrer" content="no-referrer">' in page, name
    assert policy(pages["export"])["connect-src"] == "'none'"  # an export fetches nothing at all
    assert policy(pages["site"])["connect-src"] == "'self'"  # the site only the files beside it
