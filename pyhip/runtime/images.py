"""HIP arrays on an emulated device: formats, storage, image resource descriptors (in the layout of the
device's generation, ``image_desc.image_words``), and copies to and from arrays (in stream order).

Formats follow HIP 5.2's runtime (hipamd's hip_conversions + ROCr's GFX9 image format table): a HIP array
format and channel count (1, 2 or 4) pick an HSA channel type/order, which picks the GFX9 IMG data format,
number format and component swizzle.  Arrays are linear (SW_MODE 0): rows padded to 256 bytes, slices
rows x pitch, allocated from the device's memory (256-byte aligned, as the T# base requires).  The
12-dword image object HIP 5.2 hands to kernels is the 8-dword T# plus the HSA channel type, channel order
and width (dwords 8-10, read by the device library's surface and sampling code).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import numpy as np

from .._hip_enums import hipArray_Format as AF
from ..emu import image_desc as D
from ..errors import HipError, hipError_t
from .backend import owner_of

INVALID, NOT_SUPPORTED = hipError_t.hipErrorInvalidValue, hipError_t.hipErrorNotSupported
ROW_ALIGN = 256
hipArrayDefault, hipArrayLayered, hipArraySurfaceLoadStore, hipArrayCubemap, hipArrayTextureGather = 0, 1, 2, 4, 8

# HIP array format -> (bits per channel, kind: 'u' | 's' | 'f')
ARRAY_FORMATS = {AF.HIP_AD_FORMAT_UNSIGNED_INT8: (8, "u"), AF.HIP_AD_FORMAT_UNSIGNED_INT16: (16, "u"),
                 AF.HIP_AD_FORMAT_UNSIGNED_INT32: (32, "u"), AF.HIP_AD_FORMAT_SIGNED_INT8: (8, "s"),
                 AF.HIP_AD_FORMAT_SIGNED_INT16: (16, "s"), AF.HIP_AD_FORMAT_SIGNED_INT32: (32, "s"),
                 AF.HIP_AD_FORMAT_HALF: (16, "f"), AF.HIP_AD_FORMAT_FLOAT: (32, "f")}
# HSA_EXT_IMAGE_CHANNEL_TYPE_* and _ORDER_* (the values device code reads back from dwords 8 and 9)
HSA_TYPE = {"snorm8": 0, "snorm16": 1, "unorm8": 2, "unorm16": 3, "sint8": 8, "sint16": 9, "sint32": 10,
            "uint8": 11, "uint16": 12, "uint32": 13, "half": 14, "float": 15}
HSA_ORDER_R, HSA_ORDER_RG, HSA_ORDER_RGBA, HSA_ORDER_SRGBA = 1, 3, 8, 14
_SWIZZLE = {HSA_ORDER_R: (D.SEL_X, D.SEL_0, D.SEL_0, D.SEL_1), HSA_ORDER_RG: (D.SEL_X, D.SEL_Y, D.SEL_0, D.SEL_1),
            HSA_ORDER_RGBA: (D.SEL_X, D.SEL_Y, D.SEL_Z, D.SEL_W), HSA_ORDER_SRGBA: (D.SEL_X, D.SEL_Y, D.SEL_Z, D.SEL_W)}
_NUM_FORMAT = {"snorm": D.SNORM, "unorm": D.UNORM, "sint": D.SINT, "uint": D.UINT, "half": D.FLOAT, "float": D.FLOAT}
# GFX9 dimension limits (ROCr's GFX9 image table; the T# fields hold 14-bit sizes and 13-bit depth/slices)
MAX_1D, MAX_2D, MAX_3D, MAX_LAYERS = 16384, (16384, 16384), (16384, 16384, 8192), 8192
MAX_1D_LINEAR = 1 << 27            # elements of a linear (buffer) texture


@dataclass(frozen=True)
class Format:
    """An element format as HIP 5.2 maps it: ``read_normalized`` turns 8/16-bit integers into UNORM/SNORM."""
    array_format: int
    channels: int
    read_normalized: bool = False
    srgb: bool = False

    def __post_init__(self):
        if self.array_format not in ARRAY_FORMATS:
            raise HipError(INVALID, f"invalid array format {self.array_format}")
        if self.channels not in (1, 2, 4):
            raise HipError(INVALID, f"{self.channels} channels: HIP arrays have 1, 2 or 4")

    @property
    def bits(self) -> int:
        return ARRAY_FORMATS[self.array_format][0]

    @property
    def kind(self) -> str:
        return ARRAY_FORMATS[self.array_format][1]

    @property
    def element_size(self) -> int:
        return self.bits // 8 * self.channels

    @property
    def hsa_type(self) -> int:
        bits, kind = self.bits, self.kind
        if kind == "f":
            return HSA_TYPE["half" if bits == 16 else "float"]
        if self.read_normalized and bits < 32:
            return HSA_TYPE[("unorm" if kind == "u" else "snorm") + str(bits)]
        return HSA_TYPE[("uint" if kind == "u" else "sint") + str(bits)]

    @property
    def hsa_order(self) -> int:
        return {1: HSA_ORDER_R, 2: HSA_ORDER_RG, 4: HSA_ORDER_SRGBA if self.srgb else HSA_ORDER_RGBA}[self.channels]

    def img_format(self) -> tuple[int, int, tuple]:
        """(IMG data format, number format, DST_SEL) for the T#."""
        name = {v: k for k, v in HSA_TYPE.items()}[self.hsa_type]
        kind = name.rstrip("0123456789")
        if self.srgb:
            if self.hsa_type != HSA_TYPE["unorm8"] or self.channels != 4:
                raise HipError(INVALID, "sRGB needs 4-channel 8-bit data read as normalized floats")
            nfmt = D.SRGB
        else:
            nfmt = _NUM_FORMAT[kind]
        dfmt = {(8, 1): 1, (16, 1): 2, (8, 2): 3, (32, 1): 4, (16, 2): 5, (8, 4): 10, (32, 2): 11, (16, 4): 12,
                (32, 4): 14}[(self.bits, self.channels)]
        return dfmt, nfmt, _SWIZZLE[self.hsa_order]

    def buffer_format(self) -> tuple[int, int]:
        """(BUF_DATA_FORMAT, BUF_NUM_FORMAT) of a linear texture's V# (the same codes, 4 and 3 bits)."""
        dfmt, nfmt, _ = self.img_format()
        return dfmt, nfmt


