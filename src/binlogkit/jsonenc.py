"""The lossless JSON encoding of row values (see docs/json-encoding.md).

Every value a decoded row can hold becomes JSON that decodes back to an equal
Python value of the same type. Values JSON carries exactly stay plain JSON
(null, true/false, strings, integers within ±(2**53 - 1), finite floats, lists,
objects); everything else becomes a *tagged object*: an object with exactly one
key that starts with ``$``, such as ``{"$decimal": "1.50"}`` or
``{"$binary": "AAE="}``. A plain object that itself has exactly one key starting
with ``$`` is wrapped in ``{"$object": {...}}`` so it cannot be mistaken for a tag.

Each tag is one :class:`ValueCodec` registered with :func:`value_codec`; nothing
dispatches through an if/elif chain.

>>> dumps({"id": 2**64 - 1, "price": Decimal("9.90")})
'{"id":{"$int":"18446744073709551615"},"price":{"$decimal":"9.90"}}'
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, ClassVar, TypeVar

from binlogkit.binlog.jsonb import EMPTY_JSON, JsonEmpty, JsonOpaque, JsonUInt
from binlogkit.binlog.rows.json_diff import JsonDiff, JsonDiffOperation
from binlogkit.binlog.rows.types.values import (
    JSON_NULL,
    Compressed,
    Geometry,
    InvalidDate,
    InvalidDateTime,
    JsonNull,
)

__all__ = [
    "MAX_SAFE_INTEGER",
    "ValueCodec",
    "decimal_text",
    "decode",
    "dumps",
    "encode",
    "loads",
    "value_codec",
]

MAX_SAFE_INTEGER = 2**53 - 1
"""Largest integer every JSON reader holds exactly (an IEEE double; RFC 7493 §2.2)."""

Json = Any
"""A JSON-compatible Python object: None, bool, int, float, str, list or dict."""


class ValueCodec:
    """Encodes one family of Python values as ``{tag: payload}`` and decodes it back."""

    tag: ClassVar[str]
    types: ClassVar[tuple[type, ...]]

    @staticmethod
    def encode(value: Any) -> Json:
        """The payload for ``value`` (plain JSON; nested values go through :func:`encode`)."""
        raise NotImplementedError

    @staticmethod
    def decode(payload: Json) -> Any:
        """The value a payload stands for; raises ValueError when the payload is malformed."""
        raise NotImplementedError


C = TypeVar("C", bound=type[ValueCodec])

_BY_TYPE: dict[type, Callable[[Any], Json]] = {}
_BY_TAG: dict[str, Callable[[Json], Any]] = {}


def value_codec(tag: str, *types: type) -> Callable[[C], C]:
    """Class decorator: the codec of ``tag``, used to encode values of ``types``."""

    def mark(cls: C) -> C:
        if not tag.startswith("$") or tag in _BY_TAG:
            raise RuntimeError(f"bad or duplicate JSON tag {tag!r}")
        cls.tag = tag
        cls.types = types
        _BY_TAG[tag] = cls.decode
        for py_type in types:
            _BY_TYPE[py_type] = _tagger(tag, cls.encode)
        return cls

    return mark


def _tagger(tag: str, encode_payload: Callable[[Any], Json]) -> Callable[[Any], Json]:
    return lambda value: {tag: encode_payload(value)}


# -- plain JSON values -------------------------------------------------------------


def _plain(value: Any) -> Json:
    return value


def _encode_int(value: int) -> Json:
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return int(value)
    return {"$int": str(int(value))}


def _encode_float(value: float) -> Json:
    if math.isfinite(value):
        return float(value)
    if math.isnan(value):
        return {"$float": "NaN"}
    return {"$float": "Infinity" if value > 0 else "-Infinity"}


def _encode_list(value: list[Any]) -> Json:
    return [encode(item) for item in value]


def _encode_dict(value: dict[str, Any]) -> Json:
    out: dict[str, Json] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"JSON object keys must be str, not {type(key).__name__}")
        out[key] = encode(item)
    if len(out) == 1 and next(iter(out)).startswith("$"):
        return {"$object": out}
    return out


_BY_TYPE.update(
    {
        type(None): _plain,
        bool: _plain,
        str: _plain,
        int: _encode_int,
        float: _encode_float,
        list: _encode_list,
        dict: _encode_dict,
    }
)

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


# -- tagged values -----------------------------------------------------------------


@value_codec("$int")
class BigIntCodec(ValueCodec):
    """Integers beyond ±(2**53 - 1) (BIGINT UNSIGNED, large BIGINT): decimal digits."""

    @staticmethod
    def decode(payload: Json) -> int:
        return int(_text(payload))


@value_codec("$float")
class NonFiniteCodec(ValueCodec):
    """NaN and the infinities, which JSON numbers cannot carry."""

    @staticmethod
    def decode(payload: Json) -> float:
        try:
            return _NONFINITE[payload]
        except (KeyError, TypeError):
            raise ValueError(
                f"$float must be NaN, Infinity or -Infinity, not {payload!r}"
            ) from None


_MAX_DECIMAL_SCALE = 65
"""More fraction digits than any DECIMAL has (MySQL: 30, MariaDB: 38)."""


def decimal_text(value: Decimal) -> str:
    """A decimal's exact digits as the server shows a DECIMAL (``CAST(d AS CHAR)``): fixed
    point, every fraction digit of its scale kept (``0.000``, never ``str``'s ``0E-3``); a
    value no DECIMAL holds (an exponent above 0 or below -65) as ``str`` writes it."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and -_MAX_DECIMAL_SCALE <= exponent <= 0:
        return f"{value:f}"
    return str(value)


@value_codec("$decimal", Decimal)
class DecimalCodec(ValueCodec):
    """DECIMAL values: the exact digits (:func:`decimal_text`: scale and sign kept)."""

    @staticmethod
    def encode(value: Decimal) -> Json:
        return decimal_text(value)

    @staticmethod
    def decode(payload: Json) -> Decimal:
        return Decimal(_text(payload))


@value_codec("$binary", bytes, bytearray, memoryview)
class BinaryCodec(ValueCodec):
    """Byte strings (BINARY, VARBINARY, BLOB, BIT, GEOMETRY, raw values): base64 (RFC 4648 §4)."""

    @staticmethod
    def encode(value: bytes | bytearray | memoryview) -> Json:
        return base64.b64encode(value).decode("ascii")

    @staticmethod
    def decode(payload: Json) -> bytes:
        return base64.b64decode(_text(payload), validate=True)


_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{6}))?")


