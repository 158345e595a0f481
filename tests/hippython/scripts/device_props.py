"""hip-python style: fill-in structs, bytes fields, attributes, error names."""
from pyhip import hip


def hip_check(call_result):
    err = call_result[0]
    result = call_result[1:]
    if len(result) == 1:
        result = result[0]
    if isinstance(err, hip.hipError_t) and err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    return result


count = hip_check(hip.hipGetDeviceCount())
assert count >= 1
for dev in range(count):
    props = hip.hipDeviceProp_t()
    hip_check(hip.hipGetDeviceProperties(props, dev))
    values = {attrib: getattr(props, attrib) for attrib in props.PROPERTIES()}
    assert isinstance(props.name, bytes) and isinstance(props.gcnArchName, bytes)
    arch = props.gcnArchName.decode("utf-8").split(":")[0]
    assert arch.startswith("gfx") and (b"--offload-arch=" + props.gcnArchName).startswith(b"--offload-arch=gfx")
    A = hip.hipDeviceAttribute_t
    for attr, field in ((A.hipDeviceAttributeWarpSize, "warpSize"),
                        (A.hipDeviceAttributeMultiprocessorCount, "multiProcessorCount"),
                        (A.hipDeviceAttributeMaxThreadsPerBlock, "maxThreadsPerBlock"),
                        (A.hipDeviceAttributeMaxSharedMemoryPerBlock, "sharedMemPerBlock"),
                        (A.hipDeviceAttributeClockRate, "clockRate")):
        assert hip_check(hip.hipDeviceGetAttribute(attr, dev)) == values[field], field
    assert props.maxThreadsDim == [1024, 1024, 1024] and len(props.maxGridSize) == 3
    assert props.arch.hasDoubles == 1 and props.arch.hasWarpShuffle == 1
    # a second view of the same memory through its address sees the same bytes
    view = hip.hipDeviceProp_t.fromObj(int(props))
    assert view.totalGlobalMem == props.totalGlobalMem and view.name == props.name

assert str(hip_check(hip.hipGetErrorName(hip.hipError_t.hipErrorInvalidValue))) == "hipErrorInvalidValue"
assert hip.hipGetErrorString(hip.hipError_t.hipErrorNotReady)[1].decode() == "hipErrorNotReady"
assert hip_check(hip.hipRuntimeGetVersion()) == hip.HIP_VERSION
assert hip.ROCM_VERSION_TUPLE[0] == 5
block, grid = hip.dim3(x=32), hip.dim3(7)
assert (*grid, *block) == (7, 1, 1, 32, 1, 1)
print("ok")
