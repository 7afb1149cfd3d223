"""Build the optional compiled kernel ``privevo._lowd`` (project metadata: pyproject.toml).

The extension uses the Python C API only (no NumPy headers) and is optional:
if no C compiler is available the install still succeeds and privevo falls
back to its NumPy kernel.
"""

import sys

from setuptools import Extension, setup

ARGS = [] if sys.platform == "win32" else ["-O3", "-fno-strict-aliasing", "-ffp-contract=off"]

setup(
    ext_modules=[
        Extension(
            "privevo._lowd",
            sources=["src/privevo/_ext/lowd.c"],
            depends=["src/privevo/_ext/lowd_impl.h"],
            extra_compile_args=ARGS,
            optional=True,
        )
    ]
)
