#!/usr/bin/python3
"""Reads a run's TensorBoard event files independently of Sift's writer and checks them.

Usage: tensorboard_check.py RUN_DIR
Framing: every TFRecord's length and data CRCs are recomputed here (CRC-32C bit by bit,
TFRecord's mask). Messages: decoded with google.protobuf (Debian's python3-protobuf)
from descriptors built here with the field numbers of TensorFlow's public
tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto.
Then every scalar must equal (as float32) the cell of metrics.csv with its tag and step.
Text summaries (TensorBoard's text plugin; tensor.proto's field numbers): one confusion
matrix as a markdown table at each validation row of metrics.csv, each counting every
validation example of report.json, labels in report.json's order, and one of them (the
best validation's) equal to report.json's final confusion matrix of the valid split.
Exit 0 and a summary line on success; a message and exit 1 otherwise.
"""
import csv
import glob
import json
import os
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def event_class():
    f = descriptor_pb2.FileDescriptorProto(name="sift_check_event.proto", package="tensorflow",
                                           syntax="proto3")
    plugin = f.message_type.add(name="PluginData")  # SummaryMetadata.PluginData, flattened
    plugin.field.add(name="plugin_name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    plugin.field.add(name="content", number=2, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    metadata = f.message_type.add(name="SummaryMetadata")
    metadata.field.add(name="plugin_data", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                       type_name=".tensorflow.PluginData")
    dim = f.message_type.add(name="Dim")  # TensorShapeProto.Dim, flattened
    dim.field.add(name="size", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    shape = f.message_type.add(name="TensorShapeProto")
    shape.field.add(name="dim", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                    type_name=".tensorflow.Dim")
    tensor = f.message_type.add(name="TensorProto")
    tensor.field.add(name="dtype", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)  # enum
    tensor.field.add(name="tensor_shape", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                     type_name=".tensorflow.TensorShapeProto")
    tensor.field.add(name="string_val", number=8, type=F.TYPE_BYTES, label=F.LABEL_REPEATED)
    value = f.message_type.add(name="Value")  # Summary.Value, flattened
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    value.field.add(name="tensor", number=8, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".tensorflow.TensorProto")
    value.field.add(name="metadata", number=9, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".tensorflow.SummaryMetadata")
    summary = f.message_type.add(name="Summary")
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                      type_name=".tensorflow.Value")
    event = f.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".tensorflow.Summary")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    d = pool.FindMessageTypeByName("tensorflow.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(d)
    return message_factory.MessageFactory(pool).GetPrototype(d)


def records(path):
    data = open(path, "rb").read()
    pos = 0
    while pos < len(data):
        if len(data) - pos < 12:
            sys.exit(f"{path}: {len(data) - pos} trailing bytes at {pos}")
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if masked(header) != length_crc:
            sys.exit(f"{path}: bad length CRC at {pos}")
        body = data[pos + 12:pos + 12 + length]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        if len(body) != length or masked(body) != body_crc:
            sys.exit(f"{path}: bad data CRC at {pos}")
        yield body
        pos += 16 + length


def text_of(value, path):
    t = value.tensor
    if t.dtype != 7 or [d.size for d in t.tensor_shape.dim] != [1] or len(t.string_val) != 1:
        sys.exit(f"{path}: text {value.tag} is not a DT_STRING tensor of shape [1]: {t}")
    return t.string_val[0].decode("utf-8")


def markdown_matrix(text):
    """A markdown table's header cells and its rows of cells (the rule line left out)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    if len(cells) < 2 or set("".join(cells[1])) != {"-"}:
        sys.exit(f"not a markdown table: {text!r}")
    return cells[0], cells[2:]


def check_confusion(run, texts, valid_steps):
    """Every validation's matrix covers the split; the best one is report.json's."""
    if not texts and not valid_steps:
        return
    report = json.load(open(os.path.join(run, "report.json")))
    labels, valid = report["labels"], report["splits"]["valid"]
    steps = sorted(step for tag, step in texts if tag == "valid_confusion")
    if steps != valid_steps:
        sys.exit(f"confusion matrices at steps {steps}, validations at {valid_steps}")
    matrices = []
    for step in steps:
        header, rows = markdown_matrix(texts[("valid_confusion", step)])
        if header[1:] != labels or [r[0] for r in rows] != labels:
            sys.exit(f"step {step}: labels {header[1:]} / {[r[0] for r in rows]}, not {labels}")
        matrix = [[int(c) for c in r[1:]] for r in rows]
        if sum(map(sum, matrix)) != valid["examples"]:
            sys.exit(f"step {step}: {sum(map(sum, matrix))} examples, not {valid['examples']}")
        matrices.append(matrix)
    if valid["confusion"] not in matrices:
        sys.exit(f"report.json's confusion {valid['confusion']} is none of {matrices}")


def main():
    run = sys.argv[1]
    files = glob.glob(os.path.join(run, "tb", "events.out.tfevents.*"))
    if not files:
        sys.exit(f"no event file under {run}/tb")
    Event = event_class()
    scalars = {}
    texts = {}
    versions = 0
    for path in files:
        for i, body in enumerate(records(path)):
            e = Event()
            e.ParseFromString(body)
            if e.wall_time < 1.6e9:
                sys.exit(f"{path}: record {i}: wall_time {e.wall_time}")
            if i == 0:
                if e.file_version != "brain.Event:2":
                    sys.exit(f"{path}: first record is not the file version: {e}")
                versions += 1
                continue
            for v in e.summary.value:
                if v.metadata.plugin_data.plugin_name == "text":
                    texts[(v.tag, e.step)] = text_of(v, path)
                else:
                    scalars[(v.tag, e.step)] = v.simple_value
    with open(os.path.join(run, "metrics.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    expected = {}
    for row in rows:
        for key, cell in row.items():
            if key not in ("step", "epoch") and cell != "":
                expected[(key, int(row["step"]))] = struct.unpack("<f", struct.pack("<f", float(cell)))[0]
    if scalars != expected:
        missing = set(expected) - set(scalars)
        extra = set(scalars) - set(expected)
        wrong = [k for k in expected if k in scalars and scalars[k] != expected[k]]
        sys.exit(f"scalars differ from metrics.csv: missing {sorted(missing)[:5]}, "
                 f"extra {sorted(extra)[:5]}, different {wrong[:5]}")
    valid_steps = sorted(int(row["step"]) for row in rows if row.get("valid_accuracy"))
    check_confusion(run, texts, valid_steps)
    tags = sorted({t for t, _ in scalars})
    print(f"ok: {len(files)} file(s), {len(scalars)} scalars, tags {','.join(tags)}; "
          f"{len(texts)} confusion matrices")


if __name__ == "__main__":
    main()
