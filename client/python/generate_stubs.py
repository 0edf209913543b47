#!/usr/bin/python3
"""Generates the gRPC stubs of proto/ukes/v1/ukes.proto into OUT/ukes/v1/ with protoc and the gRPC
Python plugin (Debian: protobuf-compiler, protobuf-compiler-grpc). The package `ukes` then holds
them as its subpackage `ukes.v1`, which is what the generated modules import. Used by setup.py
(pip install) and by the CMake build (the tests' copy of the package); never edit the output.

    generate_stubs.py OUT [--proto-root DIR]
"""
import argparse
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_PROTO_ROOT = HERE.parent.parent / "proto"


def generate(out, proto_root=DEFAULT_PROTO_ROOT):
    out, proto_root = pathlib.Path(out), pathlib.Path(proto_root)
    plugin = shutil.which("grpc_python_plugin")
    protoc = shutil.which("protoc")
    if not plugin or not protoc:
        sys.exit("generate_stubs: needs protoc and grpc_python_plugin "
                 "(apt-get install protobuf-compiler protobuf-compiler-grpc)")
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([protoc, f"-I{proto_root}", f"--python_out={out}", f"--grpc_out={out}",
                    f"--plugin=protoc-gen-grpc={plugin}", "ukes/v1/ukes.proto"], check=True)
    (out / "ukes" / "v1" / "__init__.py").touch()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--proto-root", default=DEFAULT_PROTO_ROOT)
    a = p.parse_args()
    generate(a.out, a.proto_root)
