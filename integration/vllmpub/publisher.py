#!/usr/bin/python3
# Run with /usr/bin/python3 (Debian's interpreter), NOT the python3 that comes
# first on PATH: it needs Debian's python3-zmq and python3-msgpack packages
# (apt-get install python3-zmq python3-msgpack).
"""A stand-in vLLM engine for tests: it publishes KV-cache events exactly as
vLLM's ZMQ publisher puts them on the wire.

Wire format (see shared/reference/vllm-kv-events.md):
  live   PUB, 3 frames: [topic, seq (8-byte big-endian), msgpack EventBatch]
  replay ROUTER: request [identity, "", start_seq]; one reply per buffered batch
         with seq >= start_seq: [identity, "", topic, seq, payload] (or without
         the topic frame with --replay-no-topic, like older engines), then an
         end marker with seq 0xFFFFFFFFFFFFFFFF and an empty payload.
  EventBatch = [ts, events, data_parallel_rank?]; events positional tagged
  arrays ("array" encoding, vLLM <= 0.23) or maps with a "type" key ("map").
  Hashes as unsigned ints ("int") or 32-byte digests ("bin", last 8 bytes
  carry the value).

Control: one JSON command per line on stdin, one JSON reply per line on
stdout. The first stdout line is {"ready": true, "pub": ..., "replay": ...}.
  {"op": "send", "events": [EVENT...], "encoding": "array"|"map",
   "hash": "int"|"bin", "rank": 0|null, "ts": float?, "publish": true}
      publish a batch with the next seq (publish=false buffers it for replay
      without sending it live: a gap the replay socket can fill)
      -> {"ok": true, "seq": N}
  {"op": "skip", "n": K}   advance seq by K without buffering (a gap replay
                           cannot fill) -> {"ok": true, "seq": next}
  {"op": "restart"}        seq back to 0 and an empty buffer, as a restarted
                           engine process -> {"ok": true}
  {"op": "ping"}           -> {"ok": true, "seq": next}
  {"op": "quit"}           exit
EVENT uses vLLM's field names: {"type": "BlockStored", "block_hashes": [...],
"parent_block_hash": h|null, "token_ids": [...], "block_size": 16,
"lora_id": null, "medium": "GPU", "lora_name": null, "extra_keys": null,
"group_idx": null, "kv_cache_spec_kind": null,
"kv_cache_spec_sliding_window": null}, {"type": "BlockRemoved",
"block_hashes": [...], "medium": ..., "group_idx": ...},
{"type": "AllBlocksCleared"}.
"""

import argparse
import collections
import json
import sys
import threading
import time

import msgpack
import zmq

END_SEQ = (2**64 - 1).to_bytes(8, "big")

# Positional field order after the tag; fields from the first defaulted one
# on are omitted when trailing and None (msgspec omit_defaults).
FIELDS = {
    "BlockStored": ["block_hashes", "parent_block_hash", "token_ids", "block_size",
                    "lora_id", "medium", "lora_name", "extra_keys", "group_idx",
                    "kv_cache_spec_kind", "kv_cache_spec_sliding_window"],
    "BlockRemoved": ["block_hashes", "medium", "group_idx"],
    "AllBlocksCleared": [],
}
REQUIRED = {"BlockStored": 7, "BlockRemoved": 2, "AllBlocksCleared": 0}
HASH_FIELDS = ("block_hashes", "parent_block_hash")
# Prefix for 32-byte "bin" hashes: the decoder must read only the last 8 bytes.
BIN_PREFIX = bytes(range(0xA0, 0xB8))


def encode_hash(h, mode):
    if h is None or mode == "int":
        return h
    return BIN_PREFIX + (h % 2**64).to_bytes(8, "big")


def event_values(ev, hash_mode):
    out = {}
    for name in FIELDS[ev["type"]]:
        v = ev.get(name)
        if name == "block_hashes":
            v = [encode_hash(h, hash_mode) for h in (v or [])]
        elif name == "parent_block_hash":
            v = encode_hash(v, hash_mode)
        out[name] = v
    return out


def encode_event(ev, encoding, hash_mode):
    """One event as vLLM's msgspec encoder lays it out."""
    kind = ev["type"]
    if kind not in FIELDS:  # unknown tags pass through for tests
        return [kind] if encoding == "array" else {"type": kind}
    values = event_values(ev, hash_mode)
    if encoding == "map":
        out = {"type": kind}
        for i, name in enumerate(FIELDS[kind]):
            if values[name] is not None or i < REQUIRED[kind]:
                out[name] = values[name]
        return out
    row = [kind] + [values[n] for n in FIELDS[kind]]
    while len(row) > 1 + REQUIRED[kind] and row[-1] is None:
        row.pop()
    return row


