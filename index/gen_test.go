package index

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// chooser is the source of random decisions of the operation generator: a
// seeded PRNG for the property test, the fuzzer's bytes for the fuzz targets.
type chooser interface{ intn(n int) int }

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser consumes one byte per decision and answers 0 once exhausted.
type byteChooser struct {
	data []byte
	pos  int
}

func (c *byteChooser) intn(n int) int {
	if c.pos >= len(c.data) {
		return 0
	}
	c.pos++
	return int(c.data[c.pos-1]) % n
}

func (c *byteChooser) done() bool { return c.pos >= len(c.data) }

// The generator's world: router blocks of 4 tokens, documents of 8 blocks
// with shared prefixes, three replicas with two DP ranks, one of them with
// engine blocks twice the router's (split), and two LoRAs.
const (
	genBlock     = 4
	genDocBlocks = 8
)

var (
	genReplicas   = []string{"a", "b", "c"}
	genLoRAs      = []string{"", "x"}
	genProbeCands = []string{"a", "b", "c", "zz", "a"}
)

// genDocs returns the documents' tokens: doc1 shares 3 blocks with doc0,
// doc2 shares 1, doc3 shares nothing.
func genDocs() [][]uint32 {
	r := rand.New(rand.NewPCG(7, 7))
	docs := make([][]uint32, 4)
	for d := range docs {
		docs[d] = make([]uint32, genBlock*genDocBlocks)
		for i := range docs[d] {
			docs[d][i] = r.Uint32() % 50000
		}
	}
	copy(docs[1], docs[0][:3*genBlock])
	copy(docs[2], docs[0][:genBlock])
	return docs
}

// world runs the same operations against the index and the model.
type world struct {
	t     testing.TB
	ix    *Index
	m     *model
	clock time.Time
	docs  [][]uint32
}

func newWorld(t testing.TB, cfg Config, shardBits uint8) *world {
	w := &world{t: t, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), docs: genDocs()}
	cfg.BlockSize = genBlock
	cfg.Now = func() time.Time { return w.clock }
	w.ix = newIndex(cfg, shardBits)
	w.m = newModel(cfg, w.clock)
	return w
}

// engineBlock is the engine block size of replica: "b" splits in two.
func engineBlock(replica string) int {
	if replica == "b" {
		return 2 * genBlock
	}
	return genBlock
}

// engineHash is the engine's content hash of the prefix ending at router
// block `last` of doc: equal prefixes give equal hashes, like vLLM's.
func (w *world) engineHash(replica string, rank int, lora string, doc, last int) uint64 {
	r := naiveChain(w.docs[doc][:(last+1)*genBlock], genBlock, naiveSeed(lora))
	return r[last] ^ uint64(rank+1)*0x100000001b3 ^ uint64(replica[0])<<40
}

func (w *world) routerChain(doc int, lora string) []uint64 {
	return naiveChain(w.docs[doc], genBlock, naiveSeed(lora))
}

