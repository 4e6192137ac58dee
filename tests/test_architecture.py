"""Dependencies point one way: memory_system -> interfaces -> cognitive_memory, down the core's
layers inside it (docs/architecture.md draws them), and no circle."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "cognitive_memory": ("interfaces", "memory_system"),
    "interfaces": (
        "memory_system",
        "cognitive_memory.storage",
        "cognitive_memory.index",
        "cognitive_memory.retrieval",
    ),
    "memory_system": ("cognitive_memory.storage", "cognitive_memory.index", "cognitive_memory.retrieval"),
    "cognitive_memory/storage": (
        "cognitive_memory.retrieval",
        "cognitive_memory.system",
        "cognitive_memory.main",
    ),
    "cognitive_memory/index": (
        "cognitive_memory.storage",
        "cognitive_memory.retrieval",
        "cognitive_memory.system",
        "cognitive_memory.main",
    ),
    # Recall owns its types (core/ranking.py, core/links.py) and reads through its protocols
    # (retrieval/reading.py): the store of record behind them may be another one.
    "cognitive_memory/retrieval": (
        "cognitive_memory.storage",
        "cognitive_memory.system",
        "cognitive_memory.main",
    ),
    "cognitive_memory/core": (
        "cognitive_memory.storage",
        "cognitive_memory.retrieval",
        "cognitive_memory.encoding",
        "cognitive_memory.system",
        "cognitive_memory.main",
    ),
}


# The core's parts from the top down, as docs/architecture.md draws them: a module imports only
# modules of its own part or of the parts below it. A top-level module named in no part is a use
# case beside system.py (editing, linking, sync, ...) and sits in its part; the package's own
# ``__init__`` re-exports from any part.
CORE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("upkeep",),
    ("service",),
    ("main",),
    ("system",),
    ("loaders",),
    ("replicas",),
    ("retrieval",),
    ("storage",),
    ("index",),
    ("encoding",),
    ("core",),
    ("errors", "processes", "regular_files", "settings"),
)


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_point_down_only(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no modules found under {package}"
    offences = [
        f"{file.relative_to(ROOT)} imports {module}"
        for file in files
        for module in imported_modules(file)
        if any(module == banned or module.startswith(banned + ".") for banned in FORBIDDEN[package])
    ]
    assert offences == []


def test_transports_reach_no_store_through_the_system() -> None:
    """The use cases read the store for the transports: none walks ``system.memories`` or
    ``system.vectors`` itself."""
    chain = re.compile(r"\bsystem\.(memories|vectors)\b")
    offences = [
        f"{file.relative_to(ROOT)}:{number}: {line.strip()}"
        for file in sorted((ROOT / "interfaces").rglob("*.py"))
        for number, line in enumerate(file.read_text().splitlines(), start=1)
        if chain.search(line)
    ]
    assert offences == []


def test_the_use_cases_reach_no_repository_through_the_system() -> None:
    """The use-case layer goes through the system, or the protocols it is given, never through the
    store of record's aggregates (``system.records.trash``): the store behind them may be another
    one (issue #46)."""
    chain = re.compile(r"\.records\.\w")
    offences = [
        f"{file.relative_to(ROOT)}:{number}: {line.strip()}"
        for file in sorted((ROOT / "cognitive_memory" / "service").rglob("*.py"))
        for number, line in enumerate(file.read_text().splitlines(), start=1)
        if chain.search(line)
    ]
    assert offences == []


def test_only_the_composition_root_reads_the_environment() -> None:
    readers = sorted(
        str(file.relative_to(ROOT))
        for file in (ROOT / "cognitive_memory").rglob("*.py")
        if any(marker in file.read_text() for marker in ("os.environ.get", "os.getenv", "os.environ["))
    )
    assert readers == ["cognitive_memory/settings.py"]


def test_every_package_declares_all() -> None:
    missing = [
        str(init.relative_to(ROOT))
        for package in ("cognitive_memory", "interfaces", "memory_system")
        for init in (ROOT / package).rglob("__init__.py")
        if "__all__" not in init.read_text()
    ]
    assert missing == []


PACKAGES = ("cognitive_memory", "interfaces", "memory_system")
# Import circles accepted on purpose, each with the reason: none today. A circle is written as the
# sorted tuple of its modules, e.g. ("memory_system.a", "memory_system.b"): "why it must stay".
ACCEPTED_CIRCLES: dict[tuple[str, ...], str] = {}


def package_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of PACKAGES (a package is its __init__)."""
    modules = {}
    for package in PACKAGES:
        for file in (root / package).rglob("*.py"):
            parts = file.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return modules


def _import_nodes(body: list[ast.stmt], *, in_functions: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports of ``body``: at module level (class bodies, try and if blocks, not
    ``if TYPE_CHECKING:``, which never runs), or everywhere with ``in_functions``."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if in_functions:
                yield from _import_nodes(node.body, in_functions=True)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            if in_functions:
                yield from _import_nodes(node.body, in_functions=True)
            yield from _import_nodes(node.orelse, in_functions=in_functions)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _import_nodes(inner, in_functions=in_functions)


def _targets(module: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement loads (a name imported from a package may be a module)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join([*here[: len(here) - node.level + 1], *([base] if base else [])])
    yield base
    yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(root: Path = ROOT, *, in_functions: bool) -> dict[str, set[str]]:
    """Module -> the modules of PACKAGES it imports, with the packages whose __init__ that runs
    (those of the importer's own ancestors are already running, so they do not count)."""
    modules = package_modules(root)
    graph: dict[str, set[str]] = {}
    for module, file in modules.items():
        tree = ast.parse(file.read_text(), filename=str(file))
        own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
        found = set()
        for node in _import_nodes(tree.body, in_functions=in_functions):
            for target in _targets(module, node, file.name == "__init__.py"):
                parts = target.split(".")
                found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        graph[module] = {name for name in found if name in modules and name not in own}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                circles.append(tuple(sorted(group)))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


def test_no_import_circle_among_module_level_imports() -> None:
    circles = import_circles(import_graph(in_functions=False))
    assert [c for c in circles if c not in ACCEPTED_CIRCLES] == []


def test_no_import_circle_even_through_imports_inside_functions() -> None:
    """A command may import lazily (STYLE.md 15), but not back into a module that imports it:
    hook_command once reached ``memory_system.cli._facade`` this way (issue 28)."""
    circles = import_circles(import_graph(in_functions=True))
    assert [c for c in circles if c not in ACCEPTED_CIRCLES] == []


def core_layer(module: str) -> int | None:
    """The depth of ``module``'s part in CORE_LAYERS (0 is the top); None outside the core's parts."""
    parts = module.split(".")
    if parts[0] != "cognitive_memory" or len(parts) == 1:
        return None
    return next(
        (depth for depth, names in enumerate(CORE_LAYERS) if parts[1] in names),
        CORE_LAYERS.index(("system",)),
    )


def test_the_core_imports_point_down_its_layers() -> None:
    """Type-only imports and imports inside functions count: a part never reaches up."""
    offences = [
        f"{module} imports {target}"
        for module, targets in sorted(import_graph(in_functions=True).items())
        for target in sorted(targets)
        if (here := core_layer(module)) is not None
        and (there := core_layer(target)) is not None
        and there < here
    ]
    assert offences == []


# SQLite is the store of record's own business: only storage/ speaks it, so a second store of
# record (PostgreSQL, issue #46) goes behind the same seam; backup/ asks storage/ for its copies
# and checks (storage/snapshots.py).
SQLITE_SPOKEN_IN = ("cognitive_memory/storage/",)


@pytest.mark.parametrize("driver", ["sqlite3", "psycopg", "psycopg_pool"])
def test_only_the_store_of_record_imports_a_database_driver(driver: str) -> None:
    offences = [
        relative
        for package in ("cognitive_memory", "interfaces", "memory_system")
        for path in sorted((ROOT / package).rglob("*.py"))
        if any(module == driver or module.startswith(driver + ".") for module in imported_modules(path))
        and not (relative := path.relative_to(ROOT).as_posix()).startswith(SQLITE_SPOKEN_IN)
    ]
    assert offences == []


# Who names SQLite's store of record outside storage/: the tools that open a database file
# themselves (a restore, the index upkeep). The composition root and the index builder's process
# open a store by its location (storage/opening.py: a SQLite file or a PostgreSQL URL).
# Everything else, the replicas of recall's state included, is typed by the core's protocols.
SQLITE_STORE_NAMED_IN = {
    "cognitive_memory/backup/restore.py",
    "cognitive_memory/upkeep/indexes.py",
}


def names_the_sqlite_store(path: Path) -> bool:
    """Whether ``path`` imports ``SQLiteMemoryStore`` (anywhere, inside functions too)."""
    return any(
        isinstance(node, ast.ImportFrom) and any(alias.name == "SQLiteMemoryStore" for alias in node.names)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
    )


def test_only_who_opens_a_database_names_the_sqlite_store() -> None:
    named_in = {
        relative
        for path in sorted((ROOT / "cognitive_memory").rglob("*.py"))
        if not (relative := path.relative_to(ROOT).as_posix()).startswith(SQLITE_SPOKEN_IN)
        and names_the_sqlite_store(path)
    }
    assert named_in == SQLITE_STORE_NAMED_IN
