package switchyard

import v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"

// TokenPrompt is a PickReplicaRequest prompt given as token ids (exact
// matching against the KV index).
func TokenPrompt(ids []uint32) *v1.PickReplicaRequest_TokenIds {
	return &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}
}

// TextPrompt is a PickReplicaRequest prompt given as text, for data planes
// that do not tokenize (approximate matching).
func TextPrompt(text string) *v1.PickReplicaRequest_Text {
	return &v1.PickReplicaRequest_Text{Text: text}
}

// BlockHashPrompt is a PickReplicaRequest prompt given as precomputed chained
// block hashes.
func BlockHashPrompt(hashes []uint64) *v1.PickReplicaRequest_BlockHashes {
	return &v1.PickReplicaRequest_BlockHashes{BlockHashes: &v1.BlockHashes{Hashes: hashes}}
}
