"""The dashboard's pages and changes over a real (hash-encoder) system, in process."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cognitive_memory.core.validation import MAX_TEXT_CHARS
from cognitive_memory.service import MemoryChanges, MemoryService, StoreContext
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep.checkup import serving_checks
from interfaces.dashboard import DashboardSource, HealthCheck
from interfaces.dashboard.graph import bridge_nodes
from interfaces.dashboard.views import CONTENT_SECURITY_POLICY
from interfaces.http_app import create_http_app
from interfaces.mcp_server import create_server
from tests.aging import make_old_store
from tests.dashboard.conftest import TOKEN, csrf_of, login

TEMPLATES = Path(__file__).resolve().parents[2] / "interfaces" / "dashboard" / "templates"
HOSTILE = '<img src=x onerror=alert(1)> <script>alert(2)</script> <a href="javascript:alert(3)">x</a>'


class _FormFields(HTMLParser):
    """The fields a browser would post from the form whose action is ``action``."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside = action, False
        self.fields: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.inside = a.get("action") == self.action and not self.fields
        elif self.inside and tag == "input" and "name" in a:
            self.fields[a["name"]] = a.get("value", "")
        elif self.inside and tag == "textarea":
            self._textarea = a["name"]
            self.fields[a["name"]] = ""
        elif self.inside and tag == "select":
            self._select = a["name"]
        elif (
            self.inside
            and tag == "option"
            and self._select
            and ("selected" in a or self._select not in self.fields)
        ):
            self.fields[self._select] = a["value"]

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.fields[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None
        elif tag == "form":
            self.inside = False


def edit_form_of(html: str, memory_id: str) -> dict[str, str]:
    parser = _FormFields(f"/memories/{memory_id}/edit")
    parser.feed(html)
    assert parser.fields, "the page holds no edit form"
    return parser.fields


def test_search_lists_a_stored_memory_with_its_score_parts_and_reason(
    client: TestClient, service: MemoryService
) -> None:
    memory_id = service.store_experience("Deploys run through rsync to the blue host.").memory_id
    page = client.get("/search", params={"q": "rsync deploys blue host"})
    assert page.status_code == 200
    assert f'href="/memories/{memory_id}"' in page.text
    assert "Core" in page.text
    assert re.search(r"<dt>semantic</dt><dd><meter min=\"0\" max=\"1\" value=\"[0-9.]+\">", page.text)
    assert "Why:</strong> " in page.text


def test_search_says_when_the_index_lacks_memories_and_still_finds_them_by_their_words(
    client: TestClient, service: MemoryService
) -> None:
    kept = service.store_experience("The boiler service is booked for October.").memory_id
    lost = service.store_experience("Deploys run through rsync to the blue host.").memory_id
    service.system.flush()
    service.system.vectors.delete([lost])  # its vector lost: an older copy of the index put back
    assert service.system.retriever.coverage is not None
    service.system.retriever.coverage.look()  # as the opener of a process starting on it does

    page = client.get("/search", params={"q": "rsync deploys blue host"})

    assert page.status_code == 200 and kept != lost
    assert f'href="/memories/{lost}"' in page.text
    assert "⚠️ The vector index holds 1 of 2 memories" in page.text


def test_search_filters_narrow_and_bad_filters_say_why(client: TestClient, service: MemoryService) -> None:
    service.store_experience("Tagged rsync note", StoreContext(tags=["ops"], project="alpha"))
    service.store_experience("Untagged rsync note", StoreContext(project="beta"))
    page = client.get("/search", params={"q": "rsync note", "project": "alpha"})
    assert "Tagged rsync note" in page.text
    assert "Untagged rsync note" not in page.text
    bad = client.get("/search", params={"q": "rsync", "level": "7", "after": "yesterday"})
    assert bad.status_code == 400
    assert "Filter not usable" in bad.text
    assert 'value="yesterday"' in bad.text


def test_browse_sorts_and_pages(client: TestClient, service: MemoryService) -> None:
    for number in range(5):
        service.store_experience(f"Browse note number {number}", StoreContext(importance_score=number / 10))
    first = client.get("/memories", params={"order": "importance", "limit": "2"})
    assert first.status_code == 200
    assert "5 memories" in first.text or "2 of 5" in first.text
    texts = re.findall(r"Browse note number (\d)", first.text)
    assert texts == ["4", "3"]
    following = re.search(r'href="/memories\?([^"]+)" rel="next"', first.text)
    assert following
    second = client.get("/memories?" + following.group(1).replace("&amp;", "&"))
    assert re.findall(r"Browse note number (\d)", second.text) == ["2", "1"]


def test_browse_shows_the_tags_and_sessions_and_each_narrows_the_list(
    client: TestClient, service: MemoryService
) -> None:
    night = "night-3"
    service.store_experience("Kafka lag alert at noon.", StoreContext(tags=["ops", "kafka"]), session=night)
    service.store_experience("The ops runbook moved to the wiki.", StoreContext(tags=["ops"]), session=night)
    service.store_experience("Invoices go out monthly.", session="day-1")

    first = client.get("/memories")
    tag_link = re.search(r'href="/memories\?([^"]*tags=kafka[^"]*)"', first.text)
    session_link = re.search(r'href="/memories\?([^"]*session=day-1[^"]*)"', first.text)
    assert tag_link and session_link, first.text
    narrowed = client.get("/memories?" + tag_link.group(1).replace("&amp;", "&"))
    by_session = client.get("/memories?" + session_link.group(1).replace("&amp;", "&"))

    assert "#ops 2</a>" in first.text and "#kafka 1</a>" in first.text and "1 without a tag" in first.text
    assert re.search(r">night-3</a></td><td>2</td>", first.text)
    assert "Kafka lag alert" in narrowed.text and "runbook" not in narrowed.text
    assert "Invoices go out monthly." in by_session.text and "Kafka" not in by_session.text


def test_the_memory_page_shows_text_metadata_versions_and_links(
    client: TestClient, service: MemoryService
) -> None:
    first = service.store_experience(
        "First memory text", StoreContext(tags=["alpha-tag"], key="first-note", session="nightly-3")
    ).memory_id
    second = service.store_experience("Second memory text").memory_id
    service.link_memories(second, first, "supersedes", note="newer")
    page = client.get(f"/memories/{first}")
    assert page.status_code == 200
    assert "First memory text" in page.text
    assert "#alpha-tag" in page.text
    assert "← supersedes" in page.text
    assert f'href="/memories/{second}"' in page.text
    assert "<dt>Key</dt><dd><code>first-note</code></dd>" in page.text
    assert "<dt>Session</dt><dd><code>nightly-3</code></dd>" in page.text


def test_the_memory_page_shows_the_callers_own_fields_as_json(
    client: TestClient, service: MemoryService
) -> None:
    fields = {"phase": "beta", "ticket": 42, "owners": ["ana", "<b>bo</b>"]}
    memory_id = service.store_experience("Beta notes", StoreContext(metadata=fields)).memory_id

    page = client.get(f"/memories/{memory_id}")

    assert "<dt>phase</dt><dd>beta</dd>" in page.text
    assert "<dt>ticket</dt><dd><code>42</code></dd>" in page.text
    assert '<dt>owners</dt><dd><code>["ana", "\\u003cb\\u003ebo\\u003c/b\\u003e"]</code></dd>' in page.text


def test_opening_a_memory_page_does_not_count_as_a_use(client: TestClient, service: MemoryService) -> None:
    memory_id = service.store_experience("Read on the dashboard only").memory_id
    assert client.get(f"/memories/{memory_id}").status_code == 200
    read = service.read_memory(memory_id)
    assert read is not None and read.record.access_count == 0 and read.record.history == []
    assert service.read_memory("no-such-id") is None


def test_edit_then_link_then_forget_then_restore(client: TestClient, service: MemoryService) -> None:
    memory_id = service.store_experience("Release notes are drafted on Fridays.").memory_id
    other = service.store_experience("Releases are cut on Thursdays.").memory_id
    page = client.get(f"/memories/{memory_id}").text
    csrf = csrf_of(page)
    edit = edit_form_of(page, memory_id) | {"text": "Release notes are drafted on Mondays."}
    edit |= {"tags": "release, notes", "importance": "0.7", "level": "1", "memory_type": "semantic"}
    done = client.post(f"/memories/{memory_id}/edit", data=edit)
    assert done.status_code == 303
    shown = client.get(done.headers["location"])
    assert "Mondays" in shown.text
    assert "Version 1" in shown.text
    notice = re.search(r'class="notice" role="status">([^<]+)<', shown.text)
    assert notice and notice.group(1).startswith("Updated text, tags, importance_score")
    assert "metadata" not in notice.group(1)  # an untouched source is not rewritten
    assert "?" not in done.headers["location"]  # the notice travels in the session, not the URL
    assert 'role="status"' not in client.get(done.headers["location"]).text  # shown once
    crafted = client.get(f"/memories/{memory_id}?notice=Your+session+expired%2C+call+555-0100")
    assert "555-0100" not in crafted.text
    linked = client.post(
        f"/memories/{memory_id}/link", data={"csrf": csrf, "to_id": other, "relation": "relates_to"}
    )
    assert linked.status_code == 303
    assert [r.id for r in service.related_memories(memory_id).related] == [other]
    assert "Yes, forget it" in client.get(f"/memories/{memory_id}/forget").text
    assert client.post(f"/memories/{memory_id}/forget", data={"csrf": csrf}).status_code == 303
    assert service.get_memories([memory_id]).missing == []
    forgotten = client.post(f"/memories/{memory_id}/forget", data={"csrf": csrf, "confirm": "yes"})
    assert forgotten.status_code == 303
    gone = client.get(f"/memories/{memory_id}")
    assert gone.status_code == 404
    assert "is in the trash" in gone.text
    assert memory_id in client.get("/trash").text.replace("Release notes", "")
    restored = client.post("/trash/restore", data={"csrf": csrf, "memory_id": memory_id})
    assert restored.headers["location"].startswith(f"/memories/{memory_id}")
    assert client.get(f"/memories/{memory_id}").status_code == 200


def test_a_refused_edit_keeps_what_was_typed(client: TestClient, service: MemoryService) -> None:
    memory_id = service.store_experience("Short memory").memory_id
    csrf = csrf_of(client.get(f"/memories/{memory_id}").text)
    typed = "x" * (MAX_TEXT_CHARS + 1)
    form = {"csrf": csrf, "text": typed, "tags": "kept-tag", "importance": "0.5", "level": "1"}
    answer = client.post(f"/memories/{memory_id}/edit", data={**form, "memory_type": "semantic"})
    assert answer.status_code == 400
    assert "Not saved" in answer.text
    assert typed in answer.text
    assert 'value="kept-tag"' in answer.text
    assert service.get_memories([memory_id]).memories[0].content == "Short memory"


def test_linking_to_an_unknown_memory_says_so(client: TestClient, service: MemoryService) -> None:
    memory_id = service.store_experience("Lonely memory").memory_id
    csrf = csrf_of(client.get(f"/memories/{memory_id}").text)
    answer = client.post(
        f"/memories/{memory_id}/link", data={"csrf": csrf, "to_id": "nope", "relation": "relates_to"}
    )
    assert answer.status_code == 400
    assert "nope" in answer.text
    bad = client.post(f"/memories/{memory_id}/link", data={"csrf": csrf, "to_id": "x", "relation": "loves!"})
    assert "a name of your own" in bad.text


@pytest.mark.parametrize("path", ["/memories/unknown-id", "/memories/unknown-id/forget", "/graph/unknown-id"])
def test_unknown_ids_give_a_readable_page(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    assert "unknown-id" in answer.text
    assert "Traceback" not in answer.text


def test_bad_numbers_and_unknown_pages_give_readable_pages(
    client: TestClient, service: MemoryService
) -> None:
    memory_id = service.store_experience("A memory").memory_id
    assert "from 1 to 3" in client.get(f"/graph/{memory_id}", params={"depth": "9"}).text
    assert client.get("/memories", params={"limit": "-1"}).status_code == 400
    assert client.get("/search", params={"q": "x" * 3000}).status_code == 400
    missing = client.get("/no/such/page")
    assert missing.status_code == 404
    assert "There is no such page" in missing.text


def test_hostile_memory_text_is_shown_as_text_everywhere(client: TestClient, service: MemoryService) -> None:
    hostile = service.store_experience(HOSTILE, StoreContext(tags=["<b>tag</b>"])).memory_id
    other = service.store_experience("A neighbour").memory_id
    service.link_memories(other, hostile, "relates_to", note="<i>note</i>")
    pages = [
        client.get("/search", params={"q": "img script alert"}).text,
        client.get("/memories").text,
        client.get(f"/memories/{hostile}").text,
        client.get(f"/memories/{other}").text,
        client.get(f"/graph/{other}").text,
        client.get(f"/memories/{hostile}/forget").text,
    ]
    for html in pages:
        assert "<img src=x" not in html
        assert "<script>alert" not in html
        assert 'href="javascript:' not in html
        assert "<b>tag" not in html and "<i>note" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages[2]
    data = client.get(f"/graph/{other}/data").json()
    assert HOSTILE[:40] in {node["label"][:40] for node in data["nodes"]}


def test_every_answer_carries_a_strict_csp(client: TestClient) -> None:
    answer = client.get("/")
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    assert answer.headers["x-frame-options"] == "DENY"
    assert client.get("/static/dashboard.css").headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_templates_hold_no_inline_script_style_or_handlers() -> None:
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template.name
        assert not re.search(r"<style|\sstyle=", text), template.name
        assert not re.search(r"\son[a-z]+=", text), template.name
        assert "|safe" not in text.replace(" ", "") and "Markup" not in text, template.name


def test_the_status_page_shows_counts_checks_and_sources(
    service: MemoryService, hash_system: CognitiveSystem
) -> None:
    from interfaces.http_app import create_dashboard_app

    service.store_experience("Counted", StoreContext(project="alpha"))
    checks = [HealthCheck("qdrant", "ok", "fine <here>"), HealthCheck("counts", "warn", "off by one")]
    source = DashboardSource(service, checks=lambda: checks)
    app = create_dashboard_app(source, host="127.0.0.1", port=8000, token=None)
    page = TestClient(app, base_url="http://127.0.0.1:8000").get("/status")
    assert page.status_code == 200
    assert "<dt>alpha</dt><dd>1</dd>" in page.text
    assert "fine &lt;here&gt;" in page.text
    assert "WARN" in page.text
    assert "Queued writes" in page.text
    assert hash_system.encoder.name in page.text


def test_the_status_page_shows_an_older_stores_words_being_built(request: pytest.FixtureRequest) -> None:
    from interfaces.http_app import create_dashboard_app

    ids = make_old_store()
    service: MemoryService = request.getfixturevalue("service")
    checks = [HealthCheck(c.name, c.status, c.detail) for c in serving_checks(service.system)]
    app = create_dashboard_app(
        DashboardSource(service, checks=lambda: checks), host="127.0.0.1", port=8000, token=None
    )
    page = TestClient(app, base_url="http://127.0.0.1:8000").get("/status")

    assert page.status_code == 200
    assert f"<dt>Words in index</dt><dd>0 of {len(ids)} (building; recall uses SQLite)</dd>" in page.text
    assert f"being built in the background: 0 of {len(ids)} memories" in page.text


def test_the_status_page_lists_loaded_files_latest_first(service: MemoryService, tmp_path: Path) -> None:
    from interfaces.http_app import create_dashboard_app

    for name in ("a-first.md", "b-second.md"):  # loaded in this order, listed the other way
        (tmp_path / name).write_text(f"# {name}\n\nNotes kept in {name}.\n")
        service.load_markdown(str(tmp_path / name))
    app = create_dashboard_app(DashboardSource(service), host="127.0.0.1", port=8000, token=None)
    page = TestClient(app, base_url="http://127.0.0.1:8000").get("/status")
    assert page.status_code == 200
    assert page.text.index("b-second.md") < page.text.index("a-first.md")
    assert [source.loader_type for source in service.loaded_sources()] == ["markdown", "markdown"]


def test_serve_mcp_app_keeps_bearer_auth_on_mcp_and_the_login_form_on_the_dashboard(
    hash_system: CognitiveSystem, service: MemoryService
) -> None:
    server = create_server(hash_system)
    app = create_http_app(
        server, host="127.0.0.1", port=8000, token=TOKEN, dashboard=DashboardSource(service)
    )
    with TestClient(app, base_url="http://127.0.0.1:8000", follow_redirects=False) as client:
        assert client.post("/mcp", json={}).status_code == 401
        assert client.get("/sse").status_code == 401
        assert client.get("/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 401
        assert login(client).status_code == 303
        assert client.get("/status").status_code == 200
        assert client.post("/mcp", json={}).status_code == 401
        assert client.get("/", headers={"host": "evil.example"}).status_code == 421


def test_graph_bridges_are_the_memories_that_hold_others_to_the_centre() -> None:
    edges = [("c", "a"), ("a", "b"), ("c", "d"), ("d", "e"), ("c", "e")]
    assert bridge_nodes("c", {"a", "b", "d", "e"}, edges) == {"a"}
    assert bridge_nodes("c", set(), []) == set()


def test_a_stale_edit_form_changes_nothing_and_shows_both_versions(
    client: TestClient, service: MemoryService
) -> None:
    context = StoreContext(tags=["release"], importance_score=0.4)
    memory_id = service.store_experience("Release notes are drafted on Fridays.", context).memory_id
    opened = edit_form_of(client.get(f"/memories/{memory_id}").text, memory_id)
    service.update_memory(memory_id, MemoryChanges(tags=["release", "ops<b>"], importance_score=0.9))

    stale = client.post(f"/memories/{memory_id}/edit", data={**opened, "text": "Drafted on <i>Mondays</i>."})

    assert stale.status_code == 409
    now = service.get_memories([memory_id]).memories[0]
    assert (now.content, now.tags, now.importance_score) == (
        "Release notes are drafted on Fridays.",
        ["release", "ops<b>"],
        0.9,
    )
    assert "Changed since you opened it" in stale.text
    assert "Release notes are drafted on Fridays." in stale.text  # what is stored now
    assert "ops&lt;b&gt;" in stale.text  # the tags changed meanwhile
    assert "Drafted on &lt;i&gt;Mondays&lt;/i&gt;." in stale.text  # what was submitted, as text
    assert "<i>Mondays" not in stale.text and "ops<b>" not in stale.text
    assert f'href="/memories/{memory_id}#edit"' in stale.text  # start again from the current one

    mine = edit_form_of(stale.text, memory_id)
    assert mine["text"] == "Drafted on <i>Mondays</i>." and mine["tags"] == "release"
    applied = client.post(f"/memories/{memory_id}/edit", data=mine)
    assert applied.status_code == 303
    now = service.get_memories([memory_id]).memories[0]
    assert (now.content, now.tags, now.importance_score) == ("Drafted on <i>Mondays</i>.", ["release"], 0.4)


def test_a_fresh_edit_form_saves_and_an_old_one_without_a_revision_is_stale(
    client: TestClient, service: MemoryService
) -> None:
    memory_id = service.store_experience("Backups run nightly.").memory_id
    fresh = edit_form_of(client.get(f"/memories/{memory_id}").text, memory_id)
    assert client.post(f"/memories/{memory_id}/edit", data={**fresh, "tags": "ops"}).status_code == 303
    assert service.get_memories([memory_id]).memories[0].tags == ["ops"]
    again = edit_form_of(client.get(f"/memories/{memory_id}").text, memory_id)
    unversioned = {name: value for name, value in again.items() if name != "revision"}
    assert client.post(f"/memories/{memory_id}/edit", data={**unversioned, "tags": ""}).status_code == 409
    assert client.post(f"/memories/{memory_id}/edit", data={**again, "tags": ""}).status_code == 303
    assert service.get_memories([memory_id]).memories[0].tags == []


def test_a_refused_stale_form_keeps_the_revision_it_was_read_at(
    client: TestClient, service: MemoryService
) -> None:
    memory_id = service.store_experience("Deploys need a ticket.").memory_id
    opened = edit_form_of(client.get(f"/memories/{memory_id}").text, memory_id)
    service.update_memory(memory_id, MemoryChanges(tags=["ops"]))
    refused = client.post(f"/memories/{memory_id}/edit", data={**opened, "importance": "7"})
    assert refused.status_code == 400
    retyped = edit_form_of(refused.text, memory_id)
    assert retyped["revision"] == opened["revision"]  # a 400 page does not make the form fresh
    assert (
        client.post(f"/memories/{memory_id}/edit", data={**retyped, "importance": "0.6"}).status_code == 409
    )
    assert service.get_memories([memory_id]).memories[0].tags == ["ops"]


def test_a_browser_s_crlf_line_breaks_do_not_change_the_text(
    client: TestClient, service: MemoryService
) -> None:
    memory_id = service.store_experience("Line one.\nLine two.").memory_id
    fresh = edit_form_of(client.get(f"/memories/{memory_id}").text, memory_id)
    posted = {**fresh, "text": fresh["text"].replace("\n", "\r\n"), "tags": "ops"}
    assert client.post(f"/memories/{memory_id}/edit", data=posted).status_code == 303
    notice = client.get(f"/memories/{memory_id}").text
    assert "Updated tags;" in notice
    assert service.get_memories([memory_id]).memories[0].content == "Line one.\nLine two."
