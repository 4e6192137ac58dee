"""How a command opens the memory (``memory_system.opening``): a server's system against a command's."""

from __future__ import annotations

import os

import pytest

from cognitive_memory.encoding import OnnxEncoder
from cognitive_memory.system import CognitiveSystem
from memory_system.opening import open_system


@pytest.mark.parametrize(
    ("serving", "exported", "load", "loads_at_open"),
    [(True, True, 0.5, True), (True, False, 0.5, False), (True, True, 1.5, False), (False, True, 0.5, False)],
    ids=["server", "server-on-torch", "server-without-an-idle-core", "command"],
)
def test_a_server_starts_loading_an_exported_model_as_its_system_opens_where_a_core_is_idle(
    monkeypatch: pytest.MonkeyPatch, serving: bool, exported: bool, load: float, loads_at_open: bool
) -> None:
    # `serve mcp` imports the MCP SDK after this: the import overlaps ONNX Runtime's load. Torch's
    # imports would hold the SDK's up, and without an idle core the load takes the imports' CPU:
    # then the model loads once the server runs (its lifespan), after the handshake.
    warmed: list[CognitiveSystem] = []
    monkeypatch.setattr(CognitiveSystem, "warm_up_in_background", lambda system: warmed.append(system))
    monkeypatch.setattr(OnnxEncoder, "loads_quickly", property(lambda encoder: exported))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))

    with open_system(serving=serving) as system:
        assert warmed == ([system] if loads_at_open else [])
