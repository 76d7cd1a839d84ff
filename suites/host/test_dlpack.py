"""DLPack interop from the framework-integration page: ``from_dlpack``, implicit conversion,
``assumed_align``, and every ``mark_layout_dynamic`` / ``mark_compact_shape_dynamic`` example.

Layouts are read from ``str(tensor)`` (or the trace's ``print`` for tensors inside a JIT
function). Since 4.3 the DSL tags dynamic strides with their width, ``?{i64}`` and
``?{i64 div=N}``, where the page shows ``?`` and ``?{div=N}``; ``_as_doc`` maps the former to the
latter for comparisons with the page only, and ``printed`` pins a few exact strings so a change
in the printing is caught too. Error messages end with a full stop the page leaves out, so the
page's text is matched as a substring. Where releases legitimately differ, the expectation is
the release's own (``fixtures.cases.releases.by_release``), keyed by the release that changed it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable

import _jit_examples as jx
import cutlass
import cutlass.cute as cute
import pytest
import torch
from cutlass.cute.runtime import from_dlpack

from fixtures.cases.releases import by_release
from fixtures.dsl import compat
from fixtures.dsl.capture import stdout_fd

pytestmark = pytest.mark.host


def doc_tensor(name: str) -> torch.Tensor:
    """The page's example tensors, built so that they have the layouts the page states."""
    if name == "a":  # (8,4,16,2):(2,16,64,1)
        return torch.empty(16, 4, 8, 2).permute(2, 1, 0, 3)
    if name == "b":
        # The page builds torch.empty(32, 1, 1, 1, 4).permute(3, 4, 1, 0, 2), (1,4,1,32,1) with
        # strides (4,1,4,4,4), and relies on torch's DLPack export canonicalising size-1 strides
        # to 1: (1,4,1,32,1):(1,1,1,4,1). torch 2.13 keeps them (test_torch_export_keeps_size1_strides),
        # so the canonical tensor is built directly.
        return torch.empty_strided((1, 4, 1, 32, 1), (1, 1, 1, 4, 1))
    if name == "c":  # (2,2):(8,2)
        return torch.empty(3, 4)[::2, ::2]
    if name == "d":  # (3,4,2,5):(5,0,0,1)
        return torch.empty(3, 1, 1, 5).expand(3, 4, 2, 5)
    if name == "ones111":  # (1,1,1):(1,1,1), from the page's later revision
        return torch.ones(1, 1, 1)
    raise KeyError(name)


DOC_LAYOUTS = (
    ("a", "(8,4,16,2):(2,16,64,1)"),
    ("b", "(1,4,1,32,1):(1,1,1,4,1)"),
    ("c", "(2,2):(8,2)"),
    ("d", "(3,4,2,5):(5,0,0,1)"),
)


@dataclass(frozen=True)
class Case:
    id: str
    tensor: str
    mark: Callable
    layout: str | None = None  # the page's printed layout, for a call that succeeds
    error: str | None = None  # the page's error text, for a call that raises
    printed: str | None = None  # the exact layout string the installed release prints, where pinned
    xfail: str | None = None  # what the installed release does instead, where it departs from the page


def _compact(*marks: dict) -> Callable:
    """Chain ``mark_compact_shape_dynamic`` calls, one per keyword dict (a value that is a
    function is called first: what it needs is computed in the test, not at collection)."""

    def apply(t):
        for kwargs in marks:
            t = t.mark_compact_shape_dynamic(**{k: v() if callable(v) else v for k, v in kwargs.items()})
        return t

    return apply


def _layout_dynamic(**kwargs) -> Callable:
    return lambda t: t.mark_layout_dynamic(**kwargs)


T5_DEDUCED = "(?,?,?,?,?):(?{i64},1,?{i64},?{i64},?{i64})"
# 4.4 started deducing the leading dimension as the one stride-1 mode of size > 1 (the page's
# later revision); 4.3 refuses, as the page's first revision says
T5_DEDUCES = by_release({"4.3": False, "4.4": True})

