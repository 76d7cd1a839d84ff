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

from fixtures.cases import values
from fixtures.cases.dtypes import DTYPES, FLOAT_DTYPES, HALF_DTYPES, INTEGER_DTYPES
from fixtures.cases.ops import Op
from fixtures.cases.stages import BUILT_IN_STAGES, Stage
from fixtures.dsl.kernels import bind, predicated

OUTWARD = 1 + 2.0**-23  # one fp32 ulp up in relative terms: a halfway fp32 sum leaves the tie


def _info(dsl_type):
    """torch's finfo or iinfo of a DSL element type (the same in every DSL release)."""
    dtype = next(d.torch for d in DTYPES.values() if d.cutlass == dsl_type.__name__)
    return torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)


def saturating_add(a, b):
    """Clamps to the type's range instead of wrapping."""
    info = _info(a.dtype)
    wide = a.to(cutlass.Int64) + b.to(cutlass.Int64)
    wide = cute.where(wide > info.max, cute.full_like(wide, info.max), wide)
    wide = cute.where(wide < info.min, cute.full_like(wide, info.min), wide)
    return wide.to(a.dtype)


def zero_skipping_mul(a, b):
    """Stores +0 wherever a is zero, never reading b: loses -0 (and NaN from 0 * inf)."""
    return cute.where(a == 0, cute.full_like(a, 0), a * b)


def flushing_add(a, b):
    """Flushes subnormal results to zero (keeping the sign, as hardware FTZ does)."""
    r = a + b
    tiny = a.dtype(_info(a.dtype).tiny)
    return cute.where(r < tiny, cute.where(r > -tiny, r * cute.full_like(r, 0), r), r)


def nan_to_zero_add(a, b):
    """Turns NaN results into 0."""
    r = a + b
    return cute.where(r == r, r, cute.full_like(r, 0))


def inf_to_max_add(a, b):
    """Clamps infinite results to the largest finite value."""
    r = a + b
    big, inf = a.dtype(_info(a.dtype).max), a.dtype(float("inf"))
    r = cute.where(r == inf, cute.full_like(r, big), r)
    return cute.where(r == -inf, cute.full_like(r, -big), r)


def ties_away_add(a, b):
    """Adds in fp32 and narrows rounding halfway cases away from zero instead of to even:
    the sum is nudged one fp32 ulp outward first, so a tie is no longer one."""
    wide = (a.to(cutlass.Float32) + b.to(cutlass.Float32)) * cutlass.Float32(OUTWARD)
    return wide.to(a.dtype)


@dataclass(frozen=True)
class Planted:
    """A wrong stage, the dtypes it is wrong on, and the value class its mismatch must name."""

    stage: Stage
    dtypes: tuple[str, ...]
    caught_as: str


def _planted(name: str, wrong: Callable, right: Callable, dtypes: tuple[str, ...], caught_as: str) -> Planted:
    stage = dataclasses.replace(BUILT_IN_STAGES["predicated"], name=f"planted_{name}", op=Op(right.__name__, right))
    return Planted(bind(stage, predicated.predicated_apply, op=wrong), dtypes, caught_as)


FLOATS = FLOAT_DTYPES

PLANTED = (
    _planted("saturating_add", saturating_add, operator.add, INTEGER_DTYPES, values.OVERFLOW),
    _planted("zero_skipping_mul", zero_skipping_mul, operator.mul, FLOATS, values.SIGNED_ZERO),
    _planted("flushing_add", flushing_add, operator.add, FLOATS, values.SUBNORMAL),
    _planted("nan_to_zero_add", nan_to_zero_add, operator.add, FLOATS, values.NAN),
    _planted("inf_to_max_add", inf_to_max_add, operator.add, FLOATS, values.INF),
    _planted("ties_away_add", ties_away_add, operator.add, HALF_DTYPES, values.ROUNDING_TIE),
)
