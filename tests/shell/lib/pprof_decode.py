#!/usr/bin/python3
# Decodes a gzipped pprof profile with Google's protobuf runtime (Debian's
# python3-protobuf) and the Python module protoc made from util/report/profile.proto,
# and prints it as JSON for the shell tests: the sample types, the total of
# each, and every sample's stack, leaf first, each location as its lines
# (inlined functions first), each line "function file:line", with its address
# and its mapping (start, limit, file offset, build id).
#   pprof_decode.py <dir of profile_pb2.py> <profile.pb.gz>
import gzip
import json
import sys

sys.path.insert(0, sys.argv[1])
import profile_pb2  # noqa: E402

with open(sys.argv[2], "rb") as f:
    data = f.read()
p = profile_pb2.Profile()
p.ParseFromString(gzip.decompress(data))

s = p.string_table
assert s[0] == "", "string_table[0] is not empty"
functions = {f.id: f for f in p.function}
mappings = {m.id: m for m in p.mapping}
locations = {loc.id: loc for loc in p.location}
assert len(functions) == len(p.function) and 0 not in functions, "function ids"
assert len(mappings) == len(p.mapping) and 0 not in mappings, "mapping ids"
assert len(locations) == len(p.location) and 0 not in locations, "location ids"
types = [s[t.type] + "/" + s[t.unit] for t in p.sample_type]


def line(ln):
    f = functions[ln.function_id]
    return "%s %s:%d" % (s[f.name], s[f.filename].split("/")[-1] or "-", ln.line)


def location(lid):
    loc = locations[lid]
    assert loc.mapping_id == 0 or loc.mapping_id in mappings, "mapping of a location"
    m = mappings[loc.mapping_id] if loc.mapping_id else None
    return {
        "module": s[m.filename] if m else None,
        "lines": [line(ln) for ln in loc.line],
        "address": loc.address,
        "mapping": {
            "start": m.memory_start, "limit": m.memory_limit,
            "offset": m.file_offset, "build_id": s[m.build_id],
        } if m else None,
    }


samples = []
for smp in p.sample:
    assert len(smp.value) == len(types), "values per sample"
    samples.append({
        "values": dict(zip(types, smp.value)),
        "stack": [location(lid) for lid in smp.location_id],
    })
json.dump({
    "types": types,
    "default": s[p.default_sample_type],
    "totals": {t: sum(x["values"][t] for x in samples) for t in types},
    "samples": samples,
    "comments": [s[c] for c in p.comment],
    "system_names": sorted({s[f.system_name] for f in p.function}),
    "duration_nanos": p.duration_nanos,
}, sys.stdout, indent=1)
print()
