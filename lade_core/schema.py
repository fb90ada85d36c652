"""Schemas declared once: a field's type lives in its annotation, its range in `spec(...)` metadata beside it.

`build(cls, data)` turns JSON data into the frozen dataclass `cls`, checking every field (nested dataclasses, tuples
of ids, grids of ids, mappings of id -> text) against its annotation and spec, and names the field's path, the value
and the allowed range when something is wrong:

    parallel.steps[12].window must be between 0 and 256, got 2000

`check(obj)` runs the same checks on an instance made in Python (the settings' `__post_init__`),
`check_bounds(obj, bounds)` checks tighter ranges over the same fields (the public app's limits on a trace), and
`check_form(cls, values, bounds)` takes the same fields as a form or a JSON client sends them (7.0, "7", None, ...)
and checks them against those tighter ranges, with the same labels. Adding a field to a dataclass adds it to the
loader, the checks and the JSON: nothing else lists fields. Cost: one pass over the data, so loading is linear in the
size of the JSON text.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import typing
from functools import cache

INT_MAX = 2**63 - 1
TOKEN_MAX = 2**31 - 1  # any vocabulary fits; a run's own vocabulary is checked against the run
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON can spell a lone one ("\\ud800"); UTF-8 cannot hold it


class SchemaError(ValueError):
    """Data does not fit its declared schema; the message names the field, the value and what is allowed."""


def spec(
    low=None,
    high=None,
    *,
    label: str | None = None,
    choices: tuple = (),
    max_len: int | None = None,
    items: tuple[int, int] = (0, TOKEN_MAX),
) -> dict:
    """Field metadata: numeric range [low, high], allowed `choices`, longest string or tuple `max_len`, range of the
    ints inside a tuple (`items`), and the `label` messages use for the field."""
    return {"low": low, "high": high, "label": label, "choices": tuple(choices), "max_len": max_len, "items": items}


def shown(value) -> str:
    """A value for a message: huge integers by size (Python refuses to print those over 4300 digits), long text cut."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@cache
def _fields(cls) -> tuple[tuple[str, object, dict, bool], ...]:
    """(name, resolved annotation, spec, required) of each field of the dataclass `cls`."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out.append((f.name, hints[f.name], {**spec(), **f.metadata}, required))
    return tuple(out)


def _number(value, kind, where: str, meta: dict, error):
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise error(f"{where} must be a whole number, got {shown(value)}")
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or abs(value) > sys.float_info.max or not math.isfinite(float(value)):
            raise error(f"{where} must be a finite number, got {shown(value)}")
        value = float(value)
    low, high = meta["low"], meta["high"]
    if kind is int and low is None:  # every int has a range: no unbounded numbers reach the views
        low, high = -INT_MAX, INT_MAX
    if (low is not None and value < low) or (high is not None and value > high):
        raise error(
            f"{where} must be between {low:g} and {high:g}, got {shown(value)}"
            if kind is float
            else f"{where} must be between {low} and {high}, got {shown(value)}"
        )
    return value


def _value(value, kind, where: str, meta: dict, error):
    """`value` checked against the annotation `kind` (and `meta`), converted to its Python type."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind in (int, float):
        return _number(value, kind, where, meta, error)
    if kind is bool:
        if not isinstance(value, bool):
            raise error(f"{where} must be true or false, got {shown(value)}")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise error(f"{where} must be text, got {type(value).__name__}")
        lone = _SURROGATE.search(value)
        if lone:
            raise error(f"{where} is not valid Unicode text (a lone surrogate at character {lone.start() + 1:,})")
        if meta["choices"] and value not in meta["choices"]:
            raise error(f"{where} must be one of {', '.join(meta['choices'])}, got {shown(value)}")
        if meta["max_len"] is not None and len(value) > meta["max_len"]:
            raise error(f"{where} is {len(value):,} characters long; at most {meta['max_len']:,} are allowed")
        return value
    if dataclasses.is_dataclass(kind):
        return build(kind, value, where, error)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise error(f"{where} must be a list, got {type(value).__name__}")
        if meta["max_len"] is not None and len(value) > meta["max_len"]:
            raise error(f"{where} has {len(value):,} items; at most {meta['max_len']:,} are allowed")
        item = args[0]
        if item is int:  # ids: the range of the items, not of the tuple
            low, high = meta["items"]
            inner = {**spec(), "low": low, "high": high}
            return tuple(_number(v, int, f"{where}[{i}]", inner, error) for i, v in enumerate(value))
        inner = {**spec(), "items": meta["items"]}
        return tuple(_value(v, item, f"{where}[{i}]", inner, error) for i, v in enumerate(value))
    if origin is dict and args == (int, str):  # id -> text, ids written as JSON keys
        if not isinstance(value, dict):
            raise error(f"{where} must map token ids to text, got {type(value).__name__}")
        out = {}
        for key, text in value.items():
            token = key if isinstance(key, int) and not isinstance(key, bool) else None
            if isinstance(key, str) and key.isascii() and key.isdigit() and len(key) < 19:
                token = int(key)
            if token is None or not 0 <= token <= TOKEN_MAX:
                raise error(f"{where} keys must be token ids, got {shown(key)}")
            out[token] = _value(text, str, f"{where}[{token}]", meta, error)
        return out
    raise TypeError(f"no schema rule for {kind!r} at {where}")  # a programming error, not bad data


