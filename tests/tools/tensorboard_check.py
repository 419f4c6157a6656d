#!/usr/bin/python3
"""Reads a run's TensorBoard event files independently of Sift's writer and checks them.

Usage: tensorboard_check.py RUN_DIR
Framing: every TFRecord's length and data CRCs are recomputed here (CRC-32C bit by bit,
TFRecord's mask). Messages: decoded with google.protobuf (Debian's python3-protobuf)
from descriptors built here with the field numbers of TensorFlow's public
tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto.
Then every scalar must equal (as float32) the cell of metrics.csv with its tag and step.
Exit 0 and a summary line on success; a message and exit 1 otherwise.
"""
import csv
import glob
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
    value = f.message_type.add(name="Value")  # Summary.Value, flattened
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
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


def main():
    run = sys.argv[1]
    files = glob.glob(os.path.join(run, "tb", "events.out.tfevents.*"))
    if not files:
        sys.exit(f"no event file under {run}/tb")
    Event = event_class()
    scalars = {}
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
    tags = sorted({t for t, _ in scalars})
    print(f"ok: {len(files)} file(s), {len(scalars)} scalars, tags {','.join(tags)}")


if __name__ == "__main__":
    main()
