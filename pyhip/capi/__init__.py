"""The C ABI: pyhip as a drop-in ``libamdhip64.so.5`` (cffi embedding) and ``pyhip exec``."""
