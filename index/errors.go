package index

import "errors"

// Sentinel errors. Every rejection returned by the index wraps exactly one of
// them (with detail naming the offending field), so callers classify and count
// rejections with errors.Is; a rejected event leaves the index unchanged.
var (
	// ErrBlockSize: the engine block size is not a positive multiple of the router's.
	ErrBlockSize = errors.New("index: engine block size is not a positive multiple of the router block size")
	// ErrTokenCount: len(TokenIDs) != BlockSize*len(BlockHashes) on a store that carries tokens.
	ErrTokenCount = errors.New("index: token count does not match block count times block size")
	// ErrOrphan: a store names a parent engine hash this (replica, rank) never stored,
	// so the chain position of its blocks is unknown; the index never guesses it.
	ErrOrphan = errors.New("index: parent block is unknown")
	// ErrUnknownTier: a tier name or value outside device/host/disk.
	ErrUnknownTier = errors.New("index: unknown tier")
	// ErrUnknownBlock: a store without token ids (an offload) names an engine hash
	// that is not indexed on any tier of this (replica, rank).
	ErrUnknownBlock = errors.New("index: block is unknown")
	// ErrRank: a negative data-parallel rank.
	ErrRank = errors.New("index: data-parallel rank must be >= 0")
	// ErrTooManyRanks: the index tracks at most MaxRanks (replica, rank) pairs per model.
	ErrTooManyRanks = errors.New("index: too many (replica, rank) pairs")
)

// Rejection reasons: the keys of Stats.Rejected.
const (
	ReasonBlockSize    = "block_size"
	ReasonTokenCount   = "token_count"
	ReasonOrphan       = "orphan"
	ReasonUnknownTier  = "unknown_tier"
	ReasonUnknownBlock = "unknown_block"
	ReasonRank         = "rank"
	ReasonTooManyRanks = "too_many_ranks"
)

// reasonOf maps a rejection error to its Stats.Rejected key.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, ErrBlockSize):
		return ReasonBlockSize
	case errors.Is(err, ErrTokenCount):
		return ReasonTokenCount
	case errors.Is(err, ErrOrphan):
		return ReasonOrphan
	case errors.Is(err, ErrUnknownTier):
		return ReasonUnknownTier
	case errors.Is(err, ErrUnknownBlock):
		return ReasonUnknownBlock
	case errors.Is(err, ErrRank):
		return ReasonRank
	}
	return ReasonTooManyRanks
}
