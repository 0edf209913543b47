"""The client against a ukes-server that serves TLS and asks for bearer tokens: the token and
the CA come from arguments or the environment, calls without them raise, and another
principal's job is not found. The test makes its own CA and certificates with openssl."""
import subprocess

import grpc
import pytest

from conftest import BUILD, SOURCE

ALICE = "alice-0123456789abcdef"
BOB = "bob-0123456789abcdef01"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def secure_server(tmp_path_factory):
    """(address, CA file) of a ukes-server with TLS and the tokens of alice and bob."""
    from ukes import local_server

    d = tmp_path_factory.mktemp("tls")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "1", "-subj", "/CN=ukes test CA", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=localhost", cwd=d)
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "1", "-out", "server.pem", "-extfile", "san.ext", cwd=d)
    (d / "tokens").write_text(f"alice {ALICE}\nbob {BOB}\n")
    flags = ["--tls-cert", d / "server.pem", "--tls-key", d / "server.key",
             "--token-file", d / "tokens"]
    with local_server(BUILD / "ukes-server", threads=1, extra_args=flags,
                      work_dir=tmp_path_factory.mktemp("secure_server")) as address:
        yield address, d / "ca.pem"


def test_tokens_authenticate_and_jobs_belong_to_their_submitter(secure_server, monkeypatch):
    import ukes

    address, ca = secure_server
    with ukes.Client(address, ca=ca) as anonymous:
        with pytest.raises(ukes.UkesError) as refused:
            anonymous.server_info()
        assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED
    monkeypatch.setenv("UKES_CA", str(ca))
    monkeypatch.setenv("UKES_TOKEN", ALICE)
    with ukes.Client(address) as alice, ukes.Client(address, token=BOB) as bob:
        job = alice.submit(SOURCE / "client/examples/scara_montecarlo.json")
        with pytest.raises(ukes.UkesError) as hidden:
            type(job)(bob, job.id).status()  # bob's handle on alice's job
        assert hidden.value.code == grpc.StatusCode.NOT_FOUND
        assert job.result().q.shape[0] == 1000
