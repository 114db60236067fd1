"""Cost of an answer from the host file's price table (``ModelHost.prices``), when the server reports none."""

from collections.abc import Mapping

from assay.models import ModelPrice


def price_for(prices: Mapping[str, ModelPrice], *model_names: str | None) -> ModelPrice | None:
    """The price of the first of ``model_names`` in the table (the model the server reported, then the one
    configured), else the table's ``'*'`` entry, else none."""
    for name in model_names:
        if name and name in prices:
            return prices[name]
    return prices.get("*")


def cost_of(price: ModelPrice, input_tokens: int, output_tokens: int, cached_input_tokens: int | None = None) -> float:
    """The cost of one call: its cached input tokens (part of ``input_tokens``) at the cached price where the
    table has one. Reasoning tokens are already counted in ``output_tokens``, as the providers report them."""
    cached = min(cached_input_tokens or 0, input_tokens)
    cached_price = price.input_per_1k if price.cached_input_per_1k is None else price.cached_input_per_1k
    return round(
        (input_tokens - cached) / 1000 * price.input_per_1k
        + cached / 1000 * cached_price
        + output_tokens / 1000 * price.output_per_1k,
        8,
    )
