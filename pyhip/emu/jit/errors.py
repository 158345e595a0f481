"""The compiled engine's refusal: a kernel (or an instruction form) it cannot generate code for."""


class Unsupported(Exception):
    pass
