"""The dashboard's login, session cookie, CSRF and Host/Origin rules (in process, no browser)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from starlette.testclient import TestClient

from cognitive_memory.service import MemoryService
from interfaces.dashboard import create_dashboard
from interfaces.dashboard.auth import (
    COOKIE_NAME,
    FREE_FAILURES,
    LINK_SECONDS,
    MAX_WAIT_SECONDS,
    LoginThrottle,
    SessionKeys,
)
from interfaces.dashboard.gate import local_target
from tests.dashboard.conftest import PORT, TOKEN, csrf_of, login

SECRET_TEXT = "The staging database password rotates every Monday."


def test_without_a_session_every_page_shows_the_login_form_and_no_memory(
    service: MemoryService, make_client: Callable[..., TestClient]
) -> None:
    memory_id = service.store_experience(SECRET_TEXT).memory_id
    client = make_client()
    for path in ("/", "/search?q=staging", "/memories", f"/memories/{memory_id}", "/status", "/trash"):
        page = client.get(path)
        assert page.status_code == 401, path
        assert 'name="token"' in page.text
        assert "staging" not in page.text.replace('value="/search?q=staging"', "")
        assert memory_id not in page.text.replace(f'value="/memories/{memory_id}"', "")


def test_the_login_form_keeps_a_signed_httponly_strict_cookie(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    answer = login(client)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert TOKEN not in cookie
    assert client.get("/status").status_code == 200


def test_a_wrong_token_is_refused_and_never_echoed(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    answer = login(client, token="guess-<b>")
    assert answer.status_code == 401
    assert "not the server&#39;s token" in answer.text
    assert "guess" not in answer.text
    assert client.get("/status").status_code == 401


def test_the_token_never_appears_in_a_page_or_url(client: TestClient, service: MemoryService) -> None:
    memory_id = service.store_experience(SECRET_TEXT).memory_id
    for path in ("/", "/search?q=staging", f"/memories/{memory_id}", "/status", "/memories"):
        page = client.get(path)
        assert TOKEN not in page.text
        assert TOKEN not in str(page.url)


def test_a_forged_or_tampered_cookie_is_a_new_unlogged_session(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    login(client)
    value = client.cookies[COOKIE_NAME]
    session_id, _, expires, signature = value.split(".")
    client.cookies.clear()
    client.cookies.set(COOKIE_NAME, f"{session_id}.1.{int(expires) + 999}.{signature}")
    assert client.get("/status").status_code == 401
    client.cookies.set(COOKIE_NAME, "x.1.99999999999.deadbeef")
    assert client.get("/status").status_code == 401


def test_an_expired_session_is_refused() -> None:
    keys = SessionKeys("t")
    session = keys.new_session(logged_in=True, now=1000.0)
    assert keys.read_cookie(keys.cookie_value(session), now=1001.0) == session
    assert keys.read_cookie(keys.cookie_value(session), now=session.expires + 1.0) is None


def test_sessions_of_another_process_key_are_refused() -> None:
    ours, theirs = SessionKeys("t"), SessionKeys("t")
    session = theirs.new_session(logged_in=True)
    assert ours.read_cookie(theirs.cookie_value(session)) is None
    assert not ours.check_csrf(session, theirs.csrf_token(session))


def test_logging_in_starts_a_new_session_id(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    client.get("/login")
    before = client.cookies[COOKIE_NAME].split(".")[0]
    login(client)
    assert client.cookies[COOKIE_NAME].split(".")[0] != before


@pytest.mark.parametrize(
    "path",
    [
        "/memories/{id}/edit",
        "/memories/{id}/link",
        "/memories/{id}/unlink",
        "/memories/{id}/forget",
        "/trash/restore",
    ],
)
def test_every_change_without_the_csrf_token_is_refused_and_changes_nothing(
    client: TestClient, service: MemoryService, path: str
) -> None:
    memory_id = service.store_experience(SECRET_TEXT).memory_id
    other = service.store_experience("Another memory to link to.").memory_id
    form = {
        "text": "changed",
        "importance": "0.5",
        "level": "1",
        "memory_type": "semantic",
        "to_id": other,
        "from_id": memory_id,
        "relation": "relates_to",
        "confirm": "yes",
        "memory_id": memory_id,
    }
    url = path.format(id=memory_id)
    for csrf in (None, "0" * 64):
        refused = client.post(url, data=form if csrf is None else {**form, "csrf": csrf})
        assert refused.status_code == 403
        assert "security token" in refused.text
    assert service.get_memories([memory_id]).memories[0].content == SECRET_TEXT
    assert service.related_memories(memory_id).related == []


def test_a_csrf_token_of_another_session_is_refused(
    make_client: Callable[..., TestClient], service: MemoryService
) -> None:
    memory_id = service.store_experience(SECRET_TEXT).memory_id
    first, second = make_client(), make_client()
    login(first)
    login(second)
    stolen = csrf_of(first.get(f"/memories/{memory_id}").text)
    answer = second.post(f"/memories/{memory_id}/forget", data={"csrf": stolen, "confirm": "yes"})
    assert answer.status_code == 403
    assert service.get_memories([memory_id]).missing == []


def test_the_login_post_itself_needs_the_csrf_token(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    client.get("/login")
    assert client.post("/login", data={"token": TOKEN}).status_code == 403
    assert client.get("/status").status_code == 401


def test_without_a_token_on_loopback_no_login_but_csrf_still_applies(
    make_client: Callable[..., TestClient], service: MemoryService
) -> None:
    memory_id = service.store_experience(SECRET_TEXT).memory_id
    client = make_client(token=None)
    assert client.get(f"/memories/{memory_id}").status_code == 200
    assert client.post(f"/memories/{memory_id}/forget", data={"confirm": "yes"}).status_code == 403
    csrf = csrf_of(client.get(f"/memories/{memory_id}").text)
    done = client.post(f"/memories/{memory_id}/forget", data={"csrf": csrf, "confirm": "yes"})
    assert done.status_code == 303
    assert service.get_memories([memory_id]).in_trash == [memory_id]


def test_a_foreign_host_or_origin_is_refused(client: TestClient) -> None:
    assert client.get("/", headers={"host": "evil.example"}).status_code == 421
    csrf = csrf_of(client.get("/").text)
    refused = client.post("/logout", data={"csrf": csrf}, headers={"origin": "http://evil.example"})
    assert refused.status_code == 403
    assert client.get("/", headers={"origin": "http://127.0.0.1:8000"}).status_code == 200


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("/memories/x?y=1", "/memories/x?y=1"),
        ("//evil.example/", "/"),
        ("https://evil.example", "/"),
        ("", "/"),
    ],
)
def test_after_login_only_local_paths_are_followed(given: str, kept: str) -> None:
    assert local_target(given) == kept


def test_logout_ends_the_session(client: TestClient) -> None:
    csrf = csrf_of(client.get("/").text)
    assert client.post("/logout", data={"csrf": csrf}).status_code == 303
    assert client.get("/status").status_code == 401


def test_an_old_cookie_is_refused_after_logout(client: TestClient) -> None:
    kept = client.cookies[COOKIE_NAME]
    csrf = csrf_of(client.get("/").text)
    assert client.post("/logout", data={"csrf": csrf}).status_code == 303
    # a copy of the cookie taken before the logout, replayed by another browser
    replay = TestClient(client.app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)
    replay.cookies.set(COOKIE_NAME, kept)
    assert replay.get("/status").status_code == 401
    assert replay.post("/trash/restore", data={"csrf": csrf, "memory_id": "x"}).status_code == 401


def test_logging_out_one_session_keeps_the_others(make_client: Callable[..., TestClient]) -> None:
    first, second = make_client(), make_client()
    login(first)
    login(second)
    first.post("/logout", data={"csrf": csrf_of(first.get("/").text)})
    assert first.get("/status").status_code == 401
    assert second.get("/status").status_code == 200


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.slow
def test_a_correct_token_logs_in_while_wrong_ones_are_posted_twice_a_second(service: MemoryService) -> None:
    """The attack of issue 27: a wrong token every 0.5 s for 127 s; every correct login succeeds."""
    clock = FakeClock()
    app = create_dashboard(service, token=TOKEN, security=None, clock=clock)
    guesser = TestClient(app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)
    refused, owner_logins = 0, []
    for step in range(254):
        clock.now = 1000.0 + step * 0.5
        refused += login(guesser, token=f"guess-{step}").status_code == 429
        if step % 20 == 10:
            owner = TestClient(app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)
            owner_logins.append(login(owner).status_code)
            assert owner.get("/status").status_code == 200
            refused += login(guesser, token="guess-again").status_code == 429
    assert owner_logins == [303] * 13
    assert refused > 254 // 2  # the guesser was throttled most of the time
    assert guesser.get("/status").status_code == 401


def test_repeated_wrong_tokens_slow_the_login_down(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    for _ in range(FREE_FAILURES + 1):
        assert login(client, token="guess").status_code == 401
    refused = login(client, token="guess")
    assert refused.status_code == 429
    assert "try again in" in refused.text
    assert client.get("/status").status_code == 401
    assert login(client).status_code == 303  # the right token is never throttled
    assert client.get("/status").status_code == 200


def test_the_login_wait_doubles_and_a_success_resets_it() -> None:
    clock = FakeClock()
    throttle = LoginThrottle(clock)
    for _ in range(FREE_FAILURES):
        throttle.failed()
    assert throttle.wait_seconds() == 0.0
    throttle.failed()
    throttle.failed()
    assert throttle.wait_seconds() == 4.0
    clock.now += 4.0
    assert throttle.wait_seconds() == 0.0
    for _ in range(20):
        throttle.failed()
    assert throttle.wait_seconds() == MAX_WAIT_SECONDS
    throttle.succeeded()
    assert throttle.wait_seconds() == 0.0


def one_time_client(service: MemoryService, code: str = "one-time-code") -> TestClient:
    app = create_dashboard(service, token=TOKEN, security=None, login_code=code)
    return TestClient(app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)


def test_a_one_time_login_link_logs_in_once_and_moves_on_without_the_code(service: MemoryService) -> None:
    browser = one_time_client(service)
    landed = browser.get("/login?once=one-time-code")
    assert landed.status_code == 200
    assert '<meta http-equiv="refresh" content="0; url=/">' in landed.text
    assert "one-time-code" not in landed.text
    assert TOKEN not in landed.text
    assert browser.get("/status").status_code == 200
    other = TestClient(browser.app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)
    spent = other.get("/login?once=one-time-code")
    assert spent.status_code == 401
    assert "already used or has expired" in spent.text
    assert other.get("/status").status_code == 401


def test_a_wrong_or_expired_login_link_logs_nobody_in(service: MemoryService) -> None:
    browser = one_time_client(service)
    assert browser.get("/login?once=guess").status_code == 401
    assert browser.get("/status").status_code == 401
    late_clock = FakeClock()
    late = SessionKeys(TOKEN, login_code="code", clock=late_clock)
    late_clock.now += LINK_SECONDS + 1
    assert not late.redeem_login_code("code")
