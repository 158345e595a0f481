"""HIP error codes (``hipError_t`` from ROCm 5.2's ``hip_runtime_api.h``) and pyhip's exception types."""
from __future__ import annotations

from ._hip_enums import hipError_t  # generated from the HIP 5.2 header


def error_name(code: int) -> str:
    """``hipGetErrorName``: the enumerator name; unknown values give ``hipErrorUnknown`` (as ROCm 5.2)."""
    try:
        return hipError_t(int(code)).name
    except ValueError:
        return "hipErrorUnknown"


class HipError(Exception):
    """An error carrying a HIP error code.  ``api`` names the failing API call when there is one."""

    def __init__(self, code: int, message: str = "", api: str | None = None):
        self.code = hipError_t(int(code)) if int(code) in hipError_t._value2member_map_ else int(code)
        self.name = error_name(code)
        self.api = api
        self.message = message
        where = f"{api}: " if api else ""
        super().__init__(f"{where}{self.name} ({int(code)}){': ' + message if message else ''}")


    def with_api(self, api: str) -> "HipError":
        """Name the failing API (kept if already set) and refresh the message."""
        if self.api is None:
            self.api = api
            Exception.__init__(self, f"{api}: {self.args[0]}")
        return self


class LoaderError(HipError):
    """Raised by :mod:`pyhip.loader` for any malformed, unsupported or incompatible input."""

    def __init__(self, message: str, code: int = hipError_t.hipErrorInvalidImage):
        super().__init__(code, message)
