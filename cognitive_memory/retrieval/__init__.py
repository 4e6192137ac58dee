"""Recall: candidate search, ranking, core/peripheral split and bridge discovery."""

from cognitive_memory.retrieval.activation import spread_activation
from cognitive_memory.retrieval.bridges import BridgeScore, bridge_score, score_bridges
from cognitive_memory.retrieval.conversation import ConversationStage
from cognitive_memory.retrieval.fusion import fuse, normalise
from cognitive_memory.retrieval.reading import RecallReads
from cognitive_memory.retrieval.results import (
    ExplainReason,
    Explanation,
    RankedMemory,
    RetrievalResult,
    split_core,
)
from cognitive_memory.retrieval.retriever import RetrievalConfig, Retriever
from cognitive_memory.retrieval.scoring import RankWeights, ScoreBreakdown, recency, score_candidate

__all__ = [
    "BridgeScore",
    "ConversationStage",
    "ExplainReason",
    "Explanation",
    "RankWeights",
    "RankedMemory",
    "RecallReads",
    "RetrievalConfig",
    "RetrievalResult",
    "Retriever",
    "ScoreBreakdown",
    "bridge_score",
    "fuse",
    "normalise",
    "recency",
    "score_bridges",
    "score_candidate",
    "split_core",
    "spread_activation",
]
