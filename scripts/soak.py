#!/usr/bin/python3
"""Soak and chaos test of ukes-server on loopback, bounded in time: N clients submit a random mix
of small jobs, read their result streams with random disconnects (resuming after the last chunk
received), cancel some, while the server is killed (SIGKILL) and restarted on the same port and
data directory a few times. Reports jobs/s, p50/p99 submit-to-result latency, wrong results
(against `ukes run` in-process, bit for bit), lost or duplicated chunks, jobs lost across
restarts, and the server's peak RSS; exits 1 when a result was wrong, a chunk lost or
duplicated, or a job lost. The server keeps its jobs in its --data-dir (durable jobs, README.md,
"What survives what"): after each kill the restarted server serves the finished jobs and runs the
others again, and the clients resume their streams where they broke.

Hostile operators too: --corruptions N changes one byte inside N stored result chunks while the
server is down (between a kill and the restart); the restarted server must find every one and
never serve it (the clients' results stay equal to `ukes run`'s). --full-disk puts the data
directory on a small tmpfs (mounting needs root) and fills it for a while during the run: jobs
that cannot store their results fail, submits are refused RESOURCE_EXHAUSTED, and once room
returns everything runs as before.

It never hangs: a job whose stream brings nothing for --stall seconds counts as stuck, a server
that does not stop on SIGTERM is killed and counted, and --watchdog prints every thread's stack
and exits 2 before a test runner's timeout would kill it silently.

  /usr/bin/python3 scripts/soak.py --seconds 60 --clients 8 --kills 3 [--corruptions 4]
      [--full-disk] [--build build] [--json]
"""
import argparse
import faulthandler
import json
import os
import pathlib
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SPECS = [  # small, distinct jobs: (model, systems, method, t_end)
    ("scara", 300, "rk4", 0.2), ("duffing", 500, "dopri5", 1.0), ("four_bar", 100, "rk4", 0.1),
    ("swarm", 50, "dopri5", 0.2), ("chaplygin_sleigh", 400, "rk4", 0.5),
]


def spec_of(model, count, method, t_end):
    return {"model": model, "device": "cpu",
            "sweep": {"count": count, "seed": 11, "vary": {"q0[0]": {"normal": [0.0, 1e-3]}}},
            "assemble": True, "integrator": {"method": method, "t_end": t_end, "dt": 1e-3},
            "output": {"samples": 5, "trajectories": "first:3"}}


def free_port():
    """A free port below the kernel's ephemeral range. The server is restarted on the same port
    after each kill; a port the kernel hands out for `bind(0)` or outgoing connections could be
    taken by another process (a test running beside this one) in that window, and the clients
    would then talk to a stranger."""
    low = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(min(20000, low - 1000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


class Server:
    """ukes-server on a fixed port and data directory, killed and restarted on demand."""

    def __init__(self, build, work):
        self.build, self.work, self.port = build, work, free_port()
        self.peak_rss_kb, self.process = 0, None
        self.data = work / "data"
        self.start()

    def start(self):
        log = open(self.work / "server.log", "ab")
        self.process = subprocess.Popen(
            [self.build / "ukes-server", "--port", str(self.port), "--data-dir",
             self.data, "--device", "cpu", "--threads", "1"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = (self.work / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"ukes-server exited ({self.process.returncode}):\n{tail}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        raise RuntimeError("ukes-server did not start")

    def sample_rss(self):
        try:
            status = pathlib.Path(f"/proc/{self.process.pid}/status").read_text()
            hwm = int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1])
            self.peak_rss_kb = max(self.peak_rss_kb, hwm)
        except (OSError, StopIteration):
            pass

    def kill_and_restart(self, corrupt=0, rng=None):
        """Kills the server; with `corrupt`, changes a byte in that many stored result chunks
        while it is down; starts it again. Returns the ids of the jobs whose chunks changed."""
        self.sample_rss()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        changed = corrupt_chunks(self.data / "ukes-jobs.sqlite", corrupt, rng) if corrupt else set()
        self.start()
        return changed

    def events(self, name):
        """The server log's events `name` (every run of the server appends to one log)."""
        out = []
        for line in (self.work / "server.log").read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == name:
                out.append(event)
        return out

    def stop(self):
        """SIGTERM; returns False when the server had to be killed after 30 s."""
        self.sample_rss()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
            return True
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return False


def corrupt_chunks(db, count, rng):
    """Changes one byte in the middle of `count` random stored chunks of results (summaries,
    trajectories, statistics) as a failing disk would: in the database file, not through SQLite,
    so that only the server's checksums can tell. The WAL is checkpointed into the file first
    (what a stopped server leaves). Jobs of the same spec store the same bytes, so every copy of
    a chunk changes. Returns the ids of the jobs whose chunks changed."""
    import sqlite3
    from ukes.client import pb
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute("SELECT job, sequence, data FROM chunks").fetchall()
    results = [r for r in rows if len(r[2]) >= 64 and pb.StreamJobResultsResponse.FromString(
        r[2]).WhichOneof("payload") in ("summaries", "trajectory", "statistics")]
    content = bytearray(db.read_bytes())
    changed = set()
    for _, _, data in rng.sample(results, min(count, len(results))):
        middle = len(data) // 2
        window = data[middle - 8:middle + 8]
        at = content.find(window)
        if at < 0:
            continue  # split across pages: another chunk
        while at >= 0:
            content[at + 8] ^= 0x01
            at = content.find(window, at + 1)
        changed |= {job for job, _, other in rows if window in other}
    db.write_bytes(bytes(content))
    return changed


class SmallDisk:
    """A tmpfs of `mb` MB mounted on `path` (needs root), filled and emptied on demand."""

    def __init__(self, path, mb):
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mb}m,mode=0700", "tmpfs", path],
                       check=True, capture_output=True)

    def fill(self, seconds):
        filler = self.path / "filler"
        try:
            with open(filler, "wb") as f:
                block = b"f" * (1 << 16)
                while True:
                    f.write(block)
                    f.flush()
        except OSError:  # ENOSPC: full
            pass
        time.sleep(seconds)
        filler.unlink()

    def unmount(self):
        subprocess.run(["umount", "-l", self.path], check=False, capture_output=True)


def references(build, work):
    """Each spec's results from `ukes run` in-process: what every job must equal."""
    import ukes
    refs = []
    for k, s in enumerate(SPECS):
        path = work / f"spec{k}.json"
        path.write_text(json.dumps(spec_of(*s)))
        out = work / f"ref{k}.json"
        subprocess.run([build / "ukes", "run", path, "--out", out], check=True,
                       capture_output=True, timeout=120,
                       env=dict(os.environ, UKES_DISABLE_GPU="1"))
        refs.append(ukes.load(out))
    return refs


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {k: 0 for k in ("succeeded", "cancelled", "failed", "wrong_results",
                                      "lost_chunks", "duplicated_chunks", "lost_across_restarts",
                                      "disconnects", "disk_full_refusals", "stuck_jobs")}
        self.latencies = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] += n


