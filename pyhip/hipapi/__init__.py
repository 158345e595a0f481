"""One implementation of each HIP call, by domain: plain values in, results out, HipError raised, every HIP rule
and check written once. The two faces are marshalling over it: ``pyhip.hip`` (hip-python's ``(err, value)``
tuples and enum members) and ``pyhip.capi`` (C pointers, out-parameters, error codes). It sits above
``pyhip.runtime`` and below both faces; it never imports either face."""
from ..errors import HipError, hipError_t


def invalid(msg: str) -> HipError:
    """hipErrorInvalidValue, the code of most argument checks."""
    return HipError(hipError_t.hipErrorInvalidValue, msg)