@value_codec("$date", date, InvalidDate)
class DateCodec(ValueCodec):
    """DATE values: ISO 8601 ``YYYY-MM-DD``; dates Python refuses (``0000-00-00``) likewise."""

    @staticmethod
    def encode(value: date | InvalidDate) -> Json:
        return value.isoformat()

    @staticmethod
    def decode(payload: Json) -> date | InvalidDate:
        text = _text(payload)
        try:
            return date.fromisoformat(text)
        except ValueError:
            m = _DATE.fullmatch(text)
            if m is None:
                raise
            return InvalidDate(*map(int, m.groups()))


@value_codec("$datetime", datetime, InvalidDateTime)
class DateTimeCodec(ValueCodec):
    """DATETIME and TIMESTAMP values: ISO 8601, with the UTC offset when time-zone aware.

    Values Python refuses (``0000-00-00T00:00:00``, a zero month or day) are
    written the same way, without an offset, and decode to :class:`InvalidDateTime`.
    """

    @staticmethod
    def encode(value: datetime | InvalidDateTime) -> Json:
        if isinstance(value, InvalidDateTime):
            return value.isoformat("T")
        return value.isoformat()

    @staticmethod
    def decode(payload: Json) -> datetime | InvalidDateTime:
        text = _text(payload)
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            m = _DATETIME.fullmatch(text)
            if m is None:
                raise
            return InvalidDateTime(*(int(part or 0) for part in m.groups()))


@value_codec("$time", time)
class TimeOfDayCodec(ValueCodec):
    """Times of day (``datetime.time``): ISO 8601 ``HH:MM:SS[.ffffff]``."""

    @staticmethod
    def encode(value: time) -> Json:
        return value.isoformat()

    @staticmethod
    def decode(payload: Json) -> time:
        return time.fromisoformat(_text(payload))


_DURATION = re.compile(r"(-?)(\d+):([0-5]\d):([0-5]\d)(?:\.(\d{6}))?")


