"""Writes parts.json: for datasets of shards given split parts by name,
the split.yaml energon's prepare writes with --split-parts (its
split_parts_patterns branch): each part's shards kept in the dataset's
order, compacted by energon's own bracecollapse.collapse (keep_order=True),
dumped by yaml.dump(..., sort_keys=False) as prepare dumps
WebdatasetSplits (split_parts, then an empty exclude).

Usage: python3 gen_parts.py <energon src dir> > parts.json
(src dir: the directory that holds megatron/energon/bracecollapse.py)
"""
import importlib.util
import io
import json
import sys

import yaml

spec = importlib.util.spec_from_file_location(
    "bracecollapse", sys.argv[1] + "/megatron/energon/bracecollapse.py")
bc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bc)


def split_yaml(names, parts):
    split_shards = {}
    for part, members in parts:
        split_shards[part] = bc.collapse([n for n in names if n in members], keep_order=True)
    f = io.StringIO()
    yaml.dump({"split_parts": split_shards, "exclude": []}, f, sort_keys=False)
    return f.getvalue()


train = ["imagenet-train-%06d.tar" % i for i in range(3)]
val = ["imagenet-val-%06d.tar" % i for i in range(2)]
cases = [
    (train + val, [("train", train), ("val", val)]),
    (train + val + ["test-000000.tar"], [("train", train), ("val", val), ("test", ["test-000000.tar"])]),
    (["shards-000000.tar", "shards-000001.tar", "other-000000.tar"],
     [("train", ["shards-000000.tar", "shards-000001.tar"]), ("val", ["other-000000.tar"])]),
    (["train/a_%d.tar" % i for i in range(4)] + ["val/a_0.tar"],
     [("train", ["train/a_%d.tar" % i for i in range(4)]), ("val", ["val/a_0.tar"])]),
    (train + val, [("train", train + val)]),
    (train + val, [("val", val), ("train", train), ("test", [])]),
    (["it's-0.tar", "it's-1.tar", "a: b.tar"], [("train", ["it's-0.tar", "it's-1.tar"]), ("validation", ["a: b.tar"])]),
]
out = [{"names": names, "parts": [[p, m] for p, m in parts], "split_yaml": split_yaml(names, parts)} for names, parts in cases]
json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
