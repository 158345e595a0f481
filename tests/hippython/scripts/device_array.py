"""hip-python style: device arrays from hipMalloc, configure(), contiguous sub-arrays, CUDA array interface."""
import ctypes

import numpy as np

from pyhip import hip


def hip_check(call_result):
    err = call_result[0]
    result = call_result[1:]
    if len(result) == 1:
        result = result[0]
    if isinstance(err, hip.hipError_t) and err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    return result


rng = np.random.default_rng(7)
shape = (5, 37)
x_h = rng.standard_normal(shape).astype("float32")
num_bytes = x_h.size * x_h.itemsize
x_d = hip_check(hip.hipMalloc(num_bytes)).configure(typestr="float32", shape=shape)
assert x_d.itemsize == 4 and x_d.size == x_h.size and x_d.shape == shape
cai = x_d.__cuda_array_interface__
assert cai["data"][0] == int(x_d) and cai["typestr"] == "float32" and cai["version"] == 3
hip_check(hip.hipMemcpy(x_d, x_h, num_bytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))

# rows are contiguous sub-arrays: overwrite each with its own value and read everything back
expected = x_h.copy()
for r in range(shape[0]):
    row = x_d[r, :]
    assert row.size == shape[1] and int(row) == int(x_d) + r * shape[1] * 4
    vals = np.full(row.size, r * 10.0 + 0.5, dtype=np.float32)
    hip_check(hip.hipMemcpy(row, vals, vals.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    expected[r, :] = vals
tail = x_d[2, 30:]                                  # a slice of one row
assert tail.size == 7 and int(tail) == int(x_d) + (2 * 37 + 30) * 4
hip_check(hip.hipMemsetD32(tail, 0, tail.size))
expected[2, 30:] = 0
try:
    x_d[:, 3]                                       # a column is not contiguous
    raise AssertionError("column view accepted")
except ValueError:
    pass
out = np.empty_like(x_h)
hip_check(hip.hipMemcpy(out, x_d, num_bytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert np.array_equal(out, expected)

# a contradicting kind and hipMemcpyDefault: ROCm takes the direction from the pointers
back = np.zeros_like(x_h)
hip_check(hip.hipMemcpy(back, x_d, num_bytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
assert np.array_equal(back, expected)
y_d = hip_check(hip.hipMalloc(num_bytes))
hip_check(hip.hipMemcpy(y_d, x_d, num_bytes, hip.hipMemcpyKind.hipMemcpyDefault))
back[:] = 0
hip_check(hip.hipMemcpy(back, y_d, num_bytes, hip.hipMemcpyKind.hipMemcpyDefault))
assert np.array_equal(back, expected)

# host pointers in every form hip-python accepts: ctypes arrays, addresses, c_void_p
arr = (ctypes.c_float * 4)()
hip_check(hip.hipMemcpy(arr, x_d, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert list(arr) == list(expected.ravel()[:4])
dst = np.zeros(4, np.float32)
hip_check(hip.hipMemcpy(ctypes.c_void_p(dst.ctypes.data), x_d[1, :], 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert np.array_equal(dst, expected[1, :4])

stream = hip_check(hip.hipStreamCreate())
hip_check(hip.hipMemsetAsync(y_d, 0, num_bytes, stream))
hip_check(hip.hipMemcpyAsync(back, y_d, num_bytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost, stream))
hip_check(hip.hipStreamSynchronize(stream))
assert not back.any()
hip_check(hip.hipStreamDestroy(stream))
hip_check(hip.hipFree(x_d))
hip_check(hip.hipFree(y_d))
print("ok")