def encode_batch(events, encoding="array", hash_mode="int", rank=None, ts=None):
    """The msgpack payload of one EventBatch."""
    batch = [time.time() if ts is None else ts,
             [encode_event(e, encoding, hash_mode) for e in events]]
    if rank is not None:
        batch.append(rank)
    return msgpack.packb(batch, use_bin_type=True)


class Engine:
    """Owns the PUB socket (main thread) and the replay buffer."""

    def __init__(self, ctx, args):
        self.topic = args.topic.encode()
        self.seq = 0
        self.buffer = collections.deque(maxlen=args.buffer_steps)
        self.lock = threading.Lock()
        self.pub = ctx.socket(zmq.PUB)
        self.pub.setsockopt(zmq.LINGER, 0)
        if args.connect:
            self.pub.connect(args.pub)
            self.pub_addr = args.pub
        else:
            self.pub.bind(args.pub)
            self.pub_addr = self.pub.getsockopt(zmq.LAST_ENDPOINT).decode()

    def send(self, cmd):
        payload = encode_batch(cmd.get("events", []), cmd.get("encoding", "array"),
                               cmd.get("hash", "int"), cmd.get("rank"), cmd.get("ts"))
        with self.lock:
            seq = self.seq
            self.seq += 1
            self.buffer.append((seq, payload))
        if cmd.get("publish", True):
            self.pub.send_multipart([self.topic, seq.to_bytes(8, "big"), payload])
        return {"ok": True, "seq": seq}

    def skip(self, n):
        with self.lock:
            self.seq += n
            return {"ok": True, "seq": self.seq}

    def restart(self):
        with self.lock:
            self.seq = 0
            self.buffer.clear()
        return {"ok": True}

    def replay_from(self, start):
        with self.lock:
            return [(s, p) for s, p in self.buffer if s >= start]


def serve_replay(sock, engine, with_topic, stop):
    """Answer replay requests until stop is set (runs in its own thread)."""
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    while not stop.is_set():
        if not poller.poll(100):
            continue
        frames = sock.recv_multipart()
        if len(frames) != 3 or frames[1] != b"" or len(frames[2]) != 8:
            continue
        ident, start = frames[0], int.from_bytes(frames[2], "big")
        head = [ident, b""] + ([engine.topic] if with_topic else [])
        for seq, payload in engine.replay_from(start):
            sock.send_multipart(head + [seq.to_bytes(8, "big"), payload])
        sock.send_multipart(head + [END_SEQ, b""])


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pub", default="tcp://127.0.0.1:*", help="PUB endpoint (bound unless --connect)")
    ap.add_argument("--connect", action="store_true", help="connect the PUB socket instead of binding")
    ap.add_argument("--replay", default="tcp://127.0.0.1:*", help="ROUTER replay endpoint; '' disables replay")
    ap.add_argument("--replay-no-topic", action="store_true", help="old reply format without the topic frame")
    ap.add_argument("--topic", default="", help="topic frame of every message")
    ap.add_argument("--buffer-steps", type=int, default=10000, help="batches kept for replay")
    args = ap.parse_args()

    ctx = zmq.Context()
    engine = Engine(ctx, args)
    stop = threading.Event()
    replay_addr, thread = "", None
    if args.replay:
        router = ctx.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.bind(args.replay)
        replay_addr = router.getsockopt(zmq.LAST_ENDPOINT).decode()
        thread = threading.Thread(target=serve_replay,
                                  args=(router, engine, not args.replay_no_topic, stop), daemon=True)
        thread.start()
    reply({"ready": True, "pub": engine.pub_addr, "replay": replay_addr})

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
            op = cmd.get("op")
            if op == "send":
                reply(engine.send(cmd))
            elif op == "skip":
                reply(engine.skip(int(cmd.get("n", 1))))
            elif op == "restart":
                reply(engine.restart())
            elif op == "ping":
                reply({"ok": True, "seq": engine.seq})
            elif op == "quit":
                break
            else:
                reply({"ok": False, "error": "unknown op %r" % op})
        except (ValueError, KeyError, TypeError) as exc:
            reply({"ok": False, "error": str(exc)})
    stop.set()
    if thread:
        thread.join()
    ctx.destroy(linger=0)


if __name__ == "__main__":
    main()
