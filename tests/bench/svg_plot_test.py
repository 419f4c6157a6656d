#!/usr/bin/python3
"""bench/svg_plot.py writes well-formed SVG with one marker per point and one bar per
value. Run by ctest with /usr/bin/python3."""
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import svg_plot  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"


class SvgPlotTest(unittest.TestCase):
    def test_xy_marks_every_point_and_failures(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.svg")
            svg_plot.write_xy(path, "t", "x", "y", [("s1", [(1e6, 420, "1M"), (1e7, 421, "10M")]),
                                                    ("s2", [(1e3, 170, None), (1e5, None, "out of memory")])],
                              logx=True, logy=True)
            root = ET.parse(path).getroot()
            self.assertEqual(len(root.findall(f"{NS}circle")), 3)
            self.assertEqual(len(root.findall(f"{NS}path")), 1)  # the cross
            texts = [t.text for t in root.iter(f"{NS}text")]
            self.assertIn("out of memory", texts)
            self.assertIn("10M", texts)

    def test_bars_one_per_value(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "b.svg")
            svg_plot.write_bars(path, "t", "x", ["m1", "m2"], ["a", "b"],
                                {("m1", "a"): 10.0, ("m1", "b"): 2000.0, ("m2", "a"): 50.0})
            root = ET.parse(path).getroot()
            bars = [r for r in root.findall(f"{NS}rect") if r.get("height") == "13"]
            self.assertEqual(len(bars), 3)
            widths = sorted(float(r.get("width")) for r in bars)
            self.assertLess(widths[0], widths[1])
            self.assertLess(widths[1], widths[2])


if __name__ == "__main__":
    unittest.main()
