package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zeebo/xxh3"
)

// model is the deliberately naive reference the index is checked against:
// plain maps keyed by what the contract talks about, no sharding, no packed
// words, no heap, brute force everywhere. It mirrors the documented semantics.
type model struct {
	bs, maxEntries, lowWater int
	ttl                      time.Duration
	epoch, now               time.Time

	conf  map[uint64]map[mRank]uint8    // router hash -> (replica, rank) -> confirmed tier bits
	pred  map[uint64]map[string]int64   // router hash -> replica -> expiry tick (rank 0, device)
	eng   map[mRank]map[uint64][]uint64 // engine hash -> router hashes
	ranks map[string]map[int]bool       // registered (replica, rank)
	stamp map[uint64]uint64
	clock uint64

	evicted, orphans, unknownRemoved, remapped uint64
	rejected                                   map[string]uint64
}

type mRank struct {
	replica string
	rank    int
}

func newModel(cfg Config, now time.Time) *model {
	cfg = cfg.withDefaults()
	return &model{
		bs: cfg.BlockSize, maxEntries: cfg.MaxEntries, lowWater: cfg.MaxEntries - cfg.MaxEntries/64,
		ttl: cfg.PredictedTTL, epoch: now, now: now,
		conf: map[uint64]map[mRank]uint8{}, pred: map[uint64]map[string]int64{},
		eng: map[mRank]map[uint64][]uint64{}, ranks: map[string]map[int]bool{},
		stamp: map[uint64]uint64{}, rejected: map[string]uint64{},
	}
}

func (m *model) tick() int64 { return int64(m.now.Sub(m.epoch) / time.Millisecond) }

// naiveChain hashes full blocks the slow obvious way.
func naiveChain(tokens []uint32, bs int, seed uint64) []uint64 {
	var out []uint64
	for i := 0; i+bs <= len(tokens); i += bs {
		b := make([]byte, 0, bs*4)
		for _, t := range tokens[i : i+bs] {
			b = binary.LittleEndian.AppendUint32(b, t)
		}
		seed = xxh3.HashSeed(b, seed)
		out = append(out, seed)
	}
	return out
}

func naiveSeed(lora string) uint64 {
	if lora == "" {
		return 0
	}
	return xxh3.Hash([]byte(lora))
}

func (m *model) register(replica string, rank int) {
	if m.ranks[replica] == nil {
		m.ranks[replica] = map[int]bool{}
	}
	if !m.ranks[replica][rank] {
		m.ranks[replica][rank] = true
		m.eng[mRank{replica, rank}] = map[uint64][]uint64{}
	}
}

// expire forgets predictions whose tick has come and blocks left empty.
func (m *model) expire() {
	for r, ps := range m.pred {
		for rep, exp := range ps {
			if exp <= m.tick() {
				delete(ps, rep)
			}
		}
		m.gc(r)
	}
}

func (m *model) gc(r uint64) {
	for k, v := range m.conf[r] {
		if v == 0 {
			delete(m.conf[r], k)
		}
	}
	if len(m.conf[r]) == 0 {
		delete(m.conf, r)
	}
	if len(m.pred[r]) == 0 {
		delete(m.pred, r)
	}
	if m.conf[r] == nil && m.pred[r] == nil {
		delete(m.stamp, r)
	}
}

func (m *model) setConf(r uint64, k mRank, bits uint8) {
	if m.conf[r] == nil {
		m.conf[r] = map[mRank]uint8{}
	}
	m.conf[r][k] = bits
	if bits&deviceBit != 0 && k.rank == 0 {
		delete(m.pred[r], k.replica)
	}
	m.gc(r)
}

func (m *model) touch(r uint64) {
	m.clock++
	m.stamp[r] = m.clock
}

func (m *model) reject(err error) error {
	m.rejected[reasonOf(err)]++
	if errors.Is(err, ErrOrphan) {
		m.orphans++
	}
	return err
}

