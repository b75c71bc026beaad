"""A Python number as a JavaScript literal, for the reference scripts that write
torch's figures into TypeScript (torch_linspace.py, torch_floor_divide.py)."""
import math


def js_number(v):
    """An int as written, NaN and the infinities by their JS names, -0 told from 0, a float by repr (exact)."""
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return 'NaN'
    if math.isinf(v):
        return 'Infinity' if v > 0 else '-Infinity'
    if v == 0:
        return '-0' if math.copysign(1, v) < 0 else '0'
    return repr(float(v))
