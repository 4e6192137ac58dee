"""A stdio line (or HTTP body) that the SDK cannot read as a JSON-RPC message gets an answer.

The SDK's stdio reader hands such a line to the server as an exception, which the server only
logs: the client never hears of it and may wait forever. This read stream judges the line
(``judge_problem``; ``judge_body`` does the same for HTTP, see ``interfaces.http_app``):

- **A lone UTF-16 surrogate** (``"\\ud83d"``: a client cut a string inside an emoji) is valid JSON
  the SDK's parser refuses. The request gets -32602 with its id, naming the problem: bad input is
  refused with a reason rather than stored altered, and the client can send whole characters.
- **JSON nested deeper than ``MAX_DEPTH``** (the SDK parser's limit): -32600, with the request's id.
- **A batch** (a JSON array; MCP 2025-06-18 removed batching): each request in it gets -32600 with
  its id, saying batches are not supported; a batch without a request id one error with id null.
- **A line over ``MAX_LINE_CHARS``** (4 MiB, the most an HTTP body may hold): -32600, with the
  request's id when its first 4 MiB hold it, else null; the line read to its end and dropped
  (stdin only: an endless line would fill the memory).
- **An object of more than ``MAX_NAMES`` names** anywhere in a request (no MCP message or tool
  argument holds a third of that): -32602 with its id, before the SDK validates it name by name.
  Pydantic lists every unknown name, so 300,000 of them held the event loop for seconds.
- Anything else: -32700 (not JSON) or -32600 (JSON, but not a JSON-RPC message), with the
  request's id when the line has a top-level ``method`` and ``id`` to read, else ``id: null``.

One line the SDK reads without complaint is misread: a request whose ``id`` is null (or neither a
string nor an integer) becomes a notification, which is never answered. ``StdinLines`` (the stdin
the stdio transport reads) and ``judge_body`` answer it with -32600 and ``id: null`` instead
(``judge_line``); MCP wants a string or integer id on every request.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

import anyio
import pydantic_core
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCResponse, jsonrpc_message_adapter
from pydantic import ValidationError

__all__ = [
    "DRAIN_SECONDS",
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "MAX_NAMES",
    "MAX_LINE_CHARS",
    "PARSE_ERROR",
    "AnsweringBadLines",
    "StdinLines",
    "Verdict",
    "claimed_stdin",
    "crowded",
    "judge_body",
    "judge_line",
    "judge_problem",
    "judge_text",
    "judge_value",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
MAX_DEPTH = 200  # the nesting pydantic-core's JSON parser (the SDK's) accepts
# The most names one object of a message may hold, at any level.
MAX_NAMES = 100
MAX_LINE_CHARS = DEFAULT_MAX_REQUEST_BODY_SIZE  # of one stdin message: 4 MiB, as an HTTP body
BATCHES_UNSUPPORTED = (
    "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); "
    "send each request as its own message."
)
NO_REQUEST_ID = (
    "Invalid Request: a request's id must be a string or an integer (MCP allows no null id); "
    "a message without an id is a notification, which gets no answer."
)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACE = re.compile(r"\s*")
_SCAN_LIMIT = 1 << 20
# At the end of stdin, how long the requests already read may take to be answered.
DRAIN_SECONDS = 60.0

RequestId = str | int


@dataclass(frozen=True)
class Verdict:
    """What a message the SDK refused gets: ``message`` to serve (it was a message after all), or
    ``errors`` to answer."""

    message: JSONRPCMessage | None = None
    errors: tuple[JSONRPCError, ...] = ()


def _too_long(start: str) -> Verdict:
    """The verdict on a line over ``MAX_LINE_CHARS``, of which ``start`` was kept: with the
    request's id when ``start`` holds it (``id`` and ``method`` come before ``params``)."""
    _, request_id = _outline(start)
    return _error(
        INVALID_REQUEST,
        f"Invalid Request: the message is over {MAX_LINE_CHARS:,} characters, the most this server "
        "reads of one (as over HTTP); it was dropped.",
        request_id,
    )


