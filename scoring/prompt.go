package scoring

import (
	"fmt"
	"math"

	"github.com/switchyard-llm/switchyard/index"
)

// Prompt is the request's prompt in one of three forms; exactly one must be set.
type Prompt struct {
	Tokens      []uint32 // token ids; hashed into full blocks of the router's block size
	BlockHashes []uint64 // precomputed chained router hashes, used as-is
	Text        string   // raw text: approximate mode, hashed in fixed byte chunks
}

func (p *Prompt) kinds() int {
	n := 0
	if len(p.Tokens) > 0 {
		n++
	}
	if len(p.BlockHashes) > 0 {
		n++
	}
	if p.Text != "" {
		n++
	}
	return n
}

// promptShape is a hashed prompt with the unit conversions every later step needs.
type promptShape struct {
	hashes     []uint64
	tokens     int     // prompt length in tokens (ISL)
	unitTokens float64 // tokens per hashed unit
	unitSize   int     // unit size in the tree measure (tokens, or bytes for text)
	size       int     // prompt size in the tree measure
	blockSize  int
	text       bool
}

// shapePrompt hashes the prompt into dst and derives its token count and units.
func shapePrompt(dst []uint64, req *PickRequest, blockSize, chunk int) (promptShape, error) {
	p := promptShape{blockSize: blockSize, unitTokens: float64(blockSize), unitSize: blockSize}
	switch {
	case len(req.Prompt.Tokens) > 0:
		if req.PromptTokens != 0 && req.PromptTokens != len(req.Prompt.Tokens) {
			return p, fmt.Errorf("%w: prompt_tokens %d disagrees with %d token ids", ErrInvalid, req.PromptTokens, len(req.Prompt.Tokens))
		}
		p.hashes = index.HashTokens(dst, req.Prompt.Tokens, blockSize, req.LoRA)
		p.tokens = len(req.Prompt.Tokens)
		p.size = p.tokens
	case len(req.Prompt.BlockHashes) > 0:
		p.hashes = append(dst, req.Prompt.BlockHashes...)
		p.tokens = req.PromptTokens
		if p.tokens == 0 {
			p.tokens = len(p.hashes) * blockSize
		}
		p.size = p.tokens
	default:
		p.text = true
		p.hashes = index.HashText(dst, req.Prompt.Text, chunk, req.LoRA)
		p.tokens = req.PromptTokens
		if p.tokens == 0 {
			p.tokens = (len(req.Prompt.Text) + bytesPerToken - 1) / bytesPerToken
		}
		p.unitSize = chunk
		p.size = len(req.Prompt.Text)
		p.unitTokens = float64(chunk) * float64(p.tokens) / float64(len(req.Prompt.Text))
	}
	return p, nil
}

// promptBlocks is the prompt's KV blocks, the partial last one included.
func (p *promptShape) promptBlocks() int64 {
	return int64((p.tokens + p.blockSize - 1) / p.blockSize)
}

// cachedTokens converts a matched prefix of units into tokens, capped at the prompt.
func (p *promptShape) cachedTokens(units int) int {
	return min(p.tokens, int(math.Round(float64(units)*p.unitTokens)))
}

// checkpoints is the number of checkpoints of the prompt: every stride-th unit and the last.
func (p *promptShape) checkpoints() int {
	return (len(p.hashes) + checkpointStride - 1) / checkpointStride
}

// checkpointPos is the unit index of checkpoint j.
func (p *promptShape) checkpointPos(j int) int {
	return min((j+1)*checkpointStride, len(p.hashes)) - 1
}

// blocksThrough is the KV blocks covered by units [0, pos], capped at the prompt's blocks.
func (p *promptShape) blocksThrough(pos int) float64 {
	b := math.Round(float64(pos+1) * p.unitTokens / float64(p.blockSize))
	return math.Min(b, float64(p.promptBlocks()))
}

// checkpointList returns the prompt's checkpoints with the blocks each adds.
func (p *promptShape) checkpointList() []checkpoint {
	n := p.checkpoints()
	if n == 0 {
		return nil
	}
	cps := make([]checkpoint, n)
	prev := 0.0
	for j := range cps {
		pos := p.checkpointPos(j)
		b := p.blocksThrough(pos)
		cps[j] = checkpoint{hash: p.hashes[pos], blocks: int32(b - prev)}
		prev = b
	}
	return cps
}
