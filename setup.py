"""Build glue: the cffi extension modules under native/ (see native/README.md)."""
from setuptools import setup

setup(cffi_modules=["native/build_aql.py:ffibuilder"])
