"""Lets the examples run from a source checkout: `import ukes` finds an installed package
(`pip install client/python`), else the build's copy in build/python (README.md, "From Python")."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
if importlib.util.find_spec("ukes") is None:
    sys.path.insert(0, str(ROOT / "build/python"))
# The server the examples start when not given --server: this checkout's build (ukes.local's
# find_server looks further when it is absent).
SERVER = ROOT / "build/ukes-server"