MARK_LAYOUT_DYNAMIC = (
    Case("t0-deduced-leading-dim", "a", _layout_dynamic(), layout="(?,?,?,?):(?,?,?,1)",
         printed="(?,?,?,?):(?{i64},?{i64},?{i64},1)"),
    Case("t1-leading-dim-0", "b", _layout_dynamic(leading_dim=0), layout="(?,?,?,?,?):(1,?,?,?,?)"),
    Case("t2-leading-dim-2", "b", _layout_dynamic(leading_dim=2), layout="(?,?,?,?,?):(?,?,1,?,?)"),
    Case("t3-no-unit-stride", "c", _layout_dynamic(), layout="(?,?):(?,?)"),
    Case("t4-broadcast-strides-kept", "d", _layout_dynamic(), layout="(?,?,?,?):(?,0,0,1)",
         printed="(?,?,?,?):(?{i64},0,0,1)"),
    Case("t5-ambiguous-leading-dim", "b", _layout_dynamic(),
         error="Can't decude the leading dimension from layout, please specify the leading_dim explicitly",
         xfail=f"4.4 and later deduce leading_dim=1 (the one stride-1 mode of size > 1) and return {T5_DEDUCED}"
         if T5_DEDUCES else None),
    Case("t5-later-revision-deduces-dim-1", "b", _layout_dynamic(), layout="(?,?,?,?,?):(?,1,?,?,?)",
         printed=T5_DEDUCED, xfail=None if T5_DEDUCES else "4.3 predates the page's later revision: it refuses to deduce"),
    Case("t5-later-revision-no-size-gt-1", "ones111", _layout_dynamic(),
         error=by_release({
             "4.3": "Can't decude the leading dimension from layout, please specify the leading_dim explicitly",
             "4.4": "Can't deduce the leading dimension from layout (multiple dimensions have stride 1 "
                    "but none has size > 1)",
         })),
    Case("t6-leading-dim-not-unit-stride", "a", _layout_dynamic(leading_dim=1),
         error="Expected strides[leading_dim] == 1, but got 16"),
    Case("t7-leading-dim-not-unit-stride", "b", _layout_dynamic(leading_dim=3),
         error="Expected strides[leading_dim] == 1, but got 4"),
)  # fmt: skip

MARK_COMPACT_SHAPE_DYNAMIC = (
    Case("t0-mode-0", "a", _compact(dict(mode=0, divisibility=2)),
         layout="(?{div=2},4,16,2):(2,?{div=4},?{div=16},1)",
         printed="(?{div=2},4,16,2):(2,?{i64 div=4},?{i64 div=16},1)"),
    Case("t1-mode-1", "a", _compact(dict(mode=1, divisibility=2)),
         layout="(8,?{div=2},16,2):(2,16,?{div=32},1)"),
    Case("t2-chained", "a", _compact(dict(mode=1, divisibility=2), dict(mode=3, divisibility=2)),
         layout="(8,?{div=2},16,?{div=2}):(?{div=2},?{div=16},?{div=32},1)",
         printed="(8,?{div=2},16,?{div=2}):(?{i64 div=2},?{i64 div=16},?{i64 div=32},1)"),
    Case("t3-stride-order", "b", _compact(dict(mode=2, divisibility=1, stride_order=(3, 0, 2, 4, 1))),
         layout="(1,4,?,32,1):(0,1,4,?{div=4},0)",
         printed="(1,4,?,32,1):(0,1,4,?{i64 div=4},0)"),
    Case("t4-stride-order", "b", _compact(dict(mode=2, divisibility=1, stride_order=(2, 3, 4, 0, 1))),
         layout="(1,4,?,32,1):(0,1,128,4,0)"),
    Case("t5-order-differs-from-last", "a",
         _compact(dict(mode=1, divisibility=2), dict(mode=3, divisibility=2),
                  dict(mode=3, divisibility=5, stride_order=(0, 1, 2, 3))),
         error="The stride_order is not consistent with the last stride_order"),
    Case("t6-order-differs-from-deduced", "a", _compact(dict(mode=3, divisibility=5, stride_order=(0, 1, 2, 3))),
         error="The stride_order is not consistent with the deduced stride_order"),
    Case("t7-order-not-deducible", "b", _compact(dict(mode=0, divisibility=4)),
         error="The layout could not be deduced, please specify the stride_order explicitly"),
    Case("t8-mode-out-of-range", "b", _compact(dict(mode=30, divisibility=5, stride_order=(3, 0, 2, 4, 1))),
         error="Expected mode value to be in range [0, 5), but got 30"),
    Case("t9-order-missing-a-dim", "b", _compact(dict(mode=3, divisibility=5, stride_order=(2, 1, 2, 3, 4))),
         error="Expected stride_order to contain all the dimensions of the tensor, but it doesn't contain 0."),
    Case("t10-order-too-long", "b", _compact(dict(mode=3, divisibility=5, stride_order=(0, 1, 2, 3, 4, 5))),
         error="Expected stride_order to have 5 elements, but got 6."),
    Case("t11-shape-not-divisible", "b",
         # torch 2.11's dim_order() imports sympy: seconds in every worker's collection
         _compact(dict(mode=0, divisibility=4, stride_order=lambda: doc_tensor("b").dim_order())),
         error="The shape(1) of mode(0) is not divisible by the divisibility(4)"),
    Case("t12-order-inconsistent-with-layout", "b",
         _compact(dict(mode=0, divisibility=1, stride_order=(2, 1, 3, 0, 4))),
         error="The stride_order is not consistent with the layout"),
)  # fmt: skip


