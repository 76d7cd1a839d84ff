"""Deliberately wrong elementwise ops, one per value class a kernel can get wrong: each is the
``predicated`` stage computing a plausible but wrong op, so only the values it mishandles can
give it away. The gpu tier's edge values must catch every one (``test_planted_values.py``).

Each op is written as a kernel author might: right on ordinary values, wrong on one class.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Callable

import cutlass
import cutlass.cute as cute
import torch

from fixtures.dtypes import DTYPES
from fixtures.ops import Op
from fixtures.stages import STAGES, Stage

HALF_PRECISION_DROP = {"Float16": 13, "BFloat16": 16}  # fp32 mantissa bits the narrow type does not keep


def _finfo(dsl_type) -> torch.finfo:
    return torch.finfo(next(d.torch for d in DTYPES.values() if d.cutlass == dsl_type.__name__))


def saturating_add(a, b):
    """Clamps to the type's range instead of wrapping."""
    t = a.dtype
    wide = a.to(cutlass.Int64) + b.to(cutlass.Int64)
    wide = cute.where(wide > t.max, cute.full_like(wide, t.max), wide)
    wide = cute.where(wide < t.min, cute.full_like(wide, t.min), wide)
    return wide.to(t)


def zero_skipping_mul(a, b):
    """Stores +0 wherever a is zero, never reading b: loses -0 (and NaN from 0 * inf)."""
    return cute.where(a == 0, cute.full_like(a, 0), a * b)


def flushing_add(a, b):
    """Flushes subnormal results to zero (keeping the sign, as hardware FTZ does)."""
    r = a + b
    return cute.where(abs(r) < a.dtype(_finfo(a.dtype).tiny), r * cute.full_like(r, 0), r)


def nan_to_zero_add(a, b):
    """Turns NaN results into 0."""
    r = a + b
    return cute.where(r == r, r, cute.full_like(r, 0))


def inf_to_max_add(a, b):
    """Clamps infinite results to the largest finite value."""
    r = a + b
    big, inf = a.dtype(_finfo(a.dtype).max), a.dtype(float("inf"))
    r = cute.where(r == inf, cute.full_like(r, big), r)
    return cute.where(r == -inf, cute.full_like(r, -big), r)


def truncating_add(a, b):
    """Adds in fp32 and narrows by truncation (round toward zero) instead of to nearest even."""
    wide = a.to(cutlass.Float32) + b.to(cutlass.Float32)
    keep = ~((1 << HALF_PRECISION_DROP[a.dtype.__name__]) - 1)
    truncated = (wide.bitcast(cutlass.Int32) & keep).bitcast(cutlass.Float32)
    return truncated.reshape(wide.shape).to(a.dtype)


@dataclass(frozen=True)
class Planted:
    """A wrong stage, the dtypes it is wrong on, and the value class its mismatch must name."""

    stage: Stage
    dtypes: tuple[str, ...]
    caught_as: str


def _planted(name: str, wrong: Callable, right: Callable, dtypes: tuple[str, ...], caught_as: str) -> Planted:
    op = Op(right.__name__, wrong, right)
    return Planted(dataclasses.replace(STAGES["predicated"], name=f"planted_{name}", op=op), dtypes, caught_as)


FLOATS = ("fp16", "bf16", "fp32", "fp64")

PLANTED = (
    _planted("saturating_add", saturating_add, operator.add, ("i8", "i32", "u8"), "overflow"),
    _planted("zero_skipping_mul", zero_skipping_mul, operator.mul, FLOATS, "signed zero"),
    _planted("flushing_add", flushing_add, operator.add, FLOATS, "subnormal"),
    _planted("nan_to_zero_add", nan_to_zero_add, operator.add, FLOATS, "nan"),
    _planted("inf_to_max_add", inf_to_max_add, operator.add, FLOATS, "inf"),
    _planted("truncating_add", truncating_add, operator.add, ("fp16", "bf16"), "rounding tie"),
)
