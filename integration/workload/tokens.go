package workload

// Vocab bounds the token ids produced by ExpandBlock and Tokenize (a 128k vocabulary).
const Vocab = 1 << 17

// outputSpace marks the block ids of generated tokens that no later prompt continues
// (ids with the top bit set are reserved for them).
const outputSpace = 1 << 63

// ExpandBlock appends the n (≤ BlockTokens) first tokens of block id's expansion to dst. The
// expansion is a fixed pseudo-random function of the id, so equal ids give equal tokens.
func ExpandBlock(dst []uint32, id uint64, n int) []uint32 { return appendSpan(dst, id, 0, n) }

// appendSpan appends tokens [j0, j0+n) of block id's expansion.
func appendSpan(dst []uint32, id uint64, j0, n int) []uint32 {
	base := id*BlockTokens + uint64(j0)
	for j := range uint64(n) {
		dst = append(dst, uint32(Mix64(base+j)%Vocab))
	}
	return dst
}

// Mix64 is the splitmix64 finaliser, a fast bijective scrambler of 64-bit values: the source of
// every pseudo-random token id and offset here, exported so that other deterministic
// components derive their seeds the same way.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// expandRange appends the tokens at positions [from, to) of a sequence whose block ids are ids.
func expandRange(dst []uint32, ids []uint64, from, to int) []uint32 {
	for p := from; p < to; {
		b := p / BlockTokens
		end := min(to, (b+1)*BlockTokens)
		dst = appendSpan(dst, ids[b], p%BlockTokens, end-p)
		p = end
	}
	return dst
}

// PromptTokens appends request i's prompt tokens to dst.
func (w *Workload) PromptTokens(dst []uint32, i int) []uint32 {
	r := &w.Requests[i]
	return expandRange(dst, r.HashIDs, 0, r.InputLength)
}

// OutputTokens appends the tokens request i generates to dst: the continuation of the next
// turn's prompt where that prompt extends this one, unique tokens beyond it (or throughout
// when it does not). Finalize must have been called.
func (w *Workload) OutputTokens(dst []uint32, i int) []uint32 {
	r := &w.Requests[i]
	from, to := r.InputLength, r.InputLength+r.OutputLength
	if w.extends[i] {
		nx := &w.Requests[w.next[i]]
		cont := min(to, nx.InputLength)
		dst = expandRange(dst, nx.HashIDs, from, cont)
		from = cont
	}
	for p := from; p < to; {
		b := p / BlockTokens
		end := min(to, (b+1)*BlockTokens)
		dst = appendSpan(dst, outputSpace|uint64(i)<<20|uint64(b), p%BlockTokens, end-p)
		p = end
	}
	return dst
}

// Tokens appends request i's whole sequence, prompt then output, to dst.
func (w *Workload) Tokens(dst []uint32, i int) []uint32 {
	return w.OutputTokens(w.PromptTokens(dst, i), i)
}
