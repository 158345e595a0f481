"""The emulated devices' two device-side clocks, one table for both engines and the runtime's properties.

``s_memtime`` (HIP's ``clock64()``/``__clock64()``) counts shader-clock cycles: HIP 5.2's headers tell
programs to convert it with ``hipDeviceAttributeClockRate`` (the peak shader clock in kHz), so the
emulated counter runs at exactly that rate.  ``s_memrealtime`` (``wall_clock64()``) reads the constant
"real time" counter: 25 MHz on CDNA1/2 boards (the MI200 ISA guide, §8.2.5), 100 MHz on MI300 and RDNA;
later HIP reports it as ``hipDeviceAttributeWallClockRate``.  Both count from the host's monotonic
clock, so a kernel that spins until N cycles pass waits the wall time a real device would."""
from __future__ import annotations

# peak shader clock (MHz) of each emulated device model: hipDeviceProp_t.clockRate / 1000
CORE_MHZ = {"gfx90a": 1700, "gfx942": 2100, "gfx908": 1502, "gfx1100": 2500, "gfx1030": 2250}
DEFAULT_CORE_MHZ = 1500
# the constant-rate counter (kHz)
REALTIME_KHZ = {"gfx90a": 25000, "gfx908": 25000}
DEFAULT_REALTIME_KHZ = 100000


def core_khz(processor: str) -> int:
    return CORE_MHZ.get(processor, DEFAULT_CORE_MHZ) * 1000


def realtime_khz(processor: str) -> int:
    return REALTIME_KHZ.get(processor, DEFAULT_REALTIME_KHZ)


def counter_khz(mnemonic: str, processor: str) -> int:
    """The rate of the counter ``s_memtime`` / ``s_memrealtime`` reads on ``processor``."""
    return realtime_khz(processor) if mnemonic == "s_memrealtime" else core_khz(processor)


def ticks(ns: int, khz: int) -> int:
    """Counter value after ``ns`` nanoseconds at ``khz``."""
    return ns * khz // 1_000_000
