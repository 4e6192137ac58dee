"""Human-readable text for answers: source icons and the formatted text of each tool."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from cognitive_memory.service.schemas import (
    BridgeOut,
    BriefMemoryOut,
    ForgetResult,
    GetResult,
    LessonResult,
    LinkResult,
    ListResult,
    MemoryOut,
    MemoryRecordOut,
    RecallResult,
    RelatedResult,
    StatusResult,
    StoreResult,
    UnlinkResult,
    UpdateResult,
    VersionOut,
)

__all__ = [
    "format_forget",
    "memories",
    "format_get",
    "format_lesson",
    "format_link",
    "format_list",
    "format_recall",
    "format_related",
    "format_source_info",
    "format_status",
    "format_unlink",
    "format_store",
    "format_update",
]

LEVEL_NAMES = {0: "Concept", 1: "Context", 2: "Episode"}
PREVIEW_CHARS = 240


def memories(count: int) -> str:
    """``1 memory``, ``3 memories``."""
    return f"{count} {'memory' if count == 1 else 'memories'}"


def format_source_info(metadata: Mapping[str, Any]) -> str:
    """📄 markdown, 🔄 🔥 💡 git patterns, 📝 session lessons, 💭 everything stored by hand."""
    loader = metadata.get("loader_type")
    if loader == "markdown":
        name = PurePath(str(metadata.get("source_path", "document"))).name
        return f"📄 {name} → {metadata.get('section') or metadata.get('title', 'document')}"
    if loader == "git":
        repo = metadata.get("repository", "repository")
        pattern = metadata.get("pattern_type")
        if pattern == "cochange":
            return f"🔄 {repo} → {metadata.get('file_a', '?')} ↔ {metadata.get('file_b', '?')}"
        if pattern == "hotspot":
            return f"🔥 {repo} → {metadata.get('file_path', '?')}"
        return f"💡 {repo} → {metadata.get('solution_type', 'solution')}"
    if loader == "session_lesson":
        return f"📝 Session Lesson ({metadata.get('lesson_type', 'insight')})"
    source = metadata.get("source_info")
    return f"💭 {source}" if source else "💭 Manual Entry"


def format_forget(result: ForgetResult) -> str:
    lines = [f"✓ {result.message}" if result.forgotten else f"✗ {result.message}"]
    lines += [f"Forgotten: {memory_id}" for memory_id in result.forgotten]
    lines += [f"Not found: {memory_id}" for memory_id in result.missing]
    lines += [f"Kept {kept.id}: {kept.reason}" for kept in result.kept]
    if result.forgotten:
        lines.append("In the trash: `memory_system trash restore ID` brings a memory back")
    return "\n".join(lines)


def format_link(result: LinkResult) -> str:
    note = [f"Note: {result.note}"] if result.note and result.created else []
    return "\n".join([f"✓ {result.message}", *note])


def format_unlink(result: UnlinkResult) -> str:
    return f"✓ {result.message}" if result.removed else f"✗ {result.message}"


def format_related(result: RelatedResult) -> str:
    """One block per memory: depth, the link that reached it (→ outgoing, ← incoming), the path."""
    lines = [f"🔗 {result.message}"]
    for item in result.related:
        arrow = f"{item.relation} →" if item.direction == "outgoing" else f"← {item.relation}"
        lines += [
            "",
            f"[depth {item.depth}] {arrow} {item.id}",
            f"   {_preview(item.content)}",
            f"   Path: {' > '.join(item.path)}",
        ]
        if item.note:
            lines.append(f"   Note: {item.note}")
    return "\n".join(lines)


def format_update(result: UpdateResult) -> str:
    mark = "✓" if result.changed else "="
    lines = [f"{mark} {result.message}", "", f"Memory ID: {result.memory_id}"]
    if result.reembedded:
        lines.append("The new text was embedded and indexed again" + (" (queued)." if result.queued else "."))
    return "\n".join(lines)


def format_store(result: StoreResult) -> str:
    level = f"L{result.hierarchy_level} ({LEVEL_NAMES[result.hierarchy_level]})"
    lines = [
        f"✓ {result.message}",
        "",
        f"Memory ID: {result.memory_id}",
        f"Hierarchy Level: {level}",
        f"Memory Type: {result.memory_type}",
        f"Importance Score: {result.importance_score}",
        f"Project: {result.project}",
        f"Stored At: {result.stored_at}",
    ]
    if result.tags:
        lines.append(f"Tags: {', '.join(result.tags)}")
    if result.novelty is not None and not result.duplicate:
        lines.append(f"Novelty: {result.novelty:.2f}")
    if result.similar:
        lines += ["", "Similar memories:"]
        lines += [f"  {s.id} ({s.similarity:.2f}): {_preview(s.preview)}" for s in result.similar]
    if result.queued:
        lines.append(
            "Note: the vector index is unavailable; this memory is saved and will be indexed "
            f"automatically (next try in {result.retry_in_seconds or 0:.0f} s)."
        )
    return "\n".join(lines)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 3] + "..."


def _memory_lines(number: int, memory: MemoryOut) -> list[str]:
    score = (
        f"Score: {memory.score.total:.2f}, Similarity: {memory.similarity_score:.2f}, "
        if memory.score
        else ""
    )
    return [
        f"{number}. [{memory.memory_type}] {_preview(memory.content)}",
        f"   ID: {memory.id}, Level: L{memory.hierarchy_level}, {score}Strength: {memory.strength:.2f}",
        f"   Source: {memory.source_info}",
        f"   Created: {memory.created_date}, Accessed: {memory.access_count} times",
        *([f"   Superseded by: {', '.join(memory.superseded_by)}"] if memory.superseded_by else []),
    ]


def format_recall(result: RecallResult) -> str:
    """The same memories as the structured answer, each text as whole as it is there: brief gives
    one header line per memory and its text; full adds every score, dates and access counts."""
    lists = result.memories
    note = (
        ["⚠️ The vector index is unavailable: these were found by their words only."]
        if result.degraded
        else []
    )
    if result.total_results == 0:
        return "\n".join([f"📋 {result.message}", *note])
    lines = [f"📋 {memories(result.total_results)} for: '{result.query}'", *note]
    if result.message:
        lines.append(result.message)
    groups = (("core", lists.core), ("peripheral", lists.peripheral), ("bridge", lists.bridge))
    if result.detail == "brief":
        ranked = [(kind, m) for kind, found in groups for m in found if isinstance(m, BriefMemoryOut)]
        for number, (kind, memory) in enumerate(ranked, start=1):
            lines += ["", *_brief_lines(number, kind, memory)]
        return "\n".join(lines)
    number = 0
    for kind, found in groups:
        if found:
            lines += ["", f"{kind.upper()} MEMORIES ({len(found)}):"]
        for record in found:
            if isinstance(record, MemoryOut):  # full answers hold whole records only
                number += 1
                lines += ["", *_full_lines(number, record)]
    return "\n".join(lines)


def _brief_lines(number: int, kind: str, memory: BriefMemoryOut) -> list[str]:
    tags = [f"tags: {', '.join(memory.tags)}"] if memory.tags else []
    head = [
        f"{number}. [{kind}] {memory.id}",
        f"L{memory.level} {memory.type}",
        f"score {memory.score:.2f}",
        memory.reason,
        memory.source,
        memory.date,
        f"project {memory.project}",
        *tags,
    ]
    lines = [" · ".join(head), *_indented(memory.content)]
    if memory.truncated:
        lines.append(f"   [cut at {len(memory.content)} characters: get_memories returns the rest]")
    if memory.superseded_by:
        lines.append(f"   Superseded by: {', '.join(memory.superseded_by)}")
    return lines


def _indented(text: str) -> list[str]:
    return [f"   {line}" if line else "" for line in text.splitlines()]


def _full_lines(number: int, memory: MemoryOut) -> list[str]:
    """A whole recalled record: its scores, source, dates, access count and its whole text."""
    if isinstance(memory, BridgeOut):
        scores = (
            f"Bridge Score: {memory.bridge_score:.2f}, Novelty: {memory.novelty_score:.2f}, "
            f"Connection: {memory.connection_potential:.2f}"
        )
        kind, why = "bridge", [f"   {memory.explanation}"]
    else:
        s = memory.score
        scores = (
            f"Score: {s.total:.3f} (similarity {s.similarity:.2f}, words {s.words:.2f}, "
            f"evidence {s.evidence:.2f}, linked {s.linked:.2f}, relevance {s.relevance:.2f}, "
            f"activation {s.activation:.2f})"
            if s
            else ""
        )
        kind, why = memory.memory_type, []
    return [
        f"{number}. [{kind}] {memory.id}, Level: L{memory.hierarchy_level}, Strength: {memory.strength:.2f}",
        f"   {scores}",
        *why,
        f"   Source: {memory.source_info}",
        f"   Created: {memory.created_date}, Accessed: {memory.access_count} times",
        *([f"   Superseded by: {', '.join(memory.superseded_by)}"] if memory.superseded_by else []),
        *_indented(memory.content),
    ]


def _version_lines(version: VersionOut) -> list[str]:
    return [
        f"  v{version.version} (replaced {version.replaced_at}): [{version.memory_type}] "
        f"L{version.hierarchy_level}, importance {version.importance_score:.2f}, "
        f"tags: {', '.join(version.tags) or 'none'}",
        *(f"    {line}" for line in version.content.splitlines()),
    ]


def _record_lines(memory: MemoryRecordOut) -> list[str]:
    level = f"L{memory.hierarchy_level} ({LEVEL_NAMES[memory.hierarchy_level]})"
    lines = [
        f"── {memory.id} ──",
        f"[{memory.memory_type}] {level}, project {memory.project}, importance "
        f"{memory.importance_score:.2f}, strength {memory.strength:.2f}",
        f"Tags: {', '.join(memory.tags) or 'none'}",
        f"Source: {memory.source_info}",
        f"Created: {memory.created_date}, Modified: {memory.modified_date or 'never'}, "
        f"Last accessed: {memory.last_accessed or 'never'} ({memory.access_count} times)",
        "",
        memory.content,
    ]
    if memory.history is not None:
        lines += ["", f"History ({len(memory.history)} earlier versions):"]
        for version in memory.history:
            lines += _version_lines(version)
    return lines


def format_get(result: GetResult) -> str:
    """Each memory whole (all of its text), and the ids not found."""
    lines = [f"✓ {result.message}" if result.memories else f"✗ {result.message}"]
    lines += [f"Not found: {memory_id}" for memory_id in result.missing]
    for memory in result.memories:
        lines += ["", *_record_lines(memory)]
    return "\n".join(lines)


def format_list(result: ListResult) -> str:
    """One page of memories, previewed as recall shows them, and how to get the next page."""
    lines = [f"📋 {result.message}"]
    for number, memory in enumerate(result.memories, start=1):
        lines += ["", *_memory_lines(number, memory)]
    if result.next_cursor:
        lines += ["", f"Next page: cursor {result.next_cursor}"]
    return "\n".join(lines)


def format_lesson(result: LessonResult) -> str:
    return "\n".join(
        [
            f"✓ {result.message}",
            "",
            f"Lesson ID: {result.lesson_id}",
            f"Lesson Type: {result.lesson_type}",
            f"Importance Level: {result.importance_level}",
            f"Session ID: {result.session_id}",
            f"Stored At: {result.stored_at}",
            "",
            f"💡 Suggestion: {result.suggestion}",
        ]
    )


def format_status(result: StatusResult) -> str:
    counts, storage = result.memory_counts, result.storage_stats
    healthy = result.system_status == "healthy"
    vectors = "unknown" if storage.vector_count is None else f"{storage.vector_count:,} vectors"
    lines = [
        "📊 COGNITIVE MEMORY SYSTEM STATUS",
        "=" * 40,
        "",
        f"System Status: {'✅ HEALTHY' if healthy else '⚠️ DEGRADED'}",
        "",
        "Memory Counts:",
        f"  Total Memories: {counts.total_memories:,}",
        f"  L0 (Concepts): {counts.level_0_concepts:,} memories",
        f"  L1 (Contexts): {counts.level_1_contexts:,} memories",
        f"  L2 (Episodes): {counts.level_2_episodes:,} memories",
        f"  Episodic Memories: {counts.episodic_memories:,}",
        f"  Semantic Memories: {counts.semantic_memories:,}",
        f"  Session Lessons: {counts.session_lessons:,}",
        *(f"  Project {name}: {count:,}" for name, count in counts.by_project.items()),
        "",
        "Storage Statistics:",
        f"  Qdrant: {storage.qdrant_backend} ({storage.qdrant_mode}), status {storage.qdrant_status}",
        f"  Location: {storage.qdrant_location}",
        f"  Vector Count: {vectors}",
        f"  Index Size: {storage.storage_size_mb:.1f} MB",
        f"  Database: {storage.database_path} ({storage.database_size_mb:.1f} MB)",
        f"  Pending Vector Writes: {storage.pending_vector_writes}",
        "",
        "Recent Activity:",
    ]
    lines += [
        f"  {name.replace('_', ' ').title()}: {when or 'never'}"
        for name, when in result.recent_activity.items()
    ]
    if (last := result.last_consolidation) is not None:
        lines.append(f"  Last Consolidation: {last.at} (groups merged {last.groups}, trashed {last.trashed})")
    lines += ["", "Configuration:"]
    lines += [f"  {name.replace('_', ' ').title()}: {value}" for name, value in result.configuration.items()]
    return "\n".join(lines)
