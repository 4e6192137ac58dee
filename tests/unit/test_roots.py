"""The project a client root stands for."""

from __future__ import annotations

from pathlib import Path

from interfaces.roots import project_of_root


def test_a_folder_inside_a_git_work_tree_is_named_by_the_top_level(tmp_path: Path) -> None:
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "shop" / "web" / "src").mkdir(parents=True)

    assert project_of_root((tmp_path / "shop" / "web" / "src").as_uri()) == "shop"


def test_a_folder_outside_git_is_named_by_itself(tmp_path: Path) -> None:
    (tmp_path / "notes folder").mkdir()

    assert project_of_root((tmp_path / "notes folder").as_uri()) == "notes folder"


def test_a_root_that_is_not_a_local_folder_names_no_project() -> None:
    assert project_of_root("https://example.com/repo") is None
    assert project_of_root("file://") is None
