"""The level/type rule: what a memory is when the caller does not say."""

from __future__ import annotations

import pytest

from cognitive_memory.core.levels import CONCEPT_MAX_WORDS, classify, is_episode, is_principle
from cognitive_memory.core.memory import HierarchyLevel, MemoryType

EPISODE_TEXT = "I fixed the flaky login test by pinning the clock"
PRINCIPLE_TEXT = "Always pin base images"
DESCRIPTION_TEXT = "The billing service talks to Stripe through a queue"


def _words(count: int) -> str:
    """A principle of exactly ``count`` words."""
    return " ".join(["Always", "pin", *(f"image{n}" for n in range(count - 2))])


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(EPISODE_TEXT, id="first-person-fixed"),
        pytest.param("We found that the cache was never invalidated", id="we-found"),
        pytest.param("they were on call during the outage", id="they-were"),
        pytest.param("Debugged the memory leak in the worker pool", id="debugging-verb"),
        pytest.param("The migration crashed halfway through", id="past-tense-event-verb"),
        pytest.param("Yesterday the staging database ran out of disk", id="yesterday"),
        pytest.param("This morning the nightly build was red", id="this-morning"),
        pytest.param("Last sprint the team argued about the schema", id="last-sprint"),
        pytest.param("Release notes for the mobile app, 2024-05-01", id="iso-date"),
        pytest.param("I learned that we should always pin versions", id="episode-beats-principle"),
        pytest.param("YESTERDAY THE PAGER WENT OFF", id="case-insensitive"),
    ],
)
def test_an_account_of_something_that_happened_is_an_episodic_episode(text: str) -> None:
    assert is_episode(text)
    assert classify(text) == (HierarchyLevel.EPISODE, MemoryType.EPISODIC)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(PRINCIPLE_TEXT, id="always"),
        pytest.param("Never store secrets in the repository", id="never"),
        pytest.param("You should prefer composition over inheritance", id="should-prefer"),
        pytest.param("Every service must expose a health endpoint", id="must"),
        pytest.param("Avoid global state in request handlers", id="avoid"),
        pytest.param("In general, small commits are easier to review", id="in-general"),
        pytest.param("Best practice: one assertion per behaviour", id="best-practice"),
        pytest.param("Always retry failed requests with backoff", id="principle-with-a-bare-participle"),
        pytest.param(_words(CONCEPT_MAX_WORDS), id="exactly-the-word-limit"),
    ],
)
def test_a_short_principle_is_a_semantic_concept(text: str) -> None:
    assert is_principle(text)
    assert classify(text) == (HierarchyLevel.CONCEPT, MemoryType.SEMANTIC)


def test_a_principle_one_word_over_the_limit_is_a_context() -> None:
    text = _words(CONCEPT_MAX_WORDS + 1)

    assert len(text.split()) == 31
    assert not is_principle(text)
    assert classify(text) == (HierarchyLevel.CONTEXT, MemoryType.SEMANTIC)


def test_a_long_principle_is_a_semantic_context() -> None:
    text = "You should always pin base images " + "and keep the lock file next to the Dockerfile " * 4

    assert len(text.split()) > CONCEPT_MAX_WORDS
    assert classify(text) == (HierarchyLevel.CONTEXT, MemoryType.SEMANTIC)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(DESCRIPTION_TEXT, id="service-description"),
        pytest.param("Our monorepo uses Bazel for the backend and Vite for the frontend", id="tooling"),
        pytest.param("PostgreSQL keeps the audit log in a partitioned table", id="domain-knowledge"),
        pytest.param("The prefixed cache keys are shared by all tenants", id="verb-inside-a-word"),
        pytest.param("Nevertheless the dashboard reads from a replica", id="never-inside-a-word"),
    ],
)
def test_a_plain_description_is_a_semantic_context(text: str) -> None:
    assert not is_episode(text)
    assert not is_principle(text)
    assert classify(text) == (HierarchyLevel.CONTEXT, MemoryType.SEMANTIC)


@pytest.mark.parametrize(
    ("text", "level", "kind", "expected"),
    [
        pytest.param(
            EPISODE_TEXT,
            HierarchyLevel.CONCEPT,
            None,
            (HierarchyLevel.CONCEPT, MemoryType.EPISODIC),
            id="level-given-type-inferred",
        ),
        pytest.param(
            EPISODE_TEXT,
            None,
            MemoryType.SEMANTIC,
            (HierarchyLevel.EPISODE, MemoryType.SEMANTIC),
            id="type-given-level-inferred",
        ),
        pytest.param(
            PRINCIPLE_TEXT,
            HierarchyLevel.EPISODE,
            MemoryType.EPISODIC,
            (HierarchyLevel.EPISODE, MemoryType.EPISODIC),
            id="both-given",
        ),
        pytest.param(
            DESCRIPTION_TEXT,
            HierarchyLevel.CONCEPT,
            None,
            (HierarchyLevel.CONCEPT, MemoryType.SEMANTIC),
            id="description-forced-to-concept",
        ),
    ],
)
def test_the_caller_s_level_and_type_win_and_only_the_missing_one_is_inferred(
    text: str,
    level: HierarchyLevel | None,
    kind: MemoryType | None,
    expected: tuple[HierarchyLevel, MemoryType],
) -> None:
    assert classify(text, level, kind) == expected
