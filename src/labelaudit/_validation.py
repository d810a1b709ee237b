"""Checks of option values, one place for all of labelaudit: each names the parameter as a
Python user writes it, in the message and as the error's ``param`` (the CLI spells its flag).

>>> check_fraction(1.5, "threshold")
Traceback (most recent call last):
...
labelaudit._errors.InvalidParameterError: threshold must be a number in [0, 1]; got 1.5
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

from labelaudit._errors import InvalidParameterError, plain_value


def shown(value: object) -> str:
    """A value as a message shows it: ``68``, not ``np.int64(68)`` (:func:`plain_value`)."""
    return repr(plain_value(value))


def check_int(value: object, name: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """A whole number within ``[minimum, maximum]`` (a float like ``3.0`` counts)."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral)):
        if math.isfinite(float(value)) and float(value).is_integer():
            value = int(float(value))
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(f"{name} must be a whole number; got {shown(value)}",
                                    param=name or None)
    number = int(value)
    if minimum is not None and number < minimum:
        raise InvalidParameterError(f"{name} must be at least {minimum}; got {number}",
                                    param=name or None)
    if maximum is not None and number > maximum:
        raise InvalidParameterError(f"{name} must be at most {maximum}; got {number}",
                                    param=name or None)
    return number


def check_number(value: object, name: str, *, low: float | None = None,
                 high: float | None = None, low_open: bool = False,
                 high_open: bool = False) -> float:
    """A finite number within the interval given by ``low``/``high`` (open ends if asked)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    number = float(value) if ok else math.nan  # type: ignore[arg-type]
    inside = ok and math.isfinite(number)
    if inside and low is not None:
        inside = number > low if low_open else number >= low
    if inside and high is not None:
        inside = number < high if high_open else number <= high
    if not inside:
        if low is None and high is None:
            where = "a finite number"
        else:
            left = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
            right = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
            where = f"a number in {left}, {right}"
        raise InvalidParameterError(f"{name} must be {where}; got {shown(value)}",
                                    param=name or None)
    return number


def check_fraction(value: object, name: str, *, low_open: bool = False,
                   high_open: bool = False) -> float:
    """A number in [0, 1] (either end open if asked)."""
    return check_number(value, name, low=0.0, high=1.0, low_open=low_open, high_open=high_open)


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    """One of ``choices``."""
    options = tuple(choices)
    if value not in options:
        raise InvalidParameterError(
            f"{name} must be one of {', '.join(options)}; got {shown(value)}",
            param=name or None)
    return str(value)
