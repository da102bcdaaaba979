#!/usr/bin/python3
# Run with /usr/bin/python3 (needs Debian's python3-msgpack and python3-zmq).
"""Regenerates testdata/golden/: vLLM EventBatch payloads built from the wire
format description (shared/reference/vllm-kv-events.md) with Python's msgpack
encoder and the test publisher's layout code, each with the decoding the spec
prescribes in a .json file beside it. The expected values are derived here,
independently of the Go decoder.

  /usr/bin/python3 clients/vllm/testdata/gen_golden.py
"""

import json
import os
import struct
import sys

import msgpack

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "integration", "vllmpub"))
import publisher  # noqa: E402

OUT = os.path.join(HERE, "golden")
U64 = 2**64
TS = 1789095808.83

FULL_STORED = {
    "type": "BlockStored",
    "block_hashes": [15760518052499183552, 9223372036854775809],
    "parent_block_hash": 18446744073709551615,
    "token_ids": [1, 2, 3, 4, 151643, 6, 7, 4294967295],
    "block_size": 4, "lora_id": 7, "medium": "GPU", "lora_name": "sql-adapter",
    "extra_keys": [None, ["mm-hash", 3]], "group_idx": 0,
    "kv_cache_spec_kind": "full_attention", "kv_cache_spec_sliding_window": None,
}
REMOVED = {"type": "BlockRemoved", "block_hashes": [15760518052499183552, 42], "medium": "CPU"}
CLEARED = {"type": "AllBlocksCleared"}


def expect(ev):
    """The decoded event the spec prescribes for an accepted input event."""
    kind = ev["type"]
    out = {"kind": kind, "block_hashes": [], "parent": None, "token_ids": [],
           "block_size": 0, "lora_name": "", "medium": "", "group_idx": 0, "spec_kind": ""}
    if kind == "AllBlocksCleared":
        return out
    out["block_hashes"] = [h % U64 for h in ev["block_hashes"]]
    out["medium"] = ev.get("medium") or ""
    out["group_idx"] = ev.get("group_idx") or 0
    if kind == "BlockStored":
        p = ev.get("parent_block_hash")
        out["parent"] = None if p is None else p % U64
        out["token_ids"] = list(ev.get("token_ids") or [])
        out["block_size"] = ev["block_size"]
        out["lora_name"] = ev.get("lora_name") or ""
        out["spec_kind"] = ev.get("kv_cache_spec_kind") or ""
    return out


CASES = {}


def case(name, payload, events=(), drops=None, rank=None, ts=TS, error=None):
    CASES[name] = (payload, {"time": ts, "rank": rank, "events": list(events),
                             "drops": drops or {}, "error": error})


def batch(events, enc, hash_mode, rank=None):
    return publisher.encode_batch(events, enc, hash_mode, rank, TS)


# Every event type, both encodings, both hash representations.
for enc in ("array", "map"):
    for hm in ("int", "bin"):
        evs = [FULL_STORED, REMOVED, CLEARED]
        case(f"all_types_{enc}_{hm}", batch(evs, enc, hm, rank=1),
             [expect(e) for e in evs], rank=1)

# One event per file too, so a failure names the event type.
for enc in ("array", "map"):
    for ev in (FULL_STORED, REMOVED, CLEARED):
        case(f"{ev['type']}_{enc}", batch([ev], enc, "int"), [expect(ev)])

# Oldest positional layout: no medium / lora_name, batch without a rank.
old = ["BlockStored", [11, 12], None, [5, 6, 7, 8], 2]
case("old_engine_layout", msgpack.packb([TS, [old]]),
     [expect({"type": "BlockStored", "block_hashes": [11, 12], "parent_block_hash": None,
              "token_ids": [5, 6, 7, 8], "block_size": 2})])

# Hybrid model: only full-attention groups are indexed, and removals from a
# group announced as sliding window are skipped too.
hyb = [
    {"type": "BlockStored", "block_hashes": [1], "parent_block_hash": None, "token_ids": [1, 2],
     "block_size": 2, "medium": "GPU", "group_idx": 0, "kv_cache_spec_kind": "full_attention"},
    {"type": "BlockStored", "block_hashes": [1], "parent_block_hash": None, "token_ids": [1, 2],
     "block_size": 2, "medium": "GPU", "group_idx": 1, "kv_cache_spec_kind": "sliding_window"},
    {"type": "BlockRemoved", "block_hashes": [1], "medium": "GPU", "group_idx": 1},
    {"type": "BlockStored", "block_hashes": [2], "parent_block_hash": 1, "token_ids": [3, 4],
     "block_size": 2, "medium": "GPU", "group_idx": 2, "kv_cache_spec_kind": "mla_attention"},
    {"type": "BlockRemoved", "block_hashes": [2], "medium": "GPU", "group_idx": 2},
]
for enc in ("array", "map"):
    case(f"hybrid_groups_{enc}", batch(hyb, enc, "int", rank=0),
         [expect(hyb[0]), expect(hyb[3]), expect(hyb[4])], {"spec_kind": 2}, rank=0)

# CPU offload: stores without token ids, other media.
cpu = [{"type": "BlockStored", "block_hashes": [77, 78], "parent_block_hash": 76, "token_ids": [],
        "block_size": 16, "medium": "CPU"},
       {"type": "BlockRemoved", "block_hashes": [77], "medium": "DISK"}]
case("offload_media", batch(cpu, "map", "bin"), [expect(e) for e in cpu])

# Forward compatibility: unknown tags, unknown trailing fields and keys,
# extra batch fields.
fut_arr = ["BlockStored", [5], None, [9], 1, None, "GPU", None, None, 0, "full_attention", None,
           "a-future-field", {"nested": [1, [2, {"x": b"y"}]]}]