def _as_doc(layout: str) -> str:
    """Map 4.3+'s ``?{i64}`` / ``?{i64 div=N}`` to the page's ``?`` / ``?{div=N}``."""
    return re.sub(r"\?\{i64(?: (div=\d+))?\}", lambda m: f"?{{{m[1]}}}" if m[1] else "?", layout)


def _layout_of(tensor) -> str:
    """The layout part of ``Tensor<0x...@space o LAYOUT>``."""
    match = re.fullmatch(r"Tensor<0x[0-9a-f]{16}@\w+ o (.+)>", str(tensor))
    assert match, str(tensor)
    return match[1]


def _traced(arg) -> str:
    """What ``print(src)`` shows inside a JIT function traced with ``arg`` (nothing executes)."""
    with stdout_fd() as out:
        compat.compile_traced(jx.show, arg)
    return out.text.strip()


def _params(cases, want: str):
    chosen = [c for c in cases if getattr(c, want) is not None]
    return pytest.mark.parametrize(
        "case",
        [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c.xfail) if c.xfail else ()) for c in chosen],
        ids=[c.id for c in chosen],
    )


# --- from_dlpack ------------------------------------------------------------------------------


def test_from_dlpack_attributes() -> None:
    """shape, stride, element_type and memspace of a converted CPU tensor, as the page lists."""
    y = from_dlpack(torch.randn(30, 20))
    assert (y.shape, y.stride, y.element_type, y.memspace) == (
        (30, 20), (20, 1), cutlass.Float32, cute.AddressSpace.generic
    )  # fmt: skip
    # printed as its enum value (0) until 4.6, by name since
    assert str(y.memspace) == by_release({"4.3": "0", "4.6": "generic"})


def test_from_dlpack_str_format() -> None:
    """``Tensor<0x{data_ptr:016x}@generic o LAYOUT>`` with the tensor's own data pointer.

    The page renders the layout from Python tuples, ``(30, 20):(20, 1)``; 4.8 prints CuTe's
    ``(30,20):(20,1)``.
    """
    x = torch.randn(30, 20)
    assert str(from_dlpack(x)) == f"Tensor<0x{x.data_ptr():016x}@generic o (30,20):(20,1)>"


@pytest.mark.parametrize(("name", "layout"), DOC_LAYOUTS, ids=[n for n, _ in DOC_LAYOUTS])
def test_doc_tensor_has_documented_layout(name: str, layout: str) -> None:
    """The examples below assume these static layouts; check them before marking anything."""
    assert _layout_of(from_dlpack(doc_tensor(name))) == layout


def test_torch_export_keeps_size1_strides() -> None:
    """What torch's DLPack export gives for the page's permuted ``b``.

    Older torch canonicalised the strides of size-1 modes to 1, giving (1,1,1,4,1), the layout
    the page's ``b`` examples assume; torch 2.13 exports the tensor's own strides.
    """
    b = torch.empty(32, 1, 1, 1, 4).permute(3, 4, 1, 0, 2)
    assert from_dlpack(b).stride == (4, 1, 4, 4, 4)


# --- Implicit conversion and alignment --------------------------------------------------------