def _error(code: int, message: str, request_id: RequestId | None = None) -> Verdict:
    return Verdict(
        errors=(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)),)
    )


def judge_problem(problem: Exception) -> Verdict:
    """The verdict on a line the SDK's stdio reader refused with ``problem``."""
    if not isinstance(problem, ValidationError):
        return _error(PARSE_ERROR, "Parse error: the line could not be read.")
    errors = problem.errors(include_url=False)
    first = errors[0]
    if first["type"] == "json_invalid" and isinstance(first["input"], str | bytes):
        raw = first["input"]
        return judge_text(raw if isinstance(raw, str) else raw.decode("utf-8", "replace"))
    # Parsed, but not a message: the whole value is the input of a top-level error.
    for error in errors:
        if len(error["loc"]) == 1 or (len(error["loc"]) == 2 and error["type"] == "missing"):
            return judge_value(error["input"])
    return judge_value(None)


def judge_body(body: bytes) -> Verdict | None:
    """The verdict on an HTTP request body; None when the SDK can read it as it is (or refuse it
    itself: a body that is no JSON object). A batch gets one error, with id null."""
    try:
        value = pydantic_core.from_json(body)
    except ValueError:
        text = body.decode("utf-8", "replace")
        if not text.lstrip().startswith("["):
            return judge_text(text)
        value = []
    if isinstance(value, list):
        return _error(INVALID_REQUEST, BATCHES_UNSUPPORTED)
    return _without_request_id(value)


def judge_line(line: str) -> Verdict | None:
    """The verdict on a stdin line the SDK would misread: a request whose id is null (or no
    string or integer), which it takes for a notification. None for every other line: the SDK
    reads it, or refuses it and ``judge_problem`` answers."""
    return _read_line(line)[0]


def _read_line(line: str) -> tuple[Verdict | None, Any]:
    """``judge_line``'s verdict, and the line's JSON value when it holds an ``id`` (else None)."""
    if '"id"' not in line:
        return None, None
    try:
        value = pydantic_core.from_json(line)
    except ValueError:
        return None, None
    return _without_request_id(value), value


def _without_request_id(value: Any) -> Verdict | None:
    """-32600 with id null for a request (an object with a method) whose id is there but unusable;
    -32602 for a request holding an object of more than ``MAX_NAMES`` names."""
    if not isinstance(value, dict) or "method" not in value:
        return None
    request_id = _request_id(value)
    if "id" in value and request_id is None:
        return _error(INVALID_REQUEST, NO_REQUEST_ID)
    found = crowded(value)
    if found is None:
        return None
    place, size = found
    where = ".".join(str(part)[:120] for part in place)
    return _error(
        INVALID_PARAMS,
        f"Invalid params: `{where}` holds {size:,} names; no object of a request may hold more than "
        f"{MAX_NAMES}. Nothing was read, stored or changed.",
        request_id,
    )


def crowded(value: Mapping[str, Any], limit: int = MAX_NAMES) -> tuple[tuple[int | str, ...], int] | None:
    """The place and size of the first object in ``value`` (itself included) that holds
    more than ``limit`` names; None when none does. Scalars are not visited, so the walk costs
    what the containers hold, not what the SDK already parsed."""
    pending: list[tuple[tuple[int | str, ...], Any]] = [((), value)]
    while pending:
        place, container = pending.pop()
        if isinstance(container, Mapping):
            if len(container) > limit:
                return place, len(container)
            items: Any = container.items()
        else:
            items = enumerate(container)
        pending.extend(((*place, name), item) for name, item in items if isinstance(item, Mapping | list))
    return None


def judge_text(text: str) -> Verdict:
    """The verdict on JSON text the SDK's parser refused."""
    deepest, request_id = _outline(text)
    if deepest > MAX_DEPTH:
        return _error(
            INVALID_REQUEST,
            f"Invalid Request: the message nests JSON {deepest} levels deep; this server reads at most "
            f"{MAX_DEPTH}.",
            request_id,
        )
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return _error(PARSE_ERROR, "Parse error: the line is not JSON.", request_id)
    return judge_value(value)


