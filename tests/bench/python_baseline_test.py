#!/usr/bin/python3
"""Checks that the Python baselines of bench/compare do what they claim: the same
tokenization and bigram hashing as Sift, every record once per epoch, length buckets,
and the in-memory TF-IDF baseline failing for real under an address-space cap.
Run by ctest (bench/CMakeLists.txt) with /usr/bin/python3."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, os.path.join(BENCH, "python"))
import text_pipeline as tp  # noqa: E402


class TextPipelineTest(unittest.TestCase):
    def test_tokenizes_as_sift_word_tokenizer(self):
        # datasets/tokenizer.h: "don't!" -> "don", "'", "t", "!"; lower-cased.
        self.assertEqual(tp.tokenize("Don't STOP!  now"), ["don", "'", "t", "stop", "!", "now"])
        self.assertEqual(tp.tokenize("Ünïcode wörds"), ["ünïcode", "wörds"])

    def test_hash_is_fnv1a_32(self):
        self.assertEqual(tp.fnv1a(""), 2166136261)
        self.assertEqual(tp.fnv1a("a"), 0xE40C292C)  # published FNV-1a test vector
        self.assertEqual(tp.fnv1a("foobar"), 0xBF9CF968)

    def test_bag_has_words_and_one_bigram_per_pair(self):
        vocab = tp.Vocab({"a": 3, "b": 2, "c": 1})
        enc = tp.Encoder(vocab, {"x": 0}, bag=True, buckets=100)
        ids, label = enc("x", "a b zz c")
        self.assertEqual(label, 0)
        self.assertEqual(ids[:3], [2, 3, 4])  # in-vocabulary words; "zz" only in bigrams
        self.assertEqual(len(ids), 3 + 3)
        self.assertTrue(all(len(vocab) <= i < len(vocab) + 100 for i in ids[3:]))
        h = [tp.fnv1a(w) for w in ("a", "b")]
        self.assertEqual(ids[3], len(vocab) + (h[0] * 116049371 + h[1]) % 100)

    def _source(self, tmp, n):
        path = os.path.join(tmp, "d.tsv")
        with open(path, "w") as f:
            for i in range(n):
                f.write("w%d %s\t%s\n" % (i, " ".join(["t"] * (i % 7)), "ab"[i % 2]))
        return tp.Source(path, "tsv", [0], 1)

    def test_every_record_once_per_epoch_shuffled(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = self._source(tmp, 1000)
            counts, n = tp.count_words(src)
            vocab = tp.Vocab(counts)
            data = tp.StreamingDataset(src, tp.Encoder(vocab, {"a": 0, "b": 1}, bag=False), 32,
                                       shuffle_buffer=100)
            seen = [int(row[0]) for ids, lengths, _ in data for row in ids]
            self.assertEqual(n, 1000)
            self.assertEqual(sorted(seen), sorted(vocab.table["w%d" % i][0] for i in range(1000)))
            self.assertNotEqual(seen, sorted(seen))

    def test_buckets_sort_lengths_within_a_window(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = self._source(tmp, 256)
            vocab = tp.Vocab(tp.count_words(src)[0])
            data = tp.StreamingDataset(src, tp.Encoder(vocab, {"a": 0, "b": 1}, bag=False), 8,
                                       shuffle_buffer=0, bucket_window=32)
            lengths = [l.tolist() for _, l, _ in data]
            flat = [x for batch in lengths for x in batch]
            self.assertEqual(flat, sorted(flat))  # one window holds all 256 records
            self.assertEqual(len(lengths), 32)


class InMemoryTfidfTest(unittest.TestCase):
    def test_fails_under_the_cap_without_touching_memory(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.txt")
            with open(path, "w") as f:  # 2000 lines x 100 new words: a 3.2 GB dense matrix
                for i in range(2000):
                    f.write("__label__%d %s\n" % (i % 2, " ".join("w%d_%d" % (i, k) for k in range(100))))
            proc = subprocess.run(["prlimit", "--as=%d" % (1 << 30), "/usr/bin/python3",
                                   os.path.join(BENCH, "python", "tfidf_in_memory.py"), path, "2000"],
                                  capture_output=True, text=True, env=dict(os.environ, TFIDF_SAFE_GB="4"))
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            self.assertEqual(row["status"], "out_of_memory", proc.stderr)
            self.assertEqual(row["vocabulary"], 200000)
            self.assertLess(row["max_rss_mb"], 1024)

    def test_small_input_trains(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.txt")
            with open(path, "w") as f:
                for i in range(300):
                    f.write("__label__%s word%d common\n" % ("ab"[i % 2], i % 10))
            out = subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "python", "tfidf_in_memory.py"),
                                  path, "300"], capture_output=True, text=True, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            self.assertEqual((row["status"], row["lines"], row["vocabulary"]), ("ok", 300, 11))


if __name__ == "__main__":
    unittest.main()
