"""Writes cases.json: for lists of shard names, what energon's prepare
writes for them with --split-ratio 1,0,0, computed by energon's own
bracecollapse.collapse (keep_order=True) and by the json and PyYAML calls
prepare makes (json.dump indent=2; yaml.dump, sort_keys=False for
split.yaml, default for .info.yaml); and what braceexpand 0.1.7 makes of
some patterns.

Usage: python3 gen_cases.py <energon src dir> > cases.json
(src dir: the directory that holds megatron/energon/bracecollapse.py)
"""
import importlib.util
import io
import json
import sys

import braceexpand
import yaml

spec = importlib.util.spec_from_file_location(
    "bracecollapse", sys.argv[1] + "/megatron/energon/bracecollapse.py")
bc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bc)


def prepare_files(names, version):
    counts = {n: i + 1 for i, n in enumerate(names)}
    info = {"energon_version": version, "shard_counts": counts}
    f = io.StringIO()
    json.dump(info, f, indent=2)
    info_json = f.getvalue()
    f = io.StringIO()
    yaml.dump(info, f)
    info_yaml = f.getvalue()
    train = bc.collapse(list(names), keep_order=True)
    split = {"split_parts": {"train": train, "val": [], "test": []}, "exclude": []}
    f = io.StringIO()
    yaml.dump(split, f, sort_keys=False)
    return {"names": names, "version": version, "collapse": train,
            "split_yaml": f.getvalue(), "info_json": info_json, "info_yaml": info_yaml}


cases = [
    (["imagenet-train-000000.tar", "imagenet-train-000001.tar"], "unknown"),
    (["shard_%06d.tar" % i for i in range(1000)], "unknown"),
    (["part_%02d/shard_%03d.tar" % (p, i) for p in range(3) for i in range(5)], "7.3.2"),
    (["shard_000.tar", "shard_001.tar", "shard_003.tar", "shard_004.tar", "shard_005.tar", "other.tar"], "1.0"),
    (["shard_8.tar", "shard_9.tar", "shard_10.tar", "shard_11.tar"], ""),
    (["a1b1.tar", "a1b2.tar", "a2b2.tar", "a3b2.tar", "a3b3.tar"], "null"),
    (["a01_5.tar", "a1_6.tar", "a1_7.tar"], "yes"),
    (["000.tar", "001.tar", "002.tar"], "unknown"),
    (["x\u0661\u0660.tar", "x\u0661\u0661.tar", "x12.tar"], "unknown"),
    (["données/shard_0.tar", "données/shard_1.tar", "日本/a.tar"], "unknown"),
    (["a b " * 25 + "%d.tar" % i for i in range(3)], "unknown"),
    (["dir with space/" + "wörd " * 20 + "x.tar"], "unknown"),
    (["ü" * 200 + " " + "x" * 30 + ".tar"], "unknown"),
    (["a" * 119 + ".tar", "b" * 120 + ".tar", "c" * 200 + ".tar"], "unknown"),
    (["it's.tar", "#hash.tar", "a #b.tar", "a: b.tar", "- dash.tar", "-x.tar", "?q.tar", ":c.tar", "a:b.tar",
      "@at.tar", "`bt.tar", "%p.tar", "&a.tar", "*s.tar", "!b.tar", "|p.tar", ">g.tar", "[x].tar", "a,b.tar",
      "a[1].tar", "---x.tar", "...x.tar", "x---.tar", " lead.tar", "trail.tar ", "tab\there.tar", "nl\nin.tar",
      "nl\n\nnl.tar", "sp \nbr.tar", "br\n sp.tar", "\"q\".tar", "back\\slash.tar", "del\x7f.tar", "nul\x00.tar",
      "bell\x07.tar", "esc\x1b.tar", "nbsp\xa0.tar", "line\u2028sep.tar", "bom\ufeff.tar", "emoji\U0001F600.tar",
      "yes", "No", "on", "null", "~", "123", "0x1F", "1.5", ".inf", "2001-12-14", "<<", "=", "!", "&", "*", "",
      "1_000", "+1", "-.5", "1:30", "0b101", "017", "12:30:45.5", "2001-12-14t21:59:43.10-05:00", "123\n",
      "a" * 100 + " " + "b" * 100 + ".tar"], "unknown"),
    (["x " * 60 + "'" + " y" * 30 + ".tar", "x" * 79 + " " + "y" * 10 + " z.tar",
      "\u00e9" * 30 + " " + "b" * 60 + " " + "c" * 10 + ".tar", "  two  spaces  " * 8 + ".tar"], "unknown"),
]

brace_patterns = [
    "a{1..3}b", "{07..10}", "{a..c}", "{a..g..2}", "{4..1}", "{2..-1}", "{-01..2}", "{1..10..3}",
    "{Z..a}", "{a..Z}", "{z..A..5}", "index.html{,.backup}", "python{2.{5..7},3.{2,3}}", "{1\\{2,3}",
    "\\{1,2}", "a\\\\b", "x}{y", "{a}b", "{}", "{,}", "{a,{b,c}d}", "{1..3}{a,b}", "{0..1}", "{00..3}",
    "{1..3\n}", "\\\n", "{\u0661..\u0663}", "{1..2..0}", "{A..A}", "{5..5}", "{-0..3}", "{0..-3}",
    "a{b", "a}b", "}a{b}", "{{1..2}}", "{1..2,x}", "{a..b..-1}",
]
braces = []
for p in brace_patterns:
    try:
        braces.append({"pattern": p, "names": list(braceexpand.braceexpand(p))})
    except braceexpand.UnbalancedBracesError:
        braces.append({"pattern": p, "unbalanced": True})

json.dump({"prepare": [prepare_files(n, v) for n, v in cases], "braceexpand": braces},
          sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
