"""cli.call binds a command's options to a library function's parameters by name, and the
library's messages then name those options as the command's flags."""

import argparse
import warnings

import pytest

from labelaudit._errors import InvalidParameterError
from labelaudit.cli._common import Parser, call, warnings_to_stderr


def _args(*argv: str) -> argparse.Namespace:
    parser = Parser(prog="x")
    parser.add_argument("data")
    parser.add_argument("--text", default="text")
    parser.add_argument("--n-items", dest="size", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(parser=parser, handler=None, command="x")
    return parser.parse_args(list(argv))


def library(data, *, text="t", size=1, random_state=None, progress=None, extra="kept"):
    return {"data": data, "text": text, "size": size, "random_state": random_state,
            "progress": progress, "extra": extra}


def test_options_bind_by_name_and_by_the_renamed_seed():
    got = call(library, _args("file.csv", "--text", "body", "--seed", "7"))
    assert got == {"data": "file.csv", "text": "body", "size": 3, "random_state": 7,
                   "progress": False, "extra": "kept"}


def test_given_and_positional_values_win_over_the_options():
    args = _args("file.csv", "--text", "body")
    got = call(library, args, "other.csv", text="given", extra="x")
    assert (got["data"], got["text"], got["extra"]) == ("other.csv", "given", "x")


def test_a_parameter_without_an_option_keeps_its_default():
    def narrow(*, text="t", handler="default", parser="default"):
        return text, handler, parser

    assert call(narrow, _args("f")) == ("text", "default", "default")


def test_messages_name_the_bound_options_as_flags_not_the_positional_argument():
    args = _args("file.csv")

    def refuses(data, *, size=1, text="t"):
        raise InvalidParameterError(f"size={size} is too many for data={data!r}, text={text!r}")

    with pytest.raises(InvalidParameterError) as caught, warnings_to_stderr(args):
        call(refuses, args)
    assert str(caught.value) == "--n-items 3 is too many for data='file.csv', --text 'text'"


def test_warnings_name_the_flags_too(capsys):
    from labelaudit.models import FoldWarning

    args = _args("file.csv")

    def warns(*, size=1):
        warnings.warn(f"size={size} is small", FoldWarning, stacklevel=2)

    with warnings_to_stderr(args):
        call(warns, args)
    assert capsys.readouterr().err == "labelaudit: warning: --n-items 3 is small\n"


def test_the_value_of_an_option_with_choices_is_spelled_without_quotes():
    parser = Parser(prog="x")
    parser.add_argument("--engine", choices=["local", "ray"], default="local")
    parser.set_defaults(parser=parser)
    args = parser.parse_args([])

    def refuses(*, engine="local"):
        raise InvalidParameterError(f"engine={engine!r} cannot run this; give engine='ray'")

    with pytest.raises(InvalidParameterError) as caught, warnings_to_stderr(args):
        call(refuses, args)
    assert str(caught.value) == "--engine local cannot run this; give --engine ray"
