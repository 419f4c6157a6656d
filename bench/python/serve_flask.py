"""The server users write today, for bench/serve_bench.sh to measure `sift serve` against:
Flask under gunicorn around the fastText Python binding (Debian python3-fasttext) or
around torch.jit.load of a `sift export` file (tokenized by examples/classify.py).

    SERVE_KIND=fasttext SERVE_MODEL=model.bin gunicorn -w 2 --chdir bench/python serve_flask:app
    SERVE_KIND=torch SERVE_MODEL=model.pt ...

POST /predict {"texts": [...], "top_k": k} -> {"predictions": [[{"label", "score"}], ...]}
"""
import os
import sys

from flask import Flask, jsonify, request

KIND = os.environ.get("SERVE_KIND", "fasttext")
MODEL = os.environ["SERVE_MODEL"]
app = Flask(__name__)

if KIND == "fasttext":
    import fasttext

    model = fasttext.load_model(MODEL)

    def predict(texts, k):
        labels, probs = model.predict([t.replace("\n", " ") for t in texts], k=k)
        return [[{"label": l.replace("__label__", ""), "score": float(p)} for l, p in zip(ls, ps)]
                for ls, ps in zip(labels, probs)]
else:
    import torch

    torch.set_num_threads(1)  # one per gunicorn worker: the workers share the 2 cores
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "examples"))
    from classify import Classifier

    model = Classifier(MODEL)

    def predict(texts, k):
        k = min(k, len(model.labels))
        values, indices = model.predict_proba([t.encode() for t in texts]).topk(k, 1)
        return [[{"label": model.labels[i], "score": p} for i, p in zip(idx, v)]
                for v, idx in zip(values.tolist(), indices.tolist())]


@app.post("/predict")
def predict_route():
    body = request.get_json(force=True)
    return jsonify({"predictions": predict(body["texts"], int(body.get("top_k", 1)))})