# CUTE_DSL_ENABLE_TVM_FFI on (with apache-tvm-ffi installed) routes every JIT call through TVM-FFI,
# whose argument converter refuses a torch.Tensor passed to an unannotated parameter, which the
# implicit conversion is (4.8.1, cute/_tvm_ffi_args_spec_converter.py: "Unsupported argument type:
# <class 'torch.Tensor'> for annotated type: None", which the DSL calls a bug of its own)
_TVM_FFI_ON = os.environ.get("CUTE_DSL_ENABLE_TVM_FFI", "").strip().lower() in ("1", "true", "yes", "on")
_UNDER_TVM_FFI = pytest.mark.xfail(
    _TVM_FFI_ON, strict=True, raises=Exception,
    reason="CUTE_DSL_ENABLE_TVM_FFI is on: the DSL's TVM-FFI argument converter refuses an implicitly converted "
    "torch.Tensor ('Unsupported argument type ... for annotated type: None'; seen on 4.8.1)")


@_UNDER_TVM_FFI
def test_implicit_conversion_layout_matches_doc() -> None:
    """A torch tensor passed straight to a JIT function gets a dynamic layout but its unit stride."""
    printed = _traced(torch.randn(30, 20, 32))
    assert _as_doc(printed.rpartition(" o ")[2].rstrip(">")) == "(?,?,?):(?,?,1)"


@_UNDER_TVM_FFI
def test_implicit_conversion_prints_exact_form() -> None:
    """The page shows ``ptr<f32, generic> o (?,?,?):(?,?,1)``; the DSL wraps it in ``tensor<...>``,
    and since 4.4 tags the dynamic strides of an implicitly converted tensor ``?{i64}``."""
    strides = by_release({"4.3": "(?,?,1)", "4.4": "(?{i64},?{i64},1)"})
    assert _traced(torch.randn(30, 20, 32)) == f"tensor<ptr<f32, generic> o (?,?,?):{strides}>"


@pytest.mark.parametrize(
    ("assumed_align", "pointer"),
    [(None, "ptr<f32, generic>"), (16, "ptr<f32, generic, align<16>>")],
    ids=["default", "align-16"],
)
def test_assumed_align_is_part_of_the_pointer_type(assumed_align, pointer) -> None:
    """``assumed_align`` shows in the traced pointer type; the default (the element's natural
    alignment, 4 bytes for f32) prints no ``align<>`` at all."""
    printed = _traced(from_dlpack(torch.randn(30, 20), assumed_align=assumed_align))
    assert printed == f"tensor<{pointer} o (30,20):(20,1)>"


# --- mark_layout_dynamic / mark_compact_shape_dynamic -----------------------------------------


@_params(MARK_LAYOUT_DYNAMIC, "layout")
def test_mark_layout_dynamic_layout(case: Case) -> None:
    """Shapes go dynamic; the leading dimension keeps stride 1 and broadcast strides keep 0."""
    assert _as_doc(_layout_of(case.mark(from_dlpack(doc_tensor(case.tensor))))) == case.layout


@_params(MARK_LAYOUT_DYNAMIC, "error")
def test_mark_layout_dynamic_error(case: Case) -> None:
    """A leading dimension that is ambiguous or not of stride 1 is refused."""
    with pytest.raises(RuntimeError, match=re.escape(case.error)):
        case.mark(from_dlpack(doc_tensor(case.tensor)))


@_params(MARK_COMPACT_SHAPE_DYNAMIC, "layout")
def test_mark_compact_shape_dynamic_layout(case: Case) -> None:
    """One shape mode goes dynamic with its divisibility; strides above it follow, size-1 strides go to 0."""
    assert _as_doc(_layout_of(case.mark(from_dlpack(doc_tensor(case.tensor))))) == case.layout


@_params(MARK_COMPACT_SHAPE_DYNAMIC, "error")
def test_mark_compact_shape_dynamic_error(case: Case) -> None:
    """Bad mode, stride_order or divisibility is refused with the page's message."""
    with pytest.raises(RuntimeError, match=re.escape(case.error)):
        case.mark(from_dlpack(doc_tensor(case.tensor)))


@_params(MARK_LAYOUT_DYNAMIC + MARK_COMPACT_SHAPE_DYNAMIC, "printed")
def test_marked_layout_prints_exact_form(case: Case) -> None:
    """The exact text, width tags included, so a change in the printing is caught."""
    assert _layout_of(case.mark(from_dlpack(doc_tensor(case.tensor)))) == case.printed
