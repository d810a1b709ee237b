"""Recipes: several noise methods and their shares of the noised items (TweetNLP-5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_number, shown
from labelaudit.registry import NOISE_METHODS

__all__ = ["Recipe", "parse_recipe"]

Recipe = Mapping[str, float] | Sequence[tuple[str, float]] | str


def parse_recipe(recipe: Recipe) -> tuple[tuple[str, float], ...]:
    """Validate a recipe: methods with positive shares that sum to 1.

    Accepts ``"dissenting-worker:0.8,dissenting-label:0.2"``, a mapping or pairs.

    Examples
    --------
    >>> parse_recipe("dissenting-worker:0.8, dissenting-label:0.2")
    (('dissenting-worker', 0.8), ('dissenting-label', 0.2))
    >>> parse_recipe({"uniform": 0.5, "uniform ": 0.5})
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidParameterError: recipe names 'uniform' twice
    """
    if isinstance(recipe, str):
        pairs: list[tuple[str, object]] = []
        for part in recipe.split(","):
            name, sep, share = part.strip().rpartition(":")
            if not sep or not name.strip():
                raise InvalidParameterError(
                    f"recipe part {part.strip()!r} is not METHOD:SHARE; write e.g. "
                    "'dissenting-worker:0.8,dissenting-label:0.2'", param="recipe"
                )
            try:
                pairs.append((name, float(share)))
            except ValueError:
                raise InvalidParameterError(
                    f"recipe share {share!r} of {name.strip()!r} is not a number",
                    param="recipe") from None
    elif isinstance(recipe, Mapping):
        pairs = list(recipe.items())
    else:
        try:
            pairs = [(key, share) for key, share in recipe]
        except (TypeError, ValueError):
            raise InvalidParameterError(
                "recipe must be 'METHOD:SHARE,...', a mapping or (method, share) pairs",
                param="recipe") from None
    out: list[tuple[str, float]] = []
    for raw_name, raw_share in pairs:
        method = str(raw_name).strip()
        if method not in NOISE_METHODS:
            raise InvalidParameterError(
                f"unknown noise method {method!r} in the recipe; choose from "
                f"{', '.join(NOISE_METHODS)}", param="recipe")
        if any(method == seen for seen, _ in out):
            raise InvalidParameterError(f"recipe names {method!r} twice", param="recipe")
        try:
            number = check_number(raw_share, "share", low=0.0, low_open=True)
        except InvalidParameterError:
            raise InvalidParameterError(f"the share of {method!r} must be a positive number; "
                                        f"got {shown(raw_share)}", param="recipe") from None
        out.append((method, number))
    if not out:
        raise InvalidParameterError("the recipe is empty", param="recipe")
    total = sum(share for _, share in out)
    if abs(total - 1.0) > 1e-6:
        raise InvalidParameterError(f"recipe shares must sum to 1; they sum to {total:g}",
                                    param="recipe")
    return tuple(out)