class JobLost(Exception):
    """The restarted server does not know a job the killed one had accepted."""


class JobStuck(Exception):
    """A job's stream brought no chunk for `stall` seconds, across reconnects."""


def stream_job(client, job_id, tally, rng, stall):
    """The job's chunks, each checked to come once and in order, with random disconnects."""
    import grpc
    from ukes.client import pb
    from ukes.result import ResultBuilder
    builder, last = ResultBuilder(), 0
    progress_at = time.monotonic()
    while True:
        left = progress_at + stall - time.monotonic()
        if left <= 0:
            raise JobStuck(f"job {job_id}: no chunk after {last} for {stall} s")
        call = client._stub.StreamJobResults(
            pb.StreamJobResultsRequest(job_id=job_id, resume_after=last), timeout=left)
        cut_after = rng.randrange(1, 8) if rng.random() < 0.3 else None
        try:
            for n, chunk in enumerate(call, 1):
                if chunk.sequence <= last:
                    tally.add("duplicated_chunks")
                    continue
                if chunk.sequence != last + 1:
                    tally.add("lost_chunks", chunk.sequence - last - 1)
                last, progress_at = chunk.sequence, time.monotonic()
                builder.add(chunk)
                if chunk.WhichOneof("payload") == "end":
                    return builder
                if cut_after is not None and n >= cut_after:
                    call.cancel()  # the client goes away mid-stream
                    tally.add("disconnects")
                    break
        except grpc.RpcError as e:  # the server killed: resume after `last` once it is back
            if e.code() == grpc.StatusCode.NOT_FOUND:
                raise JobLost() from None
            time.sleep(0.05)


