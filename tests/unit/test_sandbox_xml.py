"""The sandbox reads query results from the ``mariadb --xml`` output format."""

from binlogkit.sandbox.server import parse_xml_rows

# What `mariadb --xml -e "SELECT 1 a, NULL b, 'NULL' c, '<&>\"' d, 'é' e, '' f"` prints.
OUTPUT = """<?xml version="1.0"?>

<resultset statement="SELECT 1 a, NULL b, 'NULL' c, '&lt;&amp;&gt;&quot;' d, 'é' e, '' f
" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <row>
\t<field name="a">1</field>
\t<field name="b" xsi:nil="true" />
\t<field name="c">NULL</field>
\t<field name="d">&lt;&amp;&gt;&quot;</field>
\t<field name="e">é</field>
\t<field name="f"></field>
  </row>
</resultset>
""".encode()


def test_null_is_not_the_text_null_and_entities_are_undone() -> None:
    assert parse_xml_rows(OUTPUT) == [("1", None, "NULL", '<&>"', "é", "")]


def test_raw_bytes_survive() -> None:
    out = b'<row>\n\t<field name="x">\xff\x01\n</field>\n</row>'
    (value,) = parse_xml_rows(out)[0]
    assert value is not None
    assert value.encode("utf-8", "surrogateescape") == b"\xff\x01\n"


def test_no_rows() -> None:
    assert parse_xml_rows(b'<?xml version="1.0"?>\n<resultset statement="x"></resultset>\n') == []
