"""The library's errors and warnings name the options they are about (``param``); the
command line spells those as its flags, and leaves the rest of the message alone."""

import argparse
import warnings

from labelaudit._errors import InvalidParameterError
from labelaudit.cli._common import Parser, error_text, warnings_to_stderr
from labelaudit.models import FoldWarning


def _args(*argv: str) -> argparse.Namespace:
    parser = Parser(prog="x")
    parser.add_argument("data")
    parser.add_argument("--n-items", dest="size", type=int, default=3)
    parser.add_argument("--engine", choices=["local", "ray"], default="local")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(parser=parser, handler=None, command="x")
    return parser.parse_args(list(argv))


def test_the_options_an_error_names_are_spelled_as_flags():
    error = InvalidParameterError("size=3 is too many for seed=0 and text='t'",
                                  param=("size", "seed"))
    # text is not among the params: left alone
    assert error_text(error, _args("file.csv")) == ("--n-items 3 is too many for --seed 0 "
                                                    "and text='t'")


def test_the_subject_a_true_value_and_a_renamed_parameter():
    args = _args("f")
    assert error_text(InvalidParameterError("size must be at least 1; got 0", param="size"),
                      args) == "--n-items must be at least 1; got 0"
    assert error_text(InvalidParameterError("random_state=-1 is negative",
                                            param="random_state"), args) == "--seed -1 is negative"
    assert error_text(InvalidParameterError("drop size=True", param="size"), args) == \
        "drop --n-items"
    # a name that is not the subject stays plain English
    assert error_text(InvalidParameterError("the size is odd", param="size"), args) == \
        "the size is odd"


def test_the_value_of_an_option_with_choices_is_spelled_without_quotes():
    error = InvalidParameterError("engine='local' cannot run this; give engine='ray'",
                                  param="engine")
    assert error_text(error, _args("f")) == "--engine local cannot run this; give --engine ray"


def test_warnings_name_the_flags_too_and_show_once(capsys):
    args = _args("f")
    with warnings_to_stderr(args):
        for _ in range(2):
            warnings.warn(FoldWarning("size=3 is small", param="size"), stacklevel=1)
        warnings.warn("size=3 without a param", FoldWarning, stacklevel=1)
    assert capsys.readouterr().err == ("labelaudit: warning: --n-items 3 is small\n"
                                       "labelaudit: warning: size=3 without a param\n")
    with warnings_to_stderr(_args("f", "--quiet")):
        warnings.warn(FoldWarning("size=3 is small", param="size"), stacklevel=1)
    assert capsys.readouterr().err == ""