fut_map = {"type": "BlockRemoved", "block_hashes": [5], "medium": "GPU", "future": [1, 2, {"a": None}]}
unknown = [["BlockMoved", [1], "GPU"], {"type": "BlockPinned", "block_hashes": [2]}, {"block_hashes": [3]}]
case("forward_compatible", msgpack.packb([TS, [fut_arr, unknown[0], fut_map, unknown[1], unknown[2]],
                                          None, "extra-batch-field", [1, 2]], use_bin_type=True),
     [expect({"type": "BlockStored", "block_hashes": [5], "parent_block_hash": None, "token_ids": [9],
              "block_size": 1, "medium": "GPU", "kv_cache_spec_kind": "full_attention"}),
      expect({"type": "BlockRemoved", "block_hashes": [5], "medium": "GPU"})],
     {"unknown_tag": 3})

# Invalid events are dropped one by one; the valid one between them survives.
good = {"type": "BlockRemoved", "block_hashes": [99], "medium": "GPU"}
bad = [
    (["BlockStored", [1, 2], None, [1, 2, 3], 2, None, "GPU"], "token_count"),
    (["BlockStored", [1], None, [], 0, None, "GPU"], "block_size"),
    (["BlockRemoved", [1], "QUANTUM"], "medium"),
    (["BlockRemoved", ["not-a-hash"], "GPU"], "field_type"),
    (["BlockStored", [1], None, [-1], 1, None, "GPU"], "field_range"),
    (["BlockStored", [1], None, [2**32], 1, None, "GPU"], "field_range"),
    (["BlockRemoved", [], "GPU"], "empty_hashes"),
    ({"type": "BlockRemoved", "medium": "GPU"}, "missing_field"),
    (["BlockStored", [1]], "missing_field"),
    (12345, "not_event"),
    ([], "not_event"),
    ([7, [1]], "not_event"),
    (["BlockRemoved", [b""], "GPU"], "hash"),
    (["BlockStored", [1], None, [1], "one", None, "GPU"], "field_type"),
    ({"type": "BlockStored", "block_hashes": [1], "token_ids": [1], "block_size": 1, "group_idx": -1}, "field_range"),
]
evs, drops = [], {}
for ev, why in bad:
    evs += [ev, publisher.encode_event(good, "array", "int")]
    drops[why] = drops.get(why, 0) + 1
case("invalid_events", msgpack.packb([TS, evs, 0], use_bin_type=True),
     [expect(good)] * len(bad), drops, rank=0)


# Integers in every msgpack width, negative int64 hashes, float32 ts.
def u(code, fmt, v):
    return bytes([code]) + struct.pack(fmt, v)


def arr(*items):
    assert len(items) < 16
    return bytes([0x90 | len(items)]) + b"".join(items)


P = lambda v: msgpack.packb(v, use_bin_type=True)  # noqa: E731
wide = arr(P("BlockStored"),
           arr(u(0xcf, ">Q", 3), u(0xce, ">I", 4), u(0xcd, ">H", 5), u(0xcc, ">B", 6),
               u(0xd3, ">q", -2), u(0xd2, ">i", 7), u(0xd1, ">h", 8), u(0xd0, ">b", 9)),
           u(0xd3, ">q", -1),
           arr(*[u(0xcf, ">Q", t) for t in range(8)]),
           u(0xd3, ">q", 1), P(None), P("GPU"))
case("integer_widths", arr(u(0xca, ">f", 1.5), arr(wide), u(0xcd, ">H", 2)),
     [expect({"type": "BlockStored", "block_hashes": [3, 4, 5, 6, -2, 7, 8, 9], "parent_block_hash": -1,
              "token_ids": list(range(8)), "block_size": 1, "medium": "GPU"})], rank=2, ts=1.5)
case("int_timestamp", P([1789095808, [["AllBlocksCleared"]]]), [expect(CLEARED)], ts=1789095808)

# Batch-level failures: nothing is returned.
case("err_not_array", P({"ts": TS}), error="malformed")
case("err_short_batch", P([TS]), error="malformed")
case("err_ts_type", P(["now", []]), error="malformed")
case("err_events_type", P([TS, {"a": 1}]), error="malformed")
case("err_rank_type", P([TS, [], "zero"]), error="malformed")
case("err_rank_negative", P([TS, [], -1]), error="malformed")
case("err_truncated", batch([FULL_STORED], "map", "int")[:-3], error="malformed")
case("err_trailing_bytes", P([TS, []]) + b"\x00", error="malformed")
case("err_huge_array_header", arr(P(TS), bytes([0xdd]) + struct.pack(">I", 2**32 - 1)), error="malformed")
case("err_huge_str_header", arr(P(TS), arr(arr(bytes([0xdb]) + struct.pack(">I", 2**32 - 1)))), error="malformed")
case("err_huge_map_header", arr(P(TS), arr(bytes([0xdf]) + struct.pack(">I", 2**32 - 1))), error="malformed")
case("err_huge_ext_header", arr(P(TS), arr(arr(P("BlockRemoved"), P([1]), P("GPU"), P(None),
                                                bytes([0xc9]) + struct.pack(">I", 2**32 - 1) + b"\x01"))),
     error="malformed")
deep = P("x")
for _ in range(200):
    deep = arr(deep)
case("err_deep_nesting", arr(P(TS), arr(arr(P("BlockRemoved"), P([1]), P("GPU"), P(None), deep))),
     error="too_deep")
case("err_reserved_code", arr(P(TS), arr(arr(P("BlockRemoved"), P([1]), P("GPU"), P(None), b"\xc1"))),
     error="malformed")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(os.path.join(OUT, name))
    for name, (payload, want) in sorted(CASES.items()):
        with open(os.path.join(OUT, name + ".msgpack"), "wb") as f:
            f.write(payload)
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(want, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
