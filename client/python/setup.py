"""pip install client/python: the package, with its gRPC stubs generated from proto/ at build time
(generate_stubs.py). Offline: build it with Debian's setuptools (--no-build-isolation)."""
import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import generate_stubs  # noqa: E402


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        generate_stubs.generate(self.build_lib)


setup(cmdclass={"build_py": BuildWithStubs})
