package scoring

import (
	"math"
	"math/rand/v2"
)

// sortByKey orders cands by key ascending, keeping the order of equal keys. Insertion sort:
// candidate lists are short and this allocates nothing.
func sortByKey(c []Candidate) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].key < c[j-1].key; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// tieToFront picks uniformly among the leading candidates whose key equals c[0].key and moves
// that one to the front: argmin with ties at random.
func tieToFront(c []Candidate, rnd *rand.Rand) {
	n := 1
	for n < len(c) && c[n].key == c[0].key {
		n++
	}
	if n > 1 {
		moveToFront(c, rnd.IntN(n))
	}
}

// moveToFront moves c[i] to the front, shifting c[0:i] right by one.
func moveToFront(c []Candidate, i int) {
	if i <= 0 {
		return
	}
	x := c[i]
	copy(c[1:i+1], c[:i])
	c[0] = x
}

// rankByKey sorts by key and breaks a tie for first place at random.
func rankByKey(c []Candidate, rnd *rand.Rand) {
	sortByKey(c)
	tieToFront(c, rnd)
}

// RankByCost sorts cands by Cost ascending and breaks a tie for first place at random with the
// model's random source. A helper for policies defined outside this package (e.g. an oracle):
// fill each Cost, then call it.
func RankByCost(in *PolicyInput, cands []Candidate) {
	for i := range cands {
		cands[i].key = cands[i].Cost
	}
	rankByKey(cands, in.Rand)
}

// softmaxToFront samples one candidate with p ∝ exp(-((key-min)/(max-min))/t) and moves it to
// the front of an already sorted slice; equal keys sample uniformly.
func softmaxToFront(c []Candidate, t float64, rnd *rand.Rand) {
	lo, hi := c[0].key, c[0].key
	for i := range c {
		lo, hi = math.Min(lo, c[i].key), math.Max(hi, c[i].key)
	}
	span := hi - lo
	if span == 0 || math.IsInf(span, 0) || math.IsNaN(span) {
		moveToFront(c, rnd.IntN(len(c)))
		return
	}
	var total float64
	for i := range c {
		total += math.Exp(-((c[i].key - lo) / span) / t)
	}
	x := rnd.Float64() * total
	for i := range c {
		x -= math.Exp(-((c[i].key - lo) / span) / t)
		if x < 0 {
			moveToFront(c, i)
			return
		}
	}
	moveToFront(c, len(c)-1) // rounding: the last one
}

// powerOfTwoToFront samples two distinct candidates uniformly and moves the one with the lower
// key to the front (ties at random), the other second; the rest keep their order.
func powerOfTwoToFront(c []Candidate, rnd *rand.Rand) {
	if len(c) < 2 {
		return
	}
	i := rnd.IntN(len(c))
	j := rnd.IntN(len(c) - 1)
	if j >= i {
		j++
	}
	if c[j].key < c[i].key || (c[j].key == c[i].key && rnd.IntN(2) == 0) {
		i, j = j, i
	}
	// Move the loser then the winner so that the winner ends first.
	moveToFront(c, j)
	if i < j {
		i++ // shifted right by the first move
	}
	moveToFront(c, i)
}