def format_for_channel_desc(x: int, y: int, z: int, w: int, f: int) -> Format:
    """HIP 5.2's hipChannelFormatDesc -> array format rules (CheckArrayFormat, getArrayFormat)."""
    bits = [b for b in (x, y, z, w)]
    if x == 0 or any(b not in (0, x) for b in bits[1:]):
        raise HipError(INVALID, f"channel widths ({x}, {y}, {z}, {w}) must all be equal")
    n = sum(1 for b in bits if b)
    table = {(0, 8): AF.HIP_AD_FORMAT_SIGNED_INT8, (0, 16): AF.HIP_AD_FORMAT_SIGNED_INT16,
             (0, 32): AF.HIP_AD_FORMAT_SIGNED_INT32, (1, 8): AF.HIP_AD_FORMAT_UNSIGNED_INT8,
             (1, 16): AF.HIP_AD_FORMAT_UNSIGNED_INT16, (1, 32): AF.HIP_AD_FORMAT_UNSIGNED_INT32,
             (2, 16): AF.HIP_AD_FORMAT_HALF, (2, 32): AF.HIP_AD_FORMAT_FLOAT}
    if (int(f), x) not in table:
        raise HipError(INVALID, f"no array format for {x}-bit channels of kind {int(f)}")
    if n == 3:
        raise HipError(INVALID, "3-channel formats are not supported (HIP arrays have 1, 2 or 4 channels)")
    return Format(table[(int(f), x)], n)


def channel_desc_of(fmt: Format) -> tuple:
    """(x, y, z, w, kind) of an array format (hipChannelFormatKindSigned 0 / Unsigned 1 / Float 2)."""
    bits = [fmt.bits if i < fmt.channels else 0 for i in range(4)]
    return (*bits, {"s": 0, "u": 1, "f": 2}[fmt.kind])


def require_images(device) -> None:
    if not device.props.maxTexture1D:
        raise HipError(NOT_SUPPORTED, f"{device.isa.processor} has no image instructions: textures, surfaces "
                                      f"and arrays are not supported on this device")