func (m *model) stored(replica string, rank int, ev Stored) error {
	m.expire()
	k := mRank{replica, rank}
	switch {
	case rank < 0:
		return m.reject(ErrRank)
	case !ev.Tier.valid():
		return m.reject(ErrUnknownTier)
	case len(ev.BlockHashes) == 0:
		return nil
	}
	var routers []uint64
	if len(ev.TokenIDs) == 0 {
		for _, e := range ev.BlockHashes {
			rs, ok := m.eng[k][e]
			if !ok {
				return m.reject(ErrUnknownBlock)
			}
			routers = append(routers, rs...)
		}
	} else {
		bs := ev.BlockSize
		if bs == 0 {
			bs = m.bs
		}
		if bs <= 0 || bs%m.bs != 0 {
			return m.reject(ErrBlockSize)
		}
		if len(ev.TokenIDs) != bs*len(ev.BlockHashes) {
			return m.reject(ErrTokenCount)
		}
		seed := naiveSeed(ev.LoRA)
		if ev.HasParent {
			p, ok := m.eng[k][ev.Parent]
			if !ok {
				return m.reject(ErrOrphan)
			}
			seed = p[len(p)-1]
		}
		routers = naiveChain(ev.TokenIDs, m.bs, seed)
		per := bs / m.bs
		for i, e := range ev.BlockHashes {
			if old, ok := m.eng[k][e]; ok && !slices.Equal(old, routers[i*per:(i+1)*per]) {
				m.remapped++
				for _, r := range old {
					m.setConf(r, k, 0)
				}
			}
		}
		m.register(replica, rank)
		for i, e := range ev.BlockHashes {
			m.eng[k][e] = slices.Clone(routers[i*per : (i+1)*per])
		}
	}
	m.register(replica, rank)
	for j := len(routers) - 1; j >= 0; j-- {
		m.setConf(routers[j], k, m.conf[routers[j]][k]|1<<ev.Tier)
		m.touch(routers[j])
	}
	m.evict()
	return nil
}

func (m *model) removed(replica string, rank int, ev Removed) error {
	m.expire()
	k := mRank{replica, rank}
	switch {
	case rank < 0:
		return m.reject(ErrRank)
	case !ev.Tier.valid():
		return m.reject(ErrUnknownTier)
	case !m.ranks[replica][rank]:
		m.unknownRemoved += uint64(len(ev.BlockHashes))
		return nil
	}
	bit := uint8(1) << ev.Tier
	for _, e := range ev.BlockHashes {
		rs, ok := m.eng[k][e]
		if !ok {
			m.unknownRemoved++
			continue
		}
		hit, held := false, false
		for _, r := range rs {
			hit = hit || m.conf[r][k]&bit != 0
			if ev.Tier == TierDevice && rank == 0 && m.pred[r] != nil {
				delete(m.pred[r], replica)
			}
			m.setConf(r, k, m.conf[r][k]&^bit)
			held = held || m.conf[r][k] != 0
		}
		if !hit {
			m.unknownRemoved++
		}
		if !held {
			delete(m.eng[k], e)
		}
	}
	return nil
}

func (m *model) clearRank(replica string, rank int) {
	m.expire()
	if !m.ranks[replica][rank] {
		return
	}
	k := mRank{replica, rank}
	for r := range m.conf {
		m.setConf(r, k, 0)
	}
	if rank == 0 {
		for r := range m.pred {
			delete(m.pred[r], replica)
			m.gc(r)
		}
	}
	m.eng[k] = map[uint64][]uint64{}
}

func (m *model) removeReplica(replica string) {
	for rank := range m.ranks[replica] {
		m.clearRank(replica, rank)
		delete(m.eng, mRank{replica, rank})
	}
	delete(m.ranks, replica)
}

