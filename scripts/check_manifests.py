#!/usr/bin/python3
"""Checks the Kubernetes manifests of docs/kubernetes/ against the ukes-server they run, with what
Debian offers (PyYAML; no cluster): every document parses and has its apiVersion, kind and name;
every flag in the StatefulSet's args is one `ukes-server --help` lists; every file a flag names
lies under a mounted volume; the ports and the probes are the ones the flags open; the headless
Service selects the pods; the GPU is requested.

    /usr/bin/python3 scripts/check_manifests.py --server build/ukes-server [--dir docs/kubernetes]
"""
import argparse
import pathlib
import re
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILE_FLAGS = ("--tls-cert", "--tls-key", "--tls-client-ca", "--token-file")


def load(directory):
    docs = []
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                docs.append((path.name, doc))
    return docs


def flags_of(args):
    """{--flag: value} of args written --flag=value (or a bare --flag)."""
    out = {}
    for a in args:
        name, _, value = a.partition("=")
        out[name] = value
    return out


def check(docs, server_help):
    errors = []
    known = set(re.findall(r"(--[a-z][a-z0-9-]*)", server_help))
    for name, doc in docs:
        for key in ("apiVersion", "kind"):
            if key not in doc:
                errors.append(f"{name}: a document has no {key}")
        if not doc.get("metadata", {}).get("name"):
            errors.append(f"{name}: {doc.get('kind')} has no metadata.name")
    by_kind = {}
    for _, doc in docs:
        by_kind.setdefault(doc.get("kind"), []).append(doc)
    sets = by_kind.get("StatefulSet", [])
    if len(sets) != 1:
        return errors + [f"expected one StatefulSet, found {len(sets)}"]
    sts = sets[0]
    pod = sts["spec"]["template"]
    container = next(c for c in pod["spec"]["containers"] if c["name"] == "ukes-server")
    flags = flags_of(container.get("args", []))
    errors += [f"ukes-server has no flag {f}" for f in flags if f not in known]

    mounts = [m["mountPath"] for m in container.get("volumeMounts", [])]
    for f in (*FILE_FLAGS, "--data-dir"):
        if f in flags and not any(flags[f] == m or flags[f].startswith(m + "/") for m in mounts):
            errors.append(f"{f}={flags[f]} lies under no volume mount")
    volumes = {v["name"] for v in pod["spec"].get("volumes", [])}
    volumes |= {t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])}
    errors += [f"volume mount {m['name']} has no volume" for m in container["volumeMounts"]
               if m["name"] not in volumes]
    if flags.get("--listen") in (None, "127.0.0.1", "::1", "localhost"):
        errors.append("--listen must reach beyond loopback in a pod")
    if "--insecure" in flags or not {"--tls-cert", "--tls-key"} <= flags.keys():
        errors.append("the server must serve TLS (--tls-cert, --tls-key), never --insecure")

    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    if str(ports.get("grpc")) != flags.get("--port"):
        errors.append(f"containerPort grpc {ports.get('grpc')} is not --port {flags.get('--port')}")
    health = flags.get("--health-port")
    for probe in ("readinessProbe", "livenessProbe"):
        grpc_probe = container.get(probe, {}).get("grpc")
        if not grpc_probe:
            errors.append(f"{probe} is not a grpc probe")
        elif str(grpc_probe.get("port")) != health:
            errors.append(f"{probe} asks port {grpc_probe.get('port')}, --health-port is {health}")
    if container.get("readinessProbe", {}).get("grpc", {}).get("service") not in (
            None, "", "ukes.v1.UkesService"):
        errors.append("readinessProbe asks a service the server does not report")
    if int(container.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) < 1:
        errors.append("the container requests no nvidia.com/gpu")

    labels = pod["metadata"]["labels"]
    services = by_kind.get("Service", [])
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    if not headless:
        errors.append("no headless Service (clusterIP: None)")
    for s in headless:
        if any(labels.get(k) != v for k, v in s["spec"]["selector"].items()):
            errors.append(f"Service {s['metadata']['name']} selects no pod of the StatefulSet")
        if s["metadata"]["name"] != sts["spec"]["serviceName"]:
            errors.append("the StatefulSet's serviceName is not its headless Service")
        for p in s["spec"]["ports"]:
            if p.get("targetPort") not in ports and p.get("targetPort") not in ports.values():
                errors.append(f"Service port {p.get('name')} targets no container port")
    if sts["spec"]["selector"]["matchLabels"].items() - labels.items():
        errors.append("the StatefulSet's selector does not match its pod labels")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True, help="the built ukes-server")
    parser.add_argument("--dir", default=str(ROOT / "docs" / "kubernetes"))
    args = parser.parse_args()
    server_help = subprocess.run([args.server, "--help"], capture_output=True, text=True,
                                 check=True, timeout=60).stdout
    docs = load(pathlib.Path(args.dir))
    errors = check(docs, server_help)
    for e in errors:
        print(f"check_manifests: {e}", file=sys.stderr)
    print(f"check_manifests: {len(docs)} documents, {len(errors)} problems")
    return 1 if errors or not docs else 0


if __name__ == "__main__":
    sys.exit(main())
