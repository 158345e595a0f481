"""A process of tests/hip/test_ipc.py: reads commands on stdin, answers one line each on stdout.

Commands (handles travel as hex):
  open MEMHANDLE N            open the memory (N float32), answer 'ok'
  wait EVHANDLE               the stream waits for that IPC event
  double                      vadd_c(p, p, p, N) on the stream: p *= 2 in stream order
  record                      record this process's own IPC event on the stream, answer its handle
  read                        answer the N floats (after the stream's work) as hex
  close                       close the memory twice, answer both codes
  alloc N SEED                own memory: N random float32 (answer its handle)
  free                        free own memory, answer 'ok'
"""
import sys
from pathlib import Path

import numpy as np

import pyhip.hip as hip

BIN = Path(__file__).resolve().parents[1] / "fixtures" / "bin"


def ok(ret):
    if ret[0] != hip.hipError_t.hipSuccess:
        raise SystemExit(f"{ret!r}: {hip.last_exception()}")
    return ret[1] if len(ret) == 2 else None


def main():
    stream = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    kernel = p = None
    n = 0
    for line in sys.stdin:
        cmd, *args = line.split()
        if cmd == "open":
            n = int(args[1])
            p = ok(hip.hipIpcOpenMemHandle(hip.hipIpcMemHandle_st.fromObj(bytearray.fromhex(args[0])), 0))
            answer = "ok"
        elif cmd == "wait":
            ev = ok(hip.hipIpcOpenEventHandle(hip.hipIpcEventHandle_st.fromObj(bytearray.fromhex(args[0]))))
            ok(hip.hipStreamWaitEvent(stream, ev, 0))
            answer = "ok"
        elif cmd == "double":
            if kernel is None:
                kernel = ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoad(BIN / "hipcc52/basic-gfx90a.hsaco")),
                                                     b"vadd_c"))
            ok(hip.hipModuleLaunchKernel(kernel, -(-n // 256), 1, 1, 256, 1, 1, 0, stream, [p, p, p, n], None))
            answer = "ok"
        elif cmd == "record":
            ev = ok(hip.hipEventCreateWithFlags(hip.hipEventInterprocess | hip.hipEventDisableTiming))
            ok(hip.hipEventRecord(ev, stream))
            handle = hip.hipIpcEventHandle_st()
            ok(hip.hipIpcGetEventHandle(handle, ev))
            answer = bytes(handle).hex()
        elif cmd == "read":
            out = np.zeros(n, dtype=np.float32)
            ok(hip.hipMemcpyAsync(out, p, out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost, stream))
            ok(hip.hipStreamSynchronize(stream))
            answer = out.tobytes().hex()
        elif cmd == "close":
            answer = " ".join(str(int(hip.hipIpcCloseMemHandle(p)[0])) for _ in range(2))
        elif cmd == "alloc":
            n = int(args[0])
            data = np.random.default_rng(int(args[1])).standard_normal(n).astype(np.float32)
            p = ok(hip.hipMalloc(data.nbytes))
            ok(hip.hipMemcpy(p, data, data.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
            answer = bytes(ok(hip.hipIpcGetMemHandle(p))).hex()
        elif cmd == "free":
            ok(hip.hipFree(p))
            answer = "ok"
        else:
            raise SystemExit(f"unknown command {cmd}")
        print(answer, flush=True)


if __name__ == "__main__":
    main()
