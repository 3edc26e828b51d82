# Prints the parts of a `trlc --emit=json` document that json.test checks.
import json
import sys

doc = json.load(open(sys.argv[1]))
print("params", doc["params"])
for t in doc["tensors"]:
    print("tensor", t["name"], t["dtype"], t["shape"], t["domain"])
for e in doc["edges"]:
    print("edge", e["from"], "->", e["to"], e["access"])
names = [t["name"] for t in doc["tensors"]]
keys = [(e["from"], e["to"], e["read"], e["access"]) for e in doc["edges"]]
print("sorted", names == sorted(names) and keys == sorted(keys))
