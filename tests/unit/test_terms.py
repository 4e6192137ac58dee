"""A text's terms as FTS5's ``porter unicode61 remove_diacritics 2`` makes them, against SQLite's."""

from __future__ import annotations

import sqlite3

import pytest

from cognitive_memory.core.terms import terms, tokens

TEXTS = (
    "Caroline went to the LGBTQ support group on 7 May 2023; she's been running since.",
    "snake_case and kebab-case, CamelCase, v1.2.3, e-mail: a.b@example.com, #hashtag @user",
    "Crème brûlée at the café: naïve façade, Ångström, Straße, İstanbul, ǖ ẞ",
    "Ελληνικά λόγος, Русский текст, 日本語のテキスト, עברית, العربية",
    "emoji 😀 between words, tab\tand newline\nand µ, ſ, ﬁ ligature",
    "Configuring webpack loaders: the loader's options, plugins and optimisation.",
)


@pytest.fixture(scope="module")
def fts5() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return conn


@pytest.mark.parametrize("text", TEXTS)
def test_terms_are_fts5s_terms_in_order(fts5: sqlite3.Connection, text: str) -> None:
    fts5.execute("DELETE FROM t")
    fts5.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (text,))
    expected = [str(term) for (term,) in fts5.execute("SELECT term FROM v ORDER BY offset")]
    assert terms(text) == expected


def test_tokens_fold_case_and_latin_diacritics_and_split_on_underscores() -> None:
    assert tokens("Crème_Brûlée ÅNGSTRÖM") == ["creme", "brulee", "angstrom"]


def test_terms_keep_repeats_for_counting() -> None:
    assert terms("runs running run") == ["run", "run", "run"]
