"""Only for the optional compiled kernels; all other metadata is in pyproject.toml.

optional=True: where no C compiler is found the install goes on, and ckptdiag uses its Python
paths instead (same results, slower): the numpy FTDC decoder (about half the speed), a JSON
parse of every recording line, and serverStatus replies read as lazy documents.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("ckptdiag._ftdc_kernel", ["ckptdiag/_ftdc_kernel.c"], optional=True),
        Extension("ckptdiag._jsonl", ["ckptdiag/_jsonl.c"], optional=True),
        Extension("ckptdiag._bsonpick", ["ckptdiag/_bsonpick.c"], optional=True),
        # not a Python module: the lab's model disk, preloaded into `lab serve` (lab/modeldisk.py)
        Extension("ckptdiag.lab._slowdisk", ["ckptdiag/lab/_slowdisk.c"], optional=True, libraries=["dl", "pthread"]),
    ]
)