def judge_value(value: Any) -> Verdict:
    """The verdict on parsed JSON: a batch, a message with lone surrogates, or no message."""
    if isinstance(value, list):
        ids = [request_id for item in value if (request_id := _request_id(item)) is not None]
        if not ids:
            return _error(INVALID_REQUEST, BATCHES_UNSUPPORTED)
        return Verdict(
            errors=tuple(
                error for i in ids for error in _error(INVALID_REQUEST, BATCHES_UNSUPPORTED, i).errors
            )
        )
    if cut := _surrogates(value):
        return _error(
            INVALID_PARAMS,
            f"Invalid params: {cut} string(s) hold a lone UTF-16 surrogate (U+D800-U+DFFF, half "
            "of a character such as an emoji: the text was cut inside it); send whole characters.",
            _request_id(value),
        )
    try:
        message = jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return _error(
            INVALID_REQUEST,
            "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message.",
            _request_id(value),
        )
    return Verdict(message=message)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _request_id(value: Any) -> RequestId | None:
    """The id of a request (an object with a method); None for anything else."""
    if not isinstance(value, dict) or "method" not in value:
        return None
    request_id = value.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def _outline(text: str) -> tuple[int, RequestId | None]:
    """How deep the JSON text nests, and its request's id (its top-level ``id``, when it also has
    a top-level ``method``), read without parsing it: it may be too deep or cut short."""
    depth = deepest = 0
    previous = ""
    keys: dict[str, int] = {}  # top-level key -> where its value starts
    for match in _TOKEN.finditer(text):
        if deepest > MAX_DEPTH and match.start() > _SCAN_LIMIT:
            break  # already refused: give up looking for an id after a megabyte of nesting
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
        elif token == ":" and depth == 1 and previous.startswith('"'):
            keys.setdefault(previous, match.end())
        previous = token
    if '"method"' not in keys or '"id"' not in keys:
        return deepest, None
    start = _SPACE.match(text, keys['"id"']).end()  # type: ignore[union-attr]  # \s* always matches
    if text[start : start + 1] not in ('"', "-") and not text[start : start + 1].isdigit():
        return deepest, None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return deepest, None
    return deepest, _request_id({"method": "", "id": value})


def _surrogates(value: Any) -> int:
    """How many lone surrogates the strings of ``value`` (keys included) hold."""
    if isinstance(value, str):
        return len(_SURROGATE.findall(value))
    if isinstance(value, list):
        return sum(_surrogates(item) for item in value)
    if isinstance(value, dict):
        return sum(_surrogates(key) + _surrogates(item) for key, item in value.items())
    return 0


class AnsweringBadLines:
    """Wraps the transport's read stream: messages pass, and a bad line is answered on ``write``
    (or passes, when it was a message after all)."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._settled(await self._inner.receive())
            if item is not None:
                return item

    async def _settled(self, item: Any) -> Any:
        """``item`` itself, or the message a refused line held; None once the bad line has been
        answered."""
        if not isinstance(item, Exception):
            return item
        verdict = judge_problem(item)
        if verdict.message is not None:
            return SessionMessage(verdict.message)
        for error in verdict.errors:
            await self._write.send(SessionMessage(error))
        return None

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringBadLines:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._settled(await self._inner.__anext__())
            if item is not None:
                return item

    async def __aenter__(self) -> AnsweringBadLines:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()


class _UnownedText(io.TextIOWrapper):
    """Text over a buffer this wrapper does not own: closing it (at garbage collection too) leaves
    the buffer open, as the SDK does for the standard streams it wraps."""

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(ValueError):
                self.detach()


@contextlib.contextmanager
def claimed_stdin() -> Iterator[IO[bytes]]:
    """The client's stdin, read from a private descriptor while fd 0 is on the null device (what
    the SDK's stdio transport does when it opens stdin itself): a child process reads end-of-file,
    never the client's messages. A stand-in stdin that is not fd 0 is read in place."""
    try:
        backed = sys.stdin.buffer.fileno() == 0
    except (AttributeError, OSError, ValueError):
        backed = False
    if not backed:
        yield sys.stdin.buffer
        return
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)  # above 2: never taken for a standard stream
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: the reading thread may still wait on the descriptor when serving ends
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        os.dup2(wire, 0)


