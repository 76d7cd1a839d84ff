"""DSL edits that change one operation's meaning, planted in a child pytest (``-p
tests.plants.semantics_edits``) the way an edited source file would change it: no file of the
install changes, so its RECORD check passes, and only the semantics family can see them.

- ``%`` on TensorSSA takes the sign of the divisor (Python's rule) instead of the dividend's;
- ``cute.math.exp2`` computes ``exp``;
- ``.to()`` from a wider signed integer to a narrower one saturates instead of wrapping.
"""

import operator


def _plant() -> None:
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.tensor import TensorSSA

    def python_mod(self, other, *, loc=None, ip=None):
        return self - self._apply_op(operator.floordiv, other, loc=loc, ip=ip) * other

    original_to = TensorSSA.to

    def saturating_to(self, dtype, *, loc=None, ip=None):
        src = self.dtype
        if (issubclass(src, cutlass.Integer) and issubclass(dtype, cutlass.Integer) and src.signed and dtype.signed
                and dtype.width < src.width):
            high, low = 2 ** (dtype.width - 1) - 1, -(2 ** (dtype.width - 1))
            self = cute.where(self > high, cute.full_like(self, high), self)
            self = cute.where(self < low, cute.full_like(self, low), self)
        return original_to(self, dtype, loc=loc, ip=ip)

    TensorSSA.__mod__ = python_mod
    TensorSSA.to = saturating_to
    cute.math.exp2 = cute.math.exp


def pytest_configure(config) -> None:
    _plant()
