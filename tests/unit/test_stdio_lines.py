"""The stdin lines the stdio transport reads: a request without a usable id is answered, not passed."""

from __future__ import annotations

import io
import json

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCResponse

from interfaces.stdio_lines import MAX_LINE_CHARS, StdinLines, judge_line

pytestmark = pytest.mark.anyio

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


@pytest.mark.parametrize("request_id", ["null", "true", "1.5", '{"n":1}', "[1]"])
def test_a_request_whose_id_is_null_or_no_string_or_integer_is_an_invalid_request(request_id: str) -> None:
    verdict = judge_line(f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/list"}}')

    assert verdict is not None and verdict.message is None
    (error,) = verdict.errors
    assert (error.id, error.error.code) == (None, -32600)
    assert "string or an integer" in error.error.message


@pytest.mark.parametrize(
    "line",
    [
        PING,
        '{"jsonrpc":"2.0","id":"a","method":"ping"}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"id":null}}',
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
        '{"jsonrpc":"2.0","id":null,"method":',
    ],
)
def test_every_other_line_is_left_to_the_sdk(line: str) -> None:
    assert judge_line(line) is None


async def _through_stdin(wire: bytes) -> tuple[list[str], JSONRPCError]:
    """The lines ``StdinLines`` passes on from ``wire`` (each request answered, as a server
    would), and the one error it answered itself."""
    write, answers = anyio.create_memory_object_stream[SessionMessage](4)
    stdin = StdinLines(io.BytesIO(wire))
    server = stdin.answer_on(write)
    with write, answers:
        passed = []
        async for line in stdin:
            passed.append(line)
            if line == PING:
                await server.send(_answer(line))
        answer = answers.receive_nowait().message
    assert isinstance(answer, JSONRPCError)
    return passed, answer


def _answer(line: str) -> SessionMessage:
    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=json.loads(line)["id"], result={}))


async def test_the_end_of_stdin_waits_for_the_answers_to_the_requests_read_but_not_a_cancelled_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cancel = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}\n'
    wire = PING + PING.replace('"id":1', '"id":"b"') + cancel
    write, answers = anyio.create_memory_object_stream[SessionMessage](4)
    stdin = StdinLines(io.BytesIO(wire.encode()))
    server = stdin.answer_on(write)
    ended = anyio.Event()

    async def read_to_the_end() -> None:
        async for _ in stdin:
            pass
        ended.set()

    with write, answers:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_to_the_end)
            await anyio.sleep(0.2)
            assert not ended.is_set()  # ping 1 is not answered yet
            await server.send(_answer(PING))
            with anyio.fail_after(5):
                await ended.wait()


async def test_the_end_of_stdin_waits_at_most_the_drain_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("interfaces.stdio_lines.DRAIN_SECONDS", 0.2)
    write, answers = anyio.create_memory_object_stream[SessionMessage](4)
    stdin = StdinLines(io.BytesIO(PING.encode()))
    stdin.answer_on(write)

    with write, answers, anyio.fail_after(5):
        assert [line async for line in stdin] == [PING]


async def test_a_request_with_a_null_id_is_answered_and_the_next_line_passes() -> None:
    null_id = b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}\n'
    passed, answer = await _through_stdin(null_id + PING.encode())

    assert passed == [PING]
    assert (answer.id, answer.error.code) == (None, -32600)


async def test_a_line_over_the_limit_is_dropped_unread_and_answered_and_the_next_line_passes() -> None:
    # A client that never sends a newline grew the server to 4.4 GB in 12 s, then a MemoryError.
    longest = "x" * MAX_LINE_CHARS + "\n"  # the most a message may hold, and its newline
    passed, answer = await _through_stdin(
        b"a" * (3 * MAX_LINE_CHARS + 5) + b"\n" + longest.encode() + PING.encode()
    )

    assert passed == [longest, PING]
    assert (answer.id, answer.error.code) == (None, -32600)
    assert "over 4,194,304 characters" in answer.error.message


async def test_a_request_over_the_limit_is_answered_with_its_id() -> None:
    call = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"store_memory",'
    call += '"arguments":{"text":"'
    wire = call.encode() + b"x" * (MAX_LINE_CHARS + 10) + b'"}}}\n' + PING.encode()
    passed, answer = await _through_stdin(wire)

    assert passed == [PING]
    assert (answer.id, answer.error.code) == (7, -32600)
