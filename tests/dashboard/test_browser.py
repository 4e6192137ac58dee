"""The dashboard in a real browser (Debian's Chromium under Playwright) against a real
`memory_system serve mcp --port` with MCP_AUTH_TOKEN: log in, search, open, edit, link, forget,
the graph, and hostile memory text that must never run. Screenshots go to test-output/dashboard/.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.dashboard.conftest import SCREENSHOTS, TOKEN, LiveServer

TIMEOUT_MS = 15_000


@dataclass
class Watched:
    """A page, and what it said that it should not have: dialogs, errors, CSP violations."""

    page: Any
    dialogs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def shot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.fixture
def watched(browser: Any, live_server: LiveServer) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=live_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    seen = Watched(page)

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda message: _console(seen, message))
    page.on("pageerror", lambda error: seen.problems.append(str(error)))
    yield seen
    context.close()


def _console(seen: Watched, message: Any) -> None:
    """Errors and CSP violations count; a page answered with an error status (the login wall's
    401, a refused form) is expected where a test asks for it, and checked by its text."""
    if message.type == "error" and not message.text.startswith("Failed to load resource"):
        seen.problems.append(message.text)


def log_in(seen: Watched, path: str = "/") -> None:
    page = seen.page
    page.goto(path)
    page.fill("#token", TOKEN)
    page.click("button:has-text('Log in')")
    page.wait_for_selector("nav >> text=Status")


def test_login_then_search_lists_the_memory(watched: Watched, live_server: LiveServer) -> None:
    page = watched.page
    page.goto("/")
    assert page.locator("#token").is_visible()
    assert "rsync" not in page.content()
    watched.shot("login")
    page.fill("#token", "wrong")
    page.click("button:has-text('Log in')")
    page.wait_for_selector("text=not the server's token")
    page.fill("#token", TOKEN)
    page.click("button:has-text('Log in')")
    page.wait_for_selector("nav >> text=Status")
    page.fill("#q", "rsync deploys blue host")
    page.wait_for_selector(f"a[href='/memories/{live_server.ids['deploy']}']")
    assert "q=rsync" in page.url  # the live search pushed its URL: it can be shared and reloaded
    assert page.locator("meter").count() > 0
    watched.shot("search")
    assert watched.dialogs == [] and watched.problems == []


def test_open_edit_and_see_the_new_version(watched: Watched, live_server: LiveServer) -> None:
    memory_id = live_server.ids["edit_me"]
    log_in(watched, f"/memories/{memory_id}")
    page = watched.page
    page.wait_for_selector("#memory-text:has-text('drafted on Fridays')")
    page.fill("#text", "Release notes are drafted on Mondays by whoever cut the release.")
    page.fill("input[name=tags]", "release, notes")
    page.click("button:has-text('Save changes')")
    page.wait_for_selector("#memory-text:has-text('drafted on Mondays')")
    page.wait_for_selector("text=Version 1")
    assert page.locator(".pill.tag", has_text="#release").count() == 1
    watched.shot("memory")
    assert watched.dialogs == [] and watched.problems == []


def test_link_two_memories(watched: Watched, live_server: LiveServer) -> None:
    source, target = live_server.ids["billing"], live_server.ids["edit_me"]
    log_in(watched, f"/memories/{source}")
    page = watched.page
    page.select_option("#link select[name=relation]", "example_of")
    page.fill("#link input[name=to_id]", target)
    page.fill("#link input[name=note]", "linked from the browser")
    page.click("#link button[type=submit]")
    page.wait_for_selector("text=Linked:")
    link = page.locator(".links li", has=page.locator(f"a[href='/memories/{target}']"))
    assert "example_of" in link.inner_text()
    page.click(f".links a[href='/memories/{target}']")
    page.wait_for_selector(f".links a[href='/memories/{source}']")
    assert watched.dialogs == [] and watched.problems == []


def test_forget_asks_first_and_the_trash_gives_it_back(watched: Watched, live_server: LiveServer) -> None:
    memory_id = live_server.ids["forget_me"]
    log_in(watched, f"/memories/{memory_id}")
    page = watched.page
    page.click("a:has-text('Forget…')")
    page.wait_for_selector("#confirm-forget")
    assert "vpn-legacy" in page.content()
    watched.shot("forget-confirm")
    page.click("a:has-text('Cancel')")
    page.wait_for_selector("#memory-text:has-text('vpn-legacy')")
    page.click("a:has-text('Forget…')")
    page.click("#confirm-forget")
    page.wait_for_selector("text=is in the trash")
    page.goto("/trash")
    page.wait_for_selector("td:has-text('vpn-legacy')")
    watched.shot("trash")
    page.click("tr:has-text('vpn-legacy') >> button:has-text('Restore')")
    page.wait_for_selector("#memory-text:has-text('vpn-legacy')")
    assert watched.dialogs == [] and watched.problems == []


def test_the_graph_draws_the_neighbourhood_and_opens_a_node(
    watched: Watched, live_server: LiveServer
) -> None:
    centre = live_server.ids["cache"]
    log_in(watched, f"/graph/{centre}?depth=2")
    page = watched.page
    page.wait_for_selector("#graph[data-nodes]")
    drawn = page.evaluate("window.dashboardGraph.nodes().length")
    listed = page.locator("section.card .links").first.locator("li").count()
    assert drawn == listed >= 4
    assert page.locator("#graph canvas").count() > 0
    bridges = page.evaluate("window.dashboardGraph.nodes('[kind = \"bridge\"]').map(n => n.id())")
    assert live_server.ids["deploy"] in bridges  # the only way from the centre to the probes
    watched.shot("graph")
    target = live_server.ids["billing"]
    x, y = page.evaluate(
        "id => { const p = window.dashboardGraph.getElementById(id).renderedPosition(); return [p.x, p.y]; }",
        target,
    )
    box = page.locator("#graph").bounding_box()
    page.mouse.click(box["x"] + x, box["y"] + y)  # a real click on the node drawn on the canvas
    page.wait_for_url(f"**/memories/{target}")
    assert watched.dialogs == [] and watched.problems == []


def test_status_and_browse_pages(watched: Watched) -> None:
    log_in(watched, "/status")
    page = watched.page
    page.wait_for_selector("h2:has-text('Doctor')")
    assert page.locator(".pill.ok").count() >= 1
    watched.shot("status")
    page.click("nav >> text=Browse")
    page.wait_for_selector("table.list tbody tr")
    assert page.locator("table.list tbody tr").count() >= 9
    watched.shot("browse")
    assert watched.dialogs == [] and watched.problems == []


def test_hostile_memories_never_run(watched: Watched, live_server: LiveServer) -> None:
    log_in(watched)
    page = watched.page
    page.fill("#q", "XSS probe memory")
    page.wait_for_selector(".memory-card >> text=XSS probe two")
    watched.shot("xss-search")
    for name in ("script", "img", "link", "markdown"):
        page.goto(f"/memories/{live_server.ids[name]}")
        page.wait_for_selector("#memory-text")
        assert page.locator("#memory-text").inner_text().startswith("XSS probe")
        assert page.locator("#memory-text *").count() == 0  # the text holds no element at all
    page.goto(f"/memories/{live_server.ids['script']}")
    assert "<script>window.__xss = 1; alert('script')</script>" in page.locator("#memory-text").inner_text()
    page.goto(f"/memories/{live_server.ids['img']}")
    assert '<img src=x onerror="window.__xss = 2' in page.locator("#memory-text").inner_text()
    watched.shot("xss-memory")
    page.goto(f"/graph/{live_server.ids['script']}?depth=2")
    page.wait_for_selector("#graph[data-nodes]")
    page.goto("/memories")
    page.wait_for_selector("table.list")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert watched.dialogs == []
    assert watched.problems == []