# ---- arrays ----------------------------------------------------------------------------------------------------
def array_kind(width: int, height: int, depth: int, flags: int) -> str:
    if flags & ~(hipArrayLayered | hipArraySurfaceLoadStore | hipArrayCubemap | hipArrayTextureGather):
        raise HipError(INVALID, f"invalid array flags 0x{flags:x}")
    if flags & (hipArrayCubemap | hipArrayTextureGather):
        # a description that could never be valid is an invalid value before it is an unsupported kind
        cube = flags & hipArrayCubemap
        if not width or not height or max(width, height) > 16384 or \
                (cube and (width != height or not depth or depth % 6 or (depth != 6 and not flags & hipArrayLayered))):
            raise HipError(INVALID, f"no array of extent ({width}, {height}, {depth}) with flags 0x{flags:x}")
        raise HipError(NOT_SUPPORTED, "cube map and texture gather arrays are not supported (as in HIP 5.2)")
    layered = bool(flags & hipArrayLayered)
    if width and not height and not depth and not layered:
        return "1d"
    if width and height and not depth and not layered:
        return "2d"
    if width and height and depth and not layered:
        return "3d"
    if width and not height and depth and layered:
        return "1da"
    if width and height and depth and layered:
        return "2da"
    raise HipError(INVALID, f"no array of extent ({width}, {height}, {depth}) with flags 0x{flags:x}")


@dataclass(eq=False)
class ImageArray:
    """A HIP array's storage: linear, rows of ``row_bytes``, ``slices`` slices of ``rows`` rows."""
    device: object
    fmt: Format
    width: int
    height: int                    # as given (0 for 1-D kinds)
    depth: int                     # as given (3D depth or layer count; 0 otherwise)
    flags: int
    kind: str
    addr: int = 0
    row_bytes: int = 0
    owner: object = None           # the mipmapped array a level belongs to
    handle: object = field(default=None, repr=False)      # the API layer's hipArray struct

    @property
    def rows(self) -> int:
        return max(self.height, 1) if self.kind in ("2d", "3d", "2da") else 1

    @property
    def slices(self) -> int:
        return max(self.depth, 1) if self.kind in ("3d", "1da", "2da") else 1

    @property
    def slice_bytes(self) -> int:
        return self.row_bytes * self.rows

    @property
    def size(self) -> int:
        return self.slice_bytes * self.slices

    @property
    def pitch(self) -> int:
        return self.row_bytes // self.fmt.element_size

    def descriptor(self, fmt: Format | None = None) -> list[int]:
        """The 12-dword image object (T# + HSA type, order, width) for this array read as ``fmt``."""
        fmt = fmt or self.fmt
        if fmt.element_size != self.fmt.element_size:
            raise HipError(INVALID, "a view format must have the array's element size")
        dfmt, nfmt, sel = fmt.img_format()
        typ = {"1d": D.IMG_1D, "2d": D.IMG_2D, "3d": D.IMG_3D, "1da": D.IMG_1D_ARRAY, "2da": D.IMG_2D_ARRAY}[self.kind]
        words = D.image_words(D.generation(self.device.isa.processor), base=self.addr, data_format=dfmt,
                              num_format=nfmt, width=self.width, height=self.rows, depth=self.slices,
                              pitch=self.pitch, type=typ, dst_sel=sel)
        return words + [fmt.hsa_type, fmt.hsa_order, self.width, 0]


