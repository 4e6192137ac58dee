"""store_memory's answer names the nearest memory when the text is close to it (novelty under 0.3),
whether or not the nearest reaches the near-duplicate threshold that ``similar`` keeps to."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

KEPT = "The staging database password rotates monthly."
CLOSE = "The staging database password rotates weekly."  # cosine 0.83 with the hash encoder
FAR = "Chocolate cake with strawberries needs a cold oven."


async def test_a_close_text_under_the_near_duplicate_threshold_names_its_nearest_memory(
    client: Client,
) -> None:
    kept = await call(client, "store_memory", {"text": KEPT})

    planned = await call(client, "store_memory", {"text": CLOSE, "dry_run": True})
    stored = await call(client, "store_memory", {"text": CLOSE})

    for body in (planned, stored):
        assert body["novelty"] < 0.3 and body["similar"] == []
        nearest = body["nearest"]
        assert (nearest["id"], nearest["preview"]) == (kept["memory_id"], KEPT)
        assert nearest["similarity"] == pytest.approx(1 - body["novelty"], abs=1e-3)
        assert f"memory {kept['memory_id']} is close" in body["message"]


async def test_a_text_unlike_every_memory_and_a_duplicate_name_no_nearest(client: Client) -> None:
    await call(client, "store_memory", {"text": KEPT})

    far = await call(client, "store_memory", {"text": FAR, "dry_run": True})
    again = await call(client, "store_memory", {"text": KEPT})

    assert far["novelty"] >= 0.3 and "nearest" not in far
    assert again["duplicate"] is True and "nearest" not in again


@pytest.mark.model
async def test_a_paraphrase_names_the_memory_it_restates(client: Client) -> None:
    for text in (
        "The staging cluster runs Kubernetes 1.29 on three nodes.",
        "Production deploys need two approvals in the release channel.",
    ):
        await call(client, "store_memory", {"text": text})
    kept = await call(client, "store_memory", {"text": "We deploy to production only on Tuesdays."})

    body = await call(
        client, "store_memory", {"text": "We only ship to production on Tuesdays.", "dry_run": True}
    )

    assert body["novelty"] < 0.3 and body["similar"] == []  # cosine 0.81: under the 0.92 of `similar`
    assert body["nearest"]["id"] == kept["memory_id"]
