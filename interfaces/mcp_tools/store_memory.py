"""store_memory: keep an experience, insight or fact."""

from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from cognitive_memory.core.validation import MAX_TAG_CHARS, MAX_TAGS, MAX_TEXT_CHARS
from interfaces.formatting import format_store
from interfaces.mcp_tools.state import ServerState, answer, cli_of
from interfaces.schemas import StoreResult

__all__ = ["StoreContext", "register"]

DESCRIPTION = (
    "Store an experience, decision, insight or fact in long-term memory so that future sessions can "
    "recall it. Write one self-contained memory per call (what happened or what is true, and why it "
    "matters). Hierarchy level and memory type are inferred when omitted: reports of events become "
    "L2 episodes (episodic), short principles L0 concepts, everything else L1 contexts (semantic)."
)


class StoreContext(BaseModel):
    """Optional placement and labels for the memory."""

    model_config = ConfigDict(extra="forbid")

    hierarchy_level: Annotated[
        int | None,
        Field(ge=0, le=2, description="0 = concept, 1 = context, 2 = episode; inferred if omitted."),
    ] = None
    memory_type: Annotated[
        Literal["episodic", "semantic"] | None, Field(description="Inferred if omitted.")
    ] = None
    importance_score: Annotated[float, Field(ge=0.0, le=1.0, description="0.0 to 1.0; default 0.5.")] = 0.5
    tags: Annotated[
        list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]],
        Field(max_length=MAX_TAGS, description="Categorization tags."),
    ] = Field(default_factory=list)
    source_info: Annotated[
        str | None, Field(max_length=500, description="Where this knowledge came from.")
    ] = None


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="store_memory",
        title="Store memory",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    def store_memory(
        text: Annotated[
            str, Field(min_length=1, max_length=MAX_TEXT_CHARS, description="The content to remember.")
        ],
        ctx: Context[ServerState, Any],
        context: StoreContext | None = None,
    ) -> Annotated[CallToolResult, StoreResult]:
        given = context.model_dump(exclude_none=True) if context else None
        result = cli_of(ctx).store_experience(text, given)
        return answer(result, format_store(result))
