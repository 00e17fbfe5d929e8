"""promptd.exactjson: orjson's output wherever orjson can write, the same form with wide integers
and lone surrogates where it cannot, and a reader that keeps both."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptd import exactjson

# What Node's JSON.stringify wrote for these values (node -e, pasted): a lone surrogate is a
# lower-case escape, every other character above U+001F is written as itself.
NODE_SPELLINGS = [
    ("\ud83d", b'"\\ud83d"'),
    ("\ude00", b'"\\ude00"'),
    ({"k": "\ude00", "n": "\u0000\u2028"}, b'{"k":"\\ude00","n":"\\u0000\xe2\x80\xa8"}'),
    ("Hi \U0001f600 x\ud83d", b'"Hi \xf0\x9f\x98\x80 x\\ud83d"'),
]


@pytest.mark.parametrize("value,spelling", NODE_SPELLINGS)
def test_lone_surrogates_are_written_as_javascript_writes_them(value, spelling):
    assert exactjson.dumps(value) == spelling
    assert exactjson.loads(spelling) == value


def test_wide_integers_are_written_in_full_beside_orjsons_own_forms():
    value = {"big": 2**64, "small": -(2**63) - 1, "float": 1e100, "nan": float("nan"), "quote": 'a"\\\n\x1f', "list": (1, True, None)}
    assert exactjson.dumps(value) == b'{"big":18446744073709551616,"small":-9223372036854775809,"float":1e+100,"nan":null,"quote":"a\\"\\\\\\n\\u001f","list":[1,true,null]}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_every_value_reads_back_exactly_and_orjsons_own_values_are_written_as_orjson_writes_them(value):
    written = exactjson.dumps(value)
    assert exactjson.loads(written) == value
    try:
        expected = orjson.dumps(value)
    except TypeError:
        return  # a wide integer or a lone surrogate: orjson has no form to compare with
    assert written == expected


def test_a_frame_nested_deeper_than_any_recursion_limit_is_written():
    value: object = "\ud800"
    for _ in range(5000):
        value = [value]
    written = exactjson.dumps(value)
    assert written == b"[" * 5000 + b'"\\ud800"' + b"]" * 5000


@pytest.mark.parametrize(
    "line,long",
    [
        (b'{"a":9223372036854775807}', False),
        (b'{"a":18446744073709551615}', False),  # orjson reads up to 2**64-1 exactly
        (b'{"a":-9223372036854775808}', False),
        (b'{"a":18446744073709551616}', True),
        (b'{"a":-9223372036854775809}', True),
        (b"[1, 100000000000000000000000000000]", True),
        (b"100000000000000000000000000000", True),
        (b'{"a":1234567890123456789012.5}', False),  # a float: orjson reads it as any parser does
        (b'{"a":"12345678901234567890123"}', False),
    ],
)
def test_only_integers_orjson_would_read_inexactly_take_the_exact_reader(line, long):
    assert exactjson.has_long_integer(line) is long
    assert exactjson.loads(line) == json.loads(line)


def test_an_integer_longer_than_the_digit_bound_is_refused():
    exactjson.loads(b"[" + b"9" * exactjson.MAX_INT_DIGITS + b"]")
    with pytest.raises(ValueError):
        exactjson.loads(b"[" + b"9" * (exactjson.MAX_INT_DIGITS + 1) + b"]")