class StdinLines(anyio.AsyncFile[str]):
    """The stdio transport's stdin (UTF-8 lines from ``buffer``): a line ``judge_line`` refuses is
    answered on the stream given to ``answer_on`` and not passed on; every other line is.

    At the end of stdin the end is passed on only once every request passed on has its answer
    written (at most ``DRAIN_SECONDS``): the SDK cancels the requests still running when its
    read stream ends, and a client that writes its requests and closes stdin (``printf ... |
    memory_system serve mcp``) would get the first answer only. A request the client cancels
    (``notifications/cancelled``) is not waited for."""

    def __init__(self, buffer: IO[bytes]) -> None:
        super().__init__(_UnownedText(buffer, encoding="utf-8", errors="replace"))
        self._write: Any = None
        self._ready = anyio.Event()
        self._unanswered: set[RequestId] = set()
        self._answered = anyio.Event()

    def answer_on(self, write: Any) -> Any:
        """Answer refused lines on ``write`` (the transport's write stream, known once it runs);
        returns the stream the server is to write to: ``write``, noting the answers it carries."""
        self._write = write
        self._ready.set()
        return _NotedWrites(write, self._noted)

    def _noted(self, request_id: RequestId) -> None:
        self._unanswered.discard(request_id)
        if not self._unanswered:
            self._answered.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await self._line():
            cut = len(line) > MAX_LINE_CHARS and not line.endswith("\n")
            verdict, value = (_too_long(line), None) if cut else _read_line(line)
            if verdict is None:
                self._expect(line, value)
                yield line
                continue
            await self._ready.wait()
            for error in verdict.errors:
                await self._write.send(SessionMessage(error))
        if self._unanswered:
            with anyio.move_on_after(DRAIN_SECONDS):
                await self._answered.wait()

    def _expect(self, line: str, value: Any) -> None:
        """Wait at the end for the answer to the request ``line`` (``value``: its JSON when it
        holds an id), if it is one; not for a request it cancels, if it cancels one."""
        if (request_id := _request_id(value)) is not None:
            self._unanswered.add(request_id)
            self._answered = anyio.Event()
        elif '"notifications/cancelled"' in line:
            with contextlib.suppress(ValueError):
                value = pydantic_core.from_json(line)
            params = value.get("params") if isinstance(value, dict) else None
            if isinstance(params, dict) and isinstance(params.get("requestId"), str | int):
                self._noted(params["requestId"])

    async def _line(self) -> str:
        """The next line ('' at the end). Of a line over ``MAX_LINE_CHARS`` the first
        ``MAX_LINE_CHARS`` + 1 characters, the rest read and dropped: an endless line (a client
        that never sends a newline) costs no more memory than one message may take."""
        line: str = await anyio.to_thread.run_sync(self.wrapped.readline, MAX_LINE_CHARS + 1)
        rest = line
        while len(rest) == MAX_LINE_CHARS + 1 and not rest.endswith("\n"):
            rest = await anyio.to_thread.run_sync(self.wrapped.readline, MAX_LINE_CHARS + 1)
        return line


class _NotedWrites:
    """The transport's write stream, telling ``noted`` the id of every answer sent on it."""

    def __init__(self, inner: Any, noted: Any) -> None:
        self._inner = inner
        self._noted = noted

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self._noted(message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _NotedWrites:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._inner.__aexit__(kind, value, trace)
