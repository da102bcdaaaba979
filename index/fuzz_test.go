package index

import (
	"encoding/binary"
	"slices"
	"testing"
)

// fuzzConfigs are the index shapes a fuzz input's first byte selects from.
var fuzzConfigs = []struct {
	cfg       Config
	shardBits uint8
}{
	{Config{}, defaultShardBits},
	{Config{}, 0},
	{Config{MaxEntries: 20}, 1},
	{Config{MaxEntries: 100}, 0},
}

const fuzzMaxSteps = 300

// FuzzApply drives random event sequences (decoded from the input) through
// the index and the reference model and compares them after every step.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 9, 1, 1, 1, 1, 1, 1, 1, 10, 200, 3, 3, 3, 3, 3, 4})
	f.Add(slices.Repeat([]byte{3, 1, 0, 1, 2, 0, 1, 0, 5}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		fc := fuzzConfigs[int(data[0])%len(fuzzConfigs)]
		w := newWorld(t, fc.cfg, fc.shardBits)
		c := &byteChooser{data: data[1:]}
		for i := 0; i < fuzzMaxSteps && !c.done(); i++ {
			op := w.step(c)
			if err := w.check(); err != nil {
				t.Fatalf("step %d (%s): %v", i, op, err)
			}
		}
	})
}

// FuzzMatch builds an index from the first half of the input, then matches a
// prompt and candidate list decoded from the second half: document chains,
// their prefixes, spliced or arbitrary hashes, known and unknown replicas.
// Results must equal the model's and respect Overlap's invariants.
func FuzzMatch(f *testing.F) {
	f.Add([]byte{0, 8, 1, 2, 3, 0, 0, 0, 0, 1, 2, 3, 4}, []byte{0, 0, 8, 1, 2})
	f.Add([]byte{1, 0, 0, 1, 0, 2, 0, 11, 0, 0, 1, 1, 3}, []byte{3, 1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, build, query []byte) {
		if len(build) == 0 {
			return
		}
		fc := fuzzConfigs[int(build[0])%len(fuzzConfigs)]
		w := newWorld(t, fc.cfg, fc.shardBits)
		c := &byteChooser{data: build[1:]}
		for i := 0; i < fuzzMaxSteps && !c.done(); i++ {
			w.step(c)
		}
		prompt, cands := w.decodeQuery(query)
		got := w.ix.Match(prompt, cands, nil)
		if want := w.m.match(prompt, cands); !slices.Equal(got, want) {
			t.Fatalf("prompt %x cands %v:\n got  %+v\n want %+v", prompt, cands, got, want)
		}
		for i, o := range got {
			sum := o.Tiers[0] + o.Tiers[1] + o.Tiers[2]
			if o.Device > o.Prefix || o.Prefix > len(prompt) || sum != o.Prefix || o.Predicted > o.Prefix {
				t.Fatalf("candidate %d: inconsistent %+v", i, o)
			}
		}
	})
}

// decodeQuery reads: candidate mask, doc, lora, prefix length, splice count,
// then raw 8-byte hashes appended to the prompt.
func (w *world) decodeQuery(q []byte) ([]uint64, []string) {
	c := &byteChooser{data: q}
	names := append(slices.Clone(genReplicas), "zz")
	var cands []string
	for mask := c.intn(256); mask != 0; mask >>= 2 {
		cands = append(cands, names[mask&3])
	}
	prompt := w.routerChain(c.intn(len(w.docs)), genLoRAs[c.intn(len(genLoRAs))])
	prompt = prompt[:c.intn(len(prompt)+1)]
	if n := c.intn(3); n > 0 { // splice a prefix of another chain
		prompt = append(prompt, w.routerChain(c.intn(len(w.docs)), "")[:n]...)
	}
	for rest := q[min(c.pos, len(q)):]; len(rest) >= 8; rest = rest[8:] {
		prompt = append(prompt, binary.LittleEndian.Uint64(rest))
	}
	return prompt, cands
}
