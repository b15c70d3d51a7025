"""``binlogkit.search.kernels`` calls Arrow's kernels as ``pyarrow.compute`` does: the same
results for the calls the query path makes (data, options by keyword or position, any number
of arguments), and a table or chunked array of at least one chunk."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from binlogkit.search import kernels

WORDS = pa.chunked_array([pa.array(["b", "a", None, "c"]), pa.array(["a", "d"])])
TABLE = pa.table({"key": WORDS, "n": pa.chunked_array([[1, 2, 3, 4], [5, 6]])})
KEEP = pa.array([True, False, True, False, True, True])


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("is_in", (WORDS,), {"value_set": pa.array(["a", "c"])}),
        ("index_in", (WORDS,), {"value_set": pa.array(["d", "a"])}),
        ("unique", (WORDS,), {}),
        ("dictionary_encode", (WORDS,), {}),
        ("filter", (TABLE, KEEP), {}),
        ("filter", (WORDS, KEEP), {}),
        ("take", (TABLE, pa.array([5, 0, 0])), {}),
        ("cast", (TABLE.column("n"), pa.string()), {}),
        ("greater_equal", (WORDS, pa.scalar("b")), {}),
        ("and_", (KEEP, pa.array([True] * 3 + [False] * 3)), {}),
        ("binary_join_element_wise", (WORDS, WORDS, pa.scalar("-")), {}),
        ("is_valid", (WORDS,), {}),
        ("list_flatten", (pa.array([[1, 2], [], [3]]),), {}),
        ("list_parent_indices", (pa.array([[1, 2], [], [3]]),), {}),
    ],
)
def test_a_kernel_gives_what_pyarrow_compute_gives(
    name: str, args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    assert getattr(kernels, name)(*args, **kwargs).equals(getattr(pc, name)(*args, **kwargs))


def test_options_given_whole_and_errors() -> None:
    options = pc.SetLookupOptions(pa.array(["a"]))
    assert kernels.is_in(WORDS, options=options).equals(pc.is_in(WORDS, options=options))
    with pytest.raises(AttributeError, match="no compute function 'no_such_kernel'"):
        kernels.no_such_kernel  # noqa: B018
    with pytest.raises(TypeError, match="unique takes 1 arguments and no options"):
        kernels.unique(WORDS, 1)


def test_nothing_kept_is_one_empty_chunk() -> None:
    none = pa.array([False] * 6)
    assert pc.filter(TABLE, none).column("key").num_chunks == 0  # what pyarrow gives
    table = kernels.filter(TABLE, none)
    assert table.num_rows == 0 and table.schema == TABLE.schema
    assert [table.column(n).num_chunks for n in table.column_names] == [1, 1]
    words = kernels.filter(WORDS, none)
    assert (words.num_chunks, len(words), words.type) == (1, 0, pa.string())
