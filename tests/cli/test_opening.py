"""How a command opens the memory (``memory_system.opening``): a server's system against a command's."""

from __future__ import annotations

import pytest

from cognitive_memory.encoding import OnnxEncoder
from cognitive_memory.system import CognitiveSystem
from memory_system.opening import open_system


@pytest.mark.parametrize(
    ("serving", "exported", "loads_at_open"),
    [(True, True, True), (True, False, False), (False, True, False)],
    ids=["server", "server-on-torch", "command"],
)
def test_a_server_starts_loading_an_exported_model_as_its_system_opens(
    monkeypatch: pytest.MonkeyPatch, serving: bool, exported: bool, loads_at_open: bool
) -> None:
    # `serve mcp` imports the MCP SDK after this: the import overlaps ONNX Runtime's load. Torch's
    # imports would hold the SDK's up, so it loads once the server runs (its lifespan).
    warmed: list[CognitiveSystem] = []
    monkeypatch.setattr(CognitiveSystem, "warm_up_in_background", lambda system: warmed.append(system))
    monkeypatch.setattr(OnnxEncoder, "loads_quickly", property(lambda encoder: exported))

    with open_system(serving=serving) as system:
        assert warmed == ([system] if loads_at_open else [])
