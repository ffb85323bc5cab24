"""Only for the optional compiled FTDC kernel; all other metadata is in pyproject.toml.

optional=True: where no C compiler is found the install goes on, and ckptdiag uses the numpy
decoder instead (same results, about half the speed).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("ckptdiag._ftdc_kernel", ["ckptdiag/_ftdc_kernel.c"], optional=True)])
