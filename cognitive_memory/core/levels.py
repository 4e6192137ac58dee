"""The rule that places a memory when the caller gives no level or type.

Episode (L2): the text reports something that happened - a past-tense account in the first
person ("I fixed", "we found") or a reference to a moment ("yesterday", "today", "last week",
"this morning", a date such as 2024-05-01).
Concept (L0): otherwise, a short statement (at most 30 words) of a principle: it says
"always", "never", "should", "must", "prefer", "avoid", "rule", "principle", "pattern",
"best practice" or "in general". ("Always retry failed requests" stays a concept.)
Episode (L2) again: otherwise, a work verb in the past tense ("fixed", "discovered",
"debugged", "deployed" ...) reports an event.
Context (L1): everything else - situations, descriptions, domain knowledge.

Type: episodic when the text reports an event (the episode markers above), semantic otherwise.
A level or type given by the caller always wins; the rule fills in only what is missing.
"""

from __future__ import annotations

import re

from cognitive_memory.core.memory import HierarchyLevel, MemoryType

__all__ = ["CONCEPT_MAX_WORDS", "classify", "is_episode", "is_principle"]

CONCEPT_MAX_WORDS = 30

_EVENT_VERBS = (
    "fixed|found|discovered|debugged|tried|noticed|realized|realised|learned|learnt|"
    "resolved|solved|broke|crashed|failed|happened|deployed|released|shipped|migrated|"
    "upgraded|investigated|traced|reproduced|spent|met|decided|merged|reverted"
)
_NARRATED = re.compile(
    rf"\b(?:(?:i|we|i've|we've|they)\s+(?:\w+\s+)?(?:{_EVENT_VERBS}|was|were|had|did|went|got|saw|made)"
    r"|yesterday|today|tonight|this\s+(?:morning|afternoon|evening|week)"
    r"|last\s+(?:night|week|month|year|time|sprint)"
    r"|\d{4}-\d{2}-\d{2})\b",
    re.IGNORECASE,
)
_EVENT_VERB = re.compile(rf"\b(?:{_EVENT_VERBS})\b", re.IGNORECASE)
_PRINCIPLE = re.compile(
    r"\b(?:always|never|should|must|prefer|avoid|rule|principle|pattern|best\s+practice"
    r"|in\s+general)\b",
    re.IGNORECASE,
)


def is_episode(text: str) -> bool:
    """True when the text reports something that happened (see the module docstring)."""
    if _NARRATED.search(text):
        return True
    return not is_principle(text) and _EVENT_VERB.search(text) is not None


def is_principle(text: str) -> bool:
    """True when the text is a short statement of a general rule."""
    return len(text.split()) <= CONCEPT_MAX_WORDS and _PRINCIPLE.search(text) is not None


def classify(
    text: str,
    hierarchy_level: HierarchyLevel | None = None,
    memory_type: MemoryType | None = None,
) -> tuple[HierarchyLevel, MemoryType]:
    """Fill in the level and type the caller left out (see the module docstring)."""
    episode = is_episode(text)
    if hierarchy_level is None:
        if episode:
            hierarchy_level = HierarchyLevel.EPISODE
        elif is_principle(text):
            hierarchy_level = HierarchyLevel.CONCEPT
        else:
            hierarchy_level = HierarchyLevel.CONTEXT
    if memory_type is None:
        memory_type = MemoryType.EPISODIC if episode else MemoryType.SEMANTIC
    return hierarchy_level, memory_type
