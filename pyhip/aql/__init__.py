"""pyhip's own AQL core: byte-exact HSA packets, queues with native atomics, signals, packet processors.

Layouts: docs/code-object.md §8.  Native half: native/aql_atomics.c (module pyhip._native_aql)."""
from .agent import Agent, NullAgent
from .packets import (AGENT_CALLBACK, AGENT_COPY, AGENT_FILL, AGENT_HOST_COPY, AGENT_NOP, FENCE_AGENT, FENCE_NONE, FENCE_SYSTEM,
                      TYPE_AGENT_DISPATCH, TYPE_BARRIER_AND, TYPE_BARRIER_OR, TYPE_INVALID, TYPE_KERNEL_DISPATCH,
                      TYPE_VENDOR, AgentDispatchPacket, BarrierPacket, BarrierValuePacket, KernelDispatchPacket,
                      decode, header, header_fields)
from .processor import Aborted, Fault, PacketError, PacketProcessor
from .queue import Queue, QueueClosed, QueueFullTimeout
from .signal import (COND_EQ, COND_GTE, COND_LT, COND_NE, ERROR_ABORTED, ERROR_EXCEPTION, ERROR_INVALID_PACKET,
                     ERROR_INVALID_SIGNAL, Signal, SignalPool, wait_multi)

__all__ = ["Agent", "NullAgent", "AGENT_CALLBACK", "AGENT_COPY", "AGENT_FILL", "AGENT_HOST_COPY", "AGENT_NOP", "FENCE_AGENT",
           "FENCE_NONE", "FENCE_SYSTEM", "TYPE_AGENT_DISPATCH", "TYPE_BARRIER_AND", "TYPE_BARRIER_OR",
           "TYPE_INVALID", "TYPE_KERNEL_DISPATCH", "TYPE_VENDOR", "AgentDispatchPacket", "BarrierPacket",
           "BarrierValuePacket", "KernelDispatchPacket", "decode", "header", "header_fields", "Aborted", "Fault",
           "PacketError", "PacketProcessor", "Queue", "QueueClosed", "QueueFullTimeout", "COND_EQ", "COND_GTE",
           "COND_LT", "COND_NE", "ERROR_ABORTED", "ERROR_EXCEPTION", "ERROR_INVALID_PACKET", "ERROR_INVALID_SIGNAL",
           "Signal", "SignalPool", "wait_multi"]
