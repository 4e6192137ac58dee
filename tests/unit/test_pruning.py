"""The pure prune rules: the reasons a memory matched, and a confirm token bound to one set of ids."""

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


def test_a_token_holds_for_its_ids_in_any_order_and_no_other_set() -> None:
    token = make_token("secret", ["b", "a"], int(NOW) + 600)

    check_token("secret", token, ["a", "b"], NOW)
    for ids, secret in ((["a"], "secret"), (["a", "b", "c"], "secret"), (["a", "b"], "other")):
        with pytest.raises(InvalidInputError) as refused:
            check_token(secret, token, ids, NOW)
        assert refused.value.code == "token_mismatch"


def test_an_expired_or_malformed_token_is_refused() -> None:
    with pytest.raises(InvalidInputError) as expired:
        check_token("secret", make_token("secret", ["a"], int(NOW) - 1), ["a"], NOW)
    with pytest.raises(InvalidInputError) as malformed:
        check_token("secret", "nonsense", ["a"], NOW)
    assert (expired.value.code, malformed.value.code) == ("token_expired", "invalid_token")


def test_keep_latest_alone_is_not_a_criterion() -> None:
    with pytest.raises(InvalidInputError) as refused:
        PruneCriteria(keep_latest=3).check()
    assert refused.value.code == "no_criteria"