def create_array(device, fmt: Format, width: int, height: int, depth: int, flags: int = 0) -> ImageArray:
    require_images(device)
    width, height, depth, flags = int(width), int(height), int(depth), int(flags)
    kind = array_kind(width, height, depth, flags)
    limits = {"1d": (MAX_1D, 1, 1), "2d": (*MAX_2D, 1), "3d": MAX_3D, "1da": (MAX_1D, 1, MAX_LAYERS),
              "2da": (*MAX_2D, MAX_LAYERS)}[kind]
    if width > limits[0] or max(height, 1) > limits[1] or max(depth, 1) > limits[2]:
        raise HipError(INVALID, f"array extent ({width}, {height}, {depth}) exceeds the device's limits {limits}")
    a = ImageArray(device, fmt, width, height, depth, flags, kind)
    a.row_bytes = -(-width * fmt.element_size // ROW_ALIGN) * ROW_ALIGN
    a.addr = device.backend.alloc(a.size)
    device.backend.zero_fresh(a.addr, a.size)
    return a


def destroy_array(a: ImageArray) -> None:
    if not a.addr:
        raise HipError(INVALID, "array was already freed")
    a.device.synchronize_quietly()
    a.device.backend.free(a.addr)
    a.addr = 0


def mip_levels(width: int, height: int, depth: int) -> int:
    return max(width, height, depth, 1).bit_length()


# ---- copies ----------------------------------------------------------------------------------------------------
@dataclass
class Endpoint:
    """One side of a 3-D copy: an array, device memory (``addr``), or host memory (``addr`` raw or ``buf``)."""
    array: ImageArray | None = None
    addr: int | None = None
    buf: object = None
    pitch: int = 0                 # bytes per row (memory endpoints)
    height: int = 0                # rows per slice (memory endpoints; 0: one slice)
    x: int = 0                     # byte offset in the row
    y: int = 0
    z: int = 0


def _np_view(ep: Endpoint, width: int, height: int, depth: int, writable: bool, devices):
    """(depth, height, width) uint8 view of the copied region; validates it first (``devices``: those whose
    memory an address may be in)."""
    if ep.array is not None:
        a = ep.array
        if not a.addr:
            raise HipError(INVALID, "array was freed")
        if ep.x + width > a.width * a.fmt.element_size or ep.y + height > a.rows or ep.z + depth > a.slices:
            raise HipError(INVALID, f"copy region ({ep.x}+{width} bytes, {ep.y}+{height}, {ep.z}+{depth}) "
                                    f"outside the array ({a.width * a.fmt.element_size} bytes, {a.rows}, {a.slices})")
        start = a.addr + ep.z * a.slice_bytes + ep.y * a.row_bytes + ep.x
        pitch, slice_ = a.row_bytes, a.slice_bytes
        span = (depth - 1) * slice_ + (height - 1) * pitch + width
        mem = np.frombuffer(a.device.backend.host_view(start, span), np.uint8)
    else:
        pitch = ep.pitch or width
        if pitch < width:
            raise HipError(hipError_t.hipErrorInvalidPitchValue, f"pitch {pitch} < width {width} bytes")
        slice_ = pitch * (ep.height or height)
        offset = ep.z * slice_ + ep.y * pitch + ep.x
        span = (depth - 1) * slice_ + (height - 1) * pitch + width
        if ep.buf is not None:
            mv = memoryview(ep.buf).cast("B")
            if offset + span > mv.nbytes:
                raise HipError(INVALID, f"copy of {offset + span} bytes overruns a {mv.nbytes}-byte host buffer")
            if writable and mv.readonly:
                raise HipError(INVALID, "destination host buffer is read-only")
            mem = np.frombuffer(mv, np.uint8)[offset:offset + span]
        else:
            addr = int(ep.addr) + offset
            if not ep.addr:
                raise HipError(INVALID, "null pointer in a copy")
            dev = owner_of(devices, addr)
            if dev is not None:
                dev.backend.check_range(addr, span)
                mem = np.frombuffer(dev.backend.host_view(addr, span), np.uint8)
            else:
                mem = np.frombuffer((ctypes.c_ubyte * span).from_address(addr), np.uint8)
    return np.lib.stride_tricks.as_strided(mem, (depth, height, width), (slice_, pitch, 1), writeable=writable)


def _host_wrote(ep: Endpoint, devices) -> None:
    """After the host wrote into device memory through a view of it (the HSA backend flushes the GPU's HDP)."""
    if ep.array is not None:
        ep.array.device.backend.host_wrote(ep.array.addr, ep.array.slice_bytes * max(ep.array.slices, 1))
    elif ep.buf is None and ep.addr and (dev := owner_of(devices, int(ep.addr))) is not None:
        dev.backend.host_wrote(int(ep.addr), 1)


def copy_3d(rt, dst: Endpoint, src: Endpoint, width: int, height: int, depth: int, stream=None, sync=True) -> None:
    """Copy a ``width``-byte x ``height`` x ``depth`` region in the order of ``stream`` of runtime ``rt``."""
    width, height, depth = int(width), max(int(height), 1), max(int(depth), 1)
    if width == 0:
        return
    _np_view(src, width, height, depth, False, rt.devices)    # validate both sides before enqueueing
    _np_view(dst, width, height, depth, True, rt.devices)
    st = rt.resolve_stream(stream)

    def op():
        _np_view(dst, width, height, depth, True, rt.devices)[...] = _np_view(src, width, height, depth, False,
                                                                               rt.devices)
        _host_wrote(dst, rt.devices)
    cmd = st.host_op(op, "memcpy3d", keep=(src.buf, dst.buf))
    if sync:
        cmd.signal.wait(None)
        st.synchronize()
