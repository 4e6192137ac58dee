"""Dependencies point one way: memory_system -> interfaces -> cognitive_memory."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "cognitive_memory": ("interfaces", "memory_system"),
    "interfaces": ("memory_system",),
    "cognitive_memory/storage": (
        "cognitive_memory.retrieval",
        "cognitive_memory.system",
        "cognitive_memory.main",
    ),
    "cognitive_memory/retrieval": ("cognitive_memory.system", "cognitive_memory.main"),
    "cognitive_memory/core": (
        "cognitive_memory.storage",
        "cognitive_memory.retrieval",
        "cognitive_memory.encoding",
        "cognitive_memory.system",
        "cognitive_memory.main",
    ),
}


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
