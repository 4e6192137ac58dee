"""The pure prune rules: the reasons a memory matched, and a confirm token bound to its criteria and
to one set of memories in their versions, used once."""

from __future__ import annotations

import pytest

from cognitive_memory.core.pruning import (
    DAY_SECONDS,
    PruneCandidate,
    PruneCriteria,
    check_token,
    make_token,
    reasons,
)
from cognitive_memory.errors import InvalidInputError

NOW = 1_800_000_000.0


def test_reasons_name_each_criterion_with_the_memorys_own_value() -> None:
    candidate = PruneCandidate("m1", "text", NOW - 40 * DAY_SECONDS, None, 0.2, ("scratch", "ci"), "shop", 2)
    criteria = PruneCriteria(
        older_than_days=30, not_accessed_days=30, max_importance=0.3, tags=("ci",), projects=("shop",)
    )

    assert reasons(candidate, criteria, NOW) == [
        "stored 40 days ago",
        "never recalled",
        "importance 0.20",
        "tagged ci",
        "project shop",
    ]


def candidate(memory_id: str, version: int = 0, content: str = "text") -> PruneCandidate:
    return PruneCandidate(memory_id, content, NOW, None, 0.5, (), "default", 1, version)


CRITERIA = PruneCriteria(older_than_days=90, tags=("a", "b"))


def test_a_token_holds_for_its_criteria_and_memories_in_any_order_and_spelling() -> None:
    token = make_token("secret", CRITERIA, [candidate("b"), candidate("a")], int(NOW) + 600)
    same = PruneCriteria(older_than_days=90.0, tags=("b", "a"))

    digest = check_token("secret", token, same, [candidate("a"), candidate("b")], NOW)

    assert token.endswith(digest)
    assert make_token("secret", CRITERIA, [candidate("a")], int(NOW) + 600) != make_token(
        "secret", CRITERIA, [candidate("a")], int(NOW) + 600
    )


@pytest.mark.parametrize(
    ("secret", "criteria", "listed"),
    [
        ("secret", CRITERIA, [candidate("a")]),
        ("secret", CRITERIA, [candidate("a"), candidate("b"), candidate("c")]),
        ("other", CRITERIA, [candidate("a"), candidate("b")]),
        ("secret", PruneCriteria(older_than_days=60, tags=("a", "b")), [candidate("a"), candidate("b")]),
        ("secret", PruneCriteria(older_than_days=90, tags=("a",)), [candidate("a"), candidate("b")]),
        ("secret", CRITERIA, [candidate("a", version=1), candidate("b")]),
        ("secret", CRITERIA, [candidate("a", content="changed"), candidate("b")]),
    ],
    ids=["fewer", "more", "secret", "days", "tags", "version", "content"],
)
def test_a_token_is_refused_for_other_criteria_or_memories(
    secret: str, criteria: PruneCriteria, listed: list[PruneCandidate]
) -> None:
    token = make_token("secret", CRITERIA, [candidate("a"), candidate("b")], int(NOW) + 600)

    with pytest.raises(InvalidInputError) as refused:
        check_token(secret, token, criteria, listed, NOW)

    assert refused.value.code == "token_mismatch"


def test_a_used_expired_or_malformed_token_is_refused() -> None:
    listed = [candidate("a")]
    token = make_token("secret", CRITERIA, listed, int(NOW) + 600)
    digest = check_token("secret", token, CRITERIA, listed, NOW)
    expired = make_token("secret", CRITERIA, listed, int(NOW) - 1)
    codes = []
    for attempt, used in (
        (token, {digest}),
        (expired, set()),
        ("nonsense", set()),
        ("1.abc", set()),
        ("9" * 5000 + ".n.d", set()),
        (token + ".more", set()),
    ):
        with pytest.raises(InvalidInputError) as refused:
            check_token("secret", attempt, CRITERIA, listed, NOW, used)
        codes.append(refused.value.code)

    assert codes == ["token_used", "token_expired", *["invalid_token"] * 4]
    assert "already used" in check_message("secret", token, listed, {digest})


def check_message(secret: str, token: str, listed: list[PruneCandidate], used: set[str]) -> str:
    with pytest.raises(InvalidInputError) as refused:
        check_token(secret, token, CRITERIA, listed, NOW, used)
    return refused.value.message


def test_keep_latest_alone_is_not_a_criterion() -> None:
    with pytest.raises(InvalidInputError) as refused:
        PruneCriteria(keep_latest=3).check()
    assert refused.value.code == "no_criteria"
