"""Helpers shared by every export of case data."""

import json
from datetime import datetime
from decimal import Decimal
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """A CSV cell that no spreadsheet runs as a formula (a leading ' quotes it)."""
    if value is None:
        return ""
    if isinstance(value, int | float | Decimal):  # -36.29 is a number, not a formula
        return str(value)
    if isinstance(value, dict | list):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False)
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text