// step performs one random operation on both sides and returns its name.
func (w *world) step(c chooser) string {
	rep := genReplicas[c.intn(len(genReplicas))]
	rank := c.intn(2)
	lora := genLoRAs[c.intn(len(genLoRAs))]
	doc := c.intn(len(w.docs))
	ebs := engineBlock(rep)
	if c.intn(4) == 0 {
		ebs = genBlock // an engine may change block size: same hashes, other splits
	}
	k := ebs / genBlock
	nEng := genDocBlocks / k
	s := c.intn(nEng)
	n := 1 + c.intn(nEng-s)
	hashes := make([]uint64, n)
	for i := range hashes {
		hashes[i] = w.engineHash(rep, rank, lora, doc, (s+i+1)*k-1)
	}
	tier := Tier(0)
	if c.intn(3) == 0 {
		tier = Tier(1 + c.intn(2))
	}
	switch op := c.intn(12); op {
	case 0, 1, 2, 3:
		ev := Stored{BlockHashes: hashes, TokenIDs: w.docs[doc][s*ebs : (s+n)*ebs], BlockSize: ebs, LoRA: lora, Tier: tier}
		if s > 0 {
			ev.Parent, ev.HasParent = w.engineHash(rep, rank, lora, doc, s*k-1), true
		}
		if ebs == genBlock && c.intn(2) == 0 {
			ev.BlockSize = 0
		}
		if op == 3 && c.intn(3) == 0 { // engine hashes reused for other content
			other := (doc + 1) % len(w.docs)
			ev.TokenIDs = w.docs[other][s*ebs : (s+n)*ebs]
		}
		w.stored(rep, rank, ev, op)
		return "stored"
	case 4:
		ev := Stored{BlockHashes: hashes, TokenIDs: w.docs[doc][s*ebs : (s+n)*ebs], BlockSize: ebs, LoRA: lora, Tier: tier}
		switch c.intn(5) {
		case 0:
			ev.Parent, ev.HasParent = uint64(c.intn(1000)), true
		case 1:
			ev.BlockSize = ebs + 2
		case 2:
			ev.TokenIDs = ev.TokenIDs[1:]
		case 3:
			ev.Tier = Tier(3 + c.intn(4))
		default:
			rank = -1
		}
		w.stored(rep, rank, ev, 4)
		return "bad stored"
	case 5:
		if c.intn(2) == 0 {
			hashes = w.knownAliases(c, rep, rank)
		}
		if len(hashes) == 0 || c.intn(4) == 0 {
			hashes = append(hashes, uint64(c.intn(1000)))
		}
		w.stored(rep, rank, Stored{BlockHashes: hashes, Tier: Tier(1 + c.intn(2))}, 5)
		return "offload"
	case 6, 7:
		if c.intn(2) == 0 {
			hashes = w.knownAliases(c, rep, rank)
		}
		if c.intn(4) == 0 {
			hashes = append(hashes, uint64(c.intn(1000)))
		}
		if c.intn(8) == 0 {
			tier = NumTiers
		}
		ev := Removed{BlockHashes: hashes, Tier: tier}
		errI, errM := w.ix.ApplyRemoved(rep, rank, ev), w.m.removed(rep, rank, ev)
		w.sameErr(errI, errM)
		return "removed"
	case 8:
		w.ix.Clear(rep, rank)
		w.m.clearRank(rep, rank)
		return "clear"
	case 9:
		if c.intn(3) == 0 {
			w.ix.RemoveReplica(rep)
			w.m.removeReplica(rep)
			return "remove replica"
		}
		w.clock = w.clock.Add(time.Duration(c.intn(3000)) * time.Millisecond)
		w.m.now = w.clock
		return "advance clock"
	default:
		hs := w.routerChain(doc, lora)[:1+c.intn(genDocBlocks)]
		ttl := []time.Duration{0, 5 * time.Millisecond, 50 * time.Millisecond, 1500 * time.Millisecond}[c.intn(4)]
		w.ix.Predict(rep, hs, ttl)
		w.m.predict(rep, hs, ttl)
		return "predict"
	}
}

// knownAliases picks up to three engine hashes the model knows for (rep,
// rank), in a deterministic order, so removals and offloads often hit.
func (w *world) knownAliases(c chooser, rep string, rank int) []uint64 {
	known := slices.Sorted(maps.Keys(w.m.eng[mRank{rep, rank}]))
	var out []uint64
	for range min(len(known), 1+c.intn(3)) {
		out = append(out, known[c.intn(len(known))])
	}
	return out
}

func (w *world) stored(rep string, rank int, ev Stored, op int) {
	errI := w.ix.ApplyStored(rep, rank, ev)
	errM := w.m.stored(rep, rank, ev)
	w.sameErr(errI, errM)
}

func (w *world) sameErr(got, want error) {
	w.t.Helper()
	if (got == nil) != (want == nil) || (want != nil && reasonOf(got) != reasonOf(want)) {
		w.t.Fatalf("error: got %v, want %v", got, want)
	}
}

// check compares the index with the model: stats and every probe's match.
func (w *world) check() error {
	want := w.m.stats()
	if err := diffStats(w.ix.Stats(), want); err != nil {
		return err
	}
	for _, rep := range genReplicas {
		if got := w.ix.ReplicaBlocks(rep); got != want.Replicas[rep] {
			return errorf("ReplicaBlocks(%s) = %v, want %v", rep, got, want.Replicas[rep])
		}
	}
	var out []Overlap
	probes := [][]uint64{{12345, 678}}
	for d := range w.docs {
		for _, l := range genLoRAs {
			probes = append(probes, w.routerChain(d, l))
		}
	}
	for _, p := range probes {
		out = w.ix.Match(p, genProbeCands, out)
		if want := w.m.match(p, genProbeCands); !slices.Equal(out, want) {
			return errorf("match %x:\n got  %+v\n want %+v", p[:1], out, want)
		}
	}
	return nil
}