@value_codec("$duration", timedelta)
class DurationCodec(ValueCodec):
    """TIME columns (``timedelta``): ``[-]H:MM:SS[.ffffff]``, as MySQL writes TIME values."""

    @staticmethod
    def encode(value: timedelta) -> Json:
        micros = value // timedelta(microseconds=1)
        sign = "-" if micros < 0 else ""
        seconds, fraction = divmod(abs(micros), 1_000_000)
        minutes, second = divmod(seconds, 60)
        hours, minute = divmod(minutes, 60)
        text = f"{sign}{hours}:{minute:02d}:{second:02d}"
        return f"{text}.{fraction:06d}" if fraction else text

    @staticmethod
    def decode(payload: Json) -> timedelta:
        m = _DURATION.fullmatch(_text(payload))
        if m is None:
            raise ValueError(f"$duration must be [-]H:MM:SS[.ffffff], not {payload!r}")
        sign, hours, minutes, seconds, fraction = m.groups()
        micros = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000
        micros += int(fraction or 0)
        return timedelta(microseconds=-micros if sign else micros)


@value_codec("$set", frozenset, set)
class SetCodec(ValueCodec):
    """SET values (``frozenset``): the members as a sorted list."""

    @staticmethod
    def encode(value: frozenset[Any] | set[Any]) -> Json:
        return sorted((encode(item) for item in value), key=_set_order)

    @staticmethod
    def decode(payload: Json) -> frozenset[Any]:
        if not isinstance(payload, list):
            raise ValueError("$set must hold a list")
        return frozenset(decode(item) for item in payload)


@value_codec("$uint", JsonUInt)
class JsonUIntCodec(ValueCodec):
    """Unsigned integers of JSON documents (MySQL uint16/32/64): decimal digits."""

    @staticmethod
    def encode(value: JsonUInt) -> Json:
        return str(int(value))

    @staticmethod
    def decode(payload: Json) -> JsonUInt:
        return JsonUInt(int(_text(payload)))


@value_codec("$empty_json", JsonEmpty)
class EmptyJsonCodec(ValueCodec):
    """An empty binary JSON value (MySQL reads it as null); the payload is null."""

    @staticmethod
    def encode(value: JsonEmpty) -> Json:
        return None

    @staticmethod
    def decode(payload: Json) -> JsonEmpty:
        if payload is not None:
            raise ValueError("$empty_json holds null")
        return EMPTY_JSON


@value_codec("$json_null", JsonNull)
class JsonNullCodec(ValueCodec):
    """A JSON column holding the document ``null`` (apart from SQL NULL); the payload is null."""

    @staticmethod
    def encode(value: JsonNull) -> Json:
        return None

    @staticmethod
    def decode(payload: Json) -> JsonNull:
        if payload is not None:
            raise ValueError("$json_null holds null")
        return JSON_NULL


@value_codec("$opaque", JsonOpaque)
class JsonOpaqueCodec(ValueCodec):
    """Opaque JSON values: ``{"type": MySQL column type, "data": base64}``."""

    @staticmethod
    def encode(value: JsonOpaque) -> Json:
        return {"type": value.mysql_type, "data": BinaryCodec.encode(value.data)}

    @staticmethod
    def decode(payload: Json) -> JsonOpaque:
        fields = _fields(payload, "$opaque", "type", "data")
        return JsonOpaque(_int(fields["type"]), BinaryCodec.decode(fields["data"]))


@value_codec("$geometry", Geometry)
class GeometryCodec(ValueCodec):
    """GEOMETRY values: ``{"srid": n, "wkb": base64 of the well-known binary}``."""

    @staticmethod
    def encode(value: Geometry) -> Json:
        return {"srid": value.srid, "wkb": BinaryCodec.encode(value.wkb)}

    @staticmethod
    def decode(payload: Json) -> Geometry:
        fields = _fields(payload, "$geometry", "srid", "wkb")
        return Geometry(_int(fields["srid"]), BinaryCodec.decode(fields["wkb"]))


@value_codec("$compressed", Compressed)
class CompressedCodec(ValueCodec):
    """MariaDB COMPRESSED columns: ``{"value": the value, "stored": base64 as logged}``."""

    @staticmethod
    def encode(value: Compressed) -> Json:
        return {"value": encode(value.value), "stored": BinaryCodec.encode(value.stored)}

    @staticmethod
    def decode(payload: Json) -> Compressed:
        fields = _fields(payload, "$compressed", "value", "stored")
        return Compressed(decode(fields["value"]), BinaryCodec.decode(fields["stored"]))


