"""pyhip's own AQL core: byte-exact HSA packets, queues with native atomics, signals, packet processors."""
from .packets import (AGENT_CALLBACK, AGENT_COPY, AGENT_FILL, AgentDispatchPacket, BarrierPacket,
                      BarrierValuePacket, KernelDispatchPacket, header)
from .processor import Fault, PacketProcessor
from .queue import Queue, QueueFullTimeout
from .signal import COND_EQ, COND_GTE, COND_LT, COND_NE, Signal, SignalPool

__all__ = ["AGENT_CALLBACK", "AGENT_COPY", "AGENT_FILL", "AgentDispatchPacket", "BarrierPacket",
           "BarrierValuePacket", "KernelDispatchPacket", "header", "Fault", "PacketProcessor", "Queue",
           "QueueFullTimeout", "COND_EQ", "COND_GTE", "COND_LT", "COND_NE", "Signal", "SignalPool"]
