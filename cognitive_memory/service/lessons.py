"""Session lessons: where each kind of lesson is placed, how important it is, what to add next."""

from __future__ import annotations

__all__ = ["IMPORTANCE_SCORES", "LESSON_PLACEMENT", "LESSON_SUGGESTIONS"]

IMPORTANCE_SCORES = {"low": 0.3, "medium": 0.5, "high": 0.8, "critical": 1.0}
# lesson_type -> (hierarchy level, memory type): rules are concepts, fixes and context are
# contexts, and a discovery is an episode (something that happened in this session).
LESSON_PLACEMENT = {
    "pattern": (0, "semantic"),
    "warning": (0, "semantic"),
    "solution": (1, "semantic"),
    "context": (1, "semantic"),
    "discovery": (2, "episodic"),
}

LESSON_SUGGESTIONS = {
    "discovery": "Consider recording how this discovery changes the approach (a pattern) or what to avoid "
    "(a warning).",
    "pattern": "Consider adding a concrete case as a solution lesson so the pattern is easy to recognise.",
    "solution": "Consider noting the symptoms that led here, so a future session finds the fix from "
    "the problem.",
    "warning": "Consider adding the safe alternative as a solution lesson.",
    "context": "Consider updating this context lesson when the focus of the work changes.",
}
