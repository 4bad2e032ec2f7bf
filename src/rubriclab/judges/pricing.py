"""What a judge call costs: a price table (USD per 1M input/output tokens) users can override.

List prices change; these are public list prices for well-known models as of 2025 and are
meant for budgeting a run, not for invoicing. Pass ``prices=`` to a ``Judge`` to correct them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .base import Usage

__all__ = [
    "BATCH_DISCOUNT",
    "PRICES",
    "Price",
    "PriceTable",
    "batch_cost_of",
    "cost_at",
    "cost_of",
    "resolve_prices",
]

Price = tuple[float, float]
"""(USD per 1M prompt tokens, USD per 1M completion tokens)."""

PriceTable = Mapping[str, Price]

PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    # Google Gemini
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.0-flash-lite": (0.075, 0.30),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-pro": (1.25, 10.00),
}

PricesArg = PriceTable | Price | None


def resolve_prices(prices: PricesArg, model: str) -> PriceTable:
    """Merge user prices over the table. A bare (in, out) pair prices this judge's model."""
    if prices is None:
        return PRICES
    if isinstance(prices, tuple):
        return {**PRICES, model: _check(model, prices)}
    if isinstance(prices, Mapping):
        return {**PRICES, **{str(k): _check(str(k), v) for k, v in prices.items()}}
    raise TypeError(
        "prices= takes (input_usd_per_1m, output_usd_per_1m) or {model: (input, output)}"
    )


def _check(model: str, price: object) -> Price:
    if (
        isinstance(price, (tuple, list))
        and len(price) == 2
        and all(isinstance(p, (int, float)) and p >= 0 for p in price)
    ):
        return (float(price[0]), float(price[1]))
    raise ValueError(
        f"price for {model!r} must be (input_usd_per_1m, output_usd_per_1m), got {price!r}"
    )


def lookup(table: PriceTable, model: str) -> Price | None:
    """Exact model name first, then the longest table entry it starts with (dated snapshots)."""
    if model in table:
        return table[model]
    name = model.rsplit("/", 1)[-1]  # "models/gemini-2.0-flash", "openai/gpt-4o"
    if name in table:
        return table[name]
    best: str | None = None
    for known in table:
        if name.startswith(known + "-") and (best is None or len(known) > len(best)):
            best = known
    return table[best] if best is not None else None


def cost_of(usage: Usage, model: str, table: PriceTable, *, local: bool = False) -> float | None:
    """USD for one call, 0.0 for local/mock judges, None when the model's price is unknown."""
    if local:
        return 0.0
    return cost_at(usage, lookup(table, model))


def cost_at(usage: Usage, price: Price | None) -> float | None:
    """USD for one call at ``price`` (None when the price is unknown)."""
    if price is None:
        return None
    return (usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]) / 1_000_000


#: Batch APIs (OpenAI's /v1/batches, Gemini's batch mode) bill half the interactive price.
BATCH_DISCOUNT = 0.5


def batch_cost_of(
    usage: Usage, model: str, table: PriceTable, *, local: bool = False
) -> float | None:
    """USD for one call answered through a provider's batch API (half the list price)."""
    cost = cost_of(usage, model, table, local=local)
    return None if cost is None else cost * BATCH_DISCOUNT
