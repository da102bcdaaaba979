package workload

// idAssigner gives token sequences Mooncake-style block ids: a block of BlockTokens tokens
// under the same parent block id gets the same id when its tokens are equal. A partial block
// shares the id of a block under the same parent whose tokens it is a prefix of (or that is a
// prefix of it), so a prompt that continues a previous prompt's partial last block keeps its
// id and extends it, as the continuation rule of the package needs.
type idAssigner struct {
	next     uint64
	children map[uint64][]int32 // parent id (rootParent for first blocks) -> nodes
	nodes    []idNode
}

type idNode struct {
	id     uint64
	tokens []uint32 // the longest content seen under this id (≤ BlockTokens)
}

const rootParent = ^uint64(0)

func newIDAssigner() *idAssigner {
	return &idAssigner{children: make(map[uint64][]int32)}
}

// assign returns the block ids of tokens (one per BlockTokens, the last may be partial).
func (a *idAssigner) assign(tokens []uint32) []uint64 {
	ids := make([]uint64, 0, blocksOf(len(tokens)))
	parent := rootParent
	for from := 0; from < len(tokens); from += BlockTokens {
		blk := tokens[from:min(len(tokens), from+BlockTokens)]
		id := a.find(parent, blk)
		ids = append(ids, id)
		parent = id
	}
	return ids
}

// find returns the id of a node under parent compatible with blk, growing its known content,
// or a new id.
func (a *idAssigner) find(parent uint64, blk []uint32) uint64 {
	for _, k := range a.children[parent] {
		n := &a.nodes[k]
		if !prefixCompatible(n.tokens, blk) {
			continue
		}
		if len(blk) > len(n.tokens) {
			n.tokens = append(n.tokens[:0:0], blk...)
		}
		return n.id
	}
	id := a.next
	a.next++
	a.children[parent] = append(a.children[parent], int32(len(a.nodes)))
	a.nodes = append(a.nodes, idNode{id: id, tokens: append([]uint32(nil), blk...)})
	return id
}

// prefixCompatible reports whether one of a, b is a prefix of the other.
func prefixCompatible(a, b []uint32) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