def build(cls, data, where: str = "", error=SchemaError):
    """The dataclass `cls` from a JSON mapping: every field checked, unknown fields refused, defaults applied."""
    name = where or cls.__name__
    if not isinstance(data, dict):
        raise error(f"{name} must be an object, got {type(data).__name__}")
    known = {f[0] for f in _fields(cls)}
    unknown = [k for k in data if k not in known]
    if unknown:
        raise error(f"{name} has unknown fields: {', '.join(shown(k) for k in unknown[:5])}")
    values = {}
    for field, kind, meta, required in _fields(cls):
        path = f"{where}.{field}" if where else field
        if field not in data:
            if required:
                raise error(f"{path} is missing")
            continue
        values[field] = _value(data[field], kind, path, meta, error)  # data has paths; labels are for forms
    try:
        return cls(**values)
    except SchemaError as exc:  # a check across fields in `__post_init__`: say where the object is
        raise error(f"{name}: {exc}") from None


def check(obj, error=SchemaError) -> None:
    """Check an instance's fields against their declared types and specs (for `__post_init__`)."""
    for field, kind, meta, _ in _fields(type(obj)):
        _value(_plain(getattr(obj, field)), kind, meta["label"] or field, meta, error)


def check_bounds(obj, bounds: dict[str, tuple], error=SchemaError) -> None:
    """Check fields of `obj` against tighter ranges `bounds` (field -> (low, high)), with the declared labels."""
    metas = {f[0]: f[2] for f in _fields(type(obj))}
    for field, (low, high) in bounds.items():
        label = metas[field]["label"] or field
        _number(getattr(obj, field), type(getattr(obj, field)), label, {**spec(), "low": low, "high": high}, error)


def _parsed(value, kind):
    """A form's or a JSON client's value as a finite number (None where it is none): sliders send 7.0, JSON clients
    "7" or 7; a bool is not a number, and text only where it spells one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 40:
            return None
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if isinstance(value, int):
        return value if kind is float or abs(value) <= INT_MAX else None
    if isinstance(value, float) and math.isfinite(value):
        return int(value) if kind is int and value.is_integer() else value
    return None


def form_value(value, kind, label: str, low, high, error=SchemaError):
    """`value` from a form or a JSON client as `kind` (int or float) within [low, high], or `error` with a message
    naming the field, the value and the range: "window (W) must be a whole number from 1 to 32, got 3.5"."""
    number = _parsed(value, kind)
    ok = number is not None and (kind is float or isinstance(number, int)) and low <= number <= high
    if not ok:
        what = "a whole number" if kind is int else "a number"
        raise error(
            f"{label} must be {what} from {low:g} to {high:g}, got {shown(value)}"
            if kind is float
            else f"{label} must be {what} from {low} to {high}, got {shown(value)}"
        )
    return float(number) if kind is float else number


def check_form(cls, values: dict, bounds: dict[str, tuple], error=SchemaError) -> dict:
    """Form values (field -> raw value) for fields of the dataclass `cls`, each converted to its declared type and
    checked against its tighter range in `bounds`, with its declared label; returns field -> value."""
    kinds = {f[0]: (f[1], f[2]["label"] or f[0]) for f in _fields(cls)}
    return {
        name: form_value(value, kinds[name][0], kinds[name][1], *bounds[name], error) for name, value in values.items()
    }


def to_data(obj):
    """A dataclass as JSON data: the inverse of `build` (tuples become lists; token-id keys become strings)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_data(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [to_data(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    return obj


def _plain(value):
    """Python values as `_value` expects them from JSON (a dataclass stays: it checks itself when built)."""
    if dataclasses.is_dataclass(value):
        return to_data(value)
    return value
