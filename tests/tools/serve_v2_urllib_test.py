#!/usr/bin/env python3
"""`sift serve`'s v2 protocol (KServe / Triton HTTP) from Python's standard library client
(urllib), as a Triton client sends it with tritonclient.http: the id echoed, the outputs
asked, the versioned route, a wrong input name refused with a JSON error naming the field,
and the binary tensor data extension (tritonclient's default, binary_data=True: the texts
after the JSON, the outputs read back from the bytes after the answer's JSON) giving the
JSON request's labels and scores. Trains the fastText model on the TREC sample
(about a second), serves it on a free port, stops it with SIGTERM (exit 0).

Usage: serve_v2_urllib_test.py --sift build/sift
"""
import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TREC = os.path.join(SOURCE, "tests", "data", "trec")
FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAILED: " + what, file=sys.stderr)


def request(port, path, body=None, headers=None):
    """(status, parsed JSON body) of one request; an HTTP error status is returned, not raised."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data,
                                 headers=dict({"Content-Type": "application/json"}, **(headers or {})),
                                 method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def train(sift, work):
    subprocess.run([sift, "train", "configs/trec.yaml", "--quiet", "--set", "run.dir=" + work,
                    "--set", "run.name=trec", "--set",
                    "data.train.path=" + os.path.join(TREC, "TREC.train.sample"), "--set",
                    "data.test.path=" + os.path.join(TREC, "TREC.test.sample"), "--set",
                    "train.epochs=5"], cwd=SOURCE, check=True)
    return os.path.join(work, "trec")


def start(sift, work, run):
    port_file = os.path.join(work, "port")
    err = open(os.path.join(work, "err"), "w")
    server = subprocess.Popen([sift, "serve", "--model", "trec=" + run, "--port", "0",
                               "--port-file", port_file], cwd=work, stderr=err)
    for _ in range(600):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return server, int(open(port_file).read())
        if server.poll() is not None:
            sys.exit("sift serve exited %d: %s" % (server.returncode,
                                                   open(os.path.join(work, "err")).read()))
        time.sleep(0.05)
    server.kill()
    sys.exit("sift serve wrote no port file in 30 s")


def infer_body(texts, **more):
    """A body as tritonclient.http writes one with binary_data=False (input shape [n, 1])."""
    body = {"inputs": [{"name": "text", "shape": [len(texts), 1], "datatype": "BYTES",
                        "data": texts}]}
    body.update(more)
    return body


def exercise(port):
    texts = ["Who wrote Hamlet ?", "How far is the moon ?"]
    status, meta = request(port, "/v2/models/trec")
    check(status == 200, "metadata answers 200")
    check(meta["inputs"] == [{"name": "text", "datatype": "BYTES", "shape": [-1]}],
          "metadata's input: %s" % meta["inputs"])
    check([o["name"] for o in meta["outputs"]] == ["label", "score"],
          "metadata's outputs: %s" % meta["outputs"])

    asked = [{"name": "label", "parameters": {"binary_data": False}}]
    status, answer = request(port, "/v2/models/trec/versions/1/infer",
                             infer_body(texts, id="py-1", outputs=asked,
                                        parameters={"top_k": 2}))
    check(status == 200, "versioned infer answers 200: %s" % answer)
    check(answer.get("id") == "py-1", "the id is echoed: %s" % answer)
    check(answer.get("model_version") == "1", "model_version is '1': %s" % answer)
    outputs = answer.get("outputs", [])
    check([o["name"] for o in outputs] == ["label"], "only the label output: %s" % outputs)
    check(outputs and outputs[0]["shape"] == [2, 2] and len(outputs[0]["data"]) == 4
          and all(isinstance(v, str) for v in outputs[0]["data"]),
          "labels [2, 2] of strings: %s" % outputs)

    status, answer = request(port, "/v2/models/trec/infer",
                             {"inputs": [{"name": "INPUT0", "shape": [1], "datatype": "BYTES",
                                          "data": ["a"]}]})
    check(status == 400 and "inputs[0].name is \"INPUT0\"" in answer.get("error", ""),
          "a wrong input name is a 400 naming it: %d %s" % (status, answer))
    status, answer = request(port, "/v2/models/trec/infer",
                             infer_body(texts, outputs=[{"name": "probabilities"}]))
    check(status == 400 and "outputs[0].name is \"probabilities\"" in answer.get("error", ""),
          "an unknown output is a 400 naming it: %d %s" % (status, answer))
    status, answer = request(port, "/v2/models/trec/versions/9/infer", infer_body(texts))
    check(status == 404 and "no version '9'" in answer.get("error", ""),
          "a version not served is a 404 naming it: %d %s" % (status, answer))
    binary_round_trip(port, texts + ["Où est la gare ?"])


def binary_round_trip(port, texts):
    """The texts in binary, both outputs asked in binary, as tritonclient.http's defaults
    send them, against the same request in JSON."""
    status, plain = request(port, "/v2/models/trec/infer",
                            infer_body(texts, parameters={"top_k": 2}))
    check(status == 200, "the JSON request answers 200: %s" % plain)
    data = b"".join(struct.pack("<I", len(t.encode())) + t.encode() for t in texts)
    header = json.dumps({"inputs": [{"name": "text", "shape": [len(texts), 1],
                                     "datatype": "BYTES",
                                     "parameters": {"binary_data_size": len(data)}}],
                         "outputs": [{"name": "label", "parameters": {"binary_data": True}},
                                     {"name": "score", "parameters": {"binary_data": True}}],
                         "parameters": {"top_k": 2}}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/v2/models/trec/infer" % port,
                                 data=header + data, method="POST",
                                 headers={"Inference-Header-Content-Length": str(len(header)),
                                          "Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(req, timeout=30) as r:
        check(r.status == 200, "the binary request answers 200")
        length = int(r.headers["Inference-Header-Content-Length"])
        body = r.read()
    answer, at = json.loads(body[:length]), length
    for out in answer["outputs"]:
        size = out["parameters"]["binary_data_size"]
        chunk, at = body[at:at + size], at + size
        if out["datatype"] == "BYTES":
            values, i = [], 0
            while i < len(chunk):
                (n,) = struct.unpack_from("<I", chunk, i)
                values.append(chunk[i + 4:i + 4 + n].decode())
                i += 4 + n
        else:
            values = list(struct.unpack("<%df" % (size // 4), chunk))
        out["data"] = values
    check(at == len(body), "the answer's binary data is its outputs' (%d of %d bytes)"
          % (at, len(body)))
    want = {o["name"]: o for o in plain["outputs"]}
    got = {o["name"]: o for o in answer["outputs"]}
    check(got["label"]["data"] == want["label"]["data"] and got["label"]["shape"] == [3, 2],
          "binary labels are the JSON request's: %s %s" % (got["label"], want["label"]))
    check(all(abs(a - b) < 1e-6 for a, b in zip(got["score"]["data"], want["score"]["data"]))
          and len(got["score"]["data"]) == 6,
          "binary scores are the JSON request's: %s %s" % (got["score"], want["score"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sift", required=True)
    sift = os.path.abspath(parser.parse_args().sift)
    with tempfile.TemporaryDirectory(prefix="sift_serve_py") as work:
        run = train(sift, work)
        server, port = start(sift, work, run)
        try:
            exercise(port)
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=60)
        check(code == 0, "sift serve exits 0 on SIGTERM (got %d)" % code)
    if FAILURES:
        sys.exit("%d check(s) failed" % len(FAILURES))
    print("ok: v2 from urllib")


if __name__ == "__main__":
    main()
