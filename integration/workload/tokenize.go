package workload

import (
	"unicode"
	"unicode/utf8"
)

// TokenizerName states the approximate tokenization of text traces in reports.
const TokenizerName = "approx-bpe-v1: pre-split into letter runs (with one leading space), " +
	"digit runs of up to 3, single punctuation marks and whitespace runs; letter runs cut into " +
	"pieces of up to 4 bytes; token id = FNV-1a(piece) mod 131072"

// maxPiece is the longest letter piece in bytes (English BPE averages about 4 bytes a token).
const maxPiece = 4

// Tokenize appends approximate token ids of text to dst, deterministically. Appending text to
// a prompt that ends at a piece boundary (whitespace, punctuation) appends tokens, so growing
// histories keep their token prefixes, as real tokenizers mostly do.
func Tokenize(dst []uint32, text string) []uint32 {
	for i := 0; i < len(text); {
		n := pieceLen(text[i:])
		if isLetterStart(text[i:]) || (text[i] == ' ' && i+1 < len(text) && isLetterStart(text[i+1:])) {
			for j := 0; j < n; j += maxPiece {
				dst = append(dst, pieceID(text[i+j:i+min(n, j+maxPiece)]))
			}
		} else {
			dst = append(dst, pieceID(text[i:i+n]))
		}
		i += n
	}
	return dst
}

// pieceLen returns the byte length of the pre-split piece at the start of s (non-empty).
func pieceLen(s string) int {
	r, w := utf8.DecodeRuneInString(s)
	switch {
	case r == ' ' && len(s) > 1 && isLetterStart(s[1:]):
		return 1 + runLen(s[1:], isLetter)
	case isLetter(r):
		return runLen(s, isLetter)
	case unicode.IsDigit(r):
		n := runLen(s, unicode.IsDigit)
		return min(n, 3*w)
	case unicode.IsSpace(r):
		n := runLen(s, unicode.IsSpace)
		if n > 1 && n < len(s) && s[n-1] == ' ' && isLetterStart(s[n:]) {
			n-- // the last space leads the next word
		}
		return n
	}
	return w
}

func isLetter(r rune) bool { return unicode.IsLetter(r) || r == '_' }

func isLetterStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isLetter(r)
}

// runLen is the byte length of the leading run of runes satisfying ok.
func runLen(s string, ok func(rune) bool) int {
	n := 0
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		if !ok(r) {
			break
		}
		n += w
	}
	return n
}

// pieceID hashes a piece to a token id with 32-bit FNV-1a.
func pieceID(p string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(p); i++ {
		h = (h ^ uint32(p[i])) * 16777619
	}
	return h % Vocab
}
