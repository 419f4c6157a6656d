import statistics as st, math
# the '|' token breaks pairing in study.log: reparse
cols = {}
for f in ("study.log", "study2.log"):
    for line in open(f):
        toks = [t for t in line.split() if t != "|"]
        seed = int(toks[1])
        for k, v in zip(toks[2::2], toks[3::2]): cols.setdefault(k, {})[seed] = float(v)
for k, d in cols.items():
    v = list(d.values())
    print(f"{k:20s} n={len(v):2d} mean {st.mean(v):.3f} sd {st.stdev(v):.3f} se {st.stdev(v)/math.sqrt(len(v)):.3f} median {st.median(v):.3f}")