func (m *model) predict(replica string, hashes []uint64, ttl time.Duration) {
	m.expire()
	if len(hashes) == 0 {
		return
	}
	if ttl <= 0 {
		ttl = m.ttl
	}
	ttl = min(ttl, maxTTL)
	m.register(replica, 0)
	exp := m.tick() + int64((ttl+time.Millisecond-1)/time.Millisecond)
	for j := len(hashes) - 1; j >= 0; j-- {
		r := hashes[j]
		if m.conf[r][mRank{replica, 0}]&deviceBit == 0 {
			if m.pred[r] == nil {
				m.pred[r] = map[string]int64{}
			}
			m.pred[r][replica] = max(m.pred[r][replica], exp)
		}
		m.touch(r)
	}
	m.evict()
}

func (m *model) blockEntries(r uint64) int {
	n := len(m.pred[r])
	for _, bits := range m.conf[r] {
		for t := range NumTiers {
			n += int(bits >> t & 1)
		}
	}
	return n
}

func (m *model) total() int {
	n := 0
	for r := range m.stamp {
		n += m.blockEntries(r)
	}
	return n
}

func (m *model) evict() {
	total := m.total()
	if total <= m.maxEntries {
		return
	}
	blocks := make([]uint64, 0, len(m.stamp))
	for r := range m.stamp {
		blocks = append(blocks, r)
	}
	slices.SortFunc(blocks, func(a, b uint64) int { return int(m.stamp[a]) - int(m.stamp[b]) })
	need, got := total-m.lowWater, 0
	for _, r := range blocks {
		if got >= need {
			break
		}
		n := m.blockEntries(r)
		got += n
		m.evicted += uint64(n)
		delete(m.conf, r)
		delete(m.pred, r)
		delete(m.stamp, r)
	}
}

func (m *model) overlap(hashes []uint64, replica string, rank int) Overlap {
	var o Overlap
	dev := true
	for _, h := range hashes {
		tiers := m.conf[h][mRank{replica, rank}]
		exp, ok := m.pred[h][replica]
		pred := rank == 0 && ok && exp > m.tick()
		if tiers == 0 && !pred {
			break
		}
		o.Prefix++
		onDev := tiers&deviceBit != 0 || pred
		switch {
		case onDev:
			o.Tiers[TierDevice]++
		case tiers&(1<<TierHost) != 0:
			o.Tiers[TierHost]++
		default:
			o.Tiers[TierDisk]++
		}
		if tiers == 0 {
			o.Predicted++
		}
		dev = dev && onDev
		if dev {
			o.Device++
		}
	}
	return o
}

func (m *model) match(hashes []uint64, candidates []string) []Overlap {
	out := make([]Overlap, len(candidates))
	for i, c := range candidates {
		for rank := range m.ranks[c] {
			if o := m.overlap(hashes, c, rank); o.better(out[i]) {
				out[i] = o
			}
		}
	}
	return out
}

func (m *model) stats() Stats {
	m.expire()
	st := Stats{
		Blocks: len(m.stamp), Evicted: m.evicted, Orphans: m.orphans, Rejected: map[string]uint64{},
		UnknownRemoved: m.unknownRemoved, Replicas: map[string][NumTiers]int{}, Remapped: m.remapped,
	}
	for k, v := range m.rejected {
		st.Rejected[k] = v
	}
	for rep := range m.ranks {
		st.Replicas[rep] = [NumTiers]int{}
	}
	for _, byRank := range m.conf {
		for k, bits := range byRank {
			sum := st.Replicas[k.replica]
			for t := range NumTiers {
				sum[t] += int(bits >> t & 1)
				st.Entries += int(bits >> t & 1)
			}
			st.Replicas[k.replica] = sum
		}
	}
	for _, ps := range m.pred {
		st.Predicted += len(ps)
	}
	return st
}

// diffStats compares the fields the model defines (not memory, not Expired).
func diffStats(got, want Stats) error {
	got.MemoryBytes, got.Expired = 0, 0
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("stats:\n got  %+v\n want %+v", got, want)
	}
	return nil
}