def describe_stuck(client, job, log):
    """What the server says of a stuck job: its status and its events in the server's log."""
    try:
        print(f"soak: status {job.status()}", file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - a diagnosis, whatever the server says
        print(f"soak: no status ({e})", file=sys.stderr)
    lines = [line for line in log.read_text(errors="replace").splitlines() if job.id in line]
    print("\n".join(["soak: its events:"] + lines[-20:]), file=sys.stderr)


def client_loop(address, refs, deadline, seed, tally, stall, log):
    import grpc
    import numpy as np
    import ukes
    rng = random.Random(seed)
    with ukes.Client(address, timeout=30) as client:
        while time.monotonic() < deadline:
            k = rng.randrange(len(SPECS))
            start = time.monotonic()
            try:
                job = client.submit(spec_of(*SPECS[k]))
                if rng.random() < 0.15:
                    time.sleep(rng.random() * 0.2)
                    job.cancel()
                builder = stream_job(client, job.id, tally, rng, stall)
            except JobLost:
                tally.add("lost_across_restarts")
                continue
            except JobStuck as e:
                print(f"soak: {e}", file=sys.stderr)
                describe_stuck(client, job, log)
                tally.add("stuck_jobs")
                continue
            except ukes.UkesError as e:
                if e.code == grpc.StatusCode.NOT_FOUND:
                    tally.add("lost_across_restarts")  # cancelled on a server since killed
                if e.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "disk is full" in str(e):
                    tally.add("disk_full_refusals")
                time.sleep(0.1)  # UNAVAILABLE while the server restarts
                continue
            end = builder.end
            if end.state == ukes.client.pb.JOB_STATE_FAILED:
                tally.add("failed")  # could not store its results: the disk was full
                continue
            if end.state != ukes.client.pb.JOB_STATE_SUCCEEDED:
                tally.add("cancelled")
                continue
            result, ref = builder.result(), refs[k]
            same = all(np.array_equal(getattr(result, f), getattr(ref, f))
                       for f in ("q", "qd", "status", "residual_max", "force_max", "steps"))
            tally.add("succeeded" if same else "wrong_results")
            with tally.lock:
                tally.latencies.append(time.monotonic() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--kills", type=int, default=2, help="server kills during the run")
    parser.add_argument("--corruptions", type=int, default=0,
                        help="stored chunks changed on disk while the server is down")
    parser.add_argument("--full-disk", action="store_true",
                        help="data directory on a small tmpfs, filled for a while (needs root; "
                        "without it the run says so and goes on without that phase)")
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--stall", type=float, default=60.0,
                        help="seconds without a chunk after which a job counts as stuck")
    parser.add_argument("--watchdog", type=float, default=0.0,
                        help="after this many seconds print every thread's stack and exit 2 "
                        "(0: never)")
    args = parser.parse_args()
    if args.watchdog > 0:
        faulthandler.dump_traceback_later(args.watchdog, exit=True)
    build = pathlib.Path(args.build).resolve()
    sys.path.insert(0, str(build / "python"))
    with tempfile.TemporaryDirectory(prefix="ukes-soak-") as tmp:
        work = pathlib.Path(tmp)
        disk = None
        if args.full_disk:
            try:
                disk = SmallDisk(work / "data", 64)
            except (OSError, subprocess.CalledProcessError) as e:  # not root: say so, go on
                print(f"soak: no full-disk phase: cannot mount a tmpfs ({e})", file=sys.stderr)
        try:
            report = soak(args, build, work, disk)
        finally:
            if disk:
                disk.unmount()
    print(json.dumps(report) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    bad = (report["wrong_results"] + report["lost_chunks"] + report["duplicated_chunks"] +
           report["lost_across_restarts"] + report["corruptions_undetected"] +
           report["stuck_jobs"] + report["clients_hung"] + (not report["server_stopped"]))
    return 1 if bad or report["succeeded"] == 0 else 0


def soak(args, build, work, disk):
    refs = references(build, work)
    server, tally = Server(build, work), Tally()
    begin = time.monotonic()
    deadline = begin + args.seconds
    threads = [threading.Thread(target=client_loop, daemon=True, args=(
        f"127.0.0.1:{server.port}", refs, deadline, args.seed * 1000 + i, tally, args.stall,
        work / "server.log"))
        for i in range(args.clients)]
    for t in threads:
        t.start()
    rng = random.Random(args.seed)
    events = sorted([(begin + rng.uniform(0.2, 0.8) * args.seconds, "kill")
                     for _ in range(args.kills)] +
                    ([(begin + 0.5 * args.seconds, "fill")] if disk else []))
    corrupted, left = set(), args.corruptions
    for k, (when, what) in enumerate(events):
        while time.monotonic() < when:
            server.sample_rss()
            time.sleep(0.1)
        if what == "fill":
            disk.fill(min(2.0, 0.1 * args.seconds))
            continue
        kills_left = sum(1 for _, w in events[k:] if w == "kill")
        now = left // kills_left + (1 if left % kills_left else 0)
        corrupted |= server.kill_and_restart(now, rng)
        left -= now
    for t in threads:  # a job started just before the deadline gets its full stall allowance
        t.join(timeout=max(0.0, deadline + 2 * args.stall + 30 - time.monotonic()))
    hung = sum(t.is_alive() for t in threads)
    elapsed = time.monotonic() - begin
    stopped = server.stop()
    detected = {e.get("job") for e in server.events("chunk_corrupt")}
    lat = sorted(tally.latencies)
    pick = lambda q: round(lat[min(len(lat) - 1, int(q * len(lat)))], 4) if lat else None
    return dict(tally.counts, seconds=round(elapsed, 1), clients=args.clients,
                kills=args.kills, clients_hung=hung, server_stopped=stopped,
                jobs_corrupted=len(corrupted),
                corruptions_undetected=len(corrupted - detected), full_disk=bool(disk),
                jobs_per_s=round(tally.counts["succeeded"] / elapsed, 2),
                latency_p50_s=pick(0.5), latency_p99_s=pick(0.99),
                peak_rss_mb=round(server.peak_rss_kb / 1024, 1))


if __name__ == "__main__":
    sys.exit(main())