@value_codec("$json_diff", JsonDiff)
class JsonDiffCodec(ValueCodec):
    """A partial JSON update: ``{"op": REPLACE|INSERT|REMOVE, "path": "$.a", "value": ...}``.

    REMOVE diffs have no ``value``.
    """

    @staticmethod
    def encode(value: JsonDiff) -> Json:
        out: dict[str, Json] = {"op": value.operation.name, "path": value.path}
        if value.operation != JsonDiffOperation.REMOVE:
            out["value"] = encode(value.value)
        return out

    @staticmethod
    def decode(payload: Json) -> JsonDiff:
        fields = _fields(payload, "$json_diff", "op", "path")
        try:
            operation = JsonDiffOperation[fields["op"]]
        except (KeyError, TypeError):
            raise ValueError(f"$json_diff op {fields['op']!r} is unknown") from None
        return JsonDiff(operation, _text(fields["path"]), decode(fields.get("value")))


@value_codec("$tuple", tuple)
class TupleCodec(ValueCodec):
    """Tuples (e.g. the JSON diffs of a partially logged JSON column): their items."""

    @staticmethod
    def encode(value: tuple[Any, ...]) -> Json:
        return [encode(item) for item in value]

    @staticmethod
    def decode(payload: Json) -> tuple[Any, ...]:
        if not isinstance(payload, list):
            raise ValueError("$tuple must hold a list")
        return tuple(decode(item) for item in payload)


@value_codec("$object")
class ObjectCodec(ValueCodec):
    """Escape for a plain object whose only key starts with ``$``."""

    @staticmethod
    def decode(payload: Json) -> dict[str, Any]:
        if not isinstance(payload, dict):
            raise ValueError("$object must hold an object")
        return {key: decode(item) for key, item in payload.items()}


def _set_order(item: Json) -> tuple[bool, str]:
    """Members sort as strings first (the usual SET), then anything else by its JSON text."""
    if isinstance(item, str):
        return (False, item)
    return (True, json.dumps(item, sort_keys=True))


def _fields(payload: Json, tag: str, *required: str) -> dict[str, Json]:
    if not isinstance(payload, dict) or not all(name in payload for name in required):
        raise ValueError(f"{tag} must hold an object with {', '.join(required)}")
    return payload


def _int(payload: Json) -> int:
    if type(payload) is not int:
        raise ValueError(f"expected an integer, not {payload!r}")
    return payload


def _text(payload: Json) -> str:
    if not isinstance(payload, str):
        raise ValueError(f"tagged value must be a string, not {type(payload).__name__}")
    return payload


# -- public API --------------------------------------------------------------------


def encode(value: Any) -> Json:
    """The JSON-compatible form of ``value`` (nested containers included)."""
    encoder = _BY_TYPE.get(type(value))
    if encoder is None:
        encoder = _for_subclass(type(value))
    return encoder(value)


def _for_subclass(cls: type) -> Callable[[Any], Json]:
    for base in cls.__mro__[1:]:
        if base in _BY_TYPE:
            return _BY_TYPE[base]
    raise TypeError(f"no lossless JSON encoding for {cls.__module__}.{cls.__qualname__}")


def decode(obj: Json) -> Any:
    """The Python value a JSON-compatible object (as :func:`json.loads` gives it) stands for."""
    if isinstance(obj, dict):
        if len(obj) == 1:
            ((key, payload),) = obj.items()
            if key.startswith("$"):
                try:
                    return _BY_TAG[key](payload)
                except KeyError:
                    raise ValueError(f"unknown JSON value tag {key!r}") from None
        return {key: decode(item) for key, item in obj.items()}
    if isinstance(obj, list):
        return [decode(item) for item in obj]
    return obj


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON text: UTF-8 friendly, compact unless ``indent`` is given.

    Lone surrogates (undecodable bytes kept by ``surrogateescape``) are written
    as ``\\uXXXX`` escapes so the text stays valid UTF-8 and reads back the same.
    """
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(
        encode(value), ensure_ascii=False, allow_nan=False, indent=indent, separators=separators
    )
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def loads(text: str | bytes) -> Any:
    """Decode JSON text written by :func:`dumps` back to the Python value."""
    return decode(json.loads(text))
